package stablehlo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/chlo"
)

// opContext is what an op's translation rule works with.
type opContext struct {
	t    *translator
	op   *Op
	sc   *scope
	cb   *hlo.CompBuilder
	args []*hlo.Instruction
}

type rule func(c *opContext) ([]*hlo.Instruction, error)

// ops translates each StableHLO (and CHLO) op into HLO, as XLA's
// MHLO-to-HLO export does. An op missing here is refused by name.
var ops map[string]rule

// elementwise lists the ops that map one to one onto an HLO opcode of
// the same operands and result.
var elementwise = map[string]hlo.Opcode{
	"abs": hlo.OpAbs, "add": hlo.OpAdd, "and": hlo.OpAnd, "atan2": hlo.OpAtan2, "cbrt": hlo.OpCbrt,
	"ceil": hlo.OpCeil, "clamp": hlo.OpClamp, "complex": hlo.OpComplex, "convert": hlo.OpConvert,
	"cosine": hlo.OpCos, "count_leading_zeros": hlo.OpClz, "divide": hlo.OpDivide,
	"exponential": hlo.OpExp, "exponential_minus_one": hlo.OpExpm1, "floor": hlo.OpFloor,
	"imag": hlo.OpImag, "is_finite": hlo.OpIsFinite, "log": hlo.OpLog, "log_plus_one": hlo.OpLog1p,
	"logistic": hlo.OpLogistic, "maximum": hlo.OpMaximum, "minimum": hlo.OpMinimum,
	"multiply": hlo.OpMultiply, "negate": hlo.OpNegate, "not": hlo.OpNot, "or": hlo.OpOr,
	"popcnt": hlo.OpPopcnt, "power": hlo.OpPower, "real": hlo.OpReal, "remainder": hlo.OpRemainder,
	"round_nearest_afz": hlo.OpRoundNearestAfz, "round_nearest_even": hlo.OpRoundNearestEven,
	"rsqrt": hlo.OpRsqrt, "select": hlo.OpSelect, "shift_left": hlo.OpShiftLeft,
	"shift_right_arithmetic": hlo.OpShiftRightArithmetic, "shift_right_logical": hlo.OpShiftRightLogical,
	"sign": hlo.OpSign, "sine": hlo.OpSin, "sqrt": hlo.OpSqrt, "subtract": hlo.OpSubtract,
	"tan": hlo.OpTan, "tanh": hlo.OpTanh, "xor": hlo.OpXor,
	"reshape":   hlo.OpReshape,
	"after_all": hlo.OpAfterAll, "create_token": hlo.OpAfterAll, "cholesky": hlo.OpCholesky,
	"acos": hlo.OpAcos, "acosh": hlo.OpAcosh, "asin": hlo.OpAsin, "asinh": hlo.OpAsinh,
	"atanh": hlo.OpAtanh, "cosh": hlo.OpCosh, "sinh": hlo.OpSinh, "erf": hlo.OpErf,
}

