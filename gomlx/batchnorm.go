package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
)

// Batch normalization is written out in HLO's elementwise ops and
// reductions op for op as XLA's BatchNormExpander writes it before its
// backends see it (so that results round as XLA's do, which GoMLX's
// tests hold them to), and vkjit fuses it like any other arithmetic.
// Half-precision inputs are computed in f32 and rounded once at the end.

// expr chains ops of one expansion, keeping the first error.
type expr struct {
	b    *Builder
	name string
	err  error
}

func (e *expr) add(in inst) *node {
	if e.err != nil {
		return nil
	}
	n, err := e.b.add(e.name, in)
	e.err = err
	return n
}

func (e *expr) op(op hlo.Opcode, args ...*node) *node { return e.add(inst{op: op, args: args}) }

func (e *expr) convert(x *node, dt dtypes.DType) *node {
	if e.err != nil || x.shape.DType == dt {
		return x
	}
	s := x.shape.Clone()
	s.DType = dt
	hs, err := hloShape(s)
	if err != nil {
		e.err = err
		return nil
	}
	return e.add(inst{op: hlo.OpConvert, args: []*node{x}, shape: &hs})
}

func (e *expr) scalar(dt dtypes.DType, v float64) *node {
	if e.err != nil {
		return nil
	}
	n, err := e.b.scalar(e.name, dt, v)
	e.err = err
	return n
}

// along broadcasts a feature vector v along axis of shape s.
func (e *expr) along(v *node, s shapes.Shape, axis int) *node {
	if e.err != nil {
		return nil
	}
	n, err := e.b.broadcastInDim(e.name, v, s.Dimensions, []int{axis})
	e.err = err
	return n
}

// full broadcasts a scalar to shape s.
func (e *expr) full(x *node, s shapes.Shape) *node {
	if e.err != nil {
		return nil
	}
	n, err := e.b.broadcastInDim(e.name, x, s.Dimensions, nil)
	e.err = err
	return n
}

// sumBut sums x over every axis but axis.
func (e *expr) sumBut(x *node, axis int) *node {
	if e.err != nil {
		return nil
	}
	var axes []int
	for i := range x.shape.Rank() {
		if i != axis {
			axes = append(axes, i)
		}
	}
	n, err := e.b.ReduceSum(x, axes...)
	e.err = err
	if err != nil {
		return nil
	}
	return n.(*node)
}

// batchNormArgs checks the operand and its feature vectors, and gives the
// dtype the arithmetic is done in and the count of values per feature.
// With grad, the last op is a gradient of the operand's shape.
func (b *Builder) batchNormArgs(name string, featureAxis int, grad bool, ops ...backends.Op) ([]*node, dtypes.DType, int, int, error) {
	ns, err := b.nodes(name, ops...)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	x := ns[0].shape
	if featureAxis < 0 {
		featureAxis += x.Rank()
	}
	if featureAxis < 0 || featureAxis >= x.Rank() {
		return nil, 0, 0, 0, fmt.Errorf("vkjit backend: %s: feature axis out of range for %s", name, x)
	}
	if !x.DType.IsFloat() {
		return nil, 0, 0, 0, fmt.Errorf("vkjit backend: %s of %s: it takes floats", name, x)
	}
	c := x.Dimensions[featureAxis]
	for i, n := range ns[1:] {
		s := n.shape
		if grad && i == len(ns)-2 {
			if !s.Equal(x) {
				return nil, 0, 0, 0, fmt.Errorf("vkjit backend: %s: gradient %s does not match operand %s", name, s, x)
			}
			continue
		}
		if s.DType != x.DType || s.Rank() != 1 || s.Dimensions[0] != c {
			return nil, 0, 0, 0, fmt.Errorf("vkjit backend: %s: operand %d is %s; want %s[%d] for operand %s's feature axis %d",
				name, i+1, s, x.DType, c, x, featureAxis)
		}
	}
	work := x.DType
	if work == dtypes.Float16 || work == dtypes.BFloat16 {
		work = dtypes.Float32
	}
	return ns, work, featureAxis, x.Size() / max(c, 1), nil
}

// BatchNormForInference implements backends.Builder as XLA expands it:
// with k = scale / sqrt(variance + epsilon), x * k + (offset - mean * k).
func (b *Builder) BatchNormForInference(operand, scale, offset, mean, variance backends.Op, epsilon float32, featureAxis int) (backends.Op, error) {
	const name = "BatchNormForInference"
	ns, work, axis, _, err := b.batchNormArgs(name, featureAxis, false, operand, scale, offset, mean, variance)
	if err != nil {
		return nil, err
	}
	e := &expr{b: b, name: name}
	x := e.convert(ns[0], work)
	s := shapes.Make(work, ns[0].shape.Dimensions...)
	fs := shapes.Make(work, ns[1].shape.Dimensions...)
	k := e.op(hlo.OpMultiply, e.convert(ns[1], work),
		e.op(hlo.OpRsqrt, e.op(hlo.OpAdd, e.convert(ns[4], work), e.full(e.scalar(work, float64(epsilon)), fs))))
	shift := e.op(hlo.OpSubtract, e.convert(ns[2], work), e.op(hlo.OpMultiply, e.convert(ns[3], work), k))
	y := e.op(hlo.OpAdd, e.op(hlo.OpMultiply, x, e.along(k, s, axis)), e.along(shift, s, axis))
	y = e.convert(y, ns[0].shape.DType)
	return y, e.err
}

