package gomlx

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
	"github.com/x448/float16"
)

// HLO attribute text.

// intList is "{1,2,3}".
func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "{" + strings.Join(s, ",") + "}"
}

func iota(n int) []int {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return xs
}

// scalar is a constant of dtype dt holding v (rounded to dt; for the
// integers a value in their range).
func (b *Builder) scalar(opName string, dt dtypes.DType, v float64) (*node, error) {
	var flat any
	switch dt {
	case dtypes.Bool:
		flat = []bool{v != 0}
	case dtypes.Int8:
		flat = []int8{int8(v)}
	case dtypes.Int16:
		flat = []int16{int16(v)}
	case dtypes.Int32:
		flat = []int32{int32(v)}
	case dtypes.Int64:
		flat = []int64{int64(v)}
	case dtypes.Uint8:
		flat = []uint8{uint8(v)}
	case dtypes.Uint16:
		flat = []uint16{uint16(v)}
	case dtypes.Uint32:
		flat = []uint32{uint32(v)}
	case dtypes.Uint64:
		flat = []uint64{uint64(v)}
	case dtypes.Float16: // rounded to nearest even from v itself, not through f32
		flat = []float16.Float16{float16.Float16(hlo.F16FromFloat64(v))}
	case dtypes.BFloat16: // (bfloat16.FromFloat32 truncates)
		flat = []bfloat16.BFloat16{bfloat16.BFloat16(hlo.BF16FromFloat64(v))}
	case dtypes.Float32:
		flat = []float32{float32(v)}
	case dtypes.Float64:
		flat = []float64{v}
	case dtypes.Complex64:
		flat = []complex64{complex(float32(v), 0)}
	case dtypes.Complex128:
		flat = []complex128{complex(v, 0)}
	default:
		return nil, fmt.Errorf("vkjit backend: %s: dtype %s is not supported", opName, dt)
	}
	n, err := b.Constant(flat)
	if err != nil {
		return nil, err
	}
	return n.(*node), nil
}

