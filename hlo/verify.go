package hlo

import (
	"fmt"
	"slices"
)

// Verify checks a module's structure and infers the shape of every
// instruction, following XLA's operation semantics (ShapeInference),
// comparing it with the printed shape. A shape left out of the text is
// filled in. An error names the instruction and its position.
func Verify(m *Module) error {
	v := &verifier{done: map[*Computation]bool{}, busy: map[*Computation]bool{}}
	for _, c := range m.Computations {
		if err := v.computation(c); err != nil {
			return err
		}
	}
	return nil
}

type verifier struct {
	done, busy map[*Computation]bool
}

// computation verifies c after the computations it calls.
func (v *verifier) computation(c *Computation) error {
	if v.done[c] {
		return nil
	}
	if v.busy[c] {
		return &Error{Pos: c.Pos, Msg: fmt.Sprintf("computation %s calls itself", c.Name)}
	}
	v.busy[c] = true
	for _, in := range c.Instructions {
		for _, callee := range in.Called {
			if err := v.computation(callee); err != nil {
				return err
			}
		}
	}
	// An operand must be defined before its user, as XLA's parser
	// requires and every pass assumes (a cycle is such a use too).
	defined := make(map[*Instruction]bool, len(c.Instructions))
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			if !defined[o] {
				if o == in {
					return in.Errorf("is its own operand (a cycle)")
				}
				return in.Errorf("uses %s before its definition", o.Name)
			}
		}
		if err := verifyInstruction(in); err != nil {
			return err
		}
		defined[in] = true
	}
	v.busy[c], v.done[c] = false, true
	return nil
}

func verifyInstruction(in *Instruction) error {
	if n := in.Op.Arity(); n >= 0 && len(in.Operands) != n {
		return in.Errorf("takes %d operands, has %d", n, len(in.Operands))
	}
	want, err := InferShape(in)
	if err != nil {
		return err
	}
	if in.ShapeInferred {
		if want == nil {
			return in.Errorf("its shape cannot be inferred; write it out")
		}
		in.Shape = *want
		return nil
	}
	if want != nil && !compatible(*want, in.Shape, dimsOnly(in.Op)) {
		return in.Errorf("shape is %s, but its operands give %s", in.Shape.DimsString(), want.DimsString())
	}
	return nil
}

// dimsOnly lists ops whose result element type is the printer's choice
// (preferred_element_type), so only dimensions are inferred.
func dimsOnly(op Opcode) bool { return op == OpDot || op == OpConvolution }

func compatible(a, b Shape, ignoreType bool) bool {
	if a.IsTuple() || b.IsTuple() {
		if a.IsTuple() != b.IsTuple() || len(a.Tuple) != len(b.Tuple) {
			return false
		}
		for i := range a.Tuple {
			if !compatible(a.Tuple[i], b.Tuple[i], ignoreType) {
				return false
			}
		}
		return true
	}
	if !ignoreType && a.Elem != b.Elem {
		return false
	}
	return a.SameDims(b)
}

// takesTuples lists the ops whose operands may be tuples or tokens; every
// other op computes on arrays.
var takesTuples = map[Opcode]bool{
	OpTuple: true, OpGetTupleElement: true, OpWhile: true, OpConditional: true, OpCall: true, OpFusion: true,
	OpCustomCall: true, OpOptimizationBarrier: true, OpAddDependency: true, OpAfterAll: true, OpInfeed: true,
	OpOutfeed: true, OpSend: true, OpSendDone: true, OpRecv: true, OpRecvDone: true, OpAsyncStart: true,
	OpAsyncUpdate: true, OpAsyncDone: true, OpCopyStart: true, OpCopyDone: true, OpDomain: true,
	OpAllReduce: true, OpAllReduceStart: true, OpAllReduceDone: true, OpAllGather: true, OpAllGatherStart: true,
	OpAllGatherDone: true, OpAllToAll: true, OpReduceScatter: true, OpCollectivePermute: true,
	OpCollectivePermuteStart: true, OpCollectivePermuteDone: true, OpCollectiveBroadcast: true,
	OpRaggedAllToAll: true, OpRngGetAndUpdateState: true,
}