// BatchNormForTraining implements backends.Builder as XLA expands it: per
// feature, over every other axis, mean = E[x] and variance = E[x^2] -
// E[x]^2 (biased), and (x - mean) / sqrt(variance + epsilon) * scale +
// offset.
func (b *Builder) BatchNormForTraining(operand, scale, offset backends.Op, epsilon float32, featureAxis int) (backends.Op, backends.Op, backends.Op, error) {
	const name = "BatchNormForTraining"
	ns, work, axis, n, err := b.batchNormArgs(name, featureAxis, false, operand, scale, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	e := &expr{b: b, name: name}
	x := e.convert(ns[0], work)
	s := shapes.Make(work, ns[0].shape.Dimensions...)
	fs := shapes.Make(work, ns[1].shape.Dimensions...)
	count := e.full(e.scalar(work, float64(n)), fs)
	mean := e.op(hlo.OpDivide, e.sumBut(x, axis), count)
	meanSquare := e.op(hlo.OpDivide, e.sumBut(e.op(hlo.OpMultiply, x, x), axis), count)
	variance := e.op(hlo.OpSubtract, meanSquare, e.op(hlo.OpMultiply, mean, mean))
	inv := e.op(hlo.OpRsqrt, e.op(hlo.OpAdd, e.along(variance, s, axis), e.full(e.scalar(work, float64(epsilon)), s)))
	normalized := e.op(hlo.OpMultiply, e.op(hlo.OpSubtract, x, e.along(mean, s, axis)), inv)
	y := e.op(hlo.OpAdd, e.op(hlo.OpMultiply, normalized, e.along(e.convert(ns[1], work), s, axis)), e.along(e.convert(ns[2], work), s, axis))
	dt := ns[0].shape.DType
	y, mean, variance = e.convert(y, dt), e.convert(mean, dt), e.convert(variance, dt)
	if e.err != nil {
		return nil, nil, nil, e.err
	}
	return y, mean, variance, nil
}

// BatchNormGradient implements backends.Builder as XLA expands it: with
// c = x - mean and v = variance + epsilon, per feature over the n values
// of the other axes,
//
//	gradOffset  = sum(dy)
//	gradScale   = sum(dy * c) / sqrt(v)
//	gradOperand = (scale / sqrt(v)) / n * ((n dy - sum(dy)) - c * sum(dy * c) / v)
func (b *Builder) BatchNormGradient(operand, scale, mean, variance, gradOutput backends.Op, epsilon float32, featureAxis int) (backends.Op, backends.Op, backends.Op, error) {
	const name = "BatchNormGradient"
	ns, work, axis, n, err := b.batchNormArgs(name, featureAxis, true, operand, scale, mean, variance, gradOutput)
	if err != nil {
		return nil, nil, nil, err
	}
	e := &expr{b: b, name: name}
	x, dy := e.convert(ns[0], work), e.convert(ns[4], work)
	s := shapes.Make(work, ns[0].shape.Dimensions...)
	fs := shapes.Make(work, ns[1].shape.Dimensions...)
	eps := e.scalar(work, float64(epsilon))
	vFeature := e.op(hlo.OpAdd, e.convert(ns[3], work), e.full(eps, fs))
	v := e.op(hlo.OpAdd, e.along(e.convert(ns[3], work), s, axis), e.full(eps, s))
	c := e.op(hlo.OpSubtract, x, e.along(e.convert(ns[2], work), s, axis))
	sumDyC := e.sumBut(e.op(hlo.OpMultiply, dy, c), axis)
	sumDy := e.sumBut(dy, axis)
	gradScale := e.op(hlo.OpMultiply, sumDyC, e.op(hlo.OpRsqrt, vFeature))
	i5 := e.op(hlo.OpDivide, e.op(hlo.OpMultiply, e.along(sumDyC, s, axis), c), v)
	k := e.op(hlo.OpDivide, e.op(hlo.OpMultiply, e.along(e.convert(ns[1], work), s, axis), e.op(hlo.OpRsqrt, v)),
		e.full(e.scalar(work, float64(n)), s))
	i1 := e.op(hlo.OpMultiply, dy, e.full(e.scalar(work, float64(n)), s))
	i6 := e.op(hlo.OpSubtract, e.op(hlo.OpSubtract, i1, e.along(sumDy, s, axis)), i5)
	gradOperand := e.op(hlo.OpMultiply, k, i6)
	dt := ns[0].shape.DType
	gradOperand, gradScale, sumDy = e.convert(gradOperand, dt), e.convert(gradScale, dt), e.convert(sumDy, dt)
	if e.err != nil {
		return nil, nil, nil, e.err
	}
	return gradOperand, gradScale, sumDy, nil
}
