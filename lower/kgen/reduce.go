package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Reductions: one invocation per output element folds the reduced
// elements in row-major order, the order the reference evaluator uses, so
// integer results match exactly and float results match up to rounding
// of the (identical) sequence. On CPU devices such as lavapipe this is
// also the fast form (barriers cost more than they save there); shared
// memory and subgroup trees come with the reduction work of the kernel
// issue.

// ReducerMismatch finds a parameter of a reduce's, reduce-window's,
// scatter's or sort's computation whose type is not the operand's it
// receives (the verifier accepts floats of another width, as XLA does;
// the kernels pass the operand's registers as they are): its index and
// the operand's type, or -1.
func ReducerMismatch(in *hlo.Instruction) (int, hlo.ElementType) {
	c := in.Called[0]
	var want []hlo.ElementType
	ops := in.Operands
	switch in.Op {
	case hlo.OpReduce, hlo.OpReduceWindow:
		n := len(ops) / 2
		for _, o := range append(append([]*hlo.Instruction{}, ops[n:]...), ops[:n]...) {
			want = append(want, o.Shape.Elem)
		}
	case hlo.OpScatter:
		n := (len(ops) - 1) / 2
		for _, o := range append(append([]*hlo.Instruction{}, ops[:n]...), ops[n+1:]...) {
			want = append(want, o.Shape.Elem)
		}
	case hlo.OpSort:
		for _, o := range ops {
			want = append(want, o.Shape.Elem, o.Shape.Elem)
		}
	}
	for i, p := range c.Params {
		if i < len(want) && p.Shape.Elem != want[i] {
			return i, want[i]
		}
	}
	return -1, 0
}

// scalarConst makes a SPIR-V constant (or bool) from a rank-0 literal.
func (k *kernelBuilder) scalarConst(l *hlo.Literal) val {
	t := l.Shape.Elem
	var bits uint64
	for j := len(l.Data) - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(l.Data[j])
	}
	switch t.Kind() {
	case hlo.KindBool:
		return val{k.b.ConstantBool(bits != 0), t}
	case hlo.KindFloat:
		return val{k.constFloat(t, hlo.DecodeFloat(t, bits)), t}
	}
	return val{k.constInt(t, bits), t}
}

// emitReducer inlines computation c applied to args and returns its
// results (one per tuple element of the root, or one).
func (k *kernelBuilder) emitReducer(c *hlo.Computation, args []val) ([]val, error) {
	env := map[*hlo.Instruction]val{}
	for _, p := range c.Params {
		env[p] = args[p.ParamNum]
	}
	for _, in := range c.Instructions {
		switch {
		case in.Op == hlo.OpParameter:
		case in.Op == hlo.OpConstant:
			env[in] = k.scalarConst(in.Literal)
		case in.Op == hlo.OpTuple:
		case in.Op == hlo.OpCall:
			ops := make([]val, len(in.Operands))
			for i, o := range in.Operands {
				ops[i] = env[o]
			}
			r, err := k.emitReducer(in.Called[0], ops)
			if err != nil {
				return nil, err
			}
			env[in] = r[0]
		default:
			ops := make([]val, len(in.Operands))
			for i, o := range in.Operands {
				ops[i] = env[o]
			}
			v, err := k.emitScalar(in, ops)
			if err != nil {
				return nil, err
			}
			env[in] = v
		}
	}
	if c.Root.Op == hlo.OpTuple {
		out := make([]val, len(c.Root.Operands))
		for i, o := range c.Root.Operands {
			out[i] = env[o]
		}
		return out, nil
	}
	return []val{env[c.Root]}, nil
}

// loop emits `for i := 0; i < n; i++ { body(i) }` with structured
// control flow; loop-carried values live in function variables.
func (k *kernelBuilder) loop(n spirv.ID, body func(i spirv.ID) error) error {
	u32 := k.u32()
	iv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
	k.f.Store(iv, k.cu32(0))
	var i spirv.ID
	return k.f.While(func() spirv.ID {
		i = k.f.Load(u32, iv)
		return k.f.ULessThan(k.boolT(), i, n)
	}, func() error { return body(i) }, func() { k.increment(iv) })
}

