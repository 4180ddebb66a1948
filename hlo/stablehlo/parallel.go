package stablehlo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The interpreter's run_parallel runs programs[replica][partition] on a
// grid of processes that share values only through collective ops and
// send/recv channels (the specification's "Parallel execution"). vkjit
// runs one program on one device, so it translates the whole grid into
// the one computation: each process's function is translated op by op
// into a scope of its own, a process runs until its next collective (or
// a recv on a channel nothing was sent on yet), and a collective is
// resolved once every process it joins waits at it, as data movement
// between the processes' values (concatenate, slice, the reducer mapped
// over the operands). Outside run_parallel a program is the one process
// of a 1x1 grid, whose collectives are such data movement too.
//
// Only a process function's own ops can wait: a collective in a region
// or a called function, which vkjit translates once as a computation of
// its own, resolves only when it joins no other process.

// grid is a run_parallel's process grid. A process's id is
// replica*partitions + partition: the specification's flattened id.
type grid struct{ replicas, partitions int }

func (g grid) size() int { return g.replicas * g.partitions }

// process is one process of the grid as it is translated.
type process struct {
	id, replica, partition int
	fn                     *Func
	sc                     *scope
	pc                     int // the next op of fn's body
	waiting                *Op // the collective or recv it stopped at
	results                []*hlo.Instruction
	done                   bool
}

func (p *process) String() string { return fmt.Sprintf("process (%d, %d)", p.replica, p.partition) }

// parallel is one run_parallel's translation.
type parallel struct {
	grid     grid
	procs    []*process
	channels map[int64][][]*hlo.Instruction // values sent and not yet received
	infeed   []string                       // functions making infeed's values, in order
}

// where is the grid being translated and the process whose op is.
func (t *translator) where() (grid, int) {
	if t.par == nil || t.proc == nil {
		return grid{1, 1}, 0
	}
	return t.par.grid, t.proc.id
}

// runParallelRule translates interpreter.run_parallel: its operands are
// the programs' arguments and its results the programs' results, both
// process after process.
func runParallelRule(c *opContext) ([]*hlo.Instruction, error) {
	t := c.t
	if t.par != nil {
		return nil, fmt.Errorf("a run_parallel inside a process")
	}
	progs, err := symbolTable(c.attr("programs"))
	if err != nil || len(progs) == 0 || len(progs[0]) == 0 {
		return nil, fmt.Errorf("needs programs = [[@f, ...], ...], one row per replica")
	}
	par := &parallel{grid: grid{len(progs), len(progs[0])}, channels: map[int64][][]*hlo.Instruction{}}
	if a := c.attr("infeed"); a != nil {
		rows, err := symbolTable(&Attr{Kind: ListAttr, List: []*Attr{a}})
		if err != nil {
			return nil, fmt.Errorf("infeed: %v", err)
		}
		par.infeed = rows[0]
	}
	args := c.args
	for r, row := range progs {
		if len(row) != par.grid.partitions {
			return nil, fmt.Errorf("programs: replica %d has %d partitions, replica 0 has %d", r, len(row), par.grid.partitions)
		}
		for p, name := range row {
			f := t.funcs[name]
			switch {
			case f == nil:
				return nil, fmt.Errorf("runs @%s, which the module does not define", name)
			case f == t.entry:
				return nil, fmt.Errorf("runs the entry function @%s", name)
			case len(f.Body.Blocks) != 1:
				return nil, &Error{Pos: f.Pos, Msg: fmt.Sprintf("@%s has %d blocks", name, len(f.Body.Blocks))}
			case len(args) < len(f.Args):
				return nil, fmt.Errorf("has too few operands for its programs' %s", "arguments")
			}
			sc := newScope(c.cb)
			for i, a := range f.Args {
				if err := t.checkType(a.Type, a.Pos); err != nil {
					return nil, err
				}
				if !a.Type.Shape().Equal(args[i].Shape) {
					return nil, fmt.Errorf("passes %s to @%s's %%%s of type %s", typeText(args[i].Shape), name, a.Name, a.Type.Text)
				}
				sc.vals[a.Name] = args[i]
			}
			args = args[len(f.Args):]
			par.procs = append(par.procs, &process{id: r*par.grid.partitions + p, replica: r, partition: p, fn: f, sc: sc})
		}
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("has %d operands more than its programs take", len(args))
	}
	t.par = par
	defer func() { t.par, t.proc = nil, nil }()
	for {
		for _, pr := range par.procs {
			if err := t.advance(pr); err != nil {
				return nil, err
			}
		}
		if !slices.ContainsFunc(par.procs, func(p *process) bool { return !p.done }) {
			break
		}
		ok, err := t.resolveOne()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, par.deadlock()
		}
	}
	var out []*hlo.Instruction
	for _, pr := range par.procs {
		out = append(out, pr.results...)
	}
	return out, nil
}