func init() {
	ops = map[string]rule{
		"stablehlo.constant":             constantRule,
		"stablehlo.bitcast_convert":      bitcastConvertRule,
		"stablehlo.iota":                 iotaRule,
		"stablehlo.broadcast_in_dim":     broadcastInDimRule,
		"stablehlo.broadcast":            broadcastRule,
		"stablehlo.transpose":            attrRule(hlo.OpTranspose, "dimensions", "permutation", "dims"),
		"stablehlo.reverse":              attrRule(hlo.OpReverse, "dimensions", "dimensions", "dims"),
		"stablehlo.concatenate":          concatenateRule,
		"stablehlo.slice":                sliceRule,
		"stablehlo.pad":                  padRule,
		"stablehlo.dynamic_slice":        dynamicSliceRule,
		"stablehlo.dynamic_update_slice": plainRule(hlo.OpDynamicUpdateSlice),
		"stablehlo.compare":              compareRule,
		"stablehlo.dot_general":          dotGeneralRule,
		"stablehlo.dot":                  dotRule,
		"stablehlo.convolution":          convolutionRule,
		"stablehlo.reduce":               reduceRule,
		"stablehlo.reduce_window":        reduceWindowRule,
		"stablehlo.select_and_scatter":   selectAndScatterRule,
		"stablehlo.gather":               gatherRule,
		"stablehlo.scatter":              scatterRule,
		"stablehlo.sort":                 sortRule,
		"stablehlo.while":                whileRule,
		"stablehlo.if":                   ifRule,
		"stablehlo.case":                 ifRule,
		"stablehlo.tuple":                tupleRule,
		"stablehlo.get_tuple_element":    getTupleElementRule,
		"stablehlo.optimization_barrier": barrierRule,
		"stablehlo.reduce_precision":     reducePrecisionRule,
		"stablehlo.rng_bit_generator":    rngBitGeneratorRule,
		"stablehlo.map":                  mapRule,
		"stablehlo.composite":            compositeRule,
		"stablehlo.custom_call":          customCallRule,
		"func.call":                      callRule,
		"stablehlo.fft":                  fftRule,
		"stablehlo.triangular_solve":     triangularSolveRule,
		"chlo.top_k":                     topKRule,
		"chlo.erf":                       renameRule(hlo.OpErf),
		"chlo.tan":                       renameRule(hlo.OpTan),
	}
	for name, opc := range elementwise {
		ops["stablehlo."+name] = renameRule(opc)
	}
	for _, name := range chlo.Names() {
		ops["chlo."+name] = chloRule(name)
	}
	ops["stablehlo.dynamic_broadcast_in_dim"] = staticRule(broadcastInDimRule, shapeOperand{index: 1})
	ops["stablehlo.dynamic_iota"] = staticRule(iotaRule, shapeOperand{index: 0})
	ops["stablehlo.dynamic_reshape"] = staticRule(renameRule(hlo.OpReshape), shapeOperand{index: 1})
	ops["stablehlo.dynamic_pad"] = staticRule(padRule, shapeOperand{index: 2, attr: "edge_padding_low"}, shapeOperand{index: 3, attr: "edge_padding_high"}, shapeOperand{index: 4, attr: "interior_padding"})
	ops["stablehlo.dynamic_gather"] = staticRule(gatherRule, shapeOperand{index: 2, attr: "slice_sizes"})
	ops["stablehlo.dynamic_conv"] = staticRule(convolutionRule, shapeOperand{index: 2, attr: "padding"})
	ops["stablehlo.real_dynamic_slice"] = staticRule(sliceRule, shapeOperand{index: 1, attr: "start_indices"}, shapeOperand{index: 2, attr: "limit_indices"}, shapeOperand{index: 3, attr: "strides"})
	ops["stablehlo.get_dimension_size"] = getDimensionSizeRule
	ops["stablehlo.batch_norm_training"] = batchNormRule(hlo.OpBatchNormTraining)
	ops["stablehlo.batch_norm_inference"] = batchNormRule(hlo.OpBatchNormInference)
	ops["stablehlo.batch_norm_grad"] = batchNormRule(hlo.OpBatchNormGrad)
	ops["chlo.ragged_dot"] = raggedDotRule
	ops["chlo.scan"] = scanRule
	for name := range collectives {
		ops[name] = collectiveRule
	}
	ops["stablehlo.replica_id"] = processIDRule(hlo.OpReplicaID)
	ops["stablehlo.partition_id"] = processIDRule(hlo.OpPartitionID)
	ops["interpreter.run_parallel"] = runParallelRule
	ops["stablehlo.send"] = sendRule
	ops["stablehlo.recv"] = recvRule
	ops["stablehlo.infeed"] = infeedRule
	ops["stablehlo.outfeed"] = refuseRule(hostCategory)
	for name, r := range shardyRules {
		ops[name] = r
	}
}