// increment adds 1 to a u32 function variable.
func (k *kernelBuilder) increment(v spirv.ID) {
	u32 := k.u32()
	n := k.f.IAdd(u32, k.f.Load(u32, v), k.cu32(1))
	k.f.Store(v, n)
}

// fold runs accumulators, starting at inits, through count steps of
// computation c (a reducer: accumulators first, then as many values).
// step(j) loads the values to fold in at step j, and says whether the
// step applies (0: always; where it does not, the accumulators keep their
// values). It returns the final accumulators.
func (k *kernelBuilder) fold(c *hlo.Computation, inits []val, count int64, step func(j spirv.ID) (apply spirv.ID, xs []val)) ([]val, error) {
	vars, acc := k.accumulators(inits)
	return k.foldVars(c, vars, acc, k.cu32(uint32(count)), step)
}

// foldN is fold over a count computed in the kernel (a u32).
func (k *kernelBuilder) foldN(c *hlo.Computation, inits []val, count spirv.ID, step func(j spirv.ID) (apply spirv.ID, xs []val)) ([]val, error) {
	vars, acc := k.accumulators(inits)
	return k.foldVars(c, vars, acc, count, step)
}

// foldVars is fold's loop over accumulators vars (acc loads them).
func (k *kernelBuilder) foldVars(c *hlo.Computation, vars []spirv.ID, acc func(i int) val, count spirv.ID, step func(j spirv.ID) (apply spirv.ID, xs []val)) ([]val, error) {
	return k.foldRuns(c, vars, acc, count, func(j spirv.ID) (spirv.ID, [][]val) {
		apply, xs := step(j)
		return apply, [][]val{xs}
	})
}

