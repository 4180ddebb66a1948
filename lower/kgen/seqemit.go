package kgen

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// The device loop emitter (seqkernel.go has the kernel's
// frame): HLO values as register elements or big state leaves, each op
// of a loop's condition and body emitted on them.

// small returns the register elements of x (a small wide one's read
// into them), refusing a big leaf.
func (e *seqEmitter) small(x seqValue, in *hlo.Instruction) ([]val, error) {
	if len(x) != 1 || x[0].big >= 0 || x[0].wide != 0 && x[0].shape.NumElements() > seqElems {
		return nil, notSeqf("%s reads a large array", in.Name)
	}
	if x[0].wide != 0 {
		return e.registers(x[0]), nil
	}
	return x[0].elems, nil
}

// emit computes computation c (flattened) on args and returns its root.
// Ops are classified by the opcode table (OpKind); data movement is the
// element form every kernel uses (formOf), over register arrays, and the
// rest have register forms of their own: a loop keeps small values in
// registers, element by element, which the element forms, computing one
// element from buffers, do not.
func (e *seqEmitter) emit(c *hlo.Computation, args []seqValue) (seqValue, error) {
	k := e.k
	env := map[*hlo.Instruction]seqValue{}
	// A workgroup loop's shared arrays return to the pool once the last
	// reader of every value holding them is emitted (seqwide.go).
	last := e.lastUses(c)
	prev := -1
	settle := func() {
		if prev < 0 {
			return
		}
		p := c.Instructions[prev]
		e.hold(env[p], 1)
		for _, o := range p.Operands {
			if last[o] == prev {
				e.hold(env[o], -1)
				last[o] = -1 // once, however many times p reads it
			}
		}
	}
	for j, in := range c.Instructions {
		settle()
		prev = j
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
			off := in.Operands[0].Shape.LeafOffset(int(in.A.Index))
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
		intoBig := (in.Op == hlo.OpDynamicUpdateSlice || in.Op == hlo.OpScatter) && env[in.Operands[0]][0].big >= 0
		if leaf, ok, err := e.asWide(c, in, env, intoBig); err != nil {
			return nil, err
		} else if ok {
			env[in] = seqValue{leaf}
			continue
		}
		kind := OpKind(in.Op)
		leaf := seqLeaf{shape: in.Shape, big: -1}
		switch {
		case !intoBig && readsWide(in, env):
			vs, err := e.fromWide(in, env)
			if err != nil {
				return nil, err
			}
			leaf.elems = vs
		case in.Op == hlo.OpConstant:
			if in.Literal == nil || in.Literal.Elided {
				return nil, notSeqf("%s has no values", in.Name)
			}
			b := in.Shape.Elem.Bytes()
			for j := int64(0); j < n; j++ {
				l := hlo.Literal{Shape: hlo.ArrayShape(in.Shape.Elem), Data: in.Literal.Data[j*int64(b) : (j+1)*int64(b)]}
				leaf.elems = append(leaf.elems, k.scalarConst(&l))
			}
		case kind == KindElementwise: // unrolled over the elements in registers
			ops := make([][]val, len(in.Operands))
			for i, o := range in.Operands {
				x, err := e.small(env[o], in)
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
		case kind == KindDot:
			vs, err := e.dot(in, env)
			if err != nil {
				return nil, err
			}
			leaf.elems = vs
		case kind == KindReduce:
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
		case (in.Op == hlo.OpDynamicSlice || in.Op == hlo.OpDynamicUpdateSlice) && allSmall(in, env):
			var vs []val
			var err error
			if in.Op == hlo.OpDynamicSlice {
				vs, err = e.dynamicSlice(in, env)
			} else {
				vs, err = e.dynamicUpdate(in, env)
			}
			if err != nil {
				return nil, err
			}
			leaf.elems = vs
		case kind == KindScatter && len(in.Operands) == 3:
			x, err := e.scatter(in, env)
			if err != nil {
				return nil, err
			}
			leaf = x
		case kind == KindRemap: // the element form, over register arrays
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
					e.unsynced = true
					continue
				}
				if len(x[0].elems) == 0 {
					return nil, notSeqf("%s reads an empty array", in.Name)
				}
				binds[i] = e.array(x[0].elems, int(n))
			}
			form, _ := formOf(kind)
			for j := int64(0); j < n; j++ {
				vs, err := form.value(k, in, binds, k.cu32(uint32(j)))
				if err != nil {
					return nil, err
				}
				leaf.elems = append(leaf.elems, vs[0])
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
	settle()
	return env[c.Root], nil
}

// allSmall reports whether each operand of in is one leaf in registers.
func allSmall(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) bool {
	for _, o := range in.Operands {
		if x := env[o]; len(x) != 1 || x[0].big >= 0 || x[0].wide != 0 {
			return false
		}
	}
	return true
}

// array makes register elements readable at computed indices by a
// data-movement op that reads them up to reads times: through a
// function array, or by selects among the elements (regLoad) where
// those are cheap enough. llvmpipe keeps an array read at computed
// indices in memory, a vector of lanes per element, and reads it lane
// by lane; LLVM's passes over those accesses (coroutine frames,
// register allocation) make the kernel's first use slow: a 2,000-step
// loop gathering 8 of 64 f32 values took 0.79 s with an array and 0.13 s
// with selects, 12 of 48 f64 ones 0.58 and 0.14 s (dynamic slices and
// updates take neither: seqwindow.go). Selects cost len(xs)-1 per read where the array costs a store
// per element and a lane-by-lane load per read, so runs decide the
// bound (selectsPerOp). Reads at constant indices load from the array
// still, which the driver resolves: taking the elements themselves
// instead made jit_scan_N2000_M3's loop 1.37x slower (bench/ab).
func (e *seqEmitter) array(xs []val, reads int) int {
	k := e.k
	st := k.scalarType(xs[0].t)
	arr := k.b.TypeArray(st, k.cu32(uint32(len(xs))), 0)
	r := regArray{
		v:       k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, arr)),
		xs:      xs,
		selects: (len(xs)-1)*reads <= selectsPerOp(xs[0].t),
	}
	pt := k.b.TypePointer(spirv.StorageFunction, st)
	for j, x := range xs {
		k.f.Store(k.f.AccessChain(pt, r.v, k.cu32(uint32(j))), x.id)
	}
	k.regArrays = append(k.regArrays, r)
	return regBase + len(k.regArrays) - 1
}

