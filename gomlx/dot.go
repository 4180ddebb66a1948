package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
)

// Dot implements backends.Builder: vector and matrix products, the
// second axis of lhs (its only one for a vector) against the first of
// rhs.
func (b *Builder) Dot(lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Dot", lhs, rhs)
	if err != nil {
		return nil, err
	}
	lr, rr := ns[0].shape.Rank(), ns[1].shape.Rank()
	if lr < 1 || lr > 2 || rr < 1 || rr > 2 {
		return nil, fmt.Errorf("vkjit backend: Dot of %s and %s: it takes vectors and matrices", ns[0].shape, ns[1].shape)
	}
	return b.DotGeneral(lhs, []int{lr - 1}, nil, rhs, []int{0}, nil)
}

// DotGeneral implements backends.Builder: the result's axes are the batch
// axes, then lhs's free axes, then rhs's, as in HLO.
func (b *Builder) DotGeneral(lhs backends.Op, lhsContractingAxes, lhsBatchAxes []int,
	rhs backends.Op, rhsContractingAxes, rhsBatchAxes []int) (backends.Op, error) {
	ns, err := b.nodes("DotGeneral", lhs, rhs)
	if err != nil {
		return nil, err
	}
	if ns[0].shape.DType != ns[1].shape.DType {
		return nil, fmt.Errorf("vkjit backend: DotGeneral of %s and %s: dtypes differ", ns[0].shape, ns[1].shape)
	}
	if !isNumber(ns[0].shape.DType) {
		return nil, fmt.Errorf("vkjit backend: DotGeneral of %s: it takes numbers", ns[0].shape)
	}
	return b.add("DotGeneral", inst{op: hlo.OpDot, args: ns, attrs: []string{
		"lhs_batch_dims", intList(lhsBatchAxes), "lhs_contracting_dims", intList(lhsContractingAxes),
		"rhs_batch_dims", intList(rhsBatchAxes), "rhs_contracting_dims", intList(rhsContractingAxes)}})
}

// convLabels is HLO's dim_labels for GoMLX's axes: for each axis of the
// input, the kernel and the output, what it holds ('b' batch, 'f'
// features, 'i'/'o' the kernel's input and output features, a digit the
// spatial axis of that number).
func convLabels(a backends.ConvolveAxesConfig) string {
	labels := func(rank int, first, second int, c1, c2 byte, spatial []int) string {
		s := make([]byte, rank)
		s[first], s[second] = c1, c2
		for i, ax := range spatial {
			s[ax] = byte('0' + i)
		}
		return string(s)
	}
	n := len(a.InputSpatial) + 2
	return labels(n, a.InputBatch, a.InputChannels, 'b', 'f', a.InputSpatial) + "_" +
		labels(n, a.KernelInputChannels, a.KernelOutputChannels, 'i', 'o', a.KernelSpatial) + "->" +
		labels(n, a.OutputBatch, a.OutputChannels, 'b', 'f', a.OutputSpatial)
}

// ConvGeneral implements backends.Builder: HLO's convolution, its window
// the kernel's spatial sizes with strides (default 1), paddings,
// input (lhs) and kernel (rhs) dilations.
func (b *Builder) ConvGeneral(input, kernel backends.Op, axes backends.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (backends.Op, error) {
	const name = "ConvGeneral"
	ns, err := b.nodes(name, input, kernel)
	if err != nil {
		return nil, err
	}
	channelGroupCount, batchGroupCount = max(channelGroupCount, 1), max(batchGroupCount, 1)
	if len(strides) == 0 {
		strides = make([]int, len(axes.KernelSpatial))
		for i := range strides {
			strides[i] = 1
		}
	}
	if _, err := shapeinference.ConvGeneralOp(ns[0].shape, ns[1].shape, axes, strides, paddings,
		inputDilations, kernelDilations, channelGroupCount, batchGroupCount); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	if ns[0].shape.DType != ns[1].shape.DType {
		return nil, fmt.Errorf("vkjit backend: %s of %s and %s: dtypes differ", name, ns[0].shape, ns[1].shape)
	}
	sizes := make([]int, len(axes.KernelSpatial))
	for i, ax := range axes.KernelSpatial {
		sizes[i] = ns[1].shape.Dimensions[ax]
	}
	w, err := window(sizes, strides, inputDilations, kernelDilations, paddings)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %s: %w", name, err)
	}
	attrs := []string{"dim_labels", convLabels(axes),
		"feature_group_count", fmt.Sprint(channelGroupCount), "batch_group_count", fmt.Sprint(batchGroupCount)}
	if len(sizes) > 0 {
		attrs = append(attrs, "window", w)
	}
	return b.add(name, inst{op: hlo.OpConvolution, args: ns, attrs: attrs})
}

var fftTypes = map[backends.FFTType]string{
	backends.FFTForward: "FFT", backends.FFTInverse: "IFFT",
	backends.FFTForwardReal: "RFFT", backends.FFTInverseReal: "IRFFT",
}

// FFT implements backends.Builder: XLA's fft over the last len(fftLength)
// axes.
func (b *Builder) FFT(operand backends.Op, fftType backends.FFTType, fftLength []int) (backends.Op, error) {
	ns, err := b.nodes("FFT", operand)
	if err != nil {
		return nil, err
	}
	t, ok := fftTypes[fftType]
	if !ok {
		return nil, fmt.Errorf("vkjit backend: FFT: unknown type %d", fftType)
	}
	return b.add("FFT", inst{op: hlo.OpFft, args: ns, attrs: []string{"fft_type", t, "fft_length", intList(fftLength)}})
}

// RNGBitGenerator implements backends.Builder: XLA's Philox-4x32 on a
// u64[3] state, as GoMLX's XLA backend asks for it.
func (b *Builder) RNGBitGenerator(state backends.Op, shape shapes.Shape) (backends.Op, backends.Op, error) {
	const name = "RNGBitGenerator"
	ns, err := b.nodes(name, state)
	if err != nil {
		return nil, nil, err
	}
	if s := ns[0].shape; s.DType != dtypes.Uint64 || s.Rank() != 1 || s.Dimensions[0] < 2 {
		return nil, nil, fmt.Errorf("vkjit backend: %s: state %s must be Uint64[n], n >= 2", name, s)
	}
	if !(shape.DType.IsInt() || shape.DType.IsFloat()) {
		return nil, nil, fmt.Errorf("vkjit backend: %s: bits of %s: it makes integers or floats' bits", name, shape)
	}
	bits, err := hloShape(shape)
	if err != nil {
		return nil, nil, err
	}
	out := hlo.TupleShape(ns[0].in.Shape, bits)
	r, err := b.add(name, inst{op: hlo.OpRngBitGenerator, args: ns, attrs: []string{"algorithm", "rng_philox"}, shape: &out})
	if err != nil {
		return nil, nil, err
	}
	st, err := b.add(name, inst{op: hlo.OpGetTupleElement, args: []*node{r}, attrs: []string{"index", "0"}})
	if err != nil {
		return nil, nil, err
	}
	v, err := b.add(name, inst{op: hlo.OpGetTupleElement, args: []*node{r}, attrs: []string{"index", "1"}})
	if err != nil {
		return nil, nil, err
	}
	return st, v, nil
}