// batchNormRule is a batch_norm op: HLO's of the same operands, results
// and attributes (epsilon an f32, as XLA keeps it, written in decimal or
// as its bits).
func batchNormRule(op hlo.Opcode) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		f, ok, err := c.int("feature_index")
		if err != nil || !ok {
			return nil, fmt.Errorf("%s needs an integer feature_index", c.op.Name)
		}
		a := c.attr("epsilon")
		if a == nil || a.Kind != FloatAttr && a.Kind != IntAttr {
			return nil, fmt.Errorf("%s needs a float epsilon", c.op.Name)
		}
		var eps float64
		if bits, ok := strings.CutPrefix(a.Text, "0x"); ok {
			u, err := strconv.ParseUint(bits, 16, 32)
			if err != nil {
				return nil, fmt.Errorf("epsilon %s is not an f32's bits", a.Text)
			}
			eps = float64(math.Float32frombits(uint32(u)))
		} else if eps, err = strconv.ParseFloat(a.Text, 32); err != nil {
			return nil, fmt.Errorf("epsilon %s is not a number", a.Text)
		}
		ib, err := c.emit(op, c.args...)
		if err != nil {
			return nil, err
		}
		ib.Set("epsilon", strconv.FormatFloat(eps, 'g', -1, 32)).Set("feature_index", fmt.Sprint(f))
		return c.results(ib.Instruction), nil
	}
}

func refuseRule(category string) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		return nil, unsupportedf(category, "op %s", c.op.Name)
	}
}

// result is the op's i-th result type as an HLO shape.
func (c *opContext) result(i int) (hlo.Shape, error) {
	if i >= len(c.op.OutTypes) {
		return hlo.Shape{}, fmt.Errorf("the text gives no type for result %d", i)
	}
	if c.op.OutTypes[i].Dynamic {
		return hlo.Shape{}, unsupportedf(dynamicCategory, "its result type %s is dynamic, which %s's operands do not determine", c.op.OutTypes[i].Text, c.op.Name)
	}
	return c.op.OutTypes[i].Shape(), nil
}

// emit adds an HLO instruction of op over operands, with the op's
// result type as its shape (a tuple for several results).
func (c *opContext) emit(op hlo.Opcode, operands ...*hlo.Instruction) (*hlo.InstBuilder, error) {
	ib := c.cb.Op(op, operands...)
	switch len(c.op.OutTypes) {
	case 0:
	case 1:
		ib.WithShape(c.op.OutTypes[0].Shape())
	default:
		s := hlo.TupleShape()
		for _, t := range c.op.OutTypes {
			s.Tuple = append(s.Tuple, t.Shape())
		}
		ib.WithShape(s)
	}
	return ib, nil
}

// results unpacks a tuple-shaped instruction into the op's results.
func (c *opContext) results(in *hlo.Instruction) []*hlo.Instruction {
	if len(c.op.Results) == 1 && !in.Shape.IsTuple() || len(c.op.Results) == 1 && len(c.op.OutTypes) == 1 && c.op.OutTypes[0].Kind == TupleType {
		return []*hlo.Instruction{in}
	}
	out := make([]*hlo.Instruction, len(c.op.Results))
	for i := range out {
		g := c.cb.Op(hlo.OpGetTupleElement, in).Set("index", fmt.Sprint(i))
		if in.Shape.IsTuple() && i < len(in.Shape.Tuple) {
			g.WithShape(in.Shape.Tuple[i])
		}
		out[i] = g.Instruction
	}
	return out
}

func one(ib *hlo.InstBuilder, err error) ([]*hlo.Instruction, error) {
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{ib.Instruction}, nil
}

func renameRule(op hlo.Opcode) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) { return one(c.emit(op, c.args...)) }
}

func plainRule(op hlo.Opcode) rule { return renameRule(op) }

// attr returns the first of the named attributes present (the generic
// and the custom forms name some differently).
func (c *opContext) attr(names ...string) *Attr { return c.op.FirstAttr(names...) }

// ints reads the first of the named attributes present as integers.
func (c *opContext) ints(names ...string) ([]int64, bool, error) {
	a := c.attr(names...)
	if a == nil {
		return nil, false, nil
	}
	v, err := a.Ints()
	if err != nil {
		return nil, true, fmt.Errorf("%s: %v", names[0], err)
	}
	return v, true, nil
}

func (c *opContext) int(names ...string) (int64, bool, error) {
	a := c.attr(names...)
	if a == nil {
		return 0, false, nil
	}
	v, err := a.Int()
	return v, true, err
}

