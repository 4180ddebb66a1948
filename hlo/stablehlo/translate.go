package stablehlo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Why a module is not run, for a conformance runner's skips: the
// categories vkjit states, beside what it does not run yet (no category).
const (
	typesCategory       = ""
	dynamicCategory     = "dynamic shapes"
	quantizedCategory   = "quantized types"
	collectivesCategory = "collectives across several processes"
	hostCategory        = "infeed, outfeed, send and recv"
	probeCategory       = "the interpreter's probes"
)

// Unsupported is what vkjit does not translate or run, named; Category
// says why it is skipped for good (dynamic shapes, quantized types,
// collectives, host transfers), or is empty for what vkjit does not do
// yet.
type Unsupported struct {
	Category string
	What     string
}

func (u *Unsupported) Error() string {
	if u.Category != "" {
		return fmt.Sprintf("%s is not supported (%s)", u.What, u.Category)
	}
	return u.What + " is not supported"
}

func unsupportedf(category, format string, args ...any) error {
	return &Unsupported{Category: category, What: fmt.Sprintf(format, args...)}
}

// Module is a translated StableHLO module: the HLO module and the checks
// of the check dialect. The entry's result is a tuple: the entry
// function's own results first (Results of them), then the values the
// checks compare.
type Translated struct {
	HLO     *hlo.Module
	Entry   string // the function it runs from
	Results int
	Checks  []Check
	Pos     hlo.Pos
}

// CheckKind is how a check compares.
type CheckKind uint8

const (
	CheckEq       CheckKind = iota // bit for bit (NaN equals NaN)
	CheckAlmostEq                  // |actual - expected| <= Tolerance (0.001 by default)
	CheckClose                     // at most MaxULP apart (3 by default); non-finite values exactly
)

// Check is one check.expect_* op (or custom_call @check.expect_*):
// the entry's output Actual against output Expected or the constant
// Const.
type Check struct {
	Op        string
	Kind      CheckKind
	Actual    int
	Expected  int // -1 with Const
	Const     *hlo.Literal
	Tolerance float64
	MaxULP    int64
	MinULP    int64
	Pos       hlo.Pos
}

// Parse reads every module of a StableHLO file and translates each: one
// result per program, with its error (a position and a message; an op
// or type vkjit lacks is named, errors.As *Unsupported; a program that
// failed has only its Pos, its entry's place). A module is one
// program, or, where it has no @main and several argument-free public
// functions (a test file's), one program for each.
func Parse(file, src string) ([]*Translated, []error, error) {
	return ParseWith(file, src, Options{})
}

// Options are choices of a translation.
type Options struct {
	// Args, where not nil, are the shapes of the entry's arguments: an
	// entry whose argument types are dynamic (tensor<?x4xf32>: jax.export
	// with symbolic shapes) is refined from them (refine.go), as XLA's
	// XlaCallModule refines such a module with its arguments' shapes
	// before compiling it. A static entry ignores them.
	Args []hlo.Shape
}

// ParseWith is Parse with options.
func ParseWith(file, src string, o Options) ([]*Translated, []error, error) {
	mods, err := ParseIR(file, src)
	if err != nil {
		return nil, nil, err
	}
	var out []*Translated
	var errs []error
	add := func(t *Translated, err error, pos hlo.Pos) {
		if err != nil {
			t = &Translated{Pos: pos}
		}
		out, errs = append(out, t), append(errs, err)
	}
	for _, m := range mods {
		es := Entries(m)
		if len(es) < 2 || !argumentFree(es) {
			pos := m.Pos
			if len(es) == 1 {
				pos = es[0].Pos
			}
			t, err := translate(m, o)
			add(t, err, pos)
			continue
		}
		for _, e := range es {
			t, err := translateEntry(m, e, o)
			add(t, err, e.Pos)
		}
	}
	return out, errs, nil
}

func argumentFree(fs []*Func) bool {
	for _, f := range fs {
		if len(f.Args) > 0 {
			return false
		}
	}
	return true
}

