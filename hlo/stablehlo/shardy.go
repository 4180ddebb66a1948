package stablehlo

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Shardy (the sdy dialect, github.com/openxla/shardy): JAX's partitioner
// writes its meshes, shardings and constraints into the StableHLO it
// prints. On vkjit's one device a sharding says nothing about the
// values: sdy.mesh is a name, the sharding attributes are ignored, the
// constraints and reshards pass their operand on, a named computation is
// its body, and the global-view collectives that only move shards
// between devices are the identity. What does change values on several
// devices is refused by name: a manual computation whose manual axes span
// more than one device (its body sees one device's shard), and the
// reductions over several devices (all_reduce, reduce_scatter).

// Mesh is an sdy.mesh: its axes' sizes by name.
type Mesh map[string]int64

var meshAxisRE = regexp.MustCompile(`"([^"]*)"\s*=\s*(\d+)`)

// parseMesh reads a mesh's body, ["x"=2, "y"=4] and perhaps device_ids.
func parseMesh(body string) (Mesh, error) {
	m := Mesh{}
	axes := body
	if i := strings.Index(body, "device_ids"); i >= 0 {
		axes = body[:i]
	}
	for _, sm := range meshAxisRE.FindAllStringSubmatch(axes, -1) {
		n, err := strconv.ParseInt(sm[2], 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("mesh axis %q of size %s", sm[1], sm[2])
		}
		m[sm[1]] = n
	}
	return m, nil
}

// meshOp reads `sdy.mesh @name = <body> [{attrs}]` at the module's top
// level into m.Meshes.
func (p *parser) meshOp(m *Module) error {
	s := p.s
	pos := s.here()
	if err := s.expectWord("sdy.mesh"); err != nil {
		return err
	}
	name, err := s.symbol()
	if err != nil {
		return err
	}
	if err := s.expect("="); err != nil {
		return err
	}
	if err := s.expect("<"); err != nil {
		return err
	}
	body, err := s.balanced('<', '>')
	if err != nil {
		return err
	}
	if s.peek() == '{' {
		if _, err := p.attrDict(); err != nil {
			return err
		}
	}
	if s.lookingAtWord("loc") {
		if _, err := p.location(); err != nil {
			return err
		}
	}
	return m.addMesh(pos, name, body)
}

// addMesh records mesh name (its body's text) in m.
func (m *Module) addMesh(pos hlo.Pos, name, body string) error {
	mesh, err := parseMesh(body)
	if err != nil {
		return &Error{Pos: pos, Msg: fmt.Sprintf("sdy.mesh @%s: %v", name, err)}
	}
	if m.Meshes == nil {
		m.Meshes = map[string]Mesh{}
	}
	m.Meshes[name] = mesh
	return nil
}

// genericMesh records an sdy.mesh of the generic form, "sdy.mesh"()
// <{mesh = #sdy.mesh<...>, sym_name = "name"}> : () -> ().
func (m *Module) genericMesh(op *Op) error {
	name, mesh := op.Attr("sym_name"), op.Attr("mesh")
	if name == nil || mesh == nil {
		return &Error{Pos: op.Pos, Msg: "sdy.mesh needs sym_name and mesh"}
	}
	return m.addMesh(op.Pos, name.Text, mesh.Body)
}

// sharding reads a sharding's text, <@mesh, [...]>, into the attribute
// name of op.
func (p *parser) sharding(op *Op, name string) error {
	s := p.s
	if err := s.expect("<"); err != nil {
		return err
	}
	body, err := s.balanced('<', '>')
	if err != nil {
		return err
	}
	op.setAttr(name, &Attr{Kind: DialectAttr, Text: "#sdy.sharding", Body: body})
	return nil
}

// sdyValueForm: %x <sharding> [{attrs}] : T (sharding_constraint,
// reshard), and the keyword forms %x allowed_direction=D : T
// (propagation_barrier), %x [sharding=<...>] : T (data_flow_edge) and
// %x group_id=N : T (sharding_group, which has no result).
func sdyValueForm(p *parser, op *Op) error {
	s := p.s
	x, err := p.operand()
	if err != nil {
		return err
	}
	op.Operands = []Value{x}
	if s.peek() == '<' {
		if err := p.sharding(op, "sharding"); err != nil {
			return err
		}
	}
	if err := p.sdyKeywords(op); err != nil {
		return err
	}
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	if err := s.expect(":"); err != nil {
		return err
	}
	t, err := p.typ()
	if err != nil {
		return err
	}
	op.InTypes = []Type{t}
	if op.Name != "sdy.sharding_group" {
		op.OutTypes = []Type{t}
	}
	return nil
}

