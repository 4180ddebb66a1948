package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Convolutions as implicit GEMMs: the tiled kernel's lhs rows gathered
// from the convolution's input windows.

// convGeom is what the implicit GEMM needs of a convolution.
type convGeom struct {
	h, w, ci       int64 // input spatial size and features
	ho, wo         int64 // output spatial size
	kw             int64 // kernel width
	sh, sw, ph, pw int64 // strides and low padding
	dh, dw         int64 // kernel (rhs) dilation
}

// convGemmOf plans conv as an implicit GEMM, or returns nil.
func convGemmOf(conv *hlo.Instruction) *GemmPlan {
	c := conv.A.ConvDims
	l, kr := conv.Operands[0].Shape, conv.Operands[1].Shape
	w := conv.A.Window
	if conv.Shape.Elem != hlo.F32 || l.Elem != hlo.F32 || kr.Elem != hlo.F32 || l.Rank() != 4 || w == nil || len(w.Dims) != 2 ||
		conv.A.FeatureGroups > 1 || conv.A.BatchGroups > 1 {
		return nil
	}
	nhwc := c.InBatch == 0 && c.InSpatial[0] == 1 && c.InSpatial[1] == 2 && c.InFeature == 3 &&
		c.KSpatial[0] == 0 && c.KSpatial[1] == 1 && c.KIn == 2 && c.KOut == 3 &&
		c.OutBatch == 0 && c.OutSpatial[0] == 1 && c.OutSpatial[1] == 2 && c.OutFeature == 3
	if !nhwc {
		return nil
	}
	for _, d := range w.Dims {
		if d.LhsDilate > 1 || d.Reversal || d.Stride < 1 {
			return nil
		}
	}
	g := &convGeom{h: l.Dims[1], w: l.Dims[2], ci: l.Dims[3], ho: conv.Shape.Dims[1], wo: conv.Shape.Dims[2], kw: kr.Dims[1],
		sh: w.Dims[0].Stride, sw: w.Dims[1].Stride, ph: w.Dims[0].PadLo, pw: w.Dims[1].PadLo,
		dh: max(w.Dims[0].RhsDilate, 1), dw: max(w.Dims[1].RhsDilate, 1)}
	co := kr.Dims[3]
	p := &GemmPlan{dot: conv, conv: g, in: [2]hlo.ElementType{hlo.F32, hlo.F32}, out: hlo.F32, m: l.Dims[0] * g.ho * g.wo, n: co, k: kr.Dims[0] * g.kw * g.ci,
		rStride: [2]int64{co, 1}, lVec: vecConv, rVec: vecAcross}
	if g.ci%4 != 0 || co%4 != 0 || !p.tile() {
		return nil // the direct kernel: vec4 reads need whole feature quads
	}
	return p
}

// convRows returns the lhs loader of an implicit GEMM for the tile's
// rows: each row is an output pixel (b, oy, ox); at step k4 (4 features
// ci of window position ky, kx) it reads the input's vec4 at (b, oy*sh -
// ph + ky*dh, ox*sw - pw + kx*dw, ci), or zeros in the padding.
func (k *kernelBuilder) convRows(p *GemmPlan, rows []spirv.ID) func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID {
	g := p.conv
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	// Per row: the image's start and the window's top-left corner (as
	// wrapped unsigned values: negative rows and columns compare as
	// large, so one unsigned test finds the padding).
	bOff, iy0, ix0 := make([]spirv.ID, len(rows)), make([]spirv.ID, len(rows)), make([]spirv.ID, len(rows))
	for i, r := range rows {
		ix := k.unravel(k.f.Ext(u32, spirv.GLSLUMin, r, cu(p.m-1)), []int64{p.m / (g.ho * g.wo), g.ho, g.wo})
		bOff[i] = op(spirv.OpIMul, ix[0], cu(g.h*g.w*g.ci))
		iy0[i] = op(spirv.OpISub, op(spirv.OpIMul, ix[1], cu(g.sh)), cu(g.ph))
		ix0[i] = op(spirv.OpISub, op(spirv.OpIMul, ix[2], cu(g.sw)), cu(g.pw))
	}
	zero := k.b.ConstF32(0)
	return func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID {
		kidx := op(spirv.OpIMul, k4, cu(4))
		ky := op(spirv.OpUDiv, kidx, cu(g.kw*g.ci))
		rem := op(spirv.OpUMod, kidx, cu(g.kw*g.ci))
		kx := op(spirv.OpUDiv, rem, cu(g.ci))
		ci := op(spirv.OpUMod, rem, cu(g.ci))
		dy, dx := op(spirv.OpIMul, ky, cu(g.dh)), op(spirv.OpIMul, kx, cu(g.dw))
		a := make([][4]spirv.ID, len(rows))
		for i := range rows {
			iy, ix := op(spirv.OpIAdd, iy0[i], dy), op(spirv.OpIAdd, ix0[i], dx)
			valid := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, iy, cu(g.h)), k.boolOp(spirv.OpULessThan, ix, cu(g.w)))
			at := op(spirv.OpIAdd, bOff[i], op(spirv.OpIAdd, op(spirv.OpIMul, op(spirv.OpIAdd, op(spirv.OpIMul, iy, cu(g.w)), ix), cu(g.ci)), ci))
			at = k.f.Select(u32, valid, at, cu(0))
			v := load4(0, op(spirv.OpUDiv, at, cu(4)))
			for c := range 4 {
				x := k.f.Extract(f32, v, uint32(c))
				a[i][c] = k.f.Select(f32, valid, x, zero)
			}
		}
		return a
	}
}