// ParseModule reads a file holding one module into HLO, for compiling:
// its checks, if any, are dropped.
func ParseModule(file, src string) (*hlo.Module, error) {
	t, err := ParseOne(file, src)
	if err != nil {
		return nil, err
	}
	return t.WithoutChecks()
}

// ParseOne reads a file holding one program, checks and all.
func ParseOne(file, src string) (*Translated, error) {
	return ParseOneWith(file, src, Options{})
}

// ParseOneWith is ParseOne with options.
func ParseOneWith(file, src string, o Options) (*Translated, error) {
	ts, errs, err := ParseWith(file, src, o)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("%s: holds %d programs, where one is compiled (vkjit test runs them all)", file, len(ts))
	}
	return ts[0], errs[0]
}

// WithoutChecks is the module returning the entry function's results
// only: the values its checks compared become dead code.
func (t *Translated) WithoutChecks() (*hlo.Module, error) {
	if len(t.Checks) == 0 {
		return t.HLO, nil
	}
	e := t.HLO.Entry
	outs := e.Root.Operands[:t.Results]
	switch len(outs) {
	case 0:
		return nil, &Error{Pos: t.Pos, Msg: "the entry function returns nothing: only checks"}
	case 1:
		e.Root = outs[0]
	default:
		s := hlo.TupleShape()
		for _, o := range outs {
			s.Tuple = append(s.Tuple, o.Shape)
		}
		root := &hlo.Instruction{Name: e.Root.Name + "_results", Op: hlo.OpTuple, Operands: outs, Shape: s, Pos: e.Root.Pos}
		e.Instructions = append(e.Instructions, root)
		e.Root = root
	}
	t.Checks = nil
	return t.HLO, hlo.Verify(t.HLO)
}

// translator holds what translating one module needs.
type translator struct {
	m      *Module
	b      *hlo.Builder
	funcs  map[string]*Func
	comps  map[string]*hlo.Computation // translated functions by name
	checks []Check
	outs   []*hlo.Instruction // the check operands the entry returns
	// quantOf: the quantized type of each value of one (quant.go).
	quantOf map[*hlo.Instruction]*QuantType
	// probes: each interpreter.probe's value by its probe_id, one per
	// execution (a probe runs once: only the entry's own ops may probe).
	probes map[string][]*hlo.Instruction
	// probeRan: for a probe in a while body (probes.go), whether the loop
	// ran each iteration kept; probeIters the iterations the checks read
	// of each probe_id; loopProbes, while a body records them, each
	// probe's value there; atEntry: the op translated is the entry's own.
	probeRan   map[string][]*hlo.Instruction
	probeIters map[string]int64
	loopProbes map[string]*hlo.Instruction
	atEntry    bool
	entry      *Func
	names      map[string]int // computation names in use
	// par is the run_parallel being translated, proc the process whose
	// op is (parallel.go); nil elsewhere.
	par  *parallel
	proc *process
	// args: the entry's argument shapes where its types are dynamic and
	// are refined from them (refine.go); inlining, the functions being
	// inlined into their callers, which refinement specializes.
	args     []hlo.Shape
	inlining map[string]bool
}

// scope maps SSA names to the instructions of one computation: a
// function's, or a region's (each region is a computation of its own in
// HLO; what it uses from outside is brought in by freeVars and bind).
type scope struct {
	vals map[string]*hlo.Instruction
	cb   *hlo.CompBuilder
}

func newScope(cb *hlo.CompBuilder) *scope {
	return &scope{vals: map[string]*hlo.Instruction{}, cb: cb}
}

func (sc *scope) lookup(t *translator, v Value) (*hlo.Instruction, error) {
	if in, ok := sc.vals[v.Name]; ok {
		return in, nil
	}
	return nil, &Error{Pos: v.Pos, Msg: fmt.Sprintf("%%%s is not defined", v.Name)}
}