// extreme is dt's lowest value (-inf for floats) or, with highest, its
// highest (+inf).
func (b *Builder) extreme(opName string, dt dtypes.DType, highest bool) (*node, error) {
	var flat any
	switch dt {
	case dtypes.Int8:
		flat = []int8{pick(highest, int8(math.MaxInt8), math.MinInt8)}
	case dtypes.Int16:
		flat = []int16{pick(highest, int16(math.MaxInt16), math.MinInt16)}
	case dtypes.Int32:
		flat = []int32{pick(highest, int32(math.MaxInt32), math.MinInt32)}
	case dtypes.Int64:
		flat = []int64{pick(highest, int64(math.MaxInt64), math.MinInt64)}
	case dtypes.Uint8:
		flat = []uint8{pick(highest, uint8(math.MaxUint8), 0)}
	case dtypes.Uint16:
		flat = []uint16{pick(highest, uint16(math.MaxUint16), 0)}
	case dtypes.Uint32:
		flat = []uint32{pick(highest, uint32(math.MaxUint32), 0)}
	case dtypes.Uint64:
		flat = []uint64{pick(highest, uint64(math.MaxUint64), 0)}
	case dtypes.Bool:
		flat = []bool{highest}
	default:
		return b.scalar(opName, dt, pick(highest, math.Inf(1), math.Inf(-1)))
	}
	n, err := b.Constant(flat)
	if err != nil {
		return nil, err
	}
	return n.(*node), nil
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// broadcastInDim maps x's axis i to output axis axes[i] (increasing).
// An axis of size 1 that expands is reshaped away first, as XLA's own
// builder does, since HLO's broadcast maps axes of equal size.
func (b *Builder) broadcastInDim(opName string, x *node, dims []int, axes []int) (*node, error) {
	var keep, kept []int
	for i, a := range axes {
		if x.shape.Dimensions[i] == dims[a] {
			keep, kept = append(keep, a), append(kept, x.shape.Dimensions[i])
		}
	}
	if len(keep) != len(axes) {
		var err error
		if x, err = b.reshape(opName, x, kept); err != nil {
			return nil, err
		}
	}
	out, err := hloShape(shapes.Make(x.shape.DType, dims...))
	if err != nil {
		return nil, err
	}
	return b.add(opName, inst{op: hlo.OpBroadcast, args: []*node{x}, attrs: []string{"dimensions", intList(keep)}, shape: &out})
}

func (b *Builder) reshape(opName string, x *node, dims []int) (*node, error) {
	if x.shape.Rank() == len(dims) && shapes.Make(x.shape.DType, dims...).Equal(x.shape) {
		return x, nil
	}
	out, err := hloShape(shapes.Make(x.shape.DType, dims...))
	if err != nil {
		return nil, err
	}
	return b.add(opName, inst{op: hlo.OpReshape, args: []*node{x}, shape: &out})
}

// BroadcastInDim implements backends.Builder.
func (b *Builder) BroadcastInDim(x backends.Op, outputShape shapes.Shape, broadcastAxes []int) (backends.Op, error) {
	const name = "BroadcastInDim"
	ns, err := b.nodes(name, x)
	if err != nil {
		return nil, err
	}
	if outputShape.DType != ns[0].shape.DType {
		return nil, fmt.Errorf("vkjit backend: %s: operand %s, output %s: dtypes differ", name, ns[0].shape, outputShape)
	}
	if err := shapeinference.BroadcastInDimOp(ns[0].shape, outputShape, broadcastAxes); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	for i := 1; i < len(broadcastAxes); i++ {
		if broadcastAxes[i] <= broadcastAxes[i-1] {
			return nil, fmt.Errorf("vkjit backend: %s: broadcastAxes %v must increase", name, broadcastAxes)
		}
	}
	return b.broadcastInDim(name, ns[0], outputShape.Dimensions, broadcastAxes)
}

// Iota implements backends.Builder.
func (b *Builder) Iota(shape shapes.Shape, iotaAxis int) (backends.Op, error) {
	if _, err := b.nodes("Iota"); err != nil {
		return nil, err
	}
	if iotaAxis < 0 || iotaAxis >= shape.Rank() {
		return nil, fmt.Errorf("vkjit backend: Iota: axis %d out of range for %s", iotaAxis, shape)
	}
	out, err := hloShape(shape)
	if err != nil {
		return nil, err
	}
	return b.add("Iota", inst{op: hlo.OpIota, attrs: []string{"iota_dimension", fmt.Sprint(iotaAxis)}, shape: &out})
}

// Reshape implements backends.Builder.
func (b *Builder) Reshape(x backends.Op, dimensions ...int) (backends.Op, error) {
	ns, err := b.nodes("Reshape", x)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.ReshapeOp(ns[0].shape, dimensions); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	return b.reshape("Reshape", ns[0], dimensions)
}

// Transpose implements backends.Builder.
func (b *Builder) Transpose(x backends.Op, permutation ...int) (backends.Op, error) {
	ns, err := b.nodes("Transpose", x)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.TransposeOp(ns[0].shape, permutation); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	return b.add("Transpose", inst{op: hlo.OpTranspose, args: ns, attrs: []string{"dimensions", intList(permutation)}})
}

// Reverse implements backends.Builder.
func (b *Builder) Reverse(x backends.Op, axes ...int) (backends.Op, error) {
	ns, err := b.nodes("Reverse", x)
	if err != nil {
		return nil, err
	}
	for _, a := range axes {
		if a < 0 || a >= ns[0].shape.Rank() {
			return nil, fmt.Errorf("vkjit backend: Reverse: axis %d out of range for %s", a, ns[0].shape)
		}
	}
	return b.add("Reverse", inst{op: hlo.OpReverse, args: ns, attrs: []string{"dimensions", intList(axes)}})
}

// Slice implements backends.Builder.
func (b *Builder) Slice(x backends.Op, starts, limits, strides []int) (backends.Op, error) {
	ns, err := b.nodes("Slice", x)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.SliceOp(ns[0].shape, starts, limits, strides); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	parts := make([]string, len(starts))
	for i := range starts {
		st := 1
		if len(strides) > 0 {
			st = strides[i]
		}
		parts[i] = fmt.Sprintf("[%d:%d:%d]", starts[i], limits[i], st)
	}
	return b.add("Slice", inst{op: hlo.OpSlice, args: ns, attrs: []string{"slice", "{" + strings.Join(parts, ",") + "}"}})
}

// Pad implements backends.Builder: missing axes are not padded.
func (b *Builder) Pad(x, fillValue backends.Op, axesConfig ...backends.PadAxis) (backends.Op, error) {
	ns, err := b.nodes("Pad", x, fillValue)
	if err != nil {
		return nil, err
	}
	rank := ns[0].shape.Rank()
	if len(axesConfig) > rank {
		return nil, fmt.Errorf("vkjit backend: Pad: %d axes configured for %s", len(axesConfig), ns[0].shape)
	}
	if !ns[1].shape.IsScalar() || ns[1].shape.DType != ns[0].shape.DType {
		return nil, fmt.Errorf("vkjit backend: Pad: fill value %s must be a scalar of %s's dtype", ns[1].shape, ns[0].shape)
	}
	if rank == 0 {
		return ns[0], nil
	}
	parts := make([]string, rank)
	for i := range parts {
		var p backends.PadAxis
		if i < len(axesConfig) {
			p = axesConfig[i]
		}
		if p.Interior < 0 {
			return nil, fmt.Errorf("vkjit backend: Pad: axis %d has negative interior padding %d", i, p.Interior)
		}
		parts[i] = fmt.Sprintf("%d_%d_%d", p.Start, p.End, p.Interior)
	}
	return b.add("Pad", inst{op: hlo.OpPad, args: ns, attrs: []string{"padding", strings.Join(parts, "x")}})
}

// Concatenate implements backends.Builder.
func (b *Builder) Concatenate(axis int, operands ...backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Concatenate", operands...)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("vkjit backend: Concatenate of nothing")
	}
	ss := make([]shapes.Shape, len(ns))
	for i, n := range ns {
		ss[i] = n.shape
	}
	if _, err := shapeinference.ConcatenateOp(ss, axis); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	if len(ns) == 1 {
		return ns[0], nil
	}
	return b.add("Concatenate", inst{op: hlo.OpConcatenate, args: ns, attrs: []string{"dimensions", intList([]int{axis})}})
}