// selectsPerOp bounds the selects one op's reads at computed indices
// may take instead of an array. Measured on lavapipe (16 and 8 lanes)
// with 2,000-step loops gathering r of n elements (bench/ab, selects'
// time over the array's): f32 48 of 48 per step 0.54, 64 of 64 1.14;
// f64 12 of 48 0.76, 24 of 32 1.44 (a vector of 64-bit lanes is two
// registers, and the tree's values crowd them).
func selectsPerOp(t hlo.ElementType) int {
	if regBits(t) > 32 {
		return 640
	}
	return 2560
}

// regBase numbers the bindings of register arrays (device loops): load
// reads them (regLoad).
const regBase = 1 << 21

type regArray struct {
	v       spirv.ID // the function array
	xs      []val    // its elements
	selects bool     // reads at computed indices select among xs
}

// regLoad reads element idx of a register array (idx is in range: the
// data-movement ops clamp their indices).
func (k *kernelBuilder) regLoad(bind int, idx spirv.ID) val {
	r := k.regArrays[bind-regBase]
	t := r.xs[0].t
	st := k.scalarType(t)
	if _, ok := k.constU32(idx); !ok && r.selects {
		return val{k.selectTree(st, r.xs, idx), t}
	}
	p := k.f.AccessChain(k.b.TypePointer(spirv.StorageFunction, st), r.v, idx)
	return val{k.f.Load(st, p), t}
}