// sdyKeywords reads name=value arguments, each value a sharding <...>,
// a bracketed list, a braced set or a word or number.
func (p *parser) sdyKeywords(op *Op) error {
	s := p.s
	for {
		s.skip()
		save := *s
		w := s.ident()
		if w == "" || !s.accept("=") {
			*s = save
			return nil
		}
		switch s.peek() {
		case '<':
			if err := p.sharding(op, w); err != nil {
				return err
			}
		case '[', '{':
			body, err := p.bracketed()
			if err != nil {
				return err
			}
			op.setAttr(w, &Attr{Kind: DialectAttr, Text: w, Body: body})
		default:
			v := s.ident()
			if v == "" {
				v = s.number()
			}
			if v == "" {
				return s.errorf("%s: expected a value for %s, found %s", op.Name, w, s.describe())
			}
			op.setAttr(w, &Attr{Kind: KeywordAttr, Text: v})
		}
	}
}

// sdyCollectiveForm: [axes] %x out_sharding=<...> [{attrs}] : T, the
// global-view collectives (all_gather, all_slice, all_to_all,
// collective_permute, all_reduce, reduce_scatter); the axes are a list
// or a set before the operand.
func sdyCollectiveForm(p *parser, op *Op) error {
	if c := p.s.peek(); c == '[' || c == '{' {
		body, err := p.bracketed()
		if err != nil {
			return err
		}
		op.setAttr("axes", &Attr{Kind: DialectAttr, Text: "axes", Body: body})
	}
	return sdyValueForm(p, op)
}

// bracketed reads a list [...] or a set {...} whole and returns what is
// inside it, kept as text (axis lists).
func (p *parser) bracketed() (string, error) {
	s := p.s
	open, close := s.peek(), byte(']')
	if open == '{' {
		close = '}'
	}
	s.advance(1)
	return s.balanced(open, close)
}

// sdyRegionForm reads manual_computation's and named_computation's
// (operands) keyword=value... (%arg: T, ...) { body } [{attrs}] :
// functional-type; named_computation starts with <"name">.
func sdyRegionForm(p *parser, op *Op) error {
	s := p.s
	if op.Name == "sdy.named_computation" {
		if err := s.expect("<"); err != nil {
			return err
		}
		name, err := s.str()
		if err != nil {
			return err
		}
		op.setAttr("name", &Attr{Kind: StringAttr, Text: name})
		if err := s.expect(">"); err != nil {
			return err
		}
	}
	if err := p.parenOperands(op); err != nil {
		return err
	}
	if err := p.sdyKeywords(op); err != nil {
		return err
	}
	if err := s.expect("("); err != nil {
		return err
	}
	args, err := p.arguments()
	if err != nil {
		return err
	}
	r, err := p.region()
	if err != nil {
		return err
	}
	if len(r.Blocks) != 1 || len(r.Blocks[0].Args) > 0 {
		return s.errorAt(r.Pos, "%s: its body is one block, its arguments before it", op.Name)
	}
	r.Blocks[0].Args = args
	op.Regions = []*Region{r}
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	if err := s.expect(":"); err != nil {
		return err
	}
	return p.functionalType(op)
}

// shardyForms and shardyRules are the sdy ops' assembly forms and
// translations, which customForms and ops take in (package variables,
// made before any init function runs).
var shardyForms, shardyRules = shardyTables()

func shardyTables() (map[string]func(*parser, *Op) error, map[string]rule) {
	forms := map[string]func(*parser, *Op) error{
		"sdy.manual_computation": sdyRegionForm, "sdy.named_computation": sdyRegionForm,
		"sdy.constant": constantForm, "sdy.return": simpleForm,
	}
	rules := map[string]rule{
		"sdy.manual_computation": manualComputationRule, "sdy.named_computation": inlineRegionRule,
		"sdy.constant": constantRule,
	}
	for _, name := range []string{"sharding_constraint", "reshard", "propagation_barrier", "data_flow_edge", "sharding_group"} {
		forms["sdy."+name] = sdyValueForm
		rules["sdy."+name] = identityRule
	}
	for _, name := range []string{"all_gather", "all_slice", "all_to_all", "collective_permute", "all_reduce", "reduce_scatter"} {
		forms["sdy."+name] = sdyCollectiveForm
		rules["sdy."+name] = sdyCollectiveRule
	}
	return forms, rules
}

// identityRule passes the operand on (the sharding ops); one with no
// result (sharding_group) makes nothing.
func identityRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.op.OutTypes) == 0 {
		return nil, nil
	}
	if len(c.args) != 1 {
		return nil, fmt.Errorf("takes one operand")
	}
	return c.args, checkResults(c.op, c.args)
}

