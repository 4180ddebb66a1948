package stablehlo

import (
	"fmt"
	"strconv"
	"strings"
)

// The custom (pretty) assembly forms, as the StableHLO and CHLO ops'
// assemblyFormat declarations print them (stablehlo/dialect/*Ops.td).
// Each parses the text after the op's name into the same parts as the
// generic form.
var customForms map[string]func(*parser, *Op) error

func init() {
	customForms = map[string]func(*parser, *Op) error{
		"stablehlo.compare":            compareForm,
		"stablehlo.iota":               iotaForm,
		"stablehlo.slice":              sliceForm,
		"stablehlo.get_tuple_element":  tupleIndexForm,
		"stablehlo.convolution":        convolutionForm,
		"stablehlo.reduce":             reduceForm,
		"stablehlo.while":              whileForm,
		"stablehlo.custom_call":        customCallForm,
		"stablehlo.constant":           constantForm,
		"stablehlo.composite":          compositeForm,
		"func.call":                    callForm,
		"func.return":                  simpleForm,
		"stablehlo.return":             simpleForm,
		"stablehlo.case":               caseForm,
		"stablehlo.if":                 caseForm,
		"chlo.top_k":                   topKForm,
		"check.expect_eq_const":        checkConstForm,
		"check.expect_almost_eq_const": checkConstForm,
	}
	// Ops of the form: operands, `name = value` arguments, attributes, and
	// a type signature.
	for _, name := range []string{
		"abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "complex", "convert", "cosine",
		"count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor", "imag",
		"is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate",
		"not", "or", "popcnt", "power", "real", "remainder", "reshape", "round_nearest_afz",
		"round_nearest_even", "rsqrt", "select", "shift_left", "shift_right_arithmetic",
		"shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor",
		"bitcast_convert", "tuple", "after_all", "optimization_barrier", "create_token", "replica_id",
		"partition_id", "broadcast_in_dim", "broadcast", "transpose", "reverse", "concatenate", "pad",
		"dynamic_slice", "dynamic_update_slice", "dot_general", "dot", "rng_bit_generator",
		"reduce_precision", "fft", "get_dimension_size", "uniform_quantize", "uniform_dequantize",
		"cholesky", "triangular_solve", "erf", "batch_norm_inference", "batch_norm_training",
		"batch_norm_grad", "rng", "dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota",
		"set_dimension_size", "atan", "acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh",
		"dynamic_pad", "dynamic_gather", "dynamic_conv", "real_dynamic_slice",
	} {
		customForms["stablehlo."+name] = simpleForm
	}
	for _, name := range []string{
		"acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i0e", "bessel_i1e", "conj", "cosh",
		"digamma", "erf", "erfc", "erf_inv", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma", "sinh", "tan",
		"next_after", "polygamma", "zeta", "igamma", "igammac", "square", "mulhi",
		"broadcast_add", "broadcast_subtract", "broadcast_multiply", "broadcast_divide",
		"broadcast_maximum", "broadcast_minimum", "broadcast_power", "broadcast_remainder",
		"broadcast_and", "broadcast_or", "broadcast_xor", "broadcast_atan2", "broadcast_compare",
		"broadcast_complex", "broadcast_shift_left", "broadcast_shift_right_arithmetic",
		"broadcast_shift_right_logical", "broadcast_select", "broadcast_next_after",
		"broadcast_polygamma", "broadcast_zeta", "broadcast_igamma", "broadcast_igammac",
	} {
		customForms["chlo."+name] = simpleForm
	}
	for _, name := range []string{"expect_eq", "expect_almost_eq", "expect_close", "expect_serialized_eq"} {
		customForms["check."+name] = simpleForm
	}
	customForms["interpreter.probe"] = simpleForm
	customForms["interpreter.print"] = simpleForm
	customForms["chlo.scan"] = scanForm
	for name, f := range shardyForms {
		customForms[name] = f
	}
}

