package lower

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/chlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// expandSpecial expands HLO's opcodes of CHLO's special functions (sinh,
// cosh, asin, acos, asinh, acosh, atanh) into exp, log1p, atan2, sqrt
// and the rest as the StableHLO reader expands CHLO's ops (package chlo),
// complex operands into complex ops, which lowerComplex then rewrites.
func expandSpecial(s *state) error { return expandEach(s, specialExpansions) }

var specialExpansions = func() map[hlo.Opcode]expansion {
	m := map[hlo.Opcode]expansion{}
	for op, name := range chlo.Opcodes {
		m[op] = func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
			var first error // where the builder records its first error, which Expand returns
			r, err := chlo.Expand(b.expr(in.Shape, &first), name, in.Operands...)
			if err != nil {
				return nil, in.Errorf("%v", err)
			}
			return r, nil
		}
	}
	return m
}()

// An expansion builds what instruction in stands for with b and returns
// the value, the last instruction it built, or in itself to leave it.
type expansion func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error)

// expandEach replaces each instruction of the entry computation, and of
// the computations it calls (rewriteAll), whose op has an expansion by
// the instructions the expansion builds; the instruction itself becomes
// the last of them (the value it returns), keeping its name, so that
// its users need no change.
func expandEach(s *state, expansions map[hlo.Opcode]expansion) error {
	n := 0
	return rewriteAll(s.mod.Entry, func(c *hlo.Computation) (bool, error) {
		var out []*hlo.Instruction
		changed := false
		for _, in := range c.Instructions {
			expand := expansions[in.Op]
			if expand == nil {
				out = append(out, in)
				continue
			}
			b := &expander{from: in, n: &n}
			final, err := expand(b, in)
			if err != nil {
				return false, err
			}
			if final == in {
				out = append(out, in)
				continue
			}
			// final takes in's place (users of in read it there): it is
			// the last instruction placed, or one placed earlier, or one
			// not placed at all (a template returned as it is).
			for _, x := range b.out {
				if x != final {
					out = append(out, x)
				}
			}
			name := in.Name
			*in = *final
			in.Name = name
			out = append(out, in)
			changed = true
		}
		c.Instructions = out
		return changed, nil
	}, func(c *hlo.Computation) bool {
		return hasOp(c, func(op hlo.Opcode) bool { return expansions[op] != nil })
	})
}

// expander adds the instructions that one instruction expands into
// (triangular-solve, cholesky, rng-bit-generator), named after it.
type expander struct {
	from *hlo.Instruction
	out  []*hlo.Instruction
	n    *int
}

func (b *expander) inst(op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	return b.place(&hlo.Instruction{Op: op, Shape: sh, Operands: ops})
}

// place adds in, named after the instruction it expands.
func (b *expander) place(in *hlo.Instruction) *hlo.Instruction {
	*b.n++
	in.Name, in.Pos = fmt.Sprintf("%s.ts%d", b.from.Name, *b.n), b.from.Pos
	b.out = append(b.out, in)
	return in
}

// expr is a builder of elementwise ops of shape s, its errors in *err.
func (b *expander) expr(s hlo.Shape, err *error) *formula.Builder {
	return formula.New(b.place, s, err)
}

func (b *expander) constant(t hlo.ElementType, v int64) *hlo.Instruction {
	c := b.inst(hlo.OpConstant, hlo.ArrayShape(t))
	if v == 0 {
		c.Literal, _ = hlo.NewLiteral(c.Shape, make([]byte, t.Bytes()))
	} else {
		c.Literal = hlo.ScalarLiteral(t, float64(v))
	}
	return c
}

// zeros is a value of shape sh, all zero.
func (b *expander) zeros(sh hlo.Shape) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, sh, b.constant(sh.Elem, 0))
	bc.A.HasDimensions = true
	return bc
}

// transpose permutes x's dimensions: the result's dimension i is x's
// perm[i].
func (b *expander) transpose(x *hlo.Instruction, perm ...int64) *hlo.Instruction {
	t := b.inst(hlo.OpTranspose, transposedShape(x.Shape, perm), x)
	t.A.Dimensions, t.A.HasDimensions = perm, true
	return t
}

// bcast broadcasts scalar x to dims.
func (b *expander) bcast(x *hlo.Instruction, dims ...int64) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, dims...), x)
	bc.A.HasDimensions = true
	return bc
}

// binary applies op to x and y, either of which may be a scalar that
// broadcasts to the other's shape.
func (b *expander) binary(op hlo.Opcode, x, y *hlo.Instruction) *hlo.Instruction {
	switch {
	case x.Shape.Rank() == 0 && y.Shape.Rank() > 0:
		x = b.bcast(x, y.Shape.Dims...)
	case y.Shape.Rank() == 0 && x.Shape.Rank() > 0:
		y = b.bcast(y, x.Shape.Dims...)
	}
	return b.inst(op, x.Shape, x, y)
}

// convert converts x to type t.
func (b *expander) convert(x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	if x.Shape.Elem == t {
		return x
	}
	return b.inst(hlo.OpConvert, hlo.ArrayShape(t, x.Shape.Dims...), x)
}

