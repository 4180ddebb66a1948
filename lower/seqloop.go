package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Device loops. A while loop run from the host costs a submit and a
// read-back of its predicate per iteration (~0.35 ms on lavapipe), which
// makes the loops JAX writes around scalar state (fori_loop counters,
// random keys, an index into a large array) run for minutes. A loop
// whose every value is a few elements, and whose large arrays are only
// read or updated at computed indices, runs instead as a kernel of one
// invocation that iterates the loop itself: the small state in
// registers, the large arrays in their buffers. Each dispatch runs the
// iterations the device's loop bound allows (llvmpipe ends an
// invocation's loops after 65535 iterations in all), keeps the state in
// the loop's result buffers, and writes a flag the runtime reads: 0 the
// loop is done, 1 dispatch again, 2 a single iteration needs more than
// the bound (nested loops too long), which is an error. Nested loops
// with a known short trip count are unrolled; others run as loops of
// their own, their iterations counted against the bound, and an
// iteration cut short by it is not committed but run again by the next
// dispatch. Updates of large arrays are deferred to the end of the
// iteration, after every read of the old values.

const (
	seqElems     = 64      // most elements of a value the loop holds in registers
	seqUnroll    = 16      // nested loops of at most this many known iterations are unrolled
	seqOps       = 16384   // most element operations one device loop kernel may emit
	seqGPUBudget = 1 << 16 // iterations per dispatch on devices without a loop bound (a dispatch stays short of a GPU watchdog)
)

// seqLoop is a while loop planned to run on the device.
type seqLoop struct {
	kernel  *Kernel
	big     []bool // per state leaf: kept in a buffer, not registers
	updated []bool // per state leaf: a big leaf the body writes (copied before the loop)
	flag    int    // the buffer the kernel writes its state to: 0 done, 1 not yet, 2 stuck
}

// notSeq says why a loop stays on the host.
type notSeq struct{ why string }

func (e notSeq) Error() string { return "not a device loop: " + e.why }

func notSeqf(format string, args ...any) error { return notSeq{fmt.Sprintf(format, args...)} }

// planDeviceLoops plans a device loop for each live while loop of the
// entry computation that fits one; the others stay host loops.
func planDeviceLoops(s *state) error {
	if s.opts.HostLoops {
		return nil
	}
	for _, in := range s.mod.Entry.Instructions {
		if in.Op != hlo.OpWhile || !s.live[in] {
			continue
		}
		l, err := seqLoopKernel(in, s.tg)
		if err != nil {
			continue // a host loop, which names anything unsupported
		}
		if s.seqLoops == nil {
			s.seqLoops = map[*hlo.Instruction]*seqLoop{}
		}
		s.seqLoops[in] = l
	}
	return nil
}

// whileParts returns a while loop's condition and body.
func whileParts(in *hlo.Instruction) (cond, body *hlo.Computation) {
	cond, body = in.Called[0], in.Called[1]
	if v, _ := in.AttrValue("condition"); v != cond.Name && v != "%"+cond.Name {
		cond, body = body, cond
	}
	return cond, body
}

// leafSource returns the state leaf that leaf i of x passes through
// unchanged (x built from tuples and get-tuple-elements of parameter p),
// or -1.
func leafSource(x, p *hlo.Instruction, i int) int {
	switch x.Op {
	case hlo.OpParameter:
		if x == p {
			return i
		}
	case hlo.OpTuple:
		for _, o := range x.Operands {
			n := len(o.Shape.Leaves())
			if i < n {
				return leafSource(o, p, i)
			}
			i -= n
		}
	case hlo.OpGetTupleElement:
		src := x.Operands[0].Shape
		off := 0
		for j := 0; j < int(x.A.Index); j++ {
			off += len(src.Tuple[j].Leaves())
		}
		return leafSource(x.Operands[0], p, off+i)
	}
	return -1
}

// seqLeaf is one array of a value in a device loop kernel: its elements
// in registers, or (big >= 0) a state leaf kept in its buffer, with the
// updates the iteration makes to it.
type seqLeaf struct {
	shape  hlo.Shape
	elems  []val
	big    int
	writes []func() error
}

type seqValue []seqLeaf

// seqEmitter generates a device loop kernel.
type seqEmitter struct {
	k         *kernelBuilder
	bigBind   []int    // binding of each big state leaf
	used      spirv.ID // u32 variable: loop iterations run by this invocation
	abort     spirv.ID // bool variable: a nested loop reached the bound
	budget    uint32
	ops       int
	flattened map[*hlo.Computation]*hlo.Computation
}

func (e *seqEmitter) flat(c *hlo.Computation) *hlo.Computation {
	if f, ok := e.flattened[c]; ok {
		return f
	}
	f := flatten(c, c.Name)
	// Only what the root reads: a body keeps the instructions loop
	// invariant code motion hoisted out of it.
	live := map[*hlo.Instruction]bool{}
	var mark func(x *hlo.Instruction)
	mark = func(x *hlo.Instruction) {
		if !live[x] {
			live[x] = true
			for _, o := range x.Operands {
				mark(o)
			}
		}
	}
	mark(f.Root)
	var ins []*hlo.Instruction
	for _, in := range f.Instructions {
		if live[in] || in.Op == hlo.OpParameter {
			ins = append(ins, in)
		}
	}
	f.Instructions = ins
	e.flattened[c] = f
	return f
}