// startIndices turns GoMLX's start indices (a scalar per axis, or one
// vector of them) into HLO's scalars of one integer type.
func (b *Builder) startIndices(opName string, idx []*node, rank int) ([]*node, error) {
	if len(idx) == 1 && idx[0].shape.Rank() == 1 { // one vector of indices
		v := idx[0]
		if v.shape.Dimensions[0] != rank {
			return nil, fmt.Errorf("vkjit backend: %s: %d start indices for rank %d", opName, v.shape.Dimensions[0], rank)
		}
		out := make([]*node, rank)
		for i := range out {
			s, err := b.add(opName, inst{op: hlo.OpSlice, args: []*node{v}, attrs: []string{"slice", fmt.Sprintf("{[%d:%d]}", i, i+1)}})
			if err != nil {
				return nil, err
			}
			if out[i], err = b.reshape(opName, s, nil); err != nil {
				return nil, err
			}
		}
		idx = out
	}
	if len(idx) != rank {
		return nil, fmt.Errorf("vkjit backend: %s: %d start indices for rank %d", opName, len(idx), rank)
	}
	for i, n := range idx {
		if !n.shape.IsScalar() || !n.shape.DType.IsInt() {
			return nil, fmt.Errorf("vkjit backend: %s: start index %d is %s, not an integer scalar", opName, i, n.shape)
		}
	}
	// HLO wants one index type; a mix is converted to s64 or, where all
	// fit, the first one's.
	for i := range idx {
		if idx[i].shape.DType != idx[0].shape.DType {
			t, err := hloShape(shapes.Make(dtypes.Int64))
			if err != nil {
				return nil, err
			}
			for j, n := range idx {
				if n.shape.DType != dtypes.Int64 {
					if idx[j], err = b.add(opName, inst{op: hlo.OpConvert, args: []*node{n}, shape: &t}); err != nil {
						return nil, err
					}
				}
			}
			break
		}
	}
	return idx, nil
}