// bitcastConvert reads x's bits as type t, of the same width.
func (b *expander) bitcastConvert(x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	return b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(t, x.Shape.Dims...), x)
}

// reshape gives x dimensions dims.
func (b *expander) reshape(x *hlo.Instruction, dims ...int64) *hlo.Instruction {
	if hlo.ArrayShape(x.Shape.Elem, dims...).SameDims(x.Shape) {
		return x
	}
	return b.inst(hlo.OpReshape, hlo.ArrayShape(x.Shape.Elem, dims...), x)
}

// slice takes [lo, hi) of dimension d of x, all of the others.
func (b *expander) slice(x *hlo.Instruction, d int, lo, hi int64) *hlo.Instruction {
	return b.strided(x, d, lo, hi, 1)
}

// strided takes positions lo, lo+step, ... < hi of dimension d of x,
// all of the others.
func (b *expander) strided(x *hlo.Instruction, d int, lo, hi, step int64) *hlo.Instruction {
	a, dims := sliceAlong(x.Shape.Dims, d, lo, hi, step)
	sl := b.inst(hlo.OpSlice, hlo.ArrayShape(x.Shape.Elem, dims...), x)
	sl.A.Slice = a
	return sl
}

// sliceAlong is a slice's attributes and result dimensions that take
// positions lo, lo+step, ... < hi of dimension d of an array of
// dimensions dims, all of the others.
func sliceAlong(dims []int64, d int, lo, hi, step int64) ([]hlo.SliceDim, []int64) {
	a := make([]hlo.SliceDim, len(dims))
	out := slices.Clone(dims)
	for e, n := range dims {
		a[e] = hlo.SliceDim{Start: 0, Limit: n, Stride: 1}
	}
	a[d] = hlo.SliceDim{Start: lo, Limit: hi, Stride: step}
	out[d] = (hi - lo + step - 1) / step
	return a, out
}

// padAlong pads dimension d of x with lo values v before and hi after.
func (b *expander) padAlong(x *hlo.Instruction, d int, lo, hi int64, v *hlo.Instruction) *hlo.Instruction {
	pads := make([]hlo.PadDim, x.Shape.Rank())
	pads[d] = hlo.PadDim{Lo: lo, Hi: hi}
	return b.pad(x, pads, v)
}

// pad pads each dimension of x by pads (edges only) with scalar v.
func (b *expander) pad(x *hlo.Instruction, pads []hlo.PadDim, v *hlo.Instruction) *hlo.Instruction {
	dims := slices.Clone(x.Shape.Dims)
	for d, p := range pads {
		dims[d] += p.Lo + p.Hi
	}
	p := b.inst(hlo.OpPad, hlo.ArrayShape(x.Shape.Elem, dims...), x, v)
	p.A.Padding = pads
	return p
}

// block is the block of x of dimensions sizes from starts.
func (b *expander) block(x *hlo.Instruction, starts, sizes []int64) *hlo.Instruction {
	sl := b.inst(hlo.OpSlice, hlo.ArrayShape(x.Shape.Elem, sizes...), x)
	sl.A.Slice = make([]hlo.SliceDim, len(sizes))
	for d, s := range starts {
		sl.A.Slice[d] = hlo.SliceDim{Start: s, Limit: s + sizes[d], Stride: 1}
	}
	return sl
}

// concat joins xs along dimension d.
func (b *expander) concat(d int, xs ...*hlo.Instruction) *hlo.Instruction {
	if len(xs) == 1 {
		return xs[0]
	}
	dims := append([]int64{}, xs[0].Shape.Dims...)
	dims[d] = 0
	for _, x := range xs {
		dims[d] += x.Shape.Dims[d]
	}
	c := b.inst(hlo.OpConcatenate, hlo.ArrayShape(xs[0].Shape.Elem, dims...), xs...)
	c.A.Dimensions, c.A.HasDimensions = []int64{int64(d)}, true
	return c
}

// variadicShape is the result shape of a variadic op over xs (sort,
// reduce-window): xs[0]'s alone, else the tuple of theirs.
func variadicShape(xs []*hlo.Instruction) hlo.Shape {
	if len(xs) == 1 {
		return xs[0].Shape
	}
	shapes := make([]hlo.Shape, len(xs))
	for i, x := range xs {
		shapes[i] = x.Shape
	}
	return hlo.TupleShape(shapes...)
}

// leaves is the n results of variadic op r: r itself, or each element
// of its tuple.
func (b *expander) leaves(r *hlo.Instruction, n int) []*hlo.Instruction {
	if n == 1 {
		return []*hlo.Instruction{r}
	}
	out := make([]*hlo.Instruction, n)
	for i := range out {
		out[i] = b.gte(r, i)
	}
	return out
}

// gte is element i of tuple t.
func (b *expander) gte(t *hlo.Instruction, i int) *hlo.Instruction {
	g := b.inst(hlo.OpGetTupleElement, t.Shape.Tuple[i], t)
	g.A.Index = int64(i)
	return g
}

// iota counts along dimension d of an array of type t and dims.
func (b *expander) iota(t hlo.ElementType, d int, dims ...int64) *hlo.Instruction {
	io := b.inst(hlo.OpIota, hlo.ArrayShape(t, dims...))
	io.A.IotaDim = int64(d)
	return io
}
