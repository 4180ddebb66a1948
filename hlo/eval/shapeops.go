package eval

import (
	"encoding/binary"
	"runtime"
	"sync"

	"github.com/vkjit/vkjit/hlo"
)

func strides(dims []int64) []int64 { return hlo.RowMajorStrides(dims) }

// forEach calls f with every index of dims in row-major order, and the
// linear position. The index slice is reused between calls.
func forEach(dims []int64, f func(idx []int64, lin int64)) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	walk(dims, strides(dims), 0, n, f)
}

// walk calls f with the indices of dims at linear positions lo..hi-1,
// in order (strides st), reusing one index slice.
func walk(dims, st []int64, lo, hi int64, f func(idx []int64, lin int64)) {
	if lo >= hi {
		return
	}
	idx := make([]int64, len(dims))
	r := lo
	for d := range dims {
		idx[d] = r / st[d]
		r %= st[d]
	}
	for lin := lo; lin < hi; lin++ {
		f(idx, lin)
		for d := len(dims) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// parallelEach is forEach with the positions split among GOMAXPROCS
// goroutines; f must only write the element at lin. Used by the ops whose
// cost dominates (dot, convolution).
func parallelEach(dims []int64, f func(idx []int64, lin int64)) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	st := strides(dims)
	parallelChunks(n, 4096, func(lo, hi int64) error {
		walk(dims, st, lo, hi, f)
		return nil
	})
}

// parallelChunks calls f on ranges that cover [0, n), one per core
// when n is at least least, and returns the first error. Literals hold
// every element in whole bytes (s4 too), so ranges never share a byte.
func parallelChunks(n, least int64, f func(lo, hi int64) error) error {
	workers := int64(runtime.GOMAXPROCS(0))
	if n < least || workers < 2 {
		return f(0, n)
	}
	chunk := (n + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func linear(idx, st []int64) int64 {
	var p int64
	for i, x := range idx {
		p += x * st[i]
	}
	return p
}

// aroundDim is the product of dims before d (outer) and after it
// (inner): element i of dimension d of outer block o is at
// (o*dims[d] + i)*inner + r, r below inner.
func aroundDim(dims []int64, d int) (outer, inner int64) {
	outer, inner = 1, 1
	for _, v := range dims[:d] {
		outer *= v
	}
	for _, v := range dims[d+1:] {
		inner *= v
	}
	return outer, inner
}

func newLit(t hlo.ElementType, dims []int64) *hlo.Literal {
	s := hlo.ArrayShape(t, dims...)
	return &hlo.Literal{Shape: s, Data: make([]byte, s.ByteSize())}
}

// copyElem copies element si of src to element di of dst (same type).
func copyElem(dst *hlo.Literal, di int64, src *hlo.Literal, si int64) {
	n := int64(src.Shape.Elem.Bytes())
	copy(dst.Data[di*n:(di+1)*n], src.Data[si*n:(si+1)*n])
}

func broadcast(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	out := newLit(x.Shape.Elem, in.Shape.Dims)
	xs := strides(x.Shape.Dims)
	src := make([]int64, x.Shape.Rank())
	forEach(in.Shape.Dims, func(idx []int64, lin int64) {
		for i, d := range in.A.Dimensions {
			if x.Shape.Dims[i] == 1 {
				src[i] = 0
			} else {
				src[i] = idx[d]
			}
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out
}

func transpose(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	out := newLit(x.Shape.Elem, in.Shape.Dims)
	xs := strides(x.Shape.Dims)
	src := make([]int64, x.Shape.Rank())
	forEach(in.Shape.Dims, func(idx []int64, lin int64) {
		for j, p := range in.A.Dimensions {
			src[p] = idx[j]
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out
}

func slice(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	out := newLit(x.Shape.Elem, in.Shape.Dims)
	xs := strides(x.Shape.Dims)
	src := make([]int64, x.Shape.Rank())
	forEach(in.Shape.Dims, func(idx []int64, lin int64) {
		for i, d := range in.A.Slice {
			src[i] = d.Start + idx[i]*d.Stride
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out
}

// clampStarts reads start indices and clamps each so that a window of
// size sizes[i] fits in dims[i], as XLA's dynamic-slice does.
func clampStarts(idx []*hlo.Literal, dims, sizes []int64) []int64 {
	out := make([]int64, len(dims))
	for i := range dims {
		s := asInt(idx[i], 0)
		out[i] = min(max(s, 0), dims[i]-sizes[i])
	}
	return out
}

func dynamicSlice(in *hlo.Instruction, x *hlo.Literal, idx []*hlo.Literal) *hlo.Literal {
	starts := clampStarts(idx, x.Shape.Dims, in.A.DynSliceSizes)
	out := newLit(x.Shape.Elem, in.A.DynSliceSizes)
	xs := strides(x.Shape.Dims)
	src := make([]int64, x.Shape.Rank())
	forEach(out.Shape.Dims, func(i []int64, lin int64) {
		for d := range i {
			src[d] = starts[d] + i[d]
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out
}

func dynamicUpdateSlice(x, upd *hlo.Literal, idx []*hlo.Literal) *hlo.Literal {
	out := &hlo.Literal{Shape: x.Shape, Data: append([]byte(nil), x.Data...)}
	starts := clampStarts(idx, x.Shape.Dims, upd.Shape.Dims)
	xs := strides(x.Shape.Dims)
	dst := make([]int64, x.Shape.Rank())
	forEach(upd.Shape.Dims, func(i []int64, lin int64) {
		for d := range i {
			dst[d] = starts[d] + i[d]
		}
		copyElem(out, linear(dst, xs), upd, lin)
	})
	return out
}

func concatenate(in *hlo.Instruction, xs []*hlo.Literal) *hlo.Literal {
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	os := strides(in.Shape.Dims)
	d := in.A.Dimensions[0]
	off := int64(0)
	dst := make([]int64, in.Shape.Rank())
	for _, x := range xs {
		forEach(x.Shape.Dims, func(i []int64, lin int64) {
			copy(dst, i)
			dst[d] += off
			copyElem(out, linear(dst, os), x, lin)
		})
		off += x.Shape.Dims[d]
	}
	return out
}

// pad places operand elements at lo + i*(interior+1); negative low or
// high padding crops.
func pad(in *hlo.Instruction, x, value *hlo.Literal) *hlo.Literal {
	out := newLit(x.Shape.Elem, in.Shape.Dims)
	n := out.Shape.NumElements()
	for i := int64(0); i < n; i++ {
		copyElem(out, i, value, 0)
	}
	os := strides(in.Shape.Dims)
	dst := make([]int64, x.Shape.Rank())
	forEach(x.Shape.Dims, func(i []int64, lin int64) {
		for d, p := range in.A.Padding {
			dst[d] = p.Lo + i[d]*(p.Interior+1)
			if dst[d] < 0 || dst[d] >= in.Shape.Dims[d] {
				return
			}
		}
		copyElem(out, linear(dst, os), x, lin)
	})
	return out
}

func reverse(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	out := newLit(x.Shape.Elem, x.Shape.Dims)
	xs := strides(x.Shape.Dims)
	rev := make([]bool, x.Shape.Rank())
	for _, d := range in.A.Dimensions {
		rev[d] = true
	}
	src := make([]int64, x.Shape.Rank())
	forEach(x.Shape.Dims, func(i []int64, lin int64) {
		for d := range i {
			src[d] = i[d]
			if rev[d] {
				src[d] = x.Shape.Dims[d] - 1 - i[d]
			}
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out
}

func iota(in *hlo.Instruction) *hlo.Literal {
	t := in.Shape.Elem
	out := newLit(t, in.Shape.Dims)
	d := in.A.IotaDim
	forEach(in.Shape.Dims, func(i []int64, lin int64) {
		v := i[d]
		put(out.Data, t, lin, convert(hlo.S64, t, scalar{i: v}))
	})
	return out
}

// gather follows XLA's operation semantics, batching dimensions included;
// start indices are clamped so that each slice fits in the operand
// (hlo.GatherDims.MaxStart).
func gather(in *hlo.Instruction, x, indices *hlo.Literal) (*hlo.Literal, error) {
	g := in.A.Gather
	out := newLit(x.Shape.Elem, in.Shape.Dims)
	xs, is := strides(x.Shape.Dims), strides(indices.Shape.Dims)
	rank := x.Shape.Rank()
	ix := g.Indexing(rank, indices.Shape, in.Shape.Rank())
	src := make([]int64, rank)
	ii := make([]int64, indices.Shape.Rank())
	forEach(in.Shape.Dims, func(o []int64, lin int64) {
		for d := range src {
			src[d] = 0
		}
		// Batch position G, spread over the indices dimensions.
		for k, d := range ix.IndexDims {
			ii[d] = o[ix.BatchDims[k]]
		}
		for k := int64(0); k < ix.IndexCount; k++ {
			if g.IndexVectorDim < int64(indices.Shape.Rank()) {
				ii[g.IndexVectorDim] = k
			}
			od := g.StartIndexMap[k]
			s := asInt(indices, linear(ii, is))
			src[od] = min(max(s, 0), g.MaxStart(od, x.Shape.Dims[od]))
		}
		for i, od := range g.OperandBatchingDims {
			src[od] = o[ix.BatchDims[ix.BatchPos(g.StartIndicesBatchingDims[i])]]
		}
		for k, od := range ix.WindowDims {
			src[od] += o[g.OffsetDims[k]]
		}
		copyElem(out, lin, x, linear(src, xs))
	})
	return out, nil
}

// bitcastConvert reinterprets x's bits as in's type. Types of whole bytes
// keep their bytes (the width ratio is the last dimension, little-endian
// as XLA lays them out). A type narrower than a byte (s2-u4, f4, f6)
// holds its bits in the low bits of a byte each (sign-extended for the
// signed integers), and its elements' bits are taken as one little-endian
// stream of that width: s4[..., 2] packs into s8[...] element 0 low.
func bitcastConvert(in *hlo.Instruction, x *hlo.Literal) (*hlo.Literal, error) {
	from, to := x.Shape.Elem, in.Shape.Elem
	out := hlo.ArrayShape(to, in.Shape.Dims...)
	if from.Bits()%8 == 0 && to.Bits()%8 == 0 {
		return &hlo.Literal{Shape: out, Data: x.Data}, nil
	}
	wf, wt := from.Bits(), to.Bits()
	n := out.NumElements()
	data := make([]byte, 0, out.ByteSize())
	// bit reads the stream's bit i.
	bit := func(i int) uint64 {
		e, b := i/wf, i%wf
		if wf%8 == 0 {
			return uint64(x.Data[e*wf/8+b/8]>>(b%8)) & 1
		}
		return uint64(x.Data[e]>>b) & 1
	}
	for j := int64(0); j < n; j++ {
		var v uint64
		for b := 0; b < wt; b++ {
			v |= bit(int(j)*wt+b) << b
		}
		if wt%8 == 0 {
			data = binary.LittleEndian.AppendUint64(data, v)[:len(data)+wt/8]
			continue
		}
		if to.Kind() == hlo.KindSigned && v>>(wt-1) != 0 {
			v |= ^uint64(0) << wt // sign-extended in its byte
		}
		data = append(data, byte(v))
	}
	return &hlo.Literal{Shape: out, Data: data}, nil
}