// foldRuns is foldVars folding the values of several elements a step,
// in order (a subgroup lane's quad).
func (k *kernelBuilder) foldRuns(c *hlo.Computation, vars []spirv.ID, acc func(i int) val, count spirv.ID, step func(j spirv.ID) (apply spirv.ID, xss [][]val)) ([]val, error) {
	n := len(vars)
	err := k.loop(count, func(j spirv.ID) error {
		apply, xss := step(j)
		args := make([]val, 0, 2*n)
		for i := 0; i < n; i++ {
			args = append(args, acc(i))
		}
		res := args
		for _, xs := range xss {
			var err error
			if res, err = k.emitReducer(c, append(res, xs...)); err != nil {
				return err
			}
		}
		for i, r := range res {
			if apply != 0 {
				r = k.sel(apply, r, args[i])
			}
			k.f.Store(vars[i], r.id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loadAll(acc, n), nil
}

// foldColumns is fold for cols outputs at once, an accumulator set
// each, all started at inits: read(j) gives step j's values, one []val
// per output. Each output folds its elements in order, as fold would on
// its own, so the results are fold's bits.
//
// In lockstep (a CPU device) each step waits for the workgroup. Lavapipe
// runs a workgroup's SIMD groups one after another, each to the end of
// the kernel or to a barrier: without one, a group of 8 lanes read 256
// bytes of each row in turn, the next row 16 KiB on, and then the next
// group the next 256 bytes of every row, a pattern no prefetcher
// follows; with a barrier a step, the workgroup's groups read a row's
// 2 KiB one after another before the next row. f32[4096,4096] column
// sums 36.3-41.5 -> 16.7 ms (a barrier every 4, 16, 64 steps: 20.6-23.4;
// docs/BENCHMARKS.md, session 40).
func (k *kernelBuilder) foldColumns(c *hlo.Computation, inits []val, cols int, count int64, read func(j spirv.ID) [][]val) ([][]val, error) {
	sets := k.accumulatorSets(c, inits, cols)
	err := k.loop(k.cu32(uint32(count)), func(r spirv.ID) error {
		if k.lockstep {
			k.barrier()
		}
		for j, xs := range read(r) {
			if err := sets.fold(j, xs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sets.results(), nil
}

// columnLanes finds a reduce computed at idx by a lane of a vector
// kernel (vector.go) whose lanes are consecutive elements of one row of
// the reduce's result, with the operand's last dimension kept: the
// lanes' reduced elements are then consecutive too, a row of the
// operand a step, and one loop folds all the lanes' columns
// (foldColumns) where a loop per lane would read its column alone,
// strided, through every row. It returns the lanes' element indices
// and idx's lane. Not where the reduce's operands (read through binds)
// read a value held in a register, as a prologue's or a GEMM's: the
// register holds the current lane's element, which the other lanes'
// columns would read as theirs (a column softmax's max, a prologue of
// its sum: every column took lane 0's).
func (k *kernelBuilder) columnLanes(in *hlo.Instruction, binds []int, idx spirv.ID) ([]spirv.ID, int, bool) {
	if k.vector == nil || k.lanes > 0 {
		return nil, 0, false
	}
	lane, ok := k.vector.lanes[idx]
	if !ok || !keepsMinor(in, int64(k.vector.width)) || k.readsRegister(binds, map[int]bool{}) {
		return nil, 0, false
	}
	return k.vector.idxs, lane, true
}

// readsRegister reports whether reading through binds reaches a fused
// operand held in a register (fusedOperand.reg); seen holds the
// virtual bindings walked.
func (k *kernelBuilder) readsRegister(binds []int, seen map[int]bool) bool {
	for _, b := range binds {
		if isBuffer(b) || b >= regBase || seen[b] {
			continue
		}
		seen[b] = true
		f := k.virtual[b-virtualBase]
		if f.reg != nil || k.readsRegister(f.binds, seen) {
			return true
		}
	}
	return false
}

// keepsMinor reports whether r is a reduce that keeps its operands'
// minor dimension, a multiple of width: width consecutive results of a
// row fold width consecutive elements of each row.
func keepsMinor(r *hlo.Instruction, width int64) bool {
	if r.Op != hlo.OpReduce {
		return false
	}
	src := r.Operands[0].Shape
	inner, _ := reducedRow(r)
	return src.Rank() > 0 && !inner && src.Dims[src.Rank()-1]%width == 0
}

// foldsColumns reports whether kernel in computes a reduction whose
// vector lanes would fold their columns together (columnLanes): in
// itself, or a producer fused into it with in's dimensions (a mean's
// sum). Such a kernel takes the vector form at any output size: its
// work is the fold, which reads 8 columns a step instead of 1.
func foldsColumns(in *hlo.Instruction, fused map[*hlo.Instruction]bool) bool {
	if keepsMinor(in, VectorWidth) {
		return true
	}
	seen := map[*hlo.Instruction]bool{}
	var walk func(x *hlo.Instruction) bool
	walk = func(x *hlo.Instruction) bool {
		for _, o := range x.Operands {
			if !fused[o] || seen[o] {
				continue
			}
			seen[o] = true
			if keepsMinor(o, VectorWidth) && o.Shape.SameDims(in.Shape) || walk(o) {
				return true
			}
		}
		return false
	}
	return walk(in)
}

// columnVals are the results foldColumns computed for a vector kernel's
// lanes, and where.
type columnVals struct {
	vals [][]val
	at   spirv.Defined
}

// loadAll loads the n accumulators of a fold.
func loadAll(acc func(i int) val, n int) []val {
	res := make([]val, n)
	for i := range res {
		res[i] = acc(i)
	}
	return res
}

// accumulators makes a function variable per fold accumulator, holding
// inits, and the load of accumulator i.
func (k *kernelBuilder) accumulators(inits []val) (vars []spirv.ID, acc func(i int) val) {
	vars = make([]spirv.ID, len(inits))
	for i, v := range inits {
		vars[i] = k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(v.t)))
		k.f.Store(vars[i], v.id)
	}
	return vars, func(i int) val {
		return val{k.f.Load(k.scalarType(inits[i].t), vars[i]), inits[i].t}
	}
}

// accSets is m sets of a fold's accumulators, each folded on its own:
// a lane's (laneFold) or a column's (foldColumns).
type accSets struct {
	k    *kernelBuilder
	c    *hlo.Computation
	vars [][]spirv.ID
	accs []func(i int) val
}

// accumulatorSets makes m sets of accumulators for reducer c, each
// holding inits.
func (k *kernelBuilder) accumulatorSets(c *hlo.Computation, inits []val, m int) *accSets {
	a := &accSets{k: k, c: c, vars: make([][]spirv.ID, m), accs: make([]func(i int) val, m)}
	for j := range a.vars {
		a.vars[j], a.accs[j] = k.accumulators(inits)
	}
	return a
}

// store sets set j's accumulators to vs.
func (a *accSets) store(j int, vs []val) {
	for i, v := range vs {
		a.k.f.Store(a.vars[j][i], v.id)
	}
}

// folded is the reducer applied to set j's accumulators and values xs.
func (a *accSets) folded(j int, xs []val) ([]val, error) {
	return a.k.emitReducer(a.c, append(loadAll(a.accs[j], len(a.vars[j])), xs...))
}

// fold folds values xs into set j.
func (a *accSets) fold(j int, xs []val) error {
	res, err := a.folded(j, xs)
	if err != nil {
		return err
	}
	a.store(j, res)
	return nil
}

// foldOrStart folds values xs into set j, or where start holds sets it
// to xs (a lane's first element: what the fold of the initial
// accumulators computed is discarded).
func (a *accSets) foldOrStart(j int, xs []val, start spirv.ID) error {
	res, err := a.folded(j, xs)
	if err != nil {
		return err
	}
	for i, v := range xs {
		a.k.f.Store(a.vars[j][i], a.k.sel(start, v, res[i]).id)
	}
	return nil
}

// results loads every set's accumulators.
func (a *accSets) results() [][]val {
	res := make([][]val, len(a.vars))
	for j := range res {
		res[j] = loadAll(a.accs[j], len(a.vars[j]))
	}
	return res
}

// storeAll stores values vs to bindings outs at idx.
func (k *kernelBuilder) storeAll(outs []int, idx spirv.ID, vs []val) {
	for i, v := range vs {
		k.store(outs[i], idx, v)
	}
}

// ReduceKernel generates a (variadic) reduce: bindings are the N inputs,
// the N init values, then the N outputs.
func ReduceKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	f, _ := formOf(KindReduce)
	name := f.name(in)
	values := func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error) {
		return f.value(k, in, binds, idx)
	}
	if env.WorkgroupLanes > 0 || env.SubgroupReduce {
		// What the kernel computes inline is known once it is bound.
		kb, _, _, err := env.bound(in)
		if err != nil {
			return nil, err
		}
		fused := kb.fusedInstructions()
		switch {
		case env.WorkgroupLanes > 0 && lanesReducible(in, env, fused, env.WorkgroupLanes):
			env.lanes, env.Local, env.workgroup = env.WorkgroupLanes, env.WorkgroupLanes, true
			return outputKernelMode(in, env, name+"_workgroup", values, false)
		case env.SubgroupReduce && lanesReducible(in, env, fused, env.Target.SubgroupSize):
			env.lanes, env.Local = env.Target.SubgroupSize, env.Target.SubgroupSize
			return outputKernelMode(in, env, name+"_subgroup", values, false)
		}
	}
	return elementKernel(in, env, name, values, f.vector)
}

// trailing reports whether axes are the last len(axes) of rank, in order.
func trailing(axes []int64, rank int) bool {
	for i, a := range axes {
		if a != int64(rank-len(axes)+i) {
			return false
		}
	}
	return true
}

// reduceValues computes output element idx of every result of a
// (variadic) reduce whose operands are read through binds.
func (k *kernelBuilder) reduceValues(in *hlo.Instruction, binds []int, idx spirv.ID) ([]val, error) {
	n := len(in.Operands) / 2
	src := in.Operands[0].Shape
	reduced := make([]bool, src.Rank())
	for _, d := range in.A.Dimensions {
		reduced[d] = true
	}
	var keepDims, redDims, keepAxes, redAxes []int64
	for d, r := range reduced {
		if r {
			redDims, redAxes = append(redDims, src.Dims[d]), append(redAxes, int64(d))
		} else {
			keepDims, keepAxes = append(keepDims, src.Dims[d]), append(keepAxes, int64(d))
		}
	}
	redCount := int64(1)
	for _, d := range redDims {
		redCount *= d
	}
	st := hlo.RowMajorStrides(src.Dims)
	{
		u32 := k.u32()
		o := k.unravel(idx, keepDims)
		base := k.cu32(0)
		for i, ax := range keepAxes {
			term := k.f.IMul(u32, o[i], k.cu32(uint32(st[ax])))
			base = k.f.IAdd(u32, base, term)
		}
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[n+i], k.cu32(0), in.Operands[n+i].Shape.Elem)
		}
		// pos is the operand's element index of reduced element r from
		// b (base: this output's); at reads the operands there.
		pos := func(b, r spirv.ID) spirv.ID {
			ri := k.unravel(r, redDims)
			p := b
			for j, ax := range redAxes {
				term := k.f.IMul(u32, ri[j], k.cu32(uint32(st[ax])))
				p = k.f.IAdd(u32, p, term)
			}
			return p
		}
		at := func(p spirv.ID) []val {
			xs := make([]val, n)
			for i := range xs {
				xs[i] = k.load(binds[i], p, in.Operands[i].Shape.Elem)
			}
			k.spillAt(in, p, xs)
			return xs
		}
		elem := func(r spirv.ID) []val { return at(pos(base, r)) }
		// quadAt reads the 4 elements from p, a multiple of 4, as one
		// 16-byte texel, where the operand is one 32-bit binding read
		// through texel views (quads).
		t := in.Operands[0].Shape.Elem
		quads := n == 1 && binds[0] < len(k.bindings) && k.texelAccess(binds[0]) &&
			t.Bytes() == 4 && k.bindings[binds[0]].st == t
		quadAt := func(p spirv.ID) [][]val {
			k.noteIndex(binds[0], p) // elsewhere than the invocation's element
			v := k.texelLoad4(binds[0], k.f.UDiv(u32, p, k.cu32(4)))
			out := make([][]val, 4)
			for i := range out {
				out[i] = []val{{k.f.Extract(k.scalarType(t), v, uint32(i)), t}}
				if k.spills(in) {
					k.spillAt(in, k.f.IAdd(u32, p, k.cu32(uint32(i))), out[i])
				}
			}
			return out
		}
		// runOf reads q consecutive elements of a row from e: a quad as
		// one texel (the row's reduced elements are consecutive), else
		// element by element.
		texelQuad := quads && trailing(redAxes, src.Rank())
		runOf := func(q int) func(e spirv.ID) [][]val {
			return func(e spirv.ID) [][]val {
				if q == 4 && texelQuad {
					return quadAt(k.f.IAdd(u32, base, e))
				}
				out := make([][]val, q)
				out[0] = elem(e)
				for i := 1; i < q; i++ {
					out[i] = elem(k.f.IAdd(u32, e, k.cu32(uint32(i))))
				}
				return out
			}
		}
		if k.lanes > 0 {
			q := 1
			if k.quadLanes(redCount) {
				q = 4
			}
			return k.subgroupFold(in.Called[0], inits, redCount, int64(q), runOf(q))
		}
		if s, ok := k.sums[in]; ok { // folded with its max (onlineemit.go)
			return []val{s}, nil
		}
		if pair, ok := k.online[in]; ok && k.foldsOnline(in, redAxes, redCount) {
			m, s, err := k.onlineFold(in, pair, inits[0], base, redCount, func(p spirv.ID) val {
				return k.load(binds[0], p, in.Operands[0].Shape.Elem)
			})
			if err != nil {
				return nil, err
			}
			if k.sums == nil {
				k.sums = map[*hlo.Instruction]val{}
			}
			k.sums[pair.Sum] = s
			return []val{m}, nil
		}
		if lanes, q := k.laneOrder(in); lanes > 0 {
			if k.rowShape != nil && foldsRowVectors(in, redAxes, redCount, k.rowShape) {
				width := max(q*int(lanes), VectorWidth)
				return k.laneFold(in.Called[0], inits, redCount, lanes, q, width, func(step spirv.ID, n int, body func(o int, xs []val) error) error {
					// n elements, whole vec4 pairs, from element step*width.
					first := k.f.IAdd(u32, k.f.UDiv(u32, base, k.cu32(VectorWidth)), k.f.IMul(u32, step, k.cu32(uint32(width/VectorWidth))))
					for c := 0; c < n/VectorWidth; c++ {
						e := 0
						err := k.vectorElems(k.f.IAdd(u32, first, k.cu32(uint32(c))), func(p spirv.ID) error {
							xs := make([]val, 0, len(inits))
							for i := range len(inits) {
								xs = append(xs, k.load(binds[i], p, in.Operands[i].Shape.Elem))
							}
							k.spillAt(in, p, xs)
							e++
							return body(c*VectorWidth+e-1, xs)
						})
						if err != nil {
							return err
						}
					}
					return nil
				})
			}
			width, read := q*int(lanes), runOf(q)
			return k.laneFold(in.Called[0], inits, redCount, lanes, q, width, func(step spirv.ID, n int, body func(o int, xs []val) error) error {
				for o := 0; o < n; o += q {
					// Runs as the subgroup kernel reads them.
					r := k.f.IAdd(u32, k.f.IMul(u32, step, k.cu32(uint32(width))), k.cu32(uint32(o)))
					for i, xs := range read(r) {
						if err := body(o+i, xs); err != nil {
							return err
						}
					}
				}
				return nil
			})
		}
		if cols, lane, ok := k.columnLanes(in, binds, idx); ok {
			key := computedKey{in, cols[0]}
			if c, ok := k.columns[key]; ok && k.f.Usable(c.at) {
				return c.vals[lane], nil
			}
			// Lane 0's base: the lanes are consecutive elements of the
			// kept last dimension.
			base0 := k.f.ISub(u32, base, k.cu32(uint32(lane)))
			vals, err := k.foldColumns(in.Called[0], inits, len(cols), redCount, func(r spirv.ID) [][]val {
				p := pos(base0, r)
				var out [][]val
				for c := 0; c < len(cols); c++ {
					pc := k.f.IAdd(u32, p, k.cu32(uint32(c)))
					if quads { // the lanes' row is aligned: base0 and the strides are multiples of the row
						out = append(out, quadAt(pc)...)
						c += 3
						continue
					}
					out = append(out, at(pc))
				}
				return out
			})
			if err != nil {
				return nil, err
			}
			if k.columns == nil {
				k.columns = map[computedKey]columnVals{}
			}
			k.columns[key] = columnVals{vals, spirv.Defined{Block: k.f.Block()}}
			return vals[lane], nil
		}
		if k.rowShape != nil && foldsRowVectors(in, redAxes, redCount, k.rowShape) {
			// The reduced elements are consecutive from base, in a
			// value of the kernel's shape (so the vec4s of the chunk
			// are in every vector binding's bounds).
			return k.rowFold(in.Called[0], inits, base, redCount, func(p spirv.ID) []val {
				xs := make([]val, n)
				for i := range xs {
					xs[i] = k.load(binds[i], p, in.Operands[i].Shape.Elem)
				}
				k.spillAt(in, p, xs)
				return xs
			})
		}
		return k.fold(in.Called[0], inits, redCount, func(r spirv.ID) (spirv.ID, []val) { return 0, elem(r) })
	}
}

func EqualDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