// simpleForm reads `operands [, name = value]... [{attrs}] : signature`,
// also what follows an op's own prefix.
func simpleForm(p *parser, op *Op) error {
	s := p.s
	var err error
	if op.Operands, err = p.operandList(); err != nil {
		return err
	}
	if err := p.keywordArgs(op); err != nil {
		return err
	}
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	if !s.accept(":") {
		if op.Name == "func.return" || op.Name == "stablehlo.return" {
			return nil // return with no values
		}
		return s.errorf("op %s: expected \":\" and its types, found %s", op.Name, s.describe())
	}
	if err := p.signature(op); err != nil {
		return err
	}
	if err := p.optionalAttrs(op); err != nil { // check ops print their attributes after the types
		return err
	}
	return nil
}

// keywordArgs reads `name = value` arguments separated by commas, each
// value an attribute, where a list may be followed by `x [...]` and
// `-> [...]` (dot_general's and convolution's dimension pairs).
func (p *parser) keywordArgs(op *Op) error {
	s := p.s
	for {
		save := *s
		name := s.ident()
		if name == "" || !s.accept("=") {
			*s = save
			return nil
		}
		v, err := p.argValue()
		if err != nil {
			return err
		}
		op.setAttr(name, v)
		if !s.accept(",") {
			return nil
		}
	}
}

// argValue is an argument's value: an attribute, a bare word, or lists
// joined by x and ->.
func (p *parser) argValue() (*Attr, error) {
	s := p.s
	s.skip()
	if s.peek() == '<' { // dot_general's algorithm = <...>
		pos := s.here()
		s.advance(1)
		body, err := s.balanced('<', '>')
		return &Attr{Kind: DialectAttr, Text: "#stablehlo.dot_algorithm", Body: body, Pos: pos}, err
	}
	v, err := p.untypedAttr()
	if err != nil {
		return nil, err
	}
	if v.Kind != ListAttr {
		return v, nil
	}
	parts := []*Attr{v}
	seps := []string{}
	for {
		if s.lookingAt("x") && p.listFollows(1) {
			s.advance(1)
			seps = append(seps, "x")
		} else if s.lookingAt("->") && p.listFollows(2) {
			s.advance(2)
			seps = append(seps, "->")
		} else {
			break
		}
		w, err := p.untypedAttr()
		if err != nil {
			return nil, err
		}
		parts = append(parts, w)
	}
	if len(parts) == 1 {
		return v, nil
	}
	return &Attr{Kind: ListAttr, List: parts, Text: strings.Join(seps, " "), Pos: v.Pos}, nil
}

// listFollows reports whether a [ follows after skipping n bytes.
func (p *parser) listFollows(n int) bool {
	s := p.s
	i := s.pos + n
	for i < len(s.src) && (s.src[i] == ' ' || s.src[i] == '\t') {
		i++
	}
	return i < len(s.src) && s.src[i] == '['
}

// signature reads the types after ':' in any of the forms the custom
// formats print: (T, ...) -> R, (T, ...) -> (R, ...), T -> R (CHLO), or
// a list of types (one for all operands and the result; the operands'
// then the result's for select; the results' for tuple and barriers).
func (p *parser) signature(op *Op) error {
	s := p.s
	if s.peek() == '(' {
		return p.functionalType(op)
	}
	var list []Type
	for {
		t, err := p.typ()
		if err != nil {
			return err
		}
		list = append(list, t)
		if !s.accept(",") {
			break
		}
	}
	if s.accept("->") {
		op.InTypes = list
		var err error
		op.OutTypes, err = p.typeList()
		return err
	}
	n := len(op.Results)
	switch {
	case len(list) == 1:
		op.OutTypes = repeat(list[0], n)
		if !resultTypeOnly[op.Name] {
			op.InTypes = repeat(list[0], len(op.Operands))
		}
	case len(list) >= n:
		op.OutTypes = list[len(list)-n:]
		if len(list) == len(op.Operands) {
			op.InTypes = list
		}
	default:
		return s.errorAt(op.Pos, "op %s: %d types for %d results", op.Name, len(list), n)
	}
	return nil
}

// resultTypeOnly are the ops whose one printed type is the result's,
// their operands' types derived from it (complex's parts, a tuple's
// elements).
var resultTypeOnly = map[string]bool{"stablehlo.complex": true, "stablehlo.tuple": true}

func repeat(t Type, n int) []Type {
	out := make([]Type, n)
	for i := range out {
		out[i] = t
	}
	return out
}