func (c *opContext) boolean(names ...string) bool {
	a := c.attr(names...)
	return a != nil && (a.Kind == BoolAttr && a.Text == "true" || a.Kind == UnitAttr)
}

func list(ds []int64) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprint(d)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// attrRule is an op whose one integer-list attribute (hloName) the text
// names one of names.
func attrRule(op hlo.Opcode, hloName string, names ...string) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		v, ok, err := c.ints(names...)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("needs %s", names[0])
		}
		ib, err := c.emit(op, c.args...)
		if err != nil {
			return nil, err
		}
		return one(ib.Set(hloName, list(v)), nil)
	}
}

func constantRule(c *opContext) ([]*hlo.Instruction, error) {
	v := c.attr("value")
	if v == nil || v.Kind != DenseAttr && v.Kind != DenseResourceAttr {
		return nil, fmt.Errorf("needs a dense value")
	}
	if len(c.op.OutTypes) != 1 {
		return nil, fmt.Errorf("needs its type")
	}
	t := c.op.OutTypes[0]
	if v.Kind == DenseResourceAttr {
		lit, err := c.t.resourceLiteral(v.Text, t)
		if err != nil {
			return nil, err
		}
		return []*hlo.Instruction{c.cb.Constant(lit)}, nil
	}
	if one, ok, err := denseSplat(v, t); err != nil || ok {
		if err != nil {
			return nil, err
		}
		k := c.cb.Constant(one)
		return []*hlo.Instruction{c.cb.Op(hlo.OpBroadcast, k).Set("dimensions", "{}").WithShape(t.Shape()).Instruction}, nil
	}
	lit, err := denseLiteral(v, t)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{c.cb.Constant(lit)}, nil
}

// bitcastConvertRule: StableHLO counts i1 as one bit, so 64 of them
// bitcast to one i64; HLO's pred is a byte and cannot say that. Such
// bitcasts are refused by name rather than given another meaning.
func bitcastConvertRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.op.OutTypes) != 1 {
		return nil, fmt.Errorf("the text gives no type for its result")
	}
	if in := c.args[0].Shape.Elem; (in == hlo.PRED) != (c.op.OutTypes[0].Elem == hlo.PRED) {
		out, err := c.result(0)
		if err != nil {
			return nil, err
		}
		// StableHLO's i1 is one bit, HLO's pred a byte: element k of the
		// i1 dimension is bit k of the wider value.
		r, err := bitsBitcast(c, c.args[0], out)
		if err != nil {
			return nil, err
		}
		return []*hlo.Instruction{r}, nil
	}
	return one(c.emit(hlo.OpBitcastConvert, c.args...))
}

func iotaRule(c *opContext) ([]*hlo.Instruction, error) {
	d, ok, err := c.int("iota_dimension", "dim")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs iota_dimension")
	}
	ib, err := c.emit(hlo.OpIota)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("iota_dimension", fmt.Sprint(d)), nil)
}

// broadcastInDimRule: StableHLO's broadcast_in_dim also expands
// dimensions of size 1, which HLO's broadcast does not: those are
// reshaped away first (as XLA's BroadcastInDim builder does).
func broadcastInDimRule(c *opContext) ([]*hlo.Instruction, error) {
	dims, ok, err := c.ints("broadcast_dimensions", "dims")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs broadcast_dimensions")
	}
	out, err := c.result(0)
	if err != nil {
		return nil, err
	}
	x := c.args[0]
	in := x.Shape
	if len(dims) != in.Rank() {
		return nil, fmt.Errorf("%d broadcast dimensions for an operand of rank %d", len(dims), in.Rank())
	}
	var keepDims, keepMap []int64
	for i, d := range dims {
		if d < 0 || int(d) >= out.Rank() {
			return nil, fmt.Errorf("broadcast dimension %d out of range", d)
		}
		if in.Dims[i] == 1 && out.Dims[d] != 1 {
			continue // expanded: reshaped away
		}
		keepDims = append(keepDims, in.Dims[i])
		keepMap = append(keepMap, d)
	}
	if len(keepDims) != len(in.Dims) {
		x = c.cb.Op(hlo.OpReshape, x).WithShape(hlo.ArrayShape(in.Elem, keepDims...)).Instruction
	}
	return one(c.cb.Op(hlo.OpBroadcast, x).Set("dimensions", list(keepMap)).WithShape(out), nil)
}