// freeVars lists, in order of first use, the values r uses that it does
// not define (nested regions included): what a region captures from the
// ops around it.
func freeVars(r *Region) []Value {
	var out []Value
	seen := map[string]bool{}
	var walk func(r *Region, defined map[string]bool)
	walk = func(r *Region, defined map[string]bool) {
		local := map[string]bool{}
		for k := range defined {
			local[k] = true
		}
		for _, b := range r.Blocks {
			for _, a := range b.Args {
				local[a.Name] = true
			}
			for _, op := range b.Ops {
				for _, v := range op.Operands {
					if !local[v.Name] && !local[strings.SplitN(v.Name, "#", 2)[0]] && !seen[v.Name] {
						seen[v.Name] = true
						out = append(out, v)
					}
				}
				for _, sub := range op.Regions {
					walk(sub, local)
				}
				for _, res := range op.Results {
					local[res] = true
					local[strings.SplitN(res, "#", 2)[0]] = true
				}
			}
		}
	}
	walk(r, map[string]bool{})
	return out
}

// capturedConst is a constant a region uses from outside it.
type capturedConst struct {
	name string
	in   *hlo.Instruction
}

// resolveCaptures looks r's free values up in the enclosing scope: the
// constants, copied into a region as they are, and the other values,
// which the caller must pass in; each in order of first use, so that the
// translation (its names among them) is the same every time.
func (t *translator) resolveCaptures(rs []*Region, sc *scope) (consts []capturedConst, others map[string]*hlo.Instruction, order []string, err error) {
	others = map[string]*hlo.Instruction{}
	isConst := map[string]bool{}
	for _, r := range rs {
		for _, v := range freeVars(r) {
			if isConst[v.Name] {
				continue
			}
			if _, ok := others[v.Name]; ok {
				continue
			}
			in, err := sc.lookup(t, v)
			if err != nil {
				return nil, nil, nil, err
			}
			if in.Op == hlo.OpConstant {
				isConst[v.Name] = true
				consts = append(consts, capturedConst{v.Name, in})
			} else {
				others[v.Name] = in
				order = append(order, v.Name)
			}
		}
	}
	return consts, others, order, nil
}

// bindConsts copies captured constants into a region's computation.
func bindConsts(sc *scope, consts []capturedConst) {
	for _, c := range consts {
		sc.vals[c.name] = sc.cb.Constant(c.in.Literal)
		if !strings.Contains(c.name, "#") {
			sc.vals[c.name+"#0"] = sc.vals[c.name]
		}
	}
}

// scalarRegion translates a region whose block arguments become the
// computation's parameters (reducers, comparators, scatter's update):
// it may use constants from outside, nothing else.
func (t *translator) scalarRegion(r *Region, name string, sc *scope) (*hlo.Computation, error) {
	consts, others, order, err := t.resolveCaptures([]*Region{r}, sc)
	if err != nil {
		return nil, err
	}
	if len(others) > 0 {
		return nil, &Error{Pos: r.Pos, Msg: fmt.Sprintf("the region uses %%%s from outside it; only constants may be", order[0])}
	}
	if len(r.Blocks) != 1 {
		return nil, &Error{Pos: r.Pos, Msg: "a region of several blocks"}
	}
	cb := t.b.Computation(t.compName(name))
	inner := newScope(cb)
	for _, a := range r.Blocks[0].Args {
		if err := t.checkType(a.Type, a.Pos); err != nil {
			return nil, err
		}
		if a.Type.Q != nil {
			// A region's computation would need its own quantized
			// arithmetic (a reducer over quantized values): not done.
			return nil, &Error{Pos: a.Pos, Msg: fmt.Sprintf("region argument of type %s: %v", a.Type.Text, unsupportedf(quantizedCategory, "a region over quantized values")), Err: &Unsupported{quantizedCategory, "a region over quantized values"}}
		}
		inner.vals[a.Name] = cb.Parameter(a.Type.Shape())
	}
	bindConsts(inner, consts)
	res, err := t.block(r, inner, false)
	if err != nil {
		return nil, err
	}
	t.root(cb, res)
	return cb.Computation(), nil
}

// Translate turns one parsed module into HLO, run from its one entry
// (Entries).
func Translate(m *Module) (*Translated, error) { return translate(m, Options{}) }