// compareForm: DIR, %a, %b [, TYPE] : signature.
func compareForm(p *parser, op *Op) error {
	s := p.s
	pos := s.here()
	dir := s.ident()
	if dir == "" {
		return s.errorf("compare: expected a direction (EQ, NE, LT, LE, GT, GE), found %s", s.describe())
	}
	op.setAttr("comparison_direction", &Attr{Kind: KeywordAttr, Text: dir, Pos: pos})
	if err := s.expect(","); err != nil {
		return err
	}
	var err error
	if op.Operands, err = p.operandList(); err != nil {
		return err
	}
	if w := s.ident(); w != "" {
		op.setAttr("compare_type", &Attr{Kind: KeywordAttr, Text: w})
	}
	return attrsAndSignature(p, op)
}

// iotaForm: dim = N [{attrs}] : T.
func iotaForm(p *parser, op *Op) error { return simpleForm(p, op) }

// sliceForm: %x [start:limit(:stride)?, ...] : signature.
func sliceForm(p *parser, op *Op) error {
	s := p.s
	x, err := p.operand()
	if err != nil {
		return err
	}
	op.Operands = []Value{x}
	if s.peek() == '[' {
		s.advance(1)
		var start, limit, stride []int64
		for !s.accept("]") {
			nums := []int64{}
			for {
				n := s.number()
				v, err := strconv.ParseInt(n, 10, 64)
				if err != nil {
					return s.errorf("slice: expected an index, found %s", s.describe())
				}
				nums = append(nums, v)
				if !s.accept(":") {
					break
				}
			}
			if len(nums) < 2 || len(nums) > 3 {
				return s.errorf("slice: expected start:limit or start:limit:stride")
			}
			if len(nums) == 2 {
				nums = append(nums, 1)
			}
			start, limit, stride = append(start, nums[0]), append(limit, nums[1]), append(stride, nums[2])
			s.accept(",")
		}
		op.setAttr("start_indices", &Attr{Kind: ArrayAttr, Array: start})
		op.setAttr("limit_indices", &Attr{Kind: ArrayAttr, Array: limit})
		op.setAttr("strides", &Attr{Kind: ArrayAttr, Array: stride})
	} else {
		if err := p.keywordArgs(op); err != nil {
			return err
		}
	}
	return attrsAndSignature(p, op)
}

// tupleIndexForm: %x[i] : signature.
func tupleIndexForm(p *parser, op *Op) error {
	s := p.s
	x, err := p.operand()
	if err != nil {
		return err
	}
	op.Operands = []Value{x}
	if err := s.expect("["); err != nil {
		return err
	}
	n := s.number()
	if err := s.expect("]"); err != nil {
		return err
	}
	op.setAttr("index", &Attr{Kind: IntAttr, Text: n})
	return attrsAndSignature(p, op)
}

// convolutionForm: (%a, %b) dim_numbers = ..., window = {...} {attrs} : signature.
func convolutionForm(p *parser, op *Op) error {
	if err := p.parenOperands(op); err != nil {
		return err
	}
	if err := p.keywordArgs(op); err != nil {
		return err
	}
	return attrsAndSignature(p, op)
}

func attrsAndSignature(p *parser, op *Op) error {
	s := p.s
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	if err := s.expect(":"); err != nil {
		return err
	}
	return p.signature(op)
}