// symbolTable reads a list of lists of symbols: [[@f, @g], [@h, @k]].
func symbolTable(a *Attr) ([][]string, error) {
	if a == nil || a.Kind != ListAttr {
		return nil, fmt.Errorf("expected a list of lists of functions")
	}
	var out [][]string
	for _, row := range a.List {
		if row.Kind != ListAttr {
			return nil, fmt.Errorf("expected a list of functions, found %s", row.Describe())
		}
		var names []string
		for _, s := range row.List {
			if s.Kind != SymbolAttr {
				return nil, fmt.Errorf("expected @function, found %s", s.Describe())
			}
			names = append(names, s.Text)
		}
		out = append(out, names)
	}
	return out, nil
}

// advance translates pr's ops until it returns or waits: at a
// collective, or at a recv on a channel nothing waits on.
func (t *translator) advance(pr *process) error {
	body := pr.fn.Body.Blocks[0].Ops
	t.proc = pr
	defer func() { t.proc = nil }()
	for !pr.done && pr.waiting == nil {
		if pr.pc >= len(body) {
			return &Error{Pos: pr.fn.Pos, Msg: fmt.Sprintf("@%s has no return", pr.fn.Name)}
		}
		op := body[pr.pc]
		switch {
		case op.Name == "func.return" || op.Name == "stablehlo.return":
			res, err := t.operands(op, pr.sc)
			if err != nil {
				return err
			}
			if len(res) != len(pr.fn.Results) {
				return &Error{Pos: op.Pos, Msg: fmt.Sprintf("@%s returns %d values, its type says %d", pr.fn.Name, len(res), len(pr.fn.Results))}
			}
			pr.results, pr.done = res, true
			continue
		case collectives[op.Name] != nil:
			pr.waiting = op
			continue
		case op.Name == "stablehlo.recv":
			ch, err := channelID(op)
			if err != nil {
				return errAt(op, err)
			}
			if len(t.par.channels[ch]) == 0 {
				pr.waiting = op
				continue
			}
		}
		if err := t.op(op, pr.sc, false); err != nil {
			return err
		}
		pr.pc++
	}
	return nil
}

// resolveOne lets one waiting process go on: a recv whose channel now
// holds a value, or the processes of a collective that all of them wait
// at. It reports whether it found one.
func (t *translator) resolveOne() (bool, error) {
	par := t.par
	for _, x := range par.procs {
		op := x.waiting
		if op == nil {
			continue
		}
		if op.Name == "stablehlo.recv" {
			if ch, _ := channelID(op); len(par.channels[ch]) > 0 {
				x.waiting = nil
				return true, nil
			}
			continue
		}
		k := collectives[op.Name]
		groups, members, err := k.members(op, par.grid, x.id)
		if err != nil {
			return false, errAt(op, err)
		}
		if par.ready(op, members) {
			return true, t.resolve(k, groups, members)
		}
	}
	return false, nil
}

// ready: every member waits at a collective of op's kind that joins the
// same processes.
func (par *parallel) ready(op *Op, members []int) bool {
	for _, id := range members {
		q := par.procs[id]
		if q.waiting == nil || q.waiting.Name != op.Name {
			return false
		}
		if _, m, err := collectives[op.Name].members(q.waiting, par.grid, id); err != nil || !slices.Equal(m, members) {
			return false
		}
	}
	return true
}

// resolve combines the members' operands at the collective they wait
// at and names each member's results in its scope.
func (t *translator) resolve(k *collective, groups [][]int, members []int) error {
	par := t.par
	args := make([][]*hlo.Instruction, len(members))
	for i, id := range members {
		q := par.procs[id]
		a, err := t.operands(q.waiting, q.sc)
		if err != nil {
			return err
		}
		if len(a) == 0 || len(args) > 0 && args[0] != nil && len(a) != len(args[0]) {
			return errAt(q.waiting, fmt.Errorf("%s passes %d operands, %s %d", q, len(a), par.procs[members[0]], len(args[0])))
		}
		for _, v := range a {
			if t.quantOf[v] != nil {
				return errAt(q.waiting, unsupportedf(quantizedCategory, "a collective of quantized values"))
			}
		}
		args[i] = a
	}
	x := par.procs[members[0]]
	op := x.waiting
	c := &opContext{t: t, op: op, sc: x.sc, cb: x.sc.cb, args: args[0]}
	before := len(c.cb.Computation().Instructions)
	t.proc = x
	res, err := k.combine(c, groups, members, args)
	t.proc = nil
	if err != nil {
		return errAt(op, err)
	}
	for i, id := range members {
		q := par.procs[id]
		if err := checkResults(q.waiting, res[i]); err != nil {
			return err
		}
		if err := t.bind(q.waiting, q.sc, before, res[i]); err != nil {
			return err
		}
		q.waiting = nil
		q.pc++
	}
	return nil
}