func translate(m *Module, o Options) (*Translated, error) {
	es := Entries(m)
	switch {
	case len(m.Funcs) == 0:
		return nil, &Error{Pos: m.Pos, Msg: "the module has no function"}
	case len(es) == 0:
		return nil, &Error{Pos: m.Pos, Msg: "the module has no @main and no public function to run"}
	case len(es) > 1:
		return nil, &Error{Pos: m.Pos, Msg: fmt.Sprintf("no @main, and %d public functions (@%s, @%s...) could be the entry", len(es), es[0].Name, es[1].Name)}
	}
	return translateEntry(m, es[0], o)
}

// TranslateEntry turns one parsed module into HLO, run from entry.
func TranslateEntry(m *Module, entry *Func) (*Translated, error) {
	return translateEntry(m, entry, Options{})
}

func translateEntry(m *Module, entry *Func, o Options) (*Translated, error) {
	t := &translator{m: m, funcs: map[string]*Func{}, comps: map[string]*hlo.Computation{}, names: map[string]int{}, quantOf: map[*hlo.Instruction]*QuantType{}, probes: map[string][]*hlo.Instruction{}, probeRan: map[string][]*hlo.Instruction{}}
	name := m.Name
	if name == "" {
		name = "module"
	}
	t.b = hlo.NewBuilder(name)
	for _, f := range m.Funcs {
		t.funcs[f.Name] = f
	}
	t.entry = entry
	if err := t.refineFrom(entry, o.Args); err != nil {
		return nil, err
	}
	t.probeIters = probeChecks(entry)
	res, err := t.function(t.entry, true)
	if err != nil {
		return nil, err
	}
	hm, err := t.b.Build()
	if err != nil {
		return nil, err
	}
	if err := donations(hm, entry, res+len(t.outs)); err != nil {
		return nil, err
	}
	return &Translated{HLO: hm, Entry: entry.Name, Results: res, Checks: t.checks, Pos: entry.Pos}, nil
}

// donations gives hm the header attributes HLO spells JAX's donated
// arguments with: an argument of the entry marked tf.aliasing_output = i
// (donate_argnums, the result i of its type) becomes an entry of
// input_output_alias, one marked jax.buffer_donor = true (donated, no
// result to alias) of buffer_donor. outputs is how many values the
// entry returns (one is returned alone, more as a tuple).
func donations(hm *hlo.Module, entry *Func, outputs int) error {
	var alias, donors []string
	for i, a := range entry.Args {
		for _, na := range a.Attrs {
			switch na.Name {
			case "tf.aliasing_output":
				out, err := strconv.ParseInt(na.Attr.Text, 10, 64)
				if na.Attr.Kind != IntAttr || err != nil || out < 0 || int(out) >= len(entry.Results) {
					return &Error{Pos: a.Pos, Msg: fmt.Sprintf("%%%s: tf.aliasing_output %s names no result of @%s", a.Name, na.Attr.Text, entry.Name)}
				}
				if !entry.Results[out].Shape().Equal(a.Type.Shape()) {
					return &Error{Pos: a.Pos, Msg: fmt.Sprintf("%%%s: tf.aliasing_output %d is %s, the argument %s", a.Name, out, entry.Results[out].Text, a.Type.Text)}
				}
				index := fmt.Sprint(out)
				if outputs == 1 {
					index = ""
				}
				alias = append(alias, fmt.Sprintf("{%s}: (%d, {}, may-alias)", index, i))
			case "jax.buffer_donor":
				if na.Attr.Kind == BoolAttr && na.Attr.Text == "true" {
					donors = append(donors, fmt.Sprintf("(%d, {})", i))
				}
			}
		}
	}
	if len(alias) > 0 {
		hm.Attrs = append(hm.Attrs, hlo.Attr{Name: "input_output_alias", Value: "{ " + strings.Join(alias, ", ") + " }"})
	}
	if len(donors) > 0 {
		hm.Attrs = append(hm.Attrs, hlo.Attr{Name: "buffer_donor", Value: "{ " + strings.Join(donors, ", ") + " }"})
	}
	return nil
}