// reduceForm: (%a init: %b), ... applies OP across dimensions = [...]
// {attrs} : signature, or ... across dimensions = [...] {attrs} :
// signature reducer(%a: T, %b: T) (%c: T, %d: T) { region }.
func reduceForm(p *parser, op *Op) error {
	s := p.s
	var inputs, inits []Value
	for s.accept("(") {
		x, err := p.operand()
		if err != nil {
			return err
		}
		if err := s.expectWord("init"); err != nil {
			return err
		}
		if err := s.expect(":"); err != nil {
			return err
		}
		y, err := p.operand()
		if err != nil {
			return err
		}
		if err := s.expect(")"); err != nil {
			return err
		}
		inputs, inits = append(inputs, x), append(inits, y)
		if !s.accept(",") {
			break
		}
	}
	op.Operands = append(inputs, inits...)
	applies := ""
	if s.acceptWord("applies") {
		applies = s.ident()
		if applies == "" {
			return s.errorf("reduce: expected the op it applies, found %s", s.describe())
		}
	}
	if err := s.expectWord("across"); err != nil {
		return err
	}
	if err := s.expectWord("dimensions"); err != nil {
		return err
	}
	if err := s.expect("="); err != nil {
		return err
	}
	dims, err := p.untypedAttr()
	if err != nil {
		return err
	}
	op.setAttr("dimensions", dims)
	if err := attrsAndSignature(p, op); err != nil {
		return err
	}
	n := len(inputs)
	if applies != "" {
		// The body the short form stands for: the op over (acc, x).
		r := &Region{Pos: op.Pos}
		b := &Block{}
		var args []Value
		for i := 0; i < 2*n; i++ {
			t := scalarOf(op.InTypes, n+i) // accumulators: the init values' types
			if i >= n {
				t = scalarOf(op.InTypes, i-n) // values: the inputs' element types
			}
			name := fmt.Sprintf("__reduce_arg%d", i)
			b.Args = append(b.Args, Arg{Name: name, Type: t})
			args = append(args, Value{Name: name, Pos: op.Pos})
		}
		body := &Op{Name: applies, Results: []string{"__reduce_result"}, Operands: args, Pos: op.Pos}
		if len(op.InTypes) > n {
			body.OutTypes = []Type{scalarOf(op.InTypes, n)}
		}
		b.Ops = append(b.Ops, body, &Op{Name: "stablehlo.return", Operands: []Value{{Name: "__reduce_result", Pos: op.Pos}}, Pos: op.Pos})
		r.Blocks = []*Block{b}
		op.Regions = []*Region{r}
		return nil
	}
	if err := s.expectWord("reducer"); err != nil {
		return err
	}
	// reducer(%a: T, %b: T) (%c: T, %d: T): each pair is one input's
	// accumulator and value; the block takes the accumulators first.
	var accs, vals []Arg
	for s.accept("(") {
		a, err := p.argument()
		if err != nil {
			return err
		}
		if err := s.expect(","); err != nil {
			return err
		}
		b, err := p.argument()
		if err != nil {
			return err
		}
		if err := s.expect(")"); err != nil {
			return err
		}
		accs, vals = append(accs, a), append(vals, b)
	}
	r, err := p.region()
	if err != nil {
		return err
	}
	r.Blocks[0].Args = append(accs, vals...)
	op.Regions = []*Region{r}
	return nil
}

// scalarOf is the scalar type of element type list[i] (the init values'
// types are scalars already).
func scalarOf(list []Type, i int) Type {
	if i >= len(list) {
		return Type{Kind: TensorType}
	}
	t := list[i]
	return Type{Kind: TensorType, Elem: t.Elem, Dims: []int64{}, Text: "tensor<" + mlirName(t.Elem) + ">"}
}

// whileForm: (%iterArg = %x, ...) : types {attrs} cond { } do { }.
func whileForm(p *parser, op *Op) error {
	s := p.s
	if err := s.expect("("); err != nil {
		return err
	}
	var names []string
	var argPos []Value
	if !s.accept(")") {
		for {
			pos := s.here()
			name := s.valueName()
			if name == "" {
				return s.errorf("while: expected %%iterArg = value, found %s", s.describe())
			}
			if err := s.expect("="); err != nil {
				return err
			}
			v, err := p.operand()
			if err != nil {
				return err
			}
			names = append(names, name)
			argPos = append(argPos, Value{Name: name, Pos: pos})
			op.Operands = append(op.Operands, v)
			if s.accept(")") {
				break
			}
			if err := s.expect(","); err != nil {
				return err
			}
		}
	}
	if len(op.Operands) > 0 {
		if err := s.expect(":"); err != nil {
			return err
		}
		for range op.Operands {
			t, err := p.typ()
			if err != nil {
				return err
			}
			op.InTypes = append(op.InTypes, t)
			s.accept(",")
		}
	}
	op.OutTypes = op.InTypes
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	for _, kw := range []string{"cond", "do"} {
		if err := s.expectWord(kw); err != nil {
			return err
		}
		r, err := p.region()
		if err != nil {
			return err
		}
		if len(r.Blocks[0].Args) == 0 {
			for i, n := range names {
				r.Blocks[0].Args = append(r.Blocks[0].Args, Arg{Name: n, Type: op.InTypes[i], Pos: argPos[i].Pos})
			}
		}
		op.Regions = append(op.Regions, r)
	}
	return nil
}