// Comparison directions of the compare op.
var comparisonDirections = map[string]bool{"EQ": true, "NE": true, "LT": true, "LE": true, "GT": true, "GE": true}

func arr(t ElementType, dims ...int64) *Shape {
	s := ArrayShape(t, dims...)
	return &s
}

func like(s Shape) *Shape {
	c := s
	c.Layout = nil
	return &c
}

// InferShape computes an instruction's result shape from its operands and
// attributes. It returns nil for ops whose shape is the printer's word
// (parameters, custom-calls, collectives, host transfers).
func InferShape(in *Instruction) (*Shape, error) {
	ops := in.Operands
	a := &in.A
	for i, o := range ops {
		if !o.Shape.IsArray() && !takesTuples[in.Op] {
			return nil, in.Errorf("operand %s is not an array", o.Name)
		}
		if ts := in.Op.Types(); !ts.Has(o.Shape.Elem) && !(in.Op == OpSelect && i == 0) {
			return nil, in.Errorf("takes %s operands, not %s", ts, o.Shape.Elem)
		}
	}
	called := func(i int) (*Computation, error) {
		if i >= len(in.Called) {
			return nil, in.Errorf("needs a called computation")
		}
		return in.Called[i], nil
	}
	switch in.Op {
	case OpAllReduceStart:
		// An all-reduce's result (the operand's shape, a tuple of them
		// for several), or the older (operands, results) tuple of two
		// each (FuzzMutants: an s32[1] start of a scalar gave done a
		// scalar that a sort then indexed).
		if len(ops) == 0 {
			return nil, in.Errorf("needs an operand")
		}
		var each []Shape
		for _, o := range ops {
			each = append(each, *like(o.Shape))
		}
		want := each[0]
		if len(ops) > 1 {
			want = TupleShape(each...)
		}
		if older := TupleShape(slices.Concat(each, each)...); in.Shape.Equal(older) {
			return &older, nil
		}
		return &want, nil
	case OpParameter, OpCustomCall, OpInfeed, OpOutfeed, OpSend, OpSendDone, OpRecv, OpRecvDone,
		OpAllGather, OpAllGatherStart, OpAllToAll,
		OpRaggedAllToAll, OpReduceScatter, OpCollectiveBroadcast, OpCollectivePermuteStart,
		OpDomain, OpRng, OpRngGetAndUpdateState, OpDynamicReshape, OpSetDimensionSize:
		return nil, nil
	case OpScan:
		return inferScan(in)
	case OpRaggedDot:
		return inferRaggedDot(in)
	case OpStochasticConvert:
		return inferStochasticConvert(in)
	case OpCopyStart, OpCopyDone, OpAsyncStart, OpAsyncUpdate, OpAsyncDone, OpAllReduceDone, OpAllGatherDone, OpCollectivePermuteDone:
		return inferAsync(in)
	case OpFft:
		return inferFft(in)
	case OpBatchNormTraining, OpBatchNormInference, OpBatchNormGrad:
		return inferBatchNorm(in)
	case OpTriangularSolve:
		return inferTriangularSolve(in)
	case OpCholesky:
		a := ops[0].Shape
		r := a.Rank()
		if r < 2 || a.Dims[r-1] != a.Dims[r-2] || !(a.Elem.IsFloat() || a.Elem.Kind() == KindComplex) {
			return nil, in.Errorf("takes float or complex square matrices [..., n, n], not %s", a)
		}
		s := a
		return &s, nil
	case OpRngBitGenerator:
		// The output's shape is the printer's word; the rest is fixed:
		// a u64 state in, the (new state, bits) tuple out.
		st := ops[0].Shape
		if !st.IsArray() || st.Elem != U64 || st.Rank() != 1 || st.Dims[0] < 2 {
			return nil, in.Errorf("state must be u64[n] with n >= 2, is %s", st)
		}
		out := in.Shape
		if in.ShapeInferred || !out.IsTuple() || len(out.Tuple) != 2 || !out.Tuple[0].SameDims(st) || out.Tuple[0].Elem != U64 || !out.Tuple[1].IsArray() {
			return nil, in.Errorf("result must be (%s, bits), is %s", st.DimsString(), out)
		}
		if t := out.Tuple[1].Elem; !(t.IsInteger() || t.IsFloat()) || t.Bits()%8 != 0 {
			return nil, in.Errorf("bits of type %s", t)
		}
		return nil, nil
	case OpBitcast:
		// A new view of the same bytes: its shape is the printer's word,
		// but its size must be the operand's.
		if in.ShapeInferred {
			return nil, in.Errorf("bitcast needs its result shape")
		}
		if from, to := ops[0].Shape, in.Shape; from.IsArray() && to.IsArray() && from.ByteSize() != to.ByteSize() {
			return nil, in.Errorf("bitcast of %s (%d bytes) to %s (%d bytes): sizes differ", from.DimsString(), from.ByteSize(), to.DimsString(), to.ByteSize())
		}
		return nil, nil
	case OpConstant:
		if in.Literal != nil && !in.Literal.Elided && !in.Literal.Shape.Equal(in.Shape) {
			return nil, in.Errorf("literal does not match shape %s", in.Shape)
		}
		return nil, nil
	case OpReplicaID, OpPartitionID:
		return arr(U32), nil
	case OpGetDimensionSize:
		if len(ops) != 1 || len(a.Dimensions) != 1 || a.Dimensions[0] < 0 || int(a.Dimensions[0]) >= ops[0].Shape.Rank() {
			return nil, in.Errorf("get-dimension-size needs one operand and dimensions={d}, a dimension of it")
		}
		return arr(S32), nil
	case OpAfterAll:
		return &Shape{Elem: Token}, nil
	case OpAddDependency, OpOptimizationBarrier, OpAllReduce, OpCollectivePermute:
		if len(ops) == 0 {
			return nil, in.Errorf("needs an operand")
		}
		if in.Op == OpAllReduce && len(ops) > 1 {
			t := TupleShape()
			for _, o := range ops {
				t.Tuple = append(t.Tuple, *like(o.Shape))
			}
			return &t, nil
		}
		return like(ops[0].Shape), nil
	case OpTuple:
		s := Shape{Elem: Tuple, Tuple: []Shape{}}
		for _, o := range ops {
			s.Tuple = append(s.Tuple, o.Shape)
		}
		return &s, nil
	case OpGetTupleElement:
		t := ops[0].Shape
		if !t.IsTuple() || a.Index < 0 || int(a.Index) >= len(t.Tuple) {
			return nil, in.Errorf("index %d out of range for %s", a.Index, t)
		}
		return like(t.Tuple[a.Index]), nil
	case OpConvert, OpReducePrecision:
		if in.Op == OpReducePrecision {
			if a.ExponentBits < 1 || a.MantissaBits < 0 {
				return nil, in.Errorf("needs exponent_bits at least 1 and mantissa_bits at least 0, has %d and %d", a.ExponentBits, a.MantissaBits)
			}
			return like(ops[0].Shape), nil
		}
		if in.ShapeInferred {
			return nil, in.Errorf("convert needs its result shape")
		}
		return arr(in.Shape.Elem, ops[0].Shape.Dims...), nil
	case OpBitcastConvert:
		if in.ShapeInferred {
			return nil, in.Errorf("bitcast-convert needs its result shape")
		}
		from, to := ops[0].Shape, in.Shape.Elem
		switch {
		case from.Elem.Bits() == to.Bits():
			return arr(to, from.Dims...), nil
		case from.Elem.Bits() > to.Bits(): // a new minor dimension
			return arr(to, append(append([]int64{}, from.Dims...), int64(from.Elem.Bits()/to.Bits()))...), nil
		default: // the minor dimension is folded in
			if from.Rank() == 0 || from.Dims[from.Rank()-1]*int64(from.Elem.Bits()) != int64(to.Bits()) {
				return nil, in.Errorf("cannot bitcast %s to %s", from.DimsString(), to)
			}
			return arr(to, from.Dims[:from.Rank()-1]...), nil
		}
	case OpCompare:
		if a.Direction == "" {
			return nil, in.Errorf("needs direction=EQ|NE|LT|LE|GT|GE")
		}
		if err := sameShapes(in, ops...); err != nil {
			return nil, err
		}
		return arr(PRED, ops[0].Shape.Dims...), nil
	case OpIsFinite:
		if !ops[0].Shape.Elem.IsFloat() {
			return nil, in.Errorf("operand must be floating point, is %s", ops[0].Shape.Elem)
		}
		return arr(PRED, ops[0].Shape.Dims...), nil
	case OpReal, OpImag, OpAbs:
		t, complex := ops[0].Shape.Elem.ComplexPart()
		if !complex && in.Op != OpAbs && !t.IsFloat() {
			return nil, in.Errorf("operand must be complex or float, is %s", t)
		}
		return arr(t, ops[0].Shape.Dims...), nil
	case OpComplex:
		if err := sameShapes(in, ops...); err != nil {
			return nil, err
		}
		t := C64
		if ops[0].Shape.Elem == F64 {
			t = C128
		}
		return arr(t, ops[0].Shape.Dims...), nil
	case OpSelect:
		if ops[0].Shape.Elem != PRED {
			return nil, in.Errorf("predicate must be pred, is %s", ops[0].Shape.Elem)
		}
		if ops[1].Shape.IsTuple() {
			if !ops[1].Shape.Equal(ops[2].Shape) || ops[0].Shape.Rank() != 0 {
				return nil, in.Errorf("tuple select needs equal tuples and a scalar predicate")
			}
			return like(ops[1].Shape), nil
		}
		if err := sameShapes(in, ops[1], ops[2]); err != nil {
			return nil, err
		}
		if ops[0].Shape.Rank() != 0 && !ops[0].Shape.SameDims(ops[1].Shape) {
			return nil, in.Errorf("predicate shape %s does not match %s", ops[0].Shape.DimsString(), ops[1].Shape.DimsString())
		}
		return like(ops[1].Shape), nil
	case OpClamp:
		x := ops[1]
		for _, b := range []*Instruction{ops[0], ops[2]} {
			if b.Shape.Elem != x.Shape.Elem || (b.Shape.Rank() != 0 && !b.Shape.SameDims(x.Shape)) {
				return nil, in.Errorf("bound %s does not fit operand %s", b.Shape.DimsString(), x.Shape.DimsString())
			}
		}
		return like(x.Shape), nil
	case OpBroadcast:
		return inferBroadcast(in)
	case OpReshape:
		if in.ShapeInferred {
			return nil, in.Errorf("reshape needs its result shape")
		}
		if in.Shape.NumElements() != ops[0].Shape.NumElements() || in.Shape.Elem != ops[0].Shape.Elem {
			return nil, in.Errorf("cannot reshape %s to %s", ops[0].Shape.DimsString(), in.Shape.DimsString())
		}
		return like(in.Shape), nil
	case OpTranspose:
		src := ops[0].Shape
		if !isPermutation(a.Dimensions, src.Rank()) {
			return nil, in.Errorf("dimensions=%v is not a permutation of %d dimensions", a.Dimensions, src.Rank())
		}
		dims := make([]int64, src.Rank())
		for i, p := range a.Dimensions {
			dims[i] = src.Dims[p]
		}
		return arr(src.Elem, dims...), nil
	case OpReverse:
		for i, d := range a.Dimensions {
			if d < 0 || int(d) >= ops[0].Shape.Rank() {
				return nil, in.Errorf("dimension %d out of range", d)
			}
			// XLA's shape inference and StableHLO's (C2) refuse a
			// repeated dimension, which one implementation would
			// reverse twice and another once.
			if slices.Contains(a.Dimensions[:i], d) {
				return nil, in.Errorf("dimension %d is repeated in dimensions", d)
			}
		}
		return like(ops[0].Shape), nil
	case OpSlice:
		src := ops[0].Shape
		if len(a.Slice) != src.Rank() {
			return nil, in.Errorf("slice has %d dimensions, operand %d", len(a.Slice), src.Rank())
		}
		dims := make([]int64, src.Rank())
		for i, d := range a.Slice {
			if d.Start < 0 || d.Limit < d.Start || d.Limit > src.Dims[i] || d.Stride <= 0 {
				return nil, in.Errorf("slice [%d:%d:%d] out of range for dimension %d of size %d", d.Start, d.Limit, d.Stride, i, src.Dims[i])
			}
			dims[i] = (d.Limit - d.Start + d.Stride - 1) / d.Stride
		}
		return arr(src.Elem, dims...), nil
	case OpDynamicSlice:
		if len(ops) == 0 {
			return nil, in.Errorf("needs an operand")
		}
		src := ops[0].Shape
		if err := checkIndices(in, ops[1:], src.Rank()); err != nil {
			return nil, err
		}
		if len(a.DynSliceSizes) != src.Rank() {
			return nil, in.Errorf("dynamic_slice_sizes has %d entries for rank %d", len(a.DynSliceSizes), src.Rank())
		}
		for i, s := range a.DynSliceSizes {
			if s < 0 || s > src.Dims[i] {
				return nil, in.Errorf("slice size %d exceeds dimension %d of size %d", s, i, src.Dims[i])
			}
		}
		return arr(src.Elem, a.DynSliceSizes...), nil
	case OpDynamicUpdateSlice:
		if len(ops) < 2 {
			return nil, in.Errorf("needs an operand and an update")
		}
		src, upd := ops[0].Shape, ops[1].Shape
		if err := checkIndices(in, ops[2:], src.Rank()); err != nil {
			return nil, err
		}
		if upd.Rank() != src.Rank() || upd.Elem != src.Elem {
			return nil, in.Errorf("update %s does not fit operand %s", upd.DimsString(), src.DimsString())
		}
		for i := range upd.Dims {
			if upd.Dims[i] > src.Dims[i] {
				return nil, in.Errorf("update %s does not fit operand %s", upd.DimsString(), src.DimsString())
			}
		}
		return like(src), nil
	case OpConcatenate:
		if len(ops) == 0 || len(a.Dimensions) != 1 {
			return nil, in.Errorf("needs operands and one dimension")
		}
		d := a.Dimensions[0]
		first := ops[0].Shape
		if d < 0 || int(d) >= first.Rank() {
			return nil, in.Errorf("dimension %d out of range", d)
		}
		dims := append([]int64{}, first.Dims...)
		dims[d] = 0
		for _, o := range ops {
			s := o.Shape
			if s.Rank() != first.Rank() || s.Elem != first.Elem {
				return nil, in.Errorf("operand %s (%s) does not match %s", o.Name, s.DimsString(), first.DimsString())
			}
			for i := range s.Dims {
				if int64(i) != d && s.Dims[i] != first.Dims[i] {
					return nil, in.Errorf("operand %s (%s) does not match %s", o.Name, s.DimsString(), first.DimsString())
				}
			}
			dims[d] += s.Dims[d]
		}
		return arr(first.Elem, dims...), nil
	case OpPad:
		src := ops[0].Shape
		if ops[1].Shape.Rank() != 0 || ops[1].Shape.Elem != src.Elem {
			return nil, in.Errorf("padding value must be a %s scalar", src.Elem)
		}
		if len(a.Padding) != src.Rank() {
			return nil, in.Errorf("padding has %d dimensions, operand %d", len(a.Padding), src.Rank())
		}
		dims := make([]int64, src.Rank())
		for i, p := range a.Padding {
			if p.Interior < 0 {
				return nil, in.Errorf("negative interior padding")
			}
			n := src.Dims[i]
			dims[i] = p.Lo + p.Hi + n + max(n-1, 0)*p.Interior
			if dims[i] < 0 {
				return nil, in.Errorf("padding makes dimension %d negative", i)
			}
		}
		return arr(src.Elem, dims...), nil
	case OpIota:
		if in.ShapeInferred {
			return nil, in.Errorf("iota needs its result shape")
		}
		if a.IotaDim < 0 || int(a.IotaDim) >= in.Shape.Rank() {
			return nil, in.Errorf("iota_dimension %d out of range", a.IotaDim)
		}
		return like(in.Shape), nil
	case OpCall, OpFusion:
		c, err := called(0)
		if err != nil {
			return nil, err
		}
		if err := checkArgs(in, c, ops); err != nil {
			return nil, err
		}
		return like(c.Root.Shape), nil
	case OpMap:
		c, err := called(0)
		if err != nil {
			return nil, err
		}
		if len(ops) == 0 {
			return nil, in.Errorf("needs an operand")
		}
		if err := sameDims(in, ops...); err != nil { // operand types may differ
			return nil, err
		}
		if err := checkArgs(in, c, scalarsOf(ops)); err != nil {
			return nil, err
		}
		return arr(c.Root.Shape.Elem, ops[0].Shape.Dims...), nil
	case OpWhile:
		if len(in.Called) != 2 {
			return nil, in.Errorf("needs condition= and body=")
		}
		cond, body := in.WhileComputations()
		if !cond.Root.Shape.Equal(*arr(PRED)) {
			return nil, in.Errorf("condition %s must return pred[], returns %s", cond.Name, cond.Root.Shape)
		}
		if !body.Root.Shape.Equal(ops[0].Shape) {
			return nil, in.Errorf("body %s returns %s, the loop carries %s", body.Name, body.Root.Shape, ops[0].Shape)
		}
		for _, c := range []*Computation{cond, body} { // each takes the state alone
			if err := checkArgs(in, c, ops[:1]); err != nil {
				return nil, err
			}
		}
		return like(ops[0].Shape), nil
	case OpConditional:
		if len(in.Called) == 0 || len(ops) != len(in.Called)+1 {
			return nil, in.Errorf("needs one operand per branch after the predicate or index")
		}
		sel := ops[0].Shape
		if !(sel.Rank() == 0 && (sel.Elem == PRED && len(in.Called) == 2 || sel.Elem == S32)) {
			return nil, in.Errorf("branch selector must be pred[] (two branches) or s32[], is %s", sel)
		}
		root := in.Called[0].Root.Shape
		for i, b := range in.Called {
			if !b.Root.Shape.Equal(root) {
				return nil, in.Errorf("branch %s returns %s, branch %s %s", b.Name, b.Root.Shape, in.Called[0].Name, root)
			}
			if err := checkArgs(in, b, ops[i+1:i+2]); err != nil {
				return nil, err
			}
		}
		return like(root), nil
	case OpReduce:
		return inferReduce(in)
	case OpReduceWindow:
		return inferReduceWindow(in)
	case OpSelectAndScatter:
		if len(in.Called) != 2 {
			return nil, in.Errorf("needs select= and scatter=")
		}
		if ops[2].Shape.Rank() != 0 {
			return nil, in.Errorf("init value %s must be a scalar", ops[2].Name)
		}
		// The result starts as the init value at every element and has
		// the operand's type: an init of another width (which XLA's
		// reducer check would let pass, ignoring float precision) has no
		// meaning there (FuzzMutants: an f64 init of an f32 pooling).
		if ops[2].Shape.Elem != ops[0].Shape.Elem {
			return nil, in.Errorf("init value %s is %s, must be %s like operand %s", ops[2].Name, ops[2].Shape.Elem, ops[0].Shape.Elem, ops[0].Name)
		}
		w, x := in.A.Window, ops[0].Shape
		if w == nil || len(w.Dims) != x.Rank() {
			return nil, in.Errorf("needs a window of the operand's %d dimensions", x.Rank())
		}
		if err := checkWindow(in, w); err != nil {
			return nil, err
		}
		// The source holds a value per window (XLA's shape inference).
		windows := make([]int64, x.Rank())
		for i := range windows {
			windows[i] = windowOut(x.Dims[i], w.Dims[i])
		}
		if src := ops[1].Shape; !src.IsArray() || !slices.Equal(src.Dims, windows) {
			return nil, in.Errorf("source %s is %s where the windows over %s want %s", ops[1].Name, src.DimsString(), x.DimsString(), arr(src.Elem, windows...).DimsString())
		}
		sel, scat := in.SelectAndScatterComputations()
		if err := checkComparator(in, sel, elementTypes(ops[:1])); err != nil {
			return nil, err
		}
		if err := checkReducer(in, scat, elementTypes(ops[2:3]), elementTypes(ops[1:2])); err != nil {
			return nil, err
		}
		return like(ops[0].Shape), nil
	case OpSort:
		if len(ops) == 0 || len(a.Dimensions) != 1 {
			return nil, in.Errorf("needs operands and one dimension")
		}
		if err := sameDims(in, ops...); err != nil {
			return nil, err
		}
		if d := a.Dimensions[0]; d < 0 || int(d) >= ops[0].Shape.Rank() {
			return nil, in.Errorf("dimension %d out of range", d)
		}
		cmp, err := called(0)
		if err != nil {
			return nil, err
		}
		if err := checkComparator(in, cmp, elementTypes(ops)); err != nil {
			return nil, err
		}
		if len(ops) == 1 {
			return like(ops[0].Shape), nil
		}
		t := TupleShape()
		for _, o := range ops {
			t.Tuple = append(t.Tuple, *like(o.Shape))
		}
		return &t, nil
	case OpTopK:
		s := ops[0].Shape
		if s.Rank() == 0 || a.K < 0 || a.K > s.Dims[s.Rank()-1] {
			return nil, in.Errorf("k=%d does not fit %s", a.K, s.DimsString())
		}
		dims := append([]int64{}, s.Dims...)
		dims[len(dims)-1] = a.K
		t := TupleShape(*arr(s.Elem, dims...), *arr(S32, dims...))
		return &t, nil
	case OpDot:
		return inferDot(in)
	case OpConvolution:
		return inferConvolution(in)
	case OpGather:
		return inferGather(in)
	case OpScatter:
		return inferScatter(in)
	}
	switch in.Op.Class() {
	case ClassUnary:
		return like(ops[0].Shape), nil
	case ClassBinary:
		if err := sameShapes(in, ops...); err != nil {
			return nil, err
		}
		return like(ops[0].Shape), nil
	}
	return nil, nil
}