// checkResults compares a collective's results with the types the text
// gives them.
func checkResults(op *Op, res []*hlo.Instruction) error {
	for i, r := range res {
		if i < len(op.OutTypes) && op.OutTypes[i].Kind == TensorType && !op.OutTypes[i].Shape().Equal(r.Shape) {
			return errAt(op, fmt.Errorf("result %d is %s, its type says %s", i, typeText(r.Shape), op.OutTypes[i].Text))
		}
	}
	return nil
}

// deadlock names what each unfinished process waits at.
func (par *parallel) deadlock() error {
	var waits []string
	for _, p := range par.procs {
		if p.waiting != nil {
			waits = append(waits, fmt.Sprintf("%s at %s (line %d)", p, p.waiting.Name, p.waiting.Pos.Line))
		}
	}
	return fmt.Errorf("its processes wait for each other: %s", strings.Join(waits, ", "))
}

// collectiveRule translates a collective that waits for no other
// process: any collective of a 1x1 grid, and one in a region or a
// called function of a run_parallel's process when it joins only that
// process.
func collectiveRule(c *opContext) ([]*hlo.Instruction, error) {
	k := collectives[c.op.Name]
	g, x := c.t.where()
	groups, members, err := k.members(c.op, g, x)
	if err != nil {
		return nil, err
	}
	if len(members) > 1 {
		return nil, unsupportedf(collectivesCategory, "%s joining %d processes inside a region or a called function", c.op.Name, len(members))
	}
	res, err := k.combine(c, groups, members, [][]*hlo.Instruction{c.args})
	if err != nil {
		return nil, err
	}
	return res[0], checkResults(c.op, res[0])
}

// processIDRule translates replica_id or partition_id: the process's
// own in a run_parallel, HLO's op (0 on vkjit's one device) elsewhere.
func processIDRule(op hlo.Opcode) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		if c.t.proc == nil {
			return one(c.emit(op))
		}
		v := c.t.proc.replica
		if op == hlo.OpPartitionID {
			v = c.t.proc.partition
		}
		s, err := c.result(0)
		if err != nil {
			return nil, err
		}
		return []*hlo.Instruction{c.cb.Constant(hlo.ScalarLiteral(s.Elem, float64(v)))}, nil
	}
}

// sendRule queues a run_parallel process's values on its channel for a
// recv; the token it returns follows the token it took.
func sendRule(c *opContext) ([]*hlo.Instruction, error) {
	if c.t.par == nil {
		return nil, unsupportedf(hostCategory, "op %s outside run_parallel", c.op.Name)
	}
	ch, err := channelID(c.op)
	if err != nil {
		return nil, err
	}
	if len(c.args) < 2 {
		return nil, fmt.Errorf("needs values and a token")
	}
	n := len(c.args) - 1
	c.t.par.channels[ch] = append(c.t.par.channels[ch], c.args[:n])
	return []*hlo.Instruction{c.cb.Op(hlo.OpAfterAll, c.args[n]).WithShape(c.args[n].Shape).Instruction}, nil
}

// recvRule takes the values sent first on its channel, and a token.
func recvRule(c *opContext) ([]*hlo.Instruction, error) {
	if c.t.par == nil {
		return nil, unsupportedf(hostCategory, "op %s outside run_parallel", c.op.Name)
	}
	ch, err := channelID(c.op)
	if err != nil {
		return nil, err
	}
	q := c.t.par.channels[ch]
	if len(q) == 0 || len(c.args) != 1 {
		return nil, fmt.Errorf("nothing was sent on channel %d before it (inside a region or a call, it cannot wait)", ch)
	}
	c.t.par.channels[ch] = q[1:]
	return append(slices.Clone(q[0]), c.cb.Op(hlo.OpAfterAll, c.args[0]).WithShape(c.args[0].Shape).Instruction), nil
}

// infeedRule takes the values of run_parallel's next infeed function,
// and a token.
func infeedRule(c *opContext) ([]*hlo.Instruction, error) {
	par := c.t.par
	if par == nil || len(par.infeed) == 0 || len(c.args) != 1 {
		return nil, unsupportedf(hostCategory, "op %s outside run_parallel's infeed", c.op.Name)
	}
	name := par.infeed[0]
	par.infeed = par.infeed[1:]
	comp, err := c.t.callee(name)
	if err != nil {
		return nil, err
	}
	v := c.cb.Op(hlo.OpCall).WithShape(comp.Root.Shape).Calls(comp).Instruction
	vals := []*hlo.Instruction{v}
	if v.Shape.IsTuple() {
		vals = nil
		for i, s := range v.Shape.Tuple {
			vals = append(vals, c.cb.Op(hlo.OpGetTupleElement, v).Set("index", fmt.Sprint(i)).WithShape(s).Instruction)
		}
	}
	return append(vals, c.cb.Op(hlo.OpAfterAll, c.args[0]).WithShape(c.args[0].Shape).Instruction), nil
}
