package kgen

import (
	"math/bits"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Dynamic slices and updates of a device loop's register values, by
// barrel shifters over the start indices' bits. The element form would
// read each result element at a computed index, a select among all the
// operand's elements or a function array per read (array); a shifter
// moves the whole window one power of two at a time, a select per
// element of a box that shrinks to the window (or grows from the
// update), about window x log2(dims - window + 1) selects in all.
// Cholesky's and the triangular solve's loops take a row or column of
// their state this way every iteration.

// box is register elements of an array of dims, row-major.
type box struct {
	elems []val
	dims  []int64
}

// at is the element at multi-index ix.
func (b box) at(ix []int64) val {
	o := int64(0)
	for d, x := range ix {
		o = o*b.dims[d] + x
	}
	return b.elems[o]
}

// remake builds a box of dims whose element at each multi-index is
// elem's.
func remake(dims []int64, elem func(ix []int64) val) box {
	out := box{dims: dims}
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	ix := make([]int64, len(dims))
	for j := int64(0); j < n; j++ {
		r := j
		for d := len(dims) - 1; d >= 0; d-- {
			ix[d] = r % dims[d]
			r /= dims[d]
		}
		out.elems = append(out.elems, elem(ix))
	}
	return out
}

// bitSet is true where bit b of the u32 x is set.
func (k *kernelBuilder) bitSet(x spirv.ID, b int) spirv.ID {
	return k.boolOp(spirv.OpINotEqual, k.f.BitwiseAnd(k.u32(), x, k.cu32(1<<b)), k.cu32(0))
}

// withDim is dims with dims[d] = n.
func withDim(dims []int64, d int, n int64) []int64 {
	out := append([]int64{}, dims...)
	out[d] = n
	return out
}

// dynamicSlice is a dynamic-slice of a register value: along each
// dimension, for each bit of the start (clamped to [0, m], m the
// dimension less the window) from the highest, the box keeps the
// elements from 2^b on where the bit is set; after bit b it is the
// window plus min(m, 2^b - 1) long, which covers what the lower bits
// can still shift in.
func (e *seqEmitter) dynamicSlice(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	k := e.k
	xs, err := e.small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	dims, window := in.Operands[0].Shape.Dims, in.A.DynSliceSizes
	starts, err := e.startIndices(in, env, 1, dims, window)
	if err != nil {
		return nil, err
	}
	cur := box{xs, dims}
	for d := range dims {
		m := dims[d] - window[d]
		for b := bits.Len64(uint64(m)) - 1; b >= 0; b-- {
			old, step := cur, int64(1)<<b
			bit := k.bitSet(starts[d], b)
			cur = remake(withDim(old.dims, d, window[d]+min(m, step-1)), func(ix []int64) val {
				here := old.at(ix)
				if ix[d]+step >= old.dims[d] {
					return here // beyond what a set bit can leave in the window
				}
				moved := append([]int64{}, ix...)
				moved[d] += step
				return k.sel(bit, old.at(moved), here)
			})
			e.ops += len(cur.elems)
		}
	}
	return cur.elems, nil
}

// dynamicUpdate is a dynamic-update-slice of register values: the
// update is moved to its start by the start's bits from the lowest (the
// box grows along each dimension from the update's size to the
// operand's), then each element inside the window takes the moved
// update's.
func (e *seqEmitter) dynamicUpdate(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	k := e.k
	xs, err := e.small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	dims, up := in.Shape.Dims, in.Operands[1].Shape.Dims
	if in.Operands[1].Shape.NumElements() == 0 {
		return xs, nil
	}
	us, err := e.small(env[in.Operands[1]], in)
	if err != nil || len(dims) == 0 {
		return us, err
	}
	starts, err := e.startIndices(in, env, 2, dims, up)
	if err != nil {
		return nil, err
	}
	cur := box{us, up}
	for d := range dims {
		m := dims[d] - up[d]
		for b := 0; b < bits.Len64(uint64(m)); b++ {
			old, step := cur, int64(1)<<b
			bit := k.bitSet(starts[d], b)
			// After bit b the update sits at start mod 2^(b+1).
			cur = remake(withDim(old.dims, d, up[d]+min(m, 2*step-1)), func(ix []int64) val {
				var here, moved val
				stays, shifted := ix[d] < old.dims[d], ix[d] >= step && ix[d]-step < old.dims[d]
				if stays {
					here = old.at(ix)
				}
				if shifted {
					from := append([]int64{}, ix...)
					from[d] -= step
					moved = old.at(from)
				}
				switch {
				case stays && shifted:
					return k.sel(bit, moved, here)
				case stays: // left of where a set bit puts the update
					return here
				}
				return moved // right of where a clear bit leaves it
			})
			e.ops += len(cur.elems)
		}
	}
	// inside[d][c]: coordinate c of dimension d is in the window.
	inside := make([][]spirv.ID, len(dims))
	for d := range dims {
		for c := int64(0); c < dims[d]; c++ {
			rel := k.f.ISub(k.u32(), k.cu32(uint32(c)), starts[d])
			inside[d] = append(inside[d], k.boolOp(spirv.OpULessThan, rel, k.cu32(uint32(up[d]))))
		}
	}
	x := box{xs, dims}
	out := remake(dims, func(ix []int64) val {
		in := inside[0][ix[0]]
		for d := 1; d < len(ix); d++ {
			in = k.boolOp(spirv.OpLogicalAnd, in, inside[d][ix[d]])
		}
		return k.sel(in, cur.at(ix), x.at(ix))
	})
	return out.elems, nil
}