func sameShapes(in *Instruction, ops ...*Instruction) error {
	for _, o := range ops[1:] {
		if !o.Shape.Equal(ops[0].Shape) {
			return in.Errorf("operands %s and %s differ: %s vs %s", ops[0].Name, o.Name, ops[0].Shape.DimsString(), o.Shape.DimsString())
		}
	}
	return nil
}

func sameDims(in *Instruction, ops ...*Instruction) error {
	for _, o := range ops[1:] {
		if !o.Shape.SameDims(ops[0].Shape) {
			return in.Errorf("operands %s and %s differ: %s vs %s", ops[0].Name, o.Name, ops[0].Shape.DimsString(), o.Shape.DimsString())
		}
	}
	return nil
}

func checkIndices(in *Instruction, idx []*Instruction, rank int) error {
	if len(idx) == 1 && idx[0].Shape.Rank() == 1 && rank != 1 {
		return in.Errorf("start indices must be %d scalars", rank)
	}
	if len(idx) != rank {
		return in.Errorf("has %d start indices for rank %d", len(idx), rank)
	}
	for _, o := range idx {
		if o.Shape.Rank() != 0 || !o.Shape.Elem.IsInteger() {
			return in.Errorf("start index %s must be an integer scalar, is %s", o.Name, o.Shape.DimsString())
		}
	}
	return nil
}

func checkArgs(in *Instruction, c *Computation, ops []*Instruction) error {
	if len(c.Params) != len(ops) {
		return in.Errorf("passes %d arguments to %s, which takes %d", len(ops), c.Name, len(c.Params))
	}
	for i, o := range ops {
		if !compatible(c.Params[i].Shape, o.Shape, false) {
			return in.Errorf("argument %d is %s, %s takes %s", i, o.Shape.DimsString(), c.Name, c.Params[i].Shape.DimsString())
		}
	}
	return nil
}

func isPermutation(p []int64, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, d := range p {
		if d < 0 || int(d) >= n || seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
}
