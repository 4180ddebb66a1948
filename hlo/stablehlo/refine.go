package stablehlo

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// Shape refinement. jax.export with symbolic shapes writes an entry of
// dynamic argument types (tensor<?x4xf32>): its @main reads each
// dimension variable with get_dimension_size, checks it with JAX's
// shape_assertion custom-calls, and passes it to the wrapped function,
// which computes the shapes of its dynamic ops (dynamic_broadcast_in_dim,
// dynamic_iota, dynamic_reshape, real_dynamic_slice, ...) from it. XLA
// runs such a module (XlaCallModule) by refining its shapes with the
// arguments' before compiling; vkjit does the same while it translates:
// the entry's parameters take the arguments' shapes, get_dimension_size
// is their dimension as a constant, shape operands fold to constants
// (the evaluator folds what they compute from those), each dynamic op
// becomes its static form, each other op's dynamic result type is what
// HLO's shape inference gives for its operands, and a function called
// with dynamic types is inlined into its caller, specialized to the
// values and shapes it is called with.

// refineFrom makes the translation refine the entry's dynamic types
// from args, the arguments' shapes, where the entry has a dynamic
// argument type and args are given.
func (t *translator) refineFrom(entry *Func, args []hlo.Shape) error {
	dynamic := false
	for _, a := range entry.Args {
		dynamic = dynamic || a.Type.Dynamic
	}
	if !dynamic || args == nil {
		return nil
	}
	if len(args) != len(entry.Args) {
		return &Error{Pos: entry.Pos, Msg: fmt.Sprintf("@%s takes %d arguments, %d shapes given to refine its dynamic types", entry.Name, len(entry.Args), len(args))}
	}
	args = slices.Clone(args)
	for i, a := range entry.Args {
		if a.Type.Elem == hlo.BF16 && args[i].Elem == hlo.U16 {
			// NumPy has no bfloat16: .npy files carry bf16 as its bits,
			// uint16, and vkjit run reads them so.
			args[i] = hlo.ArrayShape(hlo.BF16, args[i].Dims...)
		}
		if a.Type.Kind != TensorType || !fits(a.Type.Shape(), args[i]) {
			return &Error{Pos: a.Pos, Msg: fmt.Sprintf("argument %d is %s, which does not fit %%%s: %s", i, typeText(args[i]), a.Name, a.Type.Text)}
		}
	}
	t.args, t.inlining = args, map[string]bool{}
	return nil
}

// fits says whether a value of shape got may have type want: the same
// element types and ranks, and dimensions equal where want's are not
// dynamic (-1).
func fits(want, got hlo.Shape) bool {
	if want.IsTuple() || got.IsTuple() {
		if !want.IsTuple() || !got.IsTuple() || len(want.Tuple) != len(got.Tuple) {
			return false
		}
		for i := range want.Tuple {
			if !fits(want.Tuple[i], got.Tuple[i]) {
				return false
			}
		}
		return true
	}
	if want.Elem != got.Elem || want.Rank() != got.Rank() {
		return false
	}
	for i, d := range want.Dims {
		if d >= 0 && d != got.Dims[i] {
			return false
		}
	}
	return true
}

// dynamic says whether s has a dynamic dimension.
func dynamic(s hlo.Shape) bool {
	for _, e := range s.Tuple {
		if dynamic(e) {
			return true
		}
	}
	for _, d := range s.Dims {
		if d < 0 {
			return true
		}
	}
	return false
}

// refine gives each of ins (in order: operands first) whose shape is
// dynamic the shape HLO's inference computes from its operands.
func refine(ins []*hlo.Instruction) error {
	for _, in := range ins {
		if !dynamic(in.Shape) {
			continue
		}
		s, err := hlo.InferShape(in)
		if err != nil || s == nil || dynamic(*s) {
			return fmt.Errorf("its result type %s is dynamic, and its operands do not determine it (%s)", typeText(in.Shape), in.Op)
		}
		in.Shape = *s
	}
	return nil
}

// foldInts is the value of x, an integer array its translation computed
// from constants alone (a shape: dimension sizes read by
// get_dimension_size, converted, added, concatenated), folded by the
// evaluator; an error where x reads a parameter or anything else.
func foldInts(x *hlo.Instruction) ([]int64, error) {
	l, err := fold(x, map[*hlo.Instruction]*hlo.Literal{})
	if err != nil {
		return nil, err
	}
	if l.Shape.Elem == hlo.PRED { // a condition: one byte each
		v := make([]int64, len(l.Data))
		for i, b := range l.Data {
			v[i] = int64(b)
		}
		return v, nil
	}
	return l.Ints()
}