// broadcastRule: the old broadcast, new leading dimensions.
func broadcastRule(c *opContext) ([]*hlo.Instruction, error) {
	out, err := c.result(0)
	if err != nil {
		return nil, err
	}
	r := c.args[0].Shape.Rank()
	dims := make([]int64, r)
	for i := range dims {
		dims[i] = int64(out.Rank() - r + i)
	}
	return one(c.cb.Op(hlo.OpBroadcast, c.args[0]).Set("dimensions", list(dims)).WithShape(out), nil)
}

func concatenateRule(c *opContext) ([]*hlo.Instruction, error) {
	d, ok, err := c.int("dimension", "dim")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs dimension")
	}
	ib, err := c.emit(hlo.OpConcatenate, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("dimensions", fmt.Sprintf("{%d}", d)), nil)
}

func sliceRule(c *opContext) ([]*hlo.Instruction, error) {
	start, ok1, err1 := c.ints("start_indices")
	limit, ok2, err2 := c.ints("limit_indices")
	strides, ok3, err3 := c.ints("strides")
	if err1 != nil || err2 != nil || err3 != nil || !ok1 || !ok2 {
		return nil, fmt.Errorf("needs start_indices, limit_indices and strides")
	}
	if !ok3 {
		strides = make([]int64, len(start))
		for i := range strides {
			strides[i] = 1
		}
	}
	if len(limit) != len(start) || len(strides) != len(start) {
		return nil, fmt.Errorf("start_indices, limit_indices and strides differ in length")
	}
	var parts []string
	for i := range start {
		parts = append(parts, fmt.Sprintf("[%d:%d:%d]", start[i], limit[i], strides[i]))
	}
	ib, err := c.emit(hlo.OpSlice, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("slice", "{"+strings.Join(parts, ", ")+"}"), nil)
}

func padRule(c *opContext) ([]*hlo.Instruction, error) {
	lo, ok1, e1 := c.ints("edge_padding_low", "low")
	hi, ok2, e2 := c.ints("edge_padding_high", "high")
	in, ok3, e3 := c.ints("interior_padding", "interior")
	if e1 != nil || e2 != nil || e3 != nil || !ok1 || !ok2 || !ok3 || len(lo) != len(hi) || len(in) != len(lo) {
		return nil, fmt.Errorf("needs low, high and interior padding of one length")
	}
	var parts []string
	for i := range lo {
		parts = append(parts, fmt.Sprintf("%d_%d_%d", lo[i], hi[i], in[i]))
	}
	ib, err := c.emit(hlo.OpPad, c.args...)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return one(ib.Set("padding", "{}"), nil)
	}
	return one(ib.Set("padding", strings.Join(parts, "x")), nil)
}

func dynamicSliceRule(c *opContext) ([]*hlo.Instruction, error) {
	sizes, ok, err := c.ints("slice_sizes", "sizes")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs slice_sizes")
	}
	ib, err := c.emit(hlo.OpDynamicSlice, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("dynamic_slice_sizes", list(sizes)), nil)
}

// compareRule: the direction, and the comparison type where the text
// gives one (TOTALORDER matters; FLOAT, SIGNED and UNSIGNED follow from
// the operands).
func compareRule(c *opContext) ([]*hlo.Instruction, error) {
	dir := c.attr("comparison_direction")
	if dir == nil {
		return nil, fmt.Errorf("needs comparison_direction")
	}
	d := enumValue(dir)
	ib, err := c.emit(hlo.OpCompare, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("direction", d)
	if t := c.attr("compare_type"); t != nil && enumValue(t) == "TOTALORDER" {
		ib.Set("type", "TOTALORDER")
	}
	return one(ib, nil)
}

// enumValue is the value of an enum attribute: a bare word (custom
// form) or #stablehlo<comparison_direction GT> (generic form).
func enumValue(a *Attr) string {
	if a.Kind == DialectAttr {
		f := strings.Fields(a.Body)
		return f[len(f)-1]
	}
	return a.Text
}