// seqLoopKernel generates the device loop kernel of while loop w, or
// says why it does not fit one.
func seqLoopKernel(w *hlo.Instruction, tg Target) (*seqLoop, error) {
	leaves := w.Shape.Leaves()
	condC, bodyC := whileParts(w)
	e := &seqEmitter{flattened: map[*hlo.Computation]*hlo.Computation{}}
	cond, body := e.flat(condC), e.flat(bodyC)
	l := &seqLoop{big: make([]bool, len(leaves)), updated: make([]bool, len(leaves))}
	for i, s := range leaves {
		if s.NumElements() > seqElems {
			l.big[i] = true
			l.updated[i] = leafSource(body.Root, body.Params[0], i) != i
		}
	}
	e.budget = seqGPUBudget
	if tg.MaxLoopIterations > 0 {
		e.budget = uint32(tg.MaxLoopIterations - tg.MaxLoopIterations/16) // a margin below the driver's count
	}
	k := newKernelBuilder(tg, 1, 2)
	k.bound = map[*hlo.Instruction]int{}
	e.k = k
	var ins, outs []int
	e.bigBind = make([]int, len(leaves))
	add := func(i int, name string, readonly bool) (int, error) {
		b, err := k.addBuffer(leaves[i].Elem, fmt.Sprintf("%s%d", name, i), readonly)
		if err != nil {
			return 0, w.Errorf("%v", err)
		}
		return b, nil
	}
	// Bindings: the small leaves' initial values, the big leaves read
	// only, the big leaves updated, the small leaves' results, the flag.
	for _, pass := range []func(i int) error{
		func(i int) (err error) {
			if !l.big[i] {
				var b int
				b, err = add(i, "init", true)
				ins = append(ins, b)
			}
			return err
		},
		func(i int) (err error) {
			if l.big[i] && !l.updated[i] {
				e.bigBind[i], err = add(i, "array", true)
			}
			return err
		},
		func(i int) (err error) {
			if l.updated[i] {
				e.bigBind[i], err = add(i, "array", false)
			}
			return err
		},
		func(i int) (err error) {
			if !l.big[i] {
				var b int
				b, err = add(i, "state", false)
				outs = append(outs, b)
			}
			return err
		},
	} {
		for i := range leaves {
			if err := pass(i); err != nil {
				return nil, err
			}
		}
	}
	flag, err := k.addBuffer(hlo.U32, "flag", false)
	if err != nil {
		return nil, err
	}
	if tg.MaxStorageBuffers > 0 && len(k.bindings) > int(tg.MaxStorageBuffers) {
		return nil, notSeqf("%d bindings, beyond the device's %d", len(k.bindings), tg.MaxStorageBuffers)
	}

	k.begin()
	u32, boolT := k.u32(), k.boolT()
	first := k.boolOp(spirv.OpINotEqual, k.push(1), k.cu32(0))
	// The state in function variables: the loop's operand on the first
	// dispatch, the previous dispatch's results after it.
	var vars [][]spirv.ID
	si := 0
	for i, s := range leaves {
		if l.big[i] {
			vars = append(vars, nil)
			continue
		}
		vs := make([]spirv.ID, s.NumElements())
		for j := range vs {
			idx := k.cu32(uint32(j))
			a, b := k.load(ins[si], idx, s.Elem), k.load(outs[si], idx, s.Elem)
			vs[j] = k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(s.Elem)))
			k.f.Void(spirv.OpStore, uint32(vs[j]), uint32(k.sel(first, a, b).id))
		}
		vars = append(vars, vs)
		si++
	}
	state := func() seqValue {
		v := make(seqValue, len(leaves))
		for i, s := range leaves {
			v[i] = seqLeaf{shape: s, big: -1}
			if l.big[i] {
				v[i].big = i
				continue
			}
			for _, p := range vars[i] {
				v[i].elems = append(v[i].elems, val{k.f.Op(spirv.OpLoad, k.scalarType(s.Elem), uint32(p)), s.Elem})
			}
		}
		return v
	}
	newVar := func(t spirv.ID, init spirv.ID) spirv.ID {
		v := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, t))
		k.f.Void(spirv.OpStore, uint32(v), uint32(init))
		return v
	}
	e.used = newVar(u32, k.cu32(0))
	e.abort = newVar(boolT, k.b.ConstantBool(false))
	status := newVar(u32, k.cu32(1)) // 1 running, 0 done, 2 stuck, 3 stopped by a nested loop
	iters := newVar(u32, k.cu32(0))
	load := func(v, t spirv.ID) spirv.ID { return k.f.Op(spirv.OpLoad, t, uint32(v)) }
	store := func(v, x spirv.ID) { k.f.Void(spirv.OpStore, uint32(v), uint32(x)) }
	not := func(c spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalNot, c) }
	and := func(a, b spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalAnd, a, b) }
	err = e.whileLoop(func() spirv.ID {
		running := k.boolOp(spirv.OpIEqual, load(status, u32), k.cu32(1))
		return and(running, k.boolOp(spirv.OpULessThan, load(e.used, u32), k.cu32(e.budget)))
	}, func() error {
		store(e.abort, k.b.ConstantBool(false))
		cur := state()
		c, err := e.emit(cond, []seqValue{cur})
		if err != nil {
			return err
		}
		p, err := e.pred(c)
		if err != nil {
			return err
		}
		ok := not(load(e.abort, boolT))
		if err := k.ifThen(and(not(p), ok), func() error { store(status, k.cu32(0)); return nil }); err != nil {
			return err
		}
		if err := k.ifThen(and(p, ok), func() error {
			next, err := e.emit(body, []seqValue{cur})
			if err != nil {
				return err
			}
			return k.ifThen(not(load(e.abort, boolT)), func() error {
				for i, x := range next {
					if l.big[i] {
						if x.big != i || !l.updated[i] && len(x.writes) > 0 {
							return notSeqf("state leaf %d is computed, not updated in place", i)
						}
						for _, wr := range x.writes {
							if err := wr(); err != nil {
								return err
							}
						}
						continue
					}
					for j, v := range x.elems {
						store(vars[i][j], v.id)
					}
				}
				store(iters, k.f.Op(spirv.OpIAdd, u32, uint32(load(iters, u32)), uint32(k.cu32(1))))
				return nil
			})
		}); err != nil {
			return err
		}
		return k.ifThen(load(e.abort, boolT), func() error {
			none := k.boolOp(spirv.OpIEqual, load(iters, u32), k.cu32(0))
			store(status, k.f.Op(spirv.OpSelect, u32, uint32(none), uint32(k.cu32(2)), uint32(k.cu32(3))))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if e.ops > seqOps {
		return nil, notSeqf("%d element operations", e.ops)
	}
	final := state()
	si = 0
	for i := range leaves {
		if l.big[i] {
			continue
		}
		for j, v := range final[i].elems {
			k.store(outs[si], k.cu32(uint32(j)), v)
		}
		si++
	}
	st := load(status, u32)
	stopped := k.boolOp(spirv.OpIEqual, st, k.cu32(3))
	k.store(flag, k.cu32(0), val{k.f.Op(spirv.OpSelect, u32, uint32(stopped), uint32(k.cu32(1)), uint32(st)), hlo.U32})
	l.kernel = k.finish("loop_" + trimSigil(w.Name))
	return l, nil
}

// whileLoop emits `for check() { body(); used++ }`.
func (e *seqEmitter) whileLoop(check func() spirv.ID, body func() error) error {
	k := e.k
	u32 := k.u32()
	header, checkL, bodyL, cont, merge := k.b.NewID(), k.b.NewID(), k.b.NewID(), k.b.NewID(), k.b.NewID()
	k.f.Void(spirv.OpBranch, uint32(header))
	k.f.Label(header)
	k.f.Void(spirv.OpLoopMerge, uint32(merge), uint32(cont), spirv.LoopControlNone)
	k.f.Void(spirv.OpBranch, uint32(checkL))
	k.f.Label(checkL)
	k.f.Void(spirv.OpBranchConditional, uint32(check()), uint32(bodyL), uint32(merge))
	k.f.Label(bodyL)
	if err := body(); err != nil {
		return err
	}
	k.f.Void(spirv.OpBranch, uint32(cont))
	k.f.Label(cont)
	n := k.f.Op(spirv.OpIAdd, u32, uint32(k.f.Op(spirv.OpLoad, u32, uint32(e.used))), uint32(k.cu32(1)))
	k.f.Void(spirv.OpStore, uint32(e.used), uint32(n))
	k.f.Void(spirv.OpBranch, uint32(header))
	k.f.Label(merge)
	return nil
}

// pred returns the bool of a rank-0 pred value (a loop condition).
func (e *seqEmitter) pred(v seqValue) (spirv.ID, error) {
	if len(v) != 1 || v[0].big >= 0 || len(v[0].elems) != 1 || v[0].shape.Elem != hlo.PRED {
		return 0, notSeqf("condition is not a pred scalar")
	}
	return v[0].elems[0].id, nil
}

// small returns the register elements of x, refusing a big leaf.
func small(x seqValue, in *hlo.Instruction) ([]val, error) {
	if len(x) != 1 || x[0].big >= 0 {
		return nil, notSeqf("%s reads a large array", in.Name)
	}
	return x[0].elems, nil
}

// emit computes computation c (flattened) on args and returns its root.
func (e *seqEmitter) emit(c *hlo.Computation, args []seqValue) (seqValue, error) {
	k := e.k
	env := map[*hlo.Instruction]seqValue{}
	for _, in := range c.Instructions {
		var out seqValue
		switch in.Op {
		case hlo.OpParameter:
			env[in] = args[in.ParamNum]
			continue
		case hlo.OpTuple:
			for _, o := range in.Operands {
				out = append(out, env[o]...)
			}
			env[in] = out
			continue
		case hlo.OpGetTupleElement:
			src := in.Operands[0].Shape
			off := 0
			for j := 0; j < int(in.A.Index); j++ {
				off += len(src.Tuple[j].Leaves())
			}
			env[in] = env[in.Operands[0]][off : off+len(in.Shape.Leaves())]
			continue
		case hlo.OpWhile:
			v, err := e.nested(in, env[in.Operands[0]])
			if err != nil {
				return nil, err
			}
			env[in] = v
			continue
		case hlo.OpConditional:
			v, err := e.conditional(in, env)
			if err != nil {
				return nil, err
			}
			env[in] = v
			continue
		}
		if !in.Shape.IsArray() {
			return nil, notSeqf("%s returns a tuple", in.Name)
		}
		n := in.Shape.NumElements()
		if n > seqElems && !(in.Op == hlo.OpDynamicUpdateSlice || in.Op == hlo.OpScatter) {
			return nil, notSeqf("%s has %d elements", in.Name, n)
		}
		leaf := seqLeaf{shape: in.Shape, big: -1}
		switch {
		case in.Op == hlo.OpConstant:
			if in.Literal == nil || in.Literal.Elided {
				return nil, notSeqf("%s has no values", in.Name)
			}
			b := in.Shape.Elem.Bytes()
			for j := int64(0); j < n; j++ {
				l := hlo.Literal{Shape: hlo.ArrayShape(in.Shape.Elem), Data: in.Literal.Data[j*int64(b) : (j+1)*int64(b)]}
				leaf.elems = append(leaf.elems, k.scalarConst(&l))
			}
		case in.Op.IsElementwise():
			ops := make([][]val, len(in.Operands))
			for i, o := range in.Operands {
				x, err := small(env[o], in)
				if err != nil {
					return nil, err
				}
				ops[i] = x
			}
			for j := int64(0); j < n; j++ {
				args := make([]val, len(ops))
				for i, x := range ops {
					if len(x) == 1 {
						args[i] = x[0]
					} else {
						args[i] = x[j]
					}
				}
				v, err := k.emitScalar(in, args)
				if err != nil {
					return nil, err
				}
				leaf.elems = append(leaf.elems, v)
			}
		case in.Op == hlo.OpReduce:
			vs, err := e.reduce(in, env)
			if err != nil {
				return nil, err
			}
			leaf.elems = vs
		case in.Op == hlo.OpDynamicUpdateSlice && env[in.Operands[0]][0].big >= 0:
			x, err := e.updateSlice(in, env)
			if err != nil {
				return nil, err
			}
			leaf = x
		case in.Op == hlo.OpScatter && len(in.Operands) == 3 && env[in.Operands[0]][0].big >= 0:
			x, err := e.scatter(in, env)
			if err != nil {
				return nil, err
			}
			leaf = x
		case remapOps[in.Op]:
			if n > seqElems {
				return nil, notSeqf("%s has %d elements", in.Name, n)
			}
			binds := make([]int, len(in.Operands))
			for i, o := range in.Operands {
				x := env[o]
				if len(x) != 1 {
					return nil, notSeqf("%s reads a tuple", in.Name)
				}
				if x[0].big >= 0 {
					if i != 0 || !(in.Op == hlo.OpDynamicSlice || in.Op == hlo.OpGather) || len(x[0].writes) > 0 {
						return nil, notSeqf("%s reads a large array other than at computed indices", in.Name)
					}
					binds[i] = e.bigBind[x[0].big]
					continue
				}
				if len(x[0].elems) == 0 {
					return nil, notSeqf("%s reads an empty array", in.Name)
				}
				binds[i] = e.array(x[0].elems)
			}
			for j := int64(0); j < n; j++ {
				v, err := k.remapValue(in, binds, k.cu32(uint32(j)))
				if err != nil {
					return nil, err
				}
				leaf.elems = append(leaf.elems, v)
			}
		default:
			return nil, notSeqf("%s is %s", in.Name, in.Op)
		}
		if leaf.big < 0 && int64(len(leaf.elems)) != n {
			return nil, notSeqf("%s: %d elements computed for %d", in.Name, len(leaf.elems), n)
		}
		if e.ops += len(leaf.elems); e.ops > seqOps {
			return nil, notSeqf("more than %d element operations", seqOps)
		}
		env[in] = seqValue{leaf}
	}
	return env[c.Root], nil
}

// array stores register elements in a function array, so that a
// data-movement op can read them at computed indices through load.
func (e *seqEmitter) array(xs []val) int {
	k := e.k
	t := xs[0].t
	st := k.scalarType(t)
	arr := k.b.TypeArray(st, k.cu32(uint32(len(xs))), 0)
	v := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, arr))
	pt := k.b.TypePointer(spirv.StorageFunction, st)
	for j, x := range xs {
		p := k.f.Op(spirv.OpAccessChain, pt, uint32(v), uint32(k.cu32(uint32(j))))
		k.f.Void(spirv.OpStore, uint32(p), uint32(x.id))
	}
	k.regArrays = append(k.regArrays, regArray{v: v, t: t, n: len(xs)})
	return regBase + len(k.regArrays) - 1
}

// regBase numbers the bindings of register arrays (device loops): load
// reads them from a function variable.
const regBase = 1 << 21

type regArray struct {
	v spirv.ID
	t hlo.ElementType
	n int
}

// regLoad reads element idx of a register array (idx is in range: the
// data-movement ops clamp their indices).
func (k *kernelBuilder) regLoad(bind int, idx spirv.ID) val {
	r := k.regArrays[bind-regBase]
	st := k.scalarType(r.t)
	p := k.f.Op(spirv.OpAccessChain, k.b.TypePointer(spirv.StorageFunction, st), uint32(r.v), uint32(idx))
	return val{k.f.Op(spirv.OpLoad, st, uint32(p)), r.t}
}

// reduce folds a small reduce, unrolled, in the reference's order: each
// output element from its init through the reduced elements in
// row-major order.
func (e *seqEmitter) reduce(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	n := len(in.Operands) / 2
	if n != 1 {
		return nil, notSeqf("%s is a variadic reduce", in.Name)
	}
	xs, err := small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	init, err := small(env[in.Operands[1]], in)
	if err != nil {
		return nil, err
	}
	src := in.Operands[0].Shape
	reduced := make([]bool, src.Rank())
	for _, d := range in.A.Dimensions {
		reduced[d] = true
	}
	st := hlo.RowMajorStrides(src.Dims)
	var out []val
	total := src.NumElements()
	outN := in.Shape.NumElements()
	acc := make([]val, outN)
	for j := range acc {
		acc[j] = init[0]
	}
	// Walking the operand in row-major order visits each output's
	// reduced elements in row-major order too.
	for p := int64(0); p < total; p++ {
		o, r := int64(0), p
		for d := range src.Dims {
			x := r / st[d]
			r %= st[d]
			if !reduced[d] {
				o = o*src.Dims[d] + x
			}
		}
		res, err := e.k.emitReducer(in.Called[0], []val{acc[o], xs[p]})
		if err != nil {
			return nil, err
		}
		acc[o] = res[0]
	}
	e.ops += int(total)
	out = append(out, acc...)
	return out, nil
}

// startIndices loads and clamps the start indices of a dynamic slice or
// update of size window into an array of dims (operands from first on).
func (e *seqEmitter) startIndices(in *hlo.Instruction, env map[*hlo.Instruction]seqValue, first int, dims, window []int64) ([]spirv.ID, error) {
	starts := make([]spirv.ID, len(dims))
	for d := range dims {
		x, err := small(env[in.Operands[first+d]], in)
		if err != nil {
			return nil, err
		}
		starts[d] = e.k.clampIndex(x[0], dims[d]-window[d])
	}
	return starts, nil
}

// updateSlice is a dynamic-update-slice of a big state leaf: the update's
// elements are stored at the end of the iteration.
func (e *seqEmitter) updateSlice(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) (seqLeaf, error) {
	k := e.k
	base := env[in.Operands[0]][0]
	upd, err := small(env[in.Operands[1]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	dims, up := in.Shape.Dims, in.Operands[1].Shape.Dims
	starts, err := e.startIndices(in, env, 2, dims, up)
	if err != nil {
		return seqLeaf{}, err
	}
	bind := e.bigBind[base.big]
	out := base
	out.writes = append(append([]func() error{}, base.writes...), func() error {
		for j, u := range upd {
			ix := make([]spirv.ID, len(dims))
			r := int64(j)
			ust := hlo.RowMajorStrides(up)
			for d := range dims {
				ix[d] = k.addU(starts[d], r/ust[d])
				r %= ust[d]
			}
			k.store(bind, k.ravel(ix, dims), u)
		}
		return nil
	})
	return out, nil
}

// scatter is a scatter into a big state leaf of single elements (no
// update window dimensions): at the end of the iteration each update in
// order combines with the element its index names, and an index out of
// bounds skips its update, as XLA's scatter does.
func (e *seqEmitter) scatter(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) (seqLeaf, error) {
	k := e.k
	sd := in.A.Scatter
	if sd == nil || len(sd.UpdateWindowDims) > 0 || len(sd.InputBatchingDims) > 0 || len(sd.InsertedWindowDims) != in.Shape.Rank() {
		return seqLeaf{}, notSeqf("%s scatters windows", in.Name)
	}
	base := env[in.Operands[0]][0]
	idx, err := small(env[in.Operands[1]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	upd, err := small(env[in.Operands[2]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	is := in.Operands[1].Shape
	ivd := int(sd.IndexVectorDim)
	vecLen := int64(1)
	if ivd < is.Rank() {
		vecLen = is.Dims[ivd]
	}
	ist := hlo.RowMajorStrides(is.Dims)
	dims := in.Shape.Dims
	bind := e.bigBind[base.big]
	elem := in.Shape.Elem
	out := base
	out.writes = append(append([]func() error{}, base.writes...), func() error {
		// The update's dimensions are the indices' without the index
		// vector dimension, in order.
		var scatterDims []int
		for d := 0; d < is.Rank(); d++ {
			if d != ivd {
				scatterDims = append(scatterDims, d)
			}
		}
		ust := hlo.RowMajorStrides(in.Operands[2].Shape.Dims)
		for j, u := range upd {
			pos := make([]int64, is.Rank())
			r := int64(j)
			for i, d := range scatterDims {
				pos[d] = r / ust[i]
				r %= ust[i]
			}
			ix := make([]spirv.ID, len(dims))
			inside := k.b.ConstantBool(true)
			for c := int64(0); c < vecLen; c++ {
				if ivd < is.Rank() {
					pos[ivd] = c
				}
				var lin int64
				for d, p := range pos {
					lin += p * ist[d]
				}
				v := idx[lin]
				d := sd.ScatterDimsToOperandDims[c]
				ok, at := k.inBounds(v, dims[d])
				inside = k.boolOp(spirv.OpLogicalAnd, inside, ok)
				ix[d] = at
			}
			for d := range ix {
				if ix[d] == 0 {
					ix[d] = k.cu32(0)
				}
			}
			if err := k.ifThen(inside, func() error {
				at := k.ravel(ix, dims)
				old := k.load(bind, at, elem)
				res, err := k.emitReducer(in.Called[0], []val{old, u})
				if err != nil {
					return err
				}
				k.store(bind, at, res[0])
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, nil
}

// inBounds reports whether integer index v is in [0, n), and v as a u32
// (meaningful where it is).
func (k *kernelBuilder) inBounds(v val, n int64) (spirv.ID, spirv.ID) {
	t := v.t
	lt, ge := spirv.OpSLessThan, spirv.OpSGreaterThanEqual
	if t.Kind() == hlo.KindUnsigned {
		lt, ge = spirv.OpULessThan, spirv.OpUGreaterThanEqual
	}
	ok := k.boolOp(spirv.OpLogicalAnd,
		k.boolOp(ge, v.id, k.zero(t)),
		k.boolOp(lt, v.id, k.constInt(t, uint64(n))))
	at := v.id
	switch {
	case t.Bits() != 32:
		at = k.f.Op(spirv.OpUConvert, k.u32(), uint32(v.id))
		if t.Kind() == hlo.KindSigned && t.Bits() < 32 {
			at = k.f.Op(spirv.OpBitcast, k.u32(), uint32(v.id))
		}
	case t != hlo.U32:
		at = k.f.Op(spirv.OpBitcast, k.u32(), uint32(v.id))
	}
	return ok, at
}

// nested emits a while loop inside a device loop: unrolled when its trip
// count is known and short, else as a loop whose iterations count
// against the invocation's bound.
func (e *seqEmitter) nested(w *hlo.Instruction, init seqValue) (seqValue, error) {
	k := e.k
	for _, x := range init {
		if x.big >= 0 {
			return nil, notSeqf("nested loop %s carries a large array", w.Name)
		}
	}
	condC, bodyC := whileParts(w)
	cond, body := e.flat(condC), e.flat(bodyC)
	if n, ok := tripCount(w, cond, body); ok && n <= seqUnroll {
		cur := init
		for t := int64(0); t < n; t++ {
			next, err := e.emit(body, []seqValue{cur})
			if err != nil {
				return nil, err
			}
			cur = next
		}
		return cur, nil
	}
	boolT, u32 := k.boolT(), k.u32()
	vars := make([][]spirv.ID, len(init))
	for i, x := range init {
		for _, v := range x.elems {
			p := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(v.t)))
			k.f.Void(spirv.OpStore, uint32(p), uint32(v.id))
			vars[i] = append(vars[i], p)
		}
	}
	state := func() seqValue {
		v := make(seqValue, len(init))
		for i, x := range init {
			v[i] = seqLeaf{shape: x.shape, big: -1}
			for j, p := range vars[i] {
				t := x.elems[j].t
				v[i].elems = append(v[i].elems, val{k.f.Op(spirv.OpLoad, k.scalarType(t), uint32(p)), t})
			}
		}
		return v
	}
	done := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, boolT))
	k.f.Void(spirv.OpStore, uint32(done), uint32(k.b.ConstantBool(false)))
	err := e.whileLoop(func() spirv.ID {
		more := k.boolOp(spirv.OpLogicalNot, k.f.Op(spirv.OpLoad, boolT, uint32(done)))
		return k.boolOp(spirv.OpLogicalAnd, more, k.boolOp(spirv.OpULessThan, k.f.Op(spirv.OpLoad, u32, uint32(e.used)), k.cu32(e.budget)))
	}, func() error {
		cur := state()
		c, err := e.emit(cond, []seqValue{cur})
		if err != nil {
			return err
		}
		p, err := e.pred(c)
		if err != nil {
			return err
		}
		k.f.Void(spirv.OpStore, uint32(done), uint32(k.boolOp(spirv.OpLogicalNot, p)))
		return k.ifThen(p, func() error {
			next, err := e.emit(body, []seqValue{cur})
			if err != nil {
				return err
			}
			for i, x := range next {
				if x.big >= 0 {
					return notSeqf("nested loop %s carries a large array", w.Name)
				}
				for j, v := range x.elems {
					k.f.Void(spirv.OpStore, uint32(vars[i][j]), uint32(v.id))
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	// Ended by the bound, not its condition: the iteration is cut short.
	cut := k.boolOp(spirv.OpLogicalNot, k.f.Op(spirv.OpLoad, boolT, uint32(done)))
	if err := k.ifThen(cut, func() error {
		k.f.Void(spirv.OpStore, uint32(e.abort), uint32(k.b.ConstantBool(true)))
		return nil
	}); err != nil {
		return nil, err
	}
	return state(), nil
}

// tripCount recognizes the counted loop JAX's fori_loop writes: a state
// leaf that starts at a constant, the body adds the constant 1 to, and
// the condition compares as less than a constant. It returns the number
// of iterations.
func tripCount(w *hlo.Instruction, cond, body *hlo.Computation) (int64, bool) {
	init := w.Operands[0]
	c := cond.Root
	if c.Op != hlo.OpCompare || c.A.Direction != "LT" || body.Root.Op != hlo.OpTuple || init.Op != hlo.OpTuple {
		return 0, false
	}
	g, limit := c.Operands[0], c.Operands[1]
	if g.Op != hlo.OpGetTupleElement || g.Operands[0] != cond.Params[0] || limit.Op != hlo.OpConstant || !g.Shape.Elem.IsInteger() {
		return 0, false
	}
	i := int(g.A.Index)
	if i >= len(init.Operands) || i >= len(body.Root.Operands) || !g.Shape.IsArray() || g.Shape.Rank() != 0 {
		return 0, false
	}
	start, step := init.Operands[i], body.Root.Operands[i]
	if start.Op != hlo.OpConstant || step.Op != hlo.OpAdd {
		return 0, false
	}
	a, b := step.Operands[0], step.Operands[1]
	if a.Op == hlo.OpConstant {
		a, b = b, a
	}
	if a.Op != hlo.OpGetTupleElement || a.Operands[0] != body.Params[0] || int(a.A.Index) != i || b.Op != hlo.OpConstant {
		return 0, false
	}
	s0, ok0 := intLiteral(start.Literal)
	one, ok1 := intLiteral(b.Literal)
	n, ok2 := intLiteral(limit.Literal)
	if !ok0 || !ok1 || !ok2 || one != 1 {
		return 0, false
	}
	if g.Shape.Elem.Kind() == hlo.KindUnsigned && (s0 < 0 || n < 0) {
		return 0, false
	}
	return max(0, n-s0), true
}

// intLiteral reads a rank-0 integer literal as an int64.
func intLiteral(l *hlo.Literal) (int64, bool) {
	if l == nil || l.Elided || l.Shape.Rank() != 0 || !l.Shape.Elem.IsInteger() {
		return 0, false
	}
	var v uint64
	for j := len(l.Data) - 1; j >= 0; j-- {
		v = v<<8 | uint64(l.Data[j])
	}
	bits := uint(8 * len(l.Data))
	if l.Shape.Elem.Kind() == hlo.KindSigned && bits < 64 {
		return int64(v<<(64-bits)) >> (64 - bits), true
	}
	if bits == 64 && l.Shape.Elem.Kind() == hlo.KindUnsigned && int64(v) < 0 {
		return 0, false
	}
	return int64(v), true
}

// loopBuffers gives a device loop's results their buffers: a big leaf
// the body passes through is its operand's buffer; every other leaf
// gets a temporary, as does the flag.
func (s *state) loopBuffers(w *hlo.Instruction, l *seqLoop) error {
	init := s.values[w.Operands[0]]
	var leaves []int
	for j, leaf := range w.Shape.Leaves() {
		if l.big[j] && !l.updated[j] {
			leaves = append(leaves, init[j])
			continue
		}
		i, err := s.newBuffer(Buffer{Name: fmt.Sprintf("%s.%d", w.Name, j), Kind: BufTemp, Shape: leaf})
		if err != nil {
			return w.Errorf("%v", err)
		}
		leaves = append(leaves, i)
	}
	s.values[w] = leaves
	f, err := s.newBuffer(Buffer{Name: w.Name + ".flag", Kind: BufTemp, Shape: hlo.ArrayShape(hlo.U32)})
	if err != nil {
		return w.Errorf("%v", err)
	}
	l.flag = f
	return nil
}

// deviceLoop appends a device loop's steps: a copy of each big leaf the
// body updates into the result's buffer (the operand stays as it was),
// then the loop.
func (s *state) deviceLoop(w *hlo.Instruction, l *seqLoop, env kernelEnv) error {
	init, res := s.values[w.Operands[0]], s.values[w]
	leaves := w.Shape.Leaves()
	for j, leaf := range leaves {
		if !l.updated[j] {
			continue
		}
		src := &hlo.Instruction{Name: fmt.Sprintf("%s.init%d", w.Name, j), Op: hlo.OpParameter, Shape: leaf}
		cp := &hlo.Instruction{Name: fmt.Sprintf("%s.copy%d", w.Name, j), Op: hlo.OpCopy, Shape: leaf, Operands: []*hlo.Instruction{src}}
		s.values[src], s.values[cp] = []int{init[j]}, []int{res[j]}
		env.local = elementwiseLocalSize(s.tg)
		k, err := elementwiseKernel(cp, env)
		if err != nil {
			return err
		}
		if err := s.dispatch(cp, k, leaf.NumElements(), nil, s.values[cp], nil); err != nil {
			return err
		}
	}
	// Bindings in the kernel's order (seqLoopKernel).
	var bufs []int
	for j := range leaves {
		if !l.big[j] {
			bufs = append(bufs, init[j])
		}
	}
	for j := range leaves {
		if l.big[j] && !l.updated[j] {
			bufs = append(bufs, res[j])
		}
	}
	nr := len(bufs)
	for j := range leaves {
		if l.updated[j] {
			bufs = append(bufs, res[j])
		}
	}
	for j := range leaves {
		if !l.big[j] {
			bufs = append(bufs, res[j])
		}
	}
	bufs = append(bufs, l.flag)
	key := string(wordsKey(l.kernel.Words))
	ki, ok := s.kernel[key]
	if !ok {
		ki = len(s.prog.Kernels)
		s.prog.Kernels = append(s.prog.Kernels, l.kernel)
		s.kernel[key] = ki
	}
	s.prog.Steps = append(s.prog.Steps, Step{
		Kind:    StepLoop,
		Kernel:  ki,
		Buffers: bufs,
		Writes:  len(bufs) - nr,
		Push:    []uint32{1, 1},
		Groups:  [3]uint32{1, 1, 1},
		Pred:    l.flag,
		Inst:    w.Name,
	})
	return nil
}

// conditional emits a conditional inside a device loop: only the chosen
// branch runs (a branch not taken may loop forever on the values it
// would be given), its small results stored to variables.
func (e *seqEmitter) conditional(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) (seqValue, error) {
	k := e.k
	sel, err := small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	branches, args := in.Called, in.Operands[1:]
	n := int64(len(branches))
	var which spirv.ID // the branch index, as a u32
	if sel[0].t == hlo.PRED {
		if t, ok := in.AttrValue("true_computation"); ok && n == 2 && branches[0].Name != trimSigil(t) {
			branches = []*hlo.Computation{branches[1], branches[0]}
			args = []*hlo.Instruction{args[1], args[0]}
		}
		// true runs branch 0.
		which = k.f.Op(spirv.OpSelect, k.u32(), uint32(sel[0].id), uint32(k.cu32(0)), uint32(k.cu32(1)))
	} else {
		// An index out of range runs the last branch.
		ok, at := k.inBounds(sel[0], n)
		which = k.f.Op(spirv.OpSelect, k.u32(), uint32(ok), uint32(at), uint32(k.cu32(uint32(n-1))))
	}
	leaves := in.Shape.Leaves()
	vars := make([][]spirv.ID, len(leaves))
	for i, l := range leaves {
		if l.NumElements() > seqElems {
			return nil, notSeqf("%s has a large result", in.Name)
		}
		for j := int64(0); j < l.NumElements(); j++ {
			vars[i] = append(vars[i], k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(l.Elem))))
		}
	}
	for b, c := range branches {
		err := k.ifThen(k.boolOp(spirv.OpIEqual, which, k.cu32(uint32(b))), func() error {
			r, err := e.emit(e.flat(c), []seqValue{env[args[b]]})
			if err != nil {
				return err
			}
			for i, x := range r {
				if x.big >= 0 {
					return notSeqf("%s returns a large array", in.Name)
				}
				for j, v := range x.elems {
					k.f.Void(spirv.OpStore, uint32(vars[i][j]), uint32(v.id))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make(seqValue, len(leaves))
	for i, l := range leaves {
		out[i] = seqLeaf{shape: l, big: -1}
		for _, p := range vars[i] {
			out[i].elems = append(out[i].elems, val{k.f.Op(spirv.OpLoad, k.scalarType(l.Elem), uint32(p)), l.Elem})
		}
	}
	return out, nil
}