// foldLimit bounds the elements of one folded value: shapes are small.
const foldLimit = 1 << 12

func fold(x *hlo.Instruction, memo map[*hlo.Instruction]*hlo.Literal) (*hlo.Literal, error) {
	if l, ok := memo[x]; ok {
		return l, nil
	}
	if x.Op == hlo.OpConstant && x.Literal != nil {
		return x.Literal, nil
	}
	if x.Op == hlo.OpParameter || !x.Shape.IsArray() || len(x.Called) > 0 || x.Shape.NumElements() > foldLimit || dynamic(x.Shape) {
		return nil, fmt.Errorf("computed at run time (a dynamic shape)")
	}
	ops := make([]*hlo.Literal, len(x.Operands))
	for i, o := range x.Operands {
		l, err := fold(o, memo)
		if err != nil {
			return nil, err
		}
		ops[i] = l
	}
	l, err := eval.Fold(x, ops)
	if err != nil {
		return nil, fmt.Errorf("computed at run time (a dynamic shape): %v", err)
	}
	memo[x] = l
	return l, nil
}

// inline translates a call of f, whose types are dynamic, into the
// caller's computation: f's body with its arguments bound to args, so
// that the values and shapes it is called with refine it.
func (c *opContext) inline(f *Func) ([]*hlo.Instruction, error) {
	t := c.t
	if t.inlining[f.Name] {
		return nil, fmt.Errorf("@%s calls itself", f.Name)
	}
	if len(f.Args) != len(c.args) {
		return nil, fmt.Errorf("@%s takes %d arguments, the call gives %d", f.Name, len(f.Args), len(c.args))
	}
	sc := newScope(c.cb)
	for i, a := range f.Args {
		if err := t.checkType(a.Type, a.Pos); err != nil {
			return nil, err
		}
		if !fits(a.Type.Shape(), c.args[i].Shape) {
			return nil, fmt.Errorf("argument %d of @%s is %s, its type says %s", i, f.Name, typeText(c.args[i].Shape), a.Type.Text)
		}
		sc.vals[a.Name] = c.args[i]
	}
	t.inlining[f.Name] = true
	defer delete(t.inlining, f.Name)
	results, err := t.block(f.Body, sc, false)
	if err != nil {
		return nil, err
	}
	if err := resultsMatch(f, results); err != nil {
		return nil, err
	}
	return results, nil
}

// hasDynamicTypes says whether f's signature has a dynamic type.
func hasDynamicTypes(f *Func) bool {
	for _, a := range f.Args {
		if a.Type.Dynamic {
			return true
		}
	}
	for _, r := range f.Results {
		if r.Dynamic {
			return true
		}
	}
	return false
}

// placeholder is a {i} in a shape_assertion's error_message.
var placeholder = regexp.MustCompile(`\{(\d+)\}`)

// shapeAssertion is JAX's shape_assertion custom-call (operands: the
// condition, then the values its error_message's {0}, {1}, ... name):
// once shapes are refined the condition is a constant; false fails the
// translation with JAX's message, as XLA's refinement does.
func shapeAssertion(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.args) == 0 {
		return nil, fmt.Errorf("shape_assertion needs a condition")
	}
	ok, err := foldInts(c.args[0])
	if err != nil {
		return nil, unsupportedf(dynamicCategory, "shape_assertion on a condition %v", err)
	}
	if len(ok) == 1 && ok[0] != 0 {
		return nil, nil
	}
	msg := "a shape assertion failed"
	if a := c.attr("error_message"); a != nil {
		if s, err := strconv.Unquote(a.Text); err == nil {
			msg = s
		} else {
			msg = a.Text
		}
	}
	msg = placeholder.ReplaceAllStringFunc(msg, func(p string) string {
		i, _ := strconv.Atoi(p[1 : len(p)-1])
		if i+1 < len(c.args) {
			if v, err := foldInts(c.args[i+1]); err == nil && len(v) == 1 {
				return fmt.Sprint(v[0])
			}
		}
		return p
	})
	return nil, fmt.Errorf("%s", msg)
}