// customCallForm: @target(%a, ...) {attrs} : signature.
func customCallForm(p *parser, op *Op) error {
	s := p.s
	target, err := s.symbol()
	if err != nil {
		return err
	}
	op.Callee = target
	if err := p.parenOperands(op); err != nil {
		return err
	}
	return attrsAndSignature(p, op)
}

// callForm: @f(%a, ...) {attrs} : (T) -> R.
func callForm(p *parser, op *Op) error { return customCallForm(p, op) }

// constantForm: [{attrs}] value : T, or a value whose type it carries.
func constantForm(p *parser, op *Op) error {
	s := p.s
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	v, err := p.attr()
	if err != nil {
		return err
	}
	if v.Type == nil {
		return s.errorf("constant: expected the value's type after \":\", found %s", s.describe())
	}
	op.setAttr("value", v)
	op.OutTypes = []Type{*v.Type}
	return nil
}

// compositeForm: "name" %ops {attrs} : signature.
func compositeForm(p *parser, op *Op) error {
	s := p.s
	name, err := s.str()
	if err != nil {
		return err
	}
	op.setAttr("name", &Attr{Kind: StringAttr, Text: name})
	if op.Operands, err = p.operandList(); err != nil {
		return err
	}
	return attrsAndSignature(p, op)
}

// caseForm: (%index) ({ region }, ...) : signature, the generic form's
// tail, as pretty printers of older StableHLO wrote it.
func caseForm(p *parser, op *Op) error { return p.generic(op) }

// topKForm: (%x, k = N [, largest = B]) : T -> (R, R).
func topKForm(p *parser, op *Op) error {
	s := p.s
	if err := s.expect("("); err != nil {
		return err
	}
	x, err := p.operand()
	if err != nil {
		return err
	}
	op.Operands = []Value{x}
	if s.accept(",") {
		if err := p.keywordArgs(op); err != nil {
			return err
		}
	}
	if err := s.expect(")"); err != nil {
		return err
	}
	return attrsAndSignature(p, op)
}

// checkConstForm: %x, dense<...> : T [{attrs}].
func checkConstForm(p *parser, op *Op) error {
	s := p.s
	x, err := p.operand()
	if err != nil {
		return err
	}
	op.Operands = []Value{x}
	if err := s.expect(","); err != nil {
		return err
	}
	v, err := p.attr()
	if err != nil {
		return err
	}
	op.setAttr("value", v)
	if s.accept(",") {
		if err := p.keywordArgs(op); err != nil {
			return err
		}
	}
	if v.Type == nil {
		return s.errorf("%s: expected the expected value's type", op.Name)
	}
	op.InTypes = []Type{*v.Type}
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	return nil
}

// scanForm: (%inputs) inits(%inits) dimension=N { region } : signature.
func scanForm(p *parser, op *Op) error {
	s := p.s
	if err := s.expect("("); err != nil {
		return err
	}
	inputs, err := p.operandsUntil(")")
	if err != nil {
		return err
	}
	if err := s.expectWord("inits"); err != nil {
		return err
	}
	if err := s.expect("("); err != nil {
		return err
	}
	inits, err := p.operandsUntil(")")
	if err != nil {
		return err
	}
	op.Operands = append(inputs, inits...)
	op.setAttr("num_inputs", &Attr{Kind: IntAttr, Text: fmt.Sprint(len(inputs))})
	if err := p.keywordArgs(op); err != nil {
		return err
	}
	if s.acceptWord("attributes") {
		d, err := p.attrDict()
		if err != nil {
			return err
		}
		op.Attrs = append(op.Attrs, d...)
	}
	r, err := p.region()
	if err != nil {
		return err
	}
	op.Regions = []*Region{r}
	return attrsAndSignature(p, op)
}