// Entries are the functions a module runs from: @main; else the public
// functions no other function calls; else the module's only function.
// The interpreter's test files hold several argument-free public test
// functions in one module, each a program of its own.
func Entries(m *Module) []*Func {
	called := map[string]bool{}
	var walk func(r *Region)
	walk = func(r *Region) {
		for _, b := range r.Blocks {
			for _, op := range b.Ops {
				if op.Callee != "" {
					called[op.Callee] = true
				}
				if a := op.Attr("decomposition"); a != nil {
					called[a.Text] = true
				}
				if a := op.Attr("called_computations"); a != nil {
					for _, f := range a.List {
						called[f.Text] = true
					}
				}
				for _, sub := range op.Regions {
					walk(sub)
				}
			}
		}
	}
	var roots []*Func
	for _, f := range m.Funcs {
		if f.Name == "main" {
			return []*Func{f}
		}
		walk(f.Body)
	}
	for _, f := range m.Funcs {
		if f.Public && !called[f.Name] {
			roots = append(roots, f)
		}
	}
	if len(roots) == 0 && len(m.Funcs) == 1 {
		return m.Funcs
	}
	return roots
}

// compName makes a computation name of a function's (or region's) name
// that HLO text can spell: letters, digits and _ (JAX names a lambda's
// function <lambda>), made unique.
func (t *translator) compName(base string) string {
	b := []byte(base)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if base = string(b); base == "" || base[0] >= '0' && base[0] <= '9' {
		base = "f_" + base
	}
	t.names[base]++
	if n := t.names[base]; n > 1 {
		return fmt.Sprintf("%s_%d", base, n)
	}
	return base
}

// function translates f; the entry's root is the tuple of its results
// and the checks' values. It returns how many results f has.
func (t *translator) function(f *Func, entry bool) (int, error) {
	var cb *hlo.CompBuilder
	if entry {
		cb = t.b.Entry(t.compName(f.Name))
	} else {
		cb = t.b.Computation(t.compName(f.Name))
	}
	if !entry {
		t.comps[t.compKey(f.Name)] = cb.Computation()
	}
	sc := newScope(cb)
	for i, a := range f.Args {
		if err := t.checkType(a.Type, a.Pos); err != nil {
			return 0, err
		}
		shape := a.Type.Shape()
		if entry && t.args != nil {
			shape = t.args[i]
		}
		sc.vals[a.Name] = cb.Parameter(shape)
		if a.Type.Q != nil {
			t.quantOf[sc.vals[a.Name]] = a.Type.Q
		}
	}
	results, err := t.block(f.Body, sc, entry)
	if err != nil {
		return 0, err
	}
	if err := resultsMatch(f, results); err != nil {
		return 0, err
	}
	n := len(results)
	if entry {
		outs := append(append([]*hlo.Instruction{}, results...), t.outs...)
		if len(outs) == 1 && len(t.checks) == 0 {
			cb.SetRoot(outs[0])
		} else {
			cb.Op(hlo.OpTuple, outs...)
		}
		return n, nil
	}
	t.root(cb, results)
	return n, nil
}

// resultsMatch checks the values f returns against its result types
// (a dynamic dimension matches any size).
func resultsMatch(f *Func, results []*hlo.Instruction) error {
	if len(f.Results) != len(results) {
		return &Error{Pos: f.Pos, Msg: fmt.Sprintf("@%s returns %d values, its type says %d", f.Name, len(results), len(f.Results))}
	}
	for i, r := range results {
		if want := f.Results[i]; want.Kind != OtherType && !fits(want.Shape(), r.Shape) {
			return &Error{Pos: f.Pos, Msg: fmt.Sprintf("@%s result %d is %s, its type says %s", f.Name, i, typeText(r.Shape), want.Text)}
		}
	}
	return nil
}

// root makes a computation's result: one value, or a tuple of several.
func (t *translator) root(cb *hlo.CompBuilder, vals []*hlo.Instruction) {
	if len(vals) == 1 {
		cb.SetRoot(vals[0])
		return
	}
	cb.Op(hlo.OpTuple, vals...)
}