// dynamicTopK is StableHLO's stablehlo.dynamic_top_k custom-call (x, k)
// with k folded: chlo.top_k of that k.
func dynamicTopK(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.args) != 2 || len(c.op.Results) != 2 {
		return nil, fmt.Errorf("stablehlo.dynamic_top_k takes an array and k, and returns values and indices")
	}
	k, err := foldInts(c.args[1])
	if err != nil || len(k) != 1 {
		return nil, unsupportedf(dynamicCategory, "stablehlo.dynamic_top_k with k %v", err)
	}
	x := c.args[0].Shape
	if x.Rank() == 0 || k[0] < 0 || k[0] > x.Dims[x.Rank()-1] {
		return nil, fmt.Errorf("stablehlo.dynamic_top_k of %d of %s", k[0], typeText(x))
	}
	sc := *c
	op := *c.op
	op.Attrs = append(slices.Clone(c.op.Attrs), NamedAttr{Name: "k", Attr: &Attr{Kind: IntAttr, Text: fmt.Sprint(k[0])}})
	sc.op, sc.args = &op, c.args[:1]
	return topKRule(&sc) // its result types refined from x and k (refine)
}

// dynamicRngBitGenerator is StableHLO's
// stablehlo.dynamic_rng_bit_generator custom-call (state, shape) with
// the shape folded: rng_bit_generator of that output shape.
func dynamicRngBitGenerator(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.args) != 2 || len(c.op.OutTypes) != 2 {
		return nil, fmt.Errorf("stablehlo.dynamic_rng_bit_generator takes a state and a shape, and returns a state and an array")
	}
	return staticRule(rngBitGeneratorRule, shapeOperand{index: 1, result: 1})(c)
}

// shapeOperands applies a custom-call's indices_of_shape_operands (how
// JAX's custom calls of dynamic results pass the results' shapes:
// mlir.custom_call's result_shapes, one 1-D integer operand per result):
// with those operands folded, the op's result types refined from them
// and the operands dropped (withShapes). Without the attribute it
// returns c as it is.
func shapeOperands(c *opContext) (*opContext, error) {
	idx, ok, err := c.ints("indices_of_shape_operands")
	if !ok || err != nil {
		return c, err
	}
	if len(idx) != len(c.op.OutTypes) {
		return nil, fmt.Errorf("indices_of_shape_operands names %d operands for %d results", len(idx), len(c.op.OutTypes))
	}
	shapes := make([]shapeOperand, len(idx))
	for r, i := range idx {
		shapes[r] = shapeOperand{index: int(i), result: r}
	}
	sc, err := withShapes(c, shapes)
	if err != nil {
		return nil, err
	}
	sc.op.Attrs = slices.DeleteFunc(sc.op.Attrs, func(a NamedAttr) bool { return a.Name == "indices_of_shape_operands" })
	return sc, nil
}

// dynamicApproxTopK is JAX's stablehlo.dynamic_approx_top_k custom-call
// (jax.lax.approx_max_k with a symbolic k) once shapeOperands has taken
// its results' shapes: ApproxTopK's operands and initial values, then
// k, folded: XLA's ApproxTopK with top_k = k.
func dynamicApproxTopK(c *opContext) ([]*hlo.Instruction, error) {
	n := len(c.op.OutTypes)
	if n == 0 || len(c.args) != 2*n+1 {
		return nil, fmt.Errorf("stablehlo.dynamic_approx_top_k takes %d operands and initial values and k", n)
	}
	k, err := foldInts(c.args[2*n])
	if err != nil || len(k) != 1 {
		return nil, unsupportedf(dynamicCategory, "stablehlo.dynamic_approx_top_k with k %v", err)
	}
	op := *c.op
	op.Attrs = nil
	for _, a := range c.op.Attrs {
		if a.Name != "mhlo.backend_config" && a.Name != "backend_config" {
			op.Attrs = append(op.Attrs, a)
		}
	}
	if cfg := c.attr("mhlo.backend_config", "backend_config"); cfg != nil && cfg.Kind == DictAttr {
		d := *cfg
		d.Dict = nil
		for _, f := range cfg.Dict {
			if f.Name != "top_k" {
				d.Dict = append(d.Dict, f)
			}
		}
		d.Dict = append(d.Dict, NamedAttr{Name: "top_k", Attr: &Attr{Kind: IntAttr, Text: fmt.Sprint(k[0])}})
		op.Attrs = append(op.Attrs, NamedAttr{Name: "mhlo.backend_config", Attr: &d})
	}
	op.Callee = "ApproxTopK"
	sc := *c
	sc.op, sc.args = &op, c.args[:2*n]
	return customCallRule(&sc)
}