// selectTree picks element idx of xs by the bits of idx, lowest first:
// len(xs)-1 selects.
func (k *kernelBuilder) selectTree(st spirv.ID, xs []val, idx spirv.ID) spirv.ID {
	level := make([]spirv.ID, len(xs))
	for i, x := range xs {
		level[i] = x.id
	}
	for b := 0; len(level) > 1; b++ {
		bit := k.bitSet(idx, b)
		next := make([]spirv.ID, 0, (len(level)+1)/2)
		for i := 0; i+1 < len(level); i += 2 {
			next = append(next, k.f.Select(st, bit, level[i+1], level[i]))
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level[0]
}

// reduce folds a small reduce, unrolled, in the reference's order: each
// output element from its init through the reduced elements in
// row-major order.
func (e *seqEmitter) reduce(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	n := len(in.Operands) / 2
	if n != 1 {
		return nil, notSeqf("%s is a variadic reduce", in.Name)
	}
	xs, err := e.small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	init, err := e.small(env[in.Operands[1]], in)
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
		x, err := e.small(env[in.Operands[first+d]], in)
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
	dims, up := in.Shape.Dims, in.Operands[1].Shape.Dims
	starts, err := e.startIndices(in, env, 2, dims, up)
	if err != nil {
		return seqLeaf{}, err
	}
	bind := e.bigBind[base.big]
	out := base
	if u := env[in.Operands[1]]; len(u) == 1 && u[0].wide != 0 {
		// A wide update: the invocations share its elements.
		src, t := u[0].wide, in.Operands[1].Shape.Elem
		out.arrays = append(slices.Clone(base.arrays), u[0].arrays...) // read when the writes run
		out.writes = append(append([]func() error{}, base.writes...), func() error {
			return e.phase(in.Operands[1].Shape.NumElements(), u[0].iters, func(idx spirv.ID) error {
				uix := k.unravel(idx, up)
				ix := make([]spirv.ID, len(dims))
				for d := range dims {
					ix[d] = k.f.IAdd(k.u32(), starts[d], uix[d])
				}
				k.store(bind, k.ravel(ix, dims), k.load(src, idx, t))
				return nil
			})
		})
		return out, nil
	}
	upd, err := e.small(env[in.Operands[1]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	out.writes = append(append([]func() error{}, base.writes...), func() error {
		return e.single(func() error { return e.storeUpdate(bind, upd, starts, dims, up) })
	})
	return out, nil
}

// storeUpdate stores a small update's elements into a big leaf at
// starts.
func (e *seqEmitter) storeUpdate(bind int, upd []val, starts []spirv.ID, dims, up []int64) error {
	k := e.k
	{
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
	}
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
	idx, err := e.small(env[in.Operands[1]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	upd, err := e.small(env[in.Operands[2]], in)
	if err != nil {
		return seqLeaf{}, err
	}
	if base.big < 0 {
		// A small operand in registers: each element takes, in the
		// updates' order, every update aimed at it.
		out := seqLeaf{shape: in.Shape, big: -1, elems: append([]val{}, base.elems...)}
		for j, u := range upd {
			inside, ix := k.scatterTarget(in, idx, j)
			at := k.ravel(ix, in.Shape.Dims)
			for i := range out.elems {
				res, err := k.emitReducer(in.Called[0], []val{out.elems[i], u})
				if err != nil {
					return seqLeaf{}, err
				}
				hit := k.boolOp(spirv.OpLogicalAnd, inside, k.boolOp(spirv.OpIEqual, at, k.cu32(uint32(i))))
				out.elems[i] = k.sel(hit, res[0], out.elems[i])
			}
		}
		return out, nil
	}
	bind := e.bigBind[base.big]
	elem := in.Shape.Elem
	out := base
	out.writes = append(append([]func() error{}, base.writes...), func() error {
		return e.single(func() error {
			for j, u := range upd {
				inside, ix := k.scatterTarget(in, idx, j)
				if err := k.f.If(inside, func() error {
					at := k.ravel(ix, in.Shape.Dims)
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
	})
	return out, nil
}

// dot computes a dot of register values: each output element the sum,
// in row-major order of the contraction, of the operands' products in
// the result type, from 0 (the arithmetic of dotValue, unrolled).
func (e *seqEmitter) dot(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	k := e.k
	a, err := e.small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	b, err := e.small(env[in.Operands[1]], in)
	if err != nil {
		return nil, err
	}
	d := in.A.Dot
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	lFree, rFree := d.FreeDims(l.Rank(), r.Rank())
	contract := make([]int64, len(d.LhsContract))
	for i, x := range d.LhsContract {
		contract[i] = l.Dims[x]
	}
	t := in.Shape.Elem
	rt := k.scalarType(t)
	mul, add := spirv.OpIMul, spirv.OpIAdd
	if t.IsFloat() {
		mul, add = spirv.OpFMul, spirv.OpFAdd
	}
	n := in.Shape.NumElements()
	count := hlo.ArrayShape(t, contract...).NumElements()
	if e.ops += int(n * count); e.ops > seqOps {
		return nil, notSeqf("more than %d element operations", seqOps)
	}
	out := make([]val, 0, n)
	ost := hlo.RowMajorStrides(in.Shape.Dims)
	cst := hlo.RowMajorStrides(contract)
	for j := range n {
		o := make([]int64, len(in.Shape.Dims))
		rest := j
		for i := range o {
			o[i], rest = rest/ost[i], rest%ost[i]
		}
		lBase, rBase := d.Bases(o, lFree, rFree, ls, rs)
		acc := k.zero(t)
		for c := range count {
			li, ri, rest := lBase, rBase, c
			for i := range contract {
				ci := rest / cst[i]
				rest %= cst[i]
				li, ri = li+ci*ls[d.LhsContract[i]], ri+ci*rs[d.RhsContract[i]]
			}
			x, err := k.factor(a[li], t)
			if err != nil {
				return nil, err
			}
			y, err := k.factor(b[ri], t)
			if err != nil {
				return nil, err
			}
			if t == hlo.PRED {
				acc = k.boolOp(spirv.OpLogicalOr, acc, k.boolOp(spirv.OpLogicalAnd, x.id, y.id))
				continue
			}
			acc = k.f.Apply(add, rt, acc, k.f.Apply(mul, rt, x.id, y.id))
		}
		out = append(out, k.normalize(val{acc, t}))
	}
	return out, nil
}

// scatterTarget is where update j of a scatter without windows goes:
// whether its index vector is inside the operand, and the operand's
// index there. The update's dimensions are the indices' without
// the index vector dimension, in order.
func (k *kernelBuilder) scatterTarget(in *hlo.Instruction, idx []val, j int) (inside spirv.ID, ix []spirv.ID) {
	sd := in.A.Scatter
	is := in.Operands[1].Shape
	ivd := int(sd.IndexVectorDim)
	vecLen := int64(1)
	if ivd < is.Rank() {
		vecLen = is.Dims[ivd]
	}
	ist := hlo.RowMajorStrides(is.Dims)
	dims := in.Shape.Dims
	var scatterDims []int
	for d := 0; d < is.Rank(); d++ {
		if d != ivd {
			scatterDims = append(scatterDims, d)
		}
	}
	ust := hlo.RowMajorStrides(in.Operands[2].Shape.Dims)
	pos := make([]int64, is.Rank())
	r := int64(j)
	for i, d := range scatterDims {
		pos[d] = r / ust[i]
		r %= ust[i]
	}
	ix = make([]spirv.ID, len(dims))
	inside = k.b.ConstantBool(true)
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
		ok, a := k.inBounds(v, dims[d])
		inside = k.boolOp(spirv.OpLogicalAnd, inside, ok)
		ix[d] = a
	}
	for d := range ix {
		if ix[d] == 0 {
			ix[d] = k.cu32(0)
		}
	}
	return inside, ix
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
	return ok, k.indexU32(v)
}

// nested emits a while loop inside a device loop: unrolled when its trip
// count is known and short, else as a loop whose iterations count
// against the invocation's bound (in a workgroup loop, of small values
// only).
func (e *seqEmitter) nested(w *hlo.Instruction, init seqValue) (out seqValue, err error) {
	k := e.k
	wide := make([]bool, len(init))
	for i, x := range init {
		if x.big >= 0 {
			return nil, notSeqf("nested loop %s carries a large array", w.Name)
		}
		wide[i] = x.wide != 0
	}
	condC, bodyC := w.WhileComputations()
	cond, body := e.flat(condC), e.flat(bodyC)
	if n, ok := TripCount(w, cond, body); ok && n <= seqUnroll {
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
	e.loops++
	// A phase in a loop of unknown trips could make one iteration of the
	// outer loop need more than a dispatch runs, which is an error at
	// run time (gesdd's sweeps over their pairs): such a loop stays on
	// the host.
	phases := e.phases
	defer func() {
		if err == nil && e.phases > phases {
			out, err = nil, notSeqf("nested loop %s computes wide values", w.Name)
		}
	}()
	boolT, u32 := k.boolT(), k.u32()
	shapes := make([]hlo.Shape, len(init))
	for i, x := range init {
		shapes[i] = x.shape
	}
	if slices.Contains(wide, true) {
		return nil, notSeqf("nested loop %s carries a wide value", w.Name)
	}
	vars := e.stateVars(shapes, nil)
	if err := e.storeState(vars, init, w, nil); err != nil {
		return nil, err
	}
	state := func() seqValue { return e.loadState(shapes, vars, nil) }
	before := e.unsynced
	done := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, boolT))
	k.f.Store(done, k.b.ConstantBool(false))
	err = e.whileLoop(func() spirv.ID {
		more := k.boolOp(spirv.OpLogicalNot, k.f.Load(boolT, done))
		return k.boolOp(spirv.OpLogicalAnd, more, k.boolOp(spirv.OpULessThan, k.f.Load(u32, e.used), e.limit()))
	}, func() error {
		cur := state()
		p, err := e.condition(cond, cur)
		if err != nil {
			return err
		}
		k.f.Store(done, k.boolOp(spirv.OpLogicalNot, p))
		return k.f.If(p, func() error {
			next, err := e.emit(body, []seqValue{cur})
			if err != nil {
				return err
			}
			return e.storeState(vars, next, w, nil)
		})
	})
	if err != nil {
		return nil, err
	}
	e.unsynced = e.unsynced || before // the body may not run
	// Ended by the bound, not its condition: the iteration is cut short.
	cut := k.boolOp(spirv.OpLogicalNot, k.f.Load(boolT, done))
	if err := k.f.If(cut, func() error {
		k.f.Store(e.abort, k.b.ConstantBool(true))
		return nil
	}); err != nil {
		return nil, err
	}
	return state(), nil
}

// TripCount is the number of iterations of a counted loop
// (hlo.CountedLoop) whose counter starts at a constant.
func TripCount(w *hlo.Instruction, cond, body *hlo.Computation) (int64, bool) {
	c, ok := hlo.CountedLoop(cond, body)
	init := hlo.Element(w.Operands[0])
	if !ok || init.Op != hlo.OpTuple || c.Index >= len(init.Operands) {
		return 0, false
	}
	first := hlo.Element(init.Operands[c.Index])
	if first.Op != hlo.OpConstant {
		return 0, false
	}
	start, ok := hlo.ScalarInt(first.Literal)
	if !ok {
		return 0, false
	}
	return c.Iterations(start)
}

// conditional emits a conditional inside a device loop: only the chosen
// branch runs (a branch not taken may loop forever on the values it
// would be given), its small results stored to variables.
func (e *seqEmitter) conditional(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) (seqValue, error) {
	k := e.k
	sel, err := e.small(env[in.Operands[0]], in)
	if err != nil {
		return nil, err
	}
	branches, args := in.Branches()
	n := int64(len(branches))
	var which spirv.ID // the branch index, as a u32
	if sel[0].t == hlo.PRED {
		// true runs branch 0.
		which = k.f.Select(k.u32(), sel[0].id, k.cu32(0), k.cu32(1))
	} else {
		// An index out of range runs the last branch.
		ok, at := k.inBounds(sel[0], n)
		which = k.f.Select(k.u32(), ok, at, k.cu32(uint32(n-1)))
	}
	leaves := in.Shape.Leaves()
	wide := make([]bool, len(leaves))
	for i, l := range leaves {
		switch n := l.NumElements(); {
		case n > wideElems:
			return nil, notSeqf("%s has a large result", in.Name)
		case n > seqElems && e.local == 1:
			return nil, errWide
		case n > seqElems:
			wide[i] = true
		}
	}
	vars := e.stateVars(leaves, wide)
	arrays, err := e.wideVars(leaves, wide, in.Name)
	if err != nil {
		return nil, err
	}
	before, after := e.unsynced, false
	for b, c := range branches {
		err := k.f.If(k.boolOp(spirv.OpIEqual, which, k.cu32(uint32(b))), func() error {
			e.unsynced = before
			r, err := e.emit(e.flat(c), []seqValue{env[args[b]]})
			if err != nil {
				return err
			}
			err = e.storeState(vars, r, in, arrays)
			after = after || e.unsynced
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	e.unsynced = after
	return e.withArrays(e.loadState(leaves, vars, wide), arrays), nil
}