// block translates a region's single block, returning the values of its
// terminator (return).
func (t *translator) block(r *Region, sc *scope, entry bool) ([]*hlo.Instruction, error) {
	if len(r.Blocks) != 1 {
		return nil, &Error{Pos: r.Pos, Msg: fmt.Sprintf("a region of %d blocks (control flow between blocks is not StableHLO)", len(r.Blocks))}
	}
	for _, op := range r.Blocks[0].Ops {
		if op.Name == "func.return" || op.Name == "stablehlo.return" || op.Name == "sdy.return" {
			return t.operands(op, sc)
		}
		if err := t.op(op, sc, entry); err != nil {
			return nil, err
		}
	}
	return nil, &Error{Pos: r.Pos, Msg: "a region without a return"}
}

// operands looks up op's operands; where the text gives their types,
// each must be the type of the value it names (MLIR's verifier rule: a
// use spells its value's type).
func (t *translator) operands(op *Op, sc *scope) ([]*hlo.Instruction, error) {
	out := make([]*hlo.Instruction, len(op.Operands))
	for i, v := range op.Operands {
		in, err := sc.lookup(t, v)
		if err != nil {
			return nil, err
		}
		if i < len(op.InTypes) && len(op.InTypes) == len(op.Operands) && op.InTypes[i].Kind != OtherType {
			if want := op.InTypes[i].Shape(); !fits(want, in.Shape) {
				return nil, &Error{Pos: op.Pos, Msg: fmt.Sprintf("%s: operand %d is %s, its type says %s", op.Name, i, typeText(in.Shape), op.InTypes[i].Text)}
			}
		}
		out[i] = in
	}
	return out, nil
}

// checkType names what vkjit lacks in a type.
func (t *translator) checkType(ty Type, pos hlo.Pos) error {
	switch {
	case ty.Quant && ty.Q == nil:
		return &Error{Pos: pos, Msg: fmt.Sprintf("type %s: %v", ty.Text, unsupportedf(quantizedCategory, "a quantized type")), Err: &Unsupported{quantizedCategory, "quantized type " + ty.Text}}
	case ty.Bounded:
		return &Error{Pos: pos, Msg: fmt.Sprintf("type %s: %v", ty.Text, unsupportedf(dynamicCategory, "a bounded dynamic shape")), Err: &Unsupported{dynamicCategory, "dynamic shape " + ty.Text}}
	case ty.Dynamic && t.args == nil:
		return &Error{Pos: pos, Msg: fmt.Sprintf("type %s: %v", ty.Text, unsupportedf(dynamicCategory, "a dynamic shape without the arguments' shapes to refine it from (vkjit run with .npy files, CompileOptions.Arguments)")), Err: &Unsupported{dynamicCategory, "dynamic shape " + ty.Text}}
	case ty.Kind == OtherType:
		return &Error{Pos: pos, Msg: fmt.Sprintf("type %s is not supported", ty.Text), Err: &Unsupported{What: "type " + ty.Text}}
	case ty.Kind == TensorType && ty.Elem == hlo.Invalid:
		return &Error{Pos: pos, Msg: fmt.Sprintf("element type of %s is not supported", ty.Text), Err: &Unsupported{What: "type " + ty.Text}}
	case ty.Kind == TupleType:
		for _, e := range ty.Tuple {
			if err := t.checkType(e, pos); err != nil {
				return err
			}
		}
	}
	return nil
}

// errAt wraps err (an *Unsupported, or a message) at op's position.
func errAt(op *Op, err error) error {
	if err == nil {
		return nil
	}
	var he *hlo.Error
	if errors.As(err, &he) {
		return err
	}
	var u *Unsupported
	if errors.As(err, &u) {
		return &Error{Pos: op.Pos, Msg: fmt.Sprintf("%s: %v", op.Name, err), Err: u}
	}
	return &Error{Pos: op.Pos, Msg: fmt.Sprintf("%s: %v", op.Name, err)}
}