// DynamicSlice implements backends.Builder.
func (b *Builder) DynamicSlice(operand backends.Op, startIndices []backends.Op, sliceDims []int) (backends.Op, error) {
	const name = "DynamicSlice"
	ns, err := b.nodes(name, append([]backends.Op{operand}, startIndices...)...)
	if err != nil {
		return nil, err
	}
	idx, err := b.startIndices(name, ns[1:], ns[0].shape.Rank())
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpDynamicSlice, args: append([]*node{ns[0]}, idx...), attrs: []string{"dynamic_slice_sizes", intList(sliceDims)}})
}

// DynamicUpdateSlice implements backends.Builder.
func (b *Builder) DynamicUpdateSlice(operand, update backends.Op, startIndices []backends.Op) (backends.Op, error) {
	const name = "DynamicUpdateSlice"
	ns, err := b.nodes(name, append([]backends.Op{operand, update}, startIndices...)...)
	if err != nil {
		return nil, err
	}
	idx, err := b.startIndices(name, ns[2:], ns[0].shape.Rank())
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpDynamicUpdateSlice, args: append([]*node{ns[0], ns[1]}, idx...)})
}

// Where implements backends.Builder: scalars (the condition among them)
// are broadcast to the result's shape.
func (b *Builder) Where(condition, onTrue, onFalse backends.Op) (backends.Op, error) {
	const name = "Where"
	ns, err := b.nodes(name, condition, onTrue, onFalse)
	if err != nil {
		return nil, err
	}
	if ns[1].shape.DType != ns[2].shape.DType {
		return nil, fmt.Errorf("vkjit backend: Where: onTrue %s and onFalse %s differ in dtype", ns[1].shape, ns[2].shape)
	}
	out, err := shapeinference.WhereOp(ns[0].shape, ns[1].shape, ns[2].shape)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	args := make([]*node, 3)
	for i, n := range ns {
		s := out.Clone()
		s.DType = n.shape.DType
		if args[i], err = b.broadcastTo(name, n, s); err != nil {
			return nil, err
		}
	}
	return b.add(name, inst{op: hlo.OpSelect, args: args})
}

// Clamp implements backends.Builder: min and max are scalars or of x's
// shape.
func (b *Builder) Clamp(min, x, max backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Clamp", min, x, max)
	if err != nil {
		return nil, err
	}
	for _, bound := range []*node{ns[0], ns[2]} {
		if bound.shape.DType != ns[1].shape.DType || !bound.shape.IsScalar() && !bound.shape.Equal(ns[1].shape) {
			return nil, fmt.Errorf("vkjit backend: Clamp: bound %s must be a scalar or of x's shape %s", bound.shape, ns[1].shape)
		}
	}
	return b.add("Clamp", inst{op: hlo.OpClamp, args: ns})
}

// ConvertDType implements backends.Builder, with XLA's conversions
// (floats to integers saturate, NaN becomes 0; complex to real keeps the
// real part).
func (b *Builder) ConvertDType(x backends.Op, dtype dtypes.DType) (backends.Op, error) {
	ns, err := b.nodes("ConvertDType", x)
	if err != nil {
		return nil, err
	}
	s := ns[0].shape.Clone()
	s.DType = dtype
	out, err := hloShape(s)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: ConvertDType: %w", err)
	}
	if dtype == ns[0].shape.DType {
		return ns[0], nil
	}
	return b.add("ConvertDType", inst{op: hlo.OpConvert, args: ns, shape: &out})
}

// Bitcast implements backends.Builder: a wider type folds the last axis
// in, a narrower one adds a last axis.
func (b *Builder) Bitcast(x backends.Op, targetDType dtypes.DType) (backends.Op, error) {
	ns, err := b.nodes("Bitcast", x)
	if err != nil {
		return nil, err
	}
	src := ns[0].shape
	dims := append([]int{}, src.Dimensions...)
	from, to := src.DType.Size(), targetDType.Size()
	switch {
	case to > from:
		if src.Rank() == 0 || dims[len(dims)-1]*from != to {
			return nil, fmt.Errorf("vkjit backend: Bitcast of %s to %s: the last axis must hold %d elements", src, targetDType, to/max(from, 1))
		}
		dims = dims[:len(dims)-1]
	case to < from:
		dims = append(dims, from/to)
	}
	out, err := hloShape(shapes.Make(targetDType, dims...))
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Bitcast: %w", err)
	}
	return b.add("Bitcast", inst{op: hlo.OpBitcastConvert, args: ns, shape: &out})
}
