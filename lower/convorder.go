package lower

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// canonicalConvs gives a 2-D convolution whose dimension numbers are not
// the implicit GEMM's (input and output b01f, kernel 01io: NHWC and
// HWIO) those orders by transposes of its operands and result, where the
// implicit GEMM then takes it (kgen.convGemmOf). JAX's lax.conv defaults
// to NCHW and OIHW, TensorFlow's graphs have kernels in 01oi, and the
// direct kernel that computes other orders is a loop over the window and
// input features per output element: a 3x3 convolution of
// f32[16,28,28,128] by a 01oi kernel took 1.47 s by it and 36 ms
// transposed (about 100 GFLOP/s on lavapipe). A transpose costs a pass
// over its array, little beside a convolution whose features make it a
// GEMM worth tiling.
func canonicalConvs(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpConvolution: canonicalConv})
}

// canonicalDims are b01f_01io->b01f (a new value each time: passes
// may edit an instruction's attributes in place).
func canonicalDims() *hlo.ConvDims {
	return &hlo.ConvDims{
		InBatch: 0, InSpatial: []int64{1, 2}, InFeature: 3,
		KSpatial: []int64{0, 1}, KIn: 2, KOut: 3,
		OutBatch: 0, OutSpatial: []int64{1, 2}, OutFeature: 3,
	}
}

func canonicalConv(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
	c := in.A.ConvDims
	if c == nil || len(c.InSpatial) != 2 || in.Shape.Rank() != 4 || isCanonicalConv(c) {
		return in, nil
	}
	lPerm := []int64{c.InBatch, c.InSpatial[0], c.InSpatial[1], c.InFeature}
	kPerm := []int64{c.KSpatial[0], c.KSpatial[1], c.KIn, c.KOut}
	oPerm := []int64{c.OutBatch, c.OutSpatial[0], c.OutSpatial[1], c.OutFeature}
	// Planned apart first: a convolution the GEMM would not take anyway
	// (types, groups, dilations, feature counts) keeps its order.
	conv := *in
	conv.A.ConvDims = canonicalDims()
	conv.Operands = []*hlo.Instruction{
		{Op: hlo.OpTranspose, Shape: transposedShape(in.Operands[0].Shape, lPerm)},
		{Op: hlo.OpTranspose, Shape: transposedShape(in.Operands[1].Shape, kPerm)},
	}
	conv.Shape = transposedShape(in.Shape, oPerm)
	if kgen.GemmOf(&conv) == nil {
		return in, nil
	}
	conv.Operands = []*hlo.Instruction{b.transposeIf(in.Operands[0], lPerm), b.transposeIf(in.Operands[1], kPerm)}
	conv.Attrs = withAttr(in.Attrs, "dim_labels", "b01f_01io->b01f")
	out := b.place(&conv)
	// The result's dimension d is the canonical one at d's place in oPerm.
	back := make([]int64, 4)
	for i, d := range oPerm {
		back[d] = int64(i)
	}
	return b.transposeIf(out, back), nil
}

func isCanonicalConv(c *hlo.ConvDims) bool {
	eq := func(a, b []int64) bool { return a[0] == b[0] && a[1] == b[1] }
	k := canonicalDims()
	return c.InBatch == k.InBatch && c.InFeature == k.InFeature && eq(c.InSpatial, k.InSpatial) &&
		c.KIn == k.KIn && c.KOut == k.KOut && eq(c.KSpatial, k.KSpatial) &&
		c.OutBatch == k.OutBatch && c.OutFeature == k.OutFeature && eq(c.OutSpatial, k.OutSpatial)
}

// transposedShape is s with its dimension i s's perm[i] (a transpose's shape).
func transposedShape(s hlo.Shape, perm []int64) hlo.Shape {
	dims := make([]int64, len(perm))
	for i, p := range perm {
		dims[i] = s.Dims[p]
	}
	return hlo.ArrayShape(s.Elem, dims...)
}

// transposeIf is b.transpose(x, perm), or x where perm keeps the order.
func (b *expander) transposeIf(x *hlo.Instruction, perm []int64) *hlo.Instruction {
	for i, p := range perm {
		if p != int64(i) {
			return b.transpose(x, perm...)
		}
	}
	return x
}

// withAttr is attrs with name's value set to value (its verbatim text,
// which the printer writes).
func withAttr(attrs []hlo.Attr, name, value string) []hlo.Attr {
	out := append([]hlo.Attr{}, attrs...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = value
			return out
		}
	}
	return append(out, hlo.Attr{Name: name, Value: value})
}