// op translates one op into sc's computation and names its results.
func (t *translator) op(op *Op, sc *scope, entry bool) error {
	for _, ty := range append(append([]Type{}, op.InTypes...), op.OutTypes...) {
		if err := t.checkType(ty, op.Pos); err != nil {
			return err
		}
	}
	operands, err := t.operands(op, sc)
	if err != nil {
		return err
	}
	if strings.HasPrefix(op.Name, "check.") || op.Name == "stablehlo.custom_call" && strings.HasPrefix(op.Callee, "check.") {
		if !entry {
			return errAt(op, fmt.Errorf("a check outside the module's entry function"))
		}
		return errAt(op, t.check(op, operands))
	}
	before := len(sc.cb.Computation().Instructions)
	var results []*hlo.Instruction
	prevEntry := t.atEntry
	t.atEntry = entry
	defer func() { t.atEntry = prevEntry }()
	switch {
	case op.Name == "interpreter.probe" || op.Name == "interpreter.print":
		results, err = t.probe(op, operands, entry)
	case t.quantized(op, operands):
		results, err = t.quantOp(op, sc, operands)
	default:
		results, err = t.apply(op, sc, operands)
	}
	if err != nil {
		return errAt(op, err)
	}
	if t.args != nil {
		if err := refine(sc.cb.Computation().Instructions[before:]); err != nil {
			return errAt(op, err)
		}
	}
	return t.bind(op, sc, before, results)
}

// bind names op's results in sc, and gives the instructions its
// translation added to sc's computation (from index before) its line.
func (t *translator) bind(op *Op, sc *scope, before int, results []*hlo.Instruction) error {
	for i, r := range results {
		if i < len(op.OutTypes) && op.OutTypes[i].Q != nil {
			t.quantOf[r] = op.OutTypes[i].Q
		}
	}
	for _, in := range sc.cb.Computation().Instructions[before:] {
		in.Pos = op.Pos // the verifier's errors name the op's line
	}
	if len(results) != len(op.Results) {
		return errAt(op, fmt.Errorf("makes %d values, the text names %d", len(results), len(op.Results)))
	}
	for i, name := range op.Results {
		sc.vals[name] = results[i]
	}
	// %0 stands for the only result, and %0#0 too.
	if len(op.Results) == 1 && !strings.Contains(op.Results[0], "#") {
		sc.vals[op.Results[0]+"#0"] = results[0]
	}
	return nil
}

// apply translates op by its rule.
func (t *translator) apply(op *Op, sc *scope, operands []*hlo.Instruction) ([]*hlo.Instruction, error) {
	rule, ok := ops[op.Name]
	if !ok {
		return nil, unknownOp(op)
	}
	return rule(&opContext{t: t, op: op, sc: sc, cb: sc.cb, args: operands})
}

func unknownOp(op *Op) error {
	switch {
	case strings.HasPrefix(op.Name, "stablehlo.dynamic_") || op.Name == "stablehlo.real_dynamic_slice" || op.Name == "stablehlo.get_dimension_size" || op.Name == "stablehlo.set_dimension_size":
		return unsupportedf(dynamicCategory, "op %s", op.Name)
	case strings.HasPrefix(op.Name, "stablehlo.uniform_"):
		return unsupportedf(quantizedCategory, "op %s", op.Name)
	}
	return unsupportedf("", "op %s", op.Name)
}

// probe translates the interpreter's probe and print, which pass their
// operand on: a probe also keeps it under its probe_id, for
// check.expect_serialized_eq to compare (the interpreter writes it to a
// file and reads it back). A probe runs once only among the entry's own
// ops; one in a region or a called function, which may run many times,
// is refused.
func (t *translator) probe(op *Op, args []*hlo.Instruction, entry bool) ([]*hlo.Instruction, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("takes one operand")
	}
	if op.Name == "interpreter.probe" {
		id := op.Attr("probe_id")
		if id == nil || id.Kind != StringAttr {
			return nil, fmt.Errorf("needs a probe_id")
		}
		switch {
		case entry:
			t.probes[id.Text] = append(t.probes[id.Text], args[0])
		case t.loopProbes != nil && t.probeIters[id.Text] > 0:
			if t.loopProbes[id.Text] != nil {
				return nil, unsupportedf(probeCategory, "two probes %q in one loop body", id.Text)
			}
			t.loopProbes[id.Text] = args[0] // the loop keeps it (probes.go)
		default:
			return nil, unsupportedf(probeCategory, "a probe outside the entry function's own ops and their while loops' bodies")
		}
	}
	if len(op.Results) == 0 {
		return nil, nil // a print that names no result
	}
	return args, nil
}