// sdyCollectiveRule: in Shardy's global view a collective changes how a
// value is spread over the devices, not the value, except the
// reductions, which sum the partial values each device holds: the
// identity on a mesh of one device, refused on more.
func sdyCollectiveRule(c *opContext) ([]*hlo.Instruction, error) {
	if c.op.Name == "sdy.all_reduce" || c.op.Name == "sdy.reduce_scatter" {
		mesh, err := c.t.meshOf(c.op.Attr("out_sharding"))
		if err != nil {
			return nil, err
		}
		if spread := mesh.spread(c.op.Attr("axes")); spread != "" {
			return nil, unsupportedf(collectivesCategory, "%s over axes %s (several devices; vkjit runs on one)", c.op.Name, spread)
		}
	}
	return identityRule(c)
}

// spread lists the axes of m that a list of axis names (an attribute's
// text) names and that span more than one device, "" if none does.
func (m Mesh) spread(axes *Attr) string {
	if axes == nil {
		return ""
	}
	var out []string
	for _, sm := range axisNameRE.FindAllStringSubmatch(axes.Body, -1) {
		if m[sm[1]] > 1 {
			out = append(out, fmt.Sprintf("%q=%d", sm[1], m[sm[1]]))
		}
	}
	sort.Strings(out)
	return strings.Join(slices.Compact(out), ", ")
}

var (
	meshRefRE    = regexp.MustCompile(`^\s*@([A-Za-z_][\w.$-]*)`)
	inlineMeshRE = regexp.MustCompile(`^\s*mesh\s*<`)
	axisNameRE   = regexp.MustCompile(`"([^"]*)"`)
)

// meshOf is the mesh a sharding names (@mesh, or one written inline).
func (t *translator) meshOf(sh *Attr) (Mesh, error) {
	if sh == nil {
		return nil, fmt.Errorf("needs a sharding")
	}
	if sm := meshRefRE.FindStringSubmatch(sh.Body); sm != nil {
		m, ok := t.m.Meshes[sm[1]]
		if !ok {
			return nil, fmt.Errorf("sharding %s names no sdy.mesh of the module", sh.Body)
		}
		return m, nil
	}
	if loc := inlineMeshRE.FindStringIndex(sh.Body); loc != nil {
		return parseMesh(sh.Body[loc[1]:])
	}
	return nil, fmt.Errorf("sharding <%s> names no mesh", sh.Body)
}

// manualComputationRule inlines a manual computation whose manual axes
// all have size 1: its body's shapes are then the global ones (the free
// axes do not split what it sees). Over more devices the body is one
// device's share of a program vkjit would have to run on each.
func manualComputationRule(c *opContext) ([]*hlo.Instruction, error) {
	// The first sharding of either list names the mesh.
	var first *Attr
	for _, name := range []string{"in_shardings", "out_shardings"} {
		if a := c.op.Attr(name); a != nil && strings.TrimSpace(a.Body) != "" && first == nil {
			first = &Attr{Body: strings.TrimPrefix(strings.TrimSpace(a.Body), "<")}
		}
	}
	if first != nil {
		mesh, err := c.t.meshOf(first)
		if err != nil {
			return nil, err
		}
		if spread := mesh.spread(c.op.Attr("manual_axes")); spread != "" {
			return nil, unsupportedf(collectivesCategory, "sdy.manual_computation over manual axes %s (a program for each of several devices; vkjit runs on one)", spread)
		}
	}
	return inlineRegionRule(c)
}

// inlineRegionRule translates an op's one region, isolated from above,
// in place: its block's arguments are the op's operands, its
// sdy.return the op's results.
func inlineRegionRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.op.Regions) != 1 || len(c.op.Regions[0].Blocks) != 1 {
		return nil, fmt.Errorf("needs one region of one block")
	}
	b := c.op.Regions[0].Blocks[0]
	if len(b.Args) != len(c.args) {
		return nil, fmt.Errorf("its body takes %d arguments, the op passes %d", len(b.Args), len(c.args))
	}
	inner := newScope(c.cb)
	for i, a := range b.Args {
		if err := c.t.checkType(a.Type, a.Pos); err != nil {
			return nil, err
		}
		if !a.Type.Shape().Equal(c.args[i].Shape) {
			return nil, fmt.Errorf("its body's argument %d is %s, the operand %s", i, a.Type.Text, typeText(c.args[i].Shape))
		}
		inner.vals[a.Name] = c.args[i]
	}
	res, err := c.t.block(c.op.Regions[0], inner, c.t.atEntry)
	if err != nil {
		return nil, err
	}
	return res, checkResults(c.op, res)
}
