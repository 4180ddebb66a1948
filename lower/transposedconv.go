package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// A transposed convolution (lhs_dilate L > 1: the gradient of a strided
// convolution with respect to its input, a decoder's upsampling layer)
// convolves an input with L-1 zeros between its elements. Computed as
// written, L-1 of every L products along each dilated dimension are of
// those zeros, and no kernel takes it as a GEMM: JAX's input gradient of
// a 3x3 stride-2 convolution of f32[8,64,64,64] ran 2.4 s on lavapipe,
// 180 times its forward convolution. Split into its L phases (the
// sub-pixel decomposition cuDNN's and TensorRT's deconvolutions use),
// the outputs at positions r, r+L, r+2L... read only the kernel taps
// c, c+L, c+2L... for one c, and each phase is a dense convolution of
// the undilated input with those taps: the same products, none of them
// by a zero, and an implicit GEMM each. The phases' results are
// interleaved back along the dimension.

// maxPhases bounds the convolutions one transposed convolution becomes
// (L^d of them for d dilated dimensions); past it, the direct kernel.
const maxPhases = 64

// splitTransposedConvs splits each convolution with an input dilation
// into the dense convolutions of its phases.
func splitTransposedConvs(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpConvolution: func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		phases := int64(1)
		for i := range dilatedDims(in) {
			phases *= in.A.Window.Dims[i].LhsDilate
		}
		if phases == 1 || phases > maxPhases || in.Shape.NumElements() == 0 || in.Operands[0].Shape.NumElements() == 0 {
			return in, nil
		}
		return b.convPhases(in, in.Operands[0], in.Operands[1])
	}})
}

// dilatedDims are the spatial dimensions (window indices) of conv that
// the phase split takes: dilated input, stride 1, no kernel dilation or
// reversal (a stride or kernel dilation would make the taps of a phase
// depend on the output position too).
func dilatedDims(conv *hlo.Instruction) []int {
	w := conv.A.Window
	if w == nil || conv.A.ConvDims == nil || !conv.Shape.IsArray() {
		return nil
	}
	var out []int
	for i, d := range w.Dims {
		if d.LhsDilate > 1 && max(d.Stride, 1) == 1 && max(d.RhsDilate, 1) == 1 && !d.Reversal && d.Size > 0 {
			out = append(out, i)
		}
	}
	return out
}

// convPhases is conv (a convolution, or its template with this input and
// kernel) with its first dilated dimension split into phases, each of
// them split again along the next.
func (b *expander) convPhases(conv, x, k *hlo.Instruction) (*hlo.Instruction, error) {
	dims := dilatedDims(conv)
	if len(dims) == 0 {
		c := *conv
		c.Operands = []*hlo.Instruction{x, k}
		c.Attrs = withAttr(conv.Attrs, "window", conv.A.Window.String())
		if s, err := hlo.InferShape(&c); err != nil || !s.SameDims(c.Shape) {
			return nil, conv.Errorf("internal error: a phase of the transposed convolution has shape %v, not %v (%v)", s, c.Shape, err)
		}
		return b.place(&c), nil
	}
	i := dims[0]
	cd := conv.A.ConvDims
	xd, kd, od := int(cd.InSpatial[i]), int(cd.KSpatial[i]), int(cd.OutSpatial[i])
	wd := conv.A.Window.Dims[i]
	L, K, h, ho := wd.LhsDilate, wd.Size, x.Shape.Dims[xd], conv.Shape.Dims[od]
	// Output o = r + L*t, tap k: dilated input position o + k - PadLo,
	// an input element where that is a multiple of L: k = c + L*j with
	// c = (PadLo - r) mod L, at input index t + j + q.
	tMax := (ho + L - 1) / L
	phases := make([]*hlo.Instruction, L)
	for r := range L {
		t := max((ho-r+L-1)/L, 0)
		c := ((wd.PadLo-r)%L + L) % L
		j := max((K-c+L-1)/L, 0)
		outDims := slices.Clone(conv.Shape.Dims)
		outDims[od] = tMax
		if t == 0 || j == 0 {
			phases[r] = b.zeros(hlo.ArrayShape(conv.Shape.Elem, outDims...)) // no output, or no tap lands on an input element
			continue
		}
		q := (r + c - wd.PadLo) / L
		if q >= h || q+t+j-2 < 0 {
			phases[r] = b.zeros(hlo.ArrayShape(conv.Shape.Elem, outDims...)) // every tap in the padding
			continue
		}
		// A dense convolution of taps j over the input shifted by q:
		// padding -q below, and above what leaves t outputs; negative
		// padding taken off the input instead.
		lo, hi := -q, t-1+j-h+q
		xp := x
		if lo < 0 {
			xp, lo = b.slice(xp, xd, -lo, h), 0
		}
		if hi < 0 {
			xp, hi = b.slice(xp, xd, 0, xp.Shape.Dims[xd]+hi), 0
		}
		a, kdims := sliceAlong(k.Shape.Dims, kd, c, K, L)
		kp := b.inst(hlo.OpSlice, hlo.ArrayShape(k.Shape.Elem, kdims...), k)
		kp.A.Slice = a
		pc := *conv
		pc.A.Window = &hlo.Window{Dims: slices.Clone(conv.A.Window.Dims)}
		pc.A.Window.Dims[i] = hlo.WindowDim{Size: j, Stride: 1, PadLo: lo, PadHi: hi, LhsDilate: 1, RhsDilate: 1}
		pc.Shape = hlo.ArrayShape(conv.Shape.Elem, slices.Concat(outDims[:od], []int64{t}, outDims[od+1:])...)
		p, err := b.convPhases(&pc, xp, kp)
		if err != nil {
			return nil, err
		}
		if t < tMax {
			p = b.padAlong(p, od, 0, tMax-t, b.constant(p.Shape.Elem, 0))
		}
		phases[r] = p
	}
	// Interleave: each phase a unit dimension after od, joined along
	// it, od and it made one, the tail past ho cut.
	for r, p := range phases {
		phases[r] = b.reshape(p, slices.Insert(slices.Clone(p.Shape.Dims), od+1, 1)...)
	}
	joined := b.concat(od+1, phases...)
	out := b.reshape(joined, slices.Concat(conv.Shape.Dims[:od], []int64{tMax * L}, conv.Shape.Dims[od+1:])...)
	if tMax*L > ho {
		out = b.slice(out, od, 0, ho)
	}
	return out, nil
}