// serializedCheck makes check.expect_serialized_eq an exact comparison
// of its operand with what probe_id probed (at iteration, 0 unless given).
func (t *translator) serializedCheck(op *Op, c Check, args []*hlo.Instruction) error {
	id := op.Attr("probe_id")
	if id == nil || id.Kind != StringAttr || len(args) != 1 {
		return fmt.Errorf("needs one operand and a probe_id")
	}
	iter := int64(0)
	if a := op.FirstAttr("iteration", "iter"); a != nil {
		v, err := a.Int()
		if err != nil {
			return fmt.Errorf("iteration: %v", err)
		}
		iter = v
	}
	probed := t.probes[id.Text]
	if iter < 0 || iter >= int64(len(probed)) {
		return fmt.Errorf("probe %q made no value at iteration %d before it", id.Text, iter)
	}
	c.Kind = CheckEq
	c.Actual = len(t.outs)
	c.Expected = len(t.outs) + 1
	t.outs = append(t.outs, args[0], probed[iter])
	t.checks = append(t.checks, c)
	if ran := t.probeRan[id.Text]; ran != nil { // the loop ran that iteration
		r := c
		r.Actual, r.Expected, r.Const = len(t.outs), -1, hlo.ScalarLiteral(hlo.PRED, 1)
		t.outs = append(t.outs, ran[iter])
		t.checks = append(t.checks, r)
	}
	return nil
}

// check records a check op: its operands become entry outputs.
func (t *translator) check(op *Op, args []*hlo.Instruction) error {
	name := op.Name
	if name == "stablehlo.custom_call" {
		name = op.Callee
	}
	name = strings.TrimPrefix(name, "check.")
	c := Check{Op: "check." + name, Expected: -1, Tolerance: 0.001, MaxULP: 3, Pos: op.Pos}
	switch strings.TrimSuffix(name, "_const") {
	case "expect_eq":
		c.Kind = CheckEq
	case "expect_almost_eq":
		c.Kind = CheckAlmostEq
	case "expect_close":
		c.Kind = CheckClose
	case "expect_serialized_eq":
		return t.serializedCheck(op, c, args)
	default:
		return unsupportedf("", "check.%s", name)
	}
	if a := op.Attr("tolerance"); a != nil {
		var v float64
		if _, err := fmt.Sscan(a.Text, &v); err != nil {
			return fmt.Errorf("tolerance %q", a.Text)
		}
		c.Tolerance = v
	}
	if a := op.Attr("max_ulp_difference"); a != nil {
		v, err := a.Int()
		if err != nil {
			return err
		}
		c.MaxULP = v
	}
	if a := op.Attr("min_ulp_difference"); a != nil {
		v, err := a.Int()
		if err != nil {
			return err
		}
		c.MinULP = v
	}
	if len(args) == 0 {
		return fmt.Errorf("checks nothing")
	}
	c.Actual = len(t.outs)
	t.outs = append(t.outs, args[0])
	if strings.HasSuffix(name, "_const") {
		v := op.Attr("value")
		if v == nil || v.Type == nil {
			return fmt.Errorf("no expected value")
		}
		lit, err := denseLiteral(v, *v.Type)
		if err != nil {
			return err
		}
		c.Const = lit
	} else {
		if len(args) != 2 {
			return fmt.Errorf("compares %d values, not 2", len(args))
		}
		c.Expected = len(t.outs)
		t.outs = append(t.outs, args[1])
	}
	t.checks = append(t.checks, c)
	return nil
}
