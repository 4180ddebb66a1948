package kgen

import (
	"github.com/vkjit/vkjit/spirv"
)

// Subgroup tiles, for CPU devices (lavapipe): a subgroup of S invocations
// computes a lanesRows x 4S tile of results, each lane lanesRows x 4 of
// them, lane l the columns 4l .. 4l+3 of the tile. llvmpipe runs a
// subgroup as one SIMD vector per value, so this is a BLAS micro-kernel's
// layout: 32 accumulator vectors, every lhs value read once by one lane
// and handed to the others by a shuffle, the rhs row the tile needs at
// one k one vec4 per lane (8 loads and a transpose for llvmpipe).
//
// What bounds the GEMM there, from llvmpipe's generated code (perf over
// the JIT code, 1024^3): every read of a vec4 is a gather, one extract,
// bounds check and load per lane and a transpose, about as many
// instructions as 10 multiply-adds. A tile per invocation (8 x 16 of
// them, gemmLoopVec4) reads 24 vec4s per 512 multiply-adds but keeps 128
// accumulators per lane, which spill; here a lane reads 5 vec4s per 128
// multiply-adds and its accumulators stay in registers. 1024^3: 55 ->
// 37-39 ms, 2048^3: 445-492 -> 306 ms (docs/BENCHMARKS.md).
//
// The workgroup is the subgroup (S invocations). Each result still sums
// its products in the order of k, as the other tiled kernels do: the
// results are theirs bit for bit.

// lanesRows is the tile's rows: 1024^3 took 37-39 ms with 8, 56-57 with
// 7 and 60-68 with 6 (the lane-vectors a row costs are the same; fewer
// rows read the rhs as often for fewer results).
const lanesRows = 8

// ToLanes makes p a subgroup-tile plan when tg can run one (a CPU device
// whose subgroups of at least lanesRows lanes shuffle) and p is a dot or
// implicit GEMM whose rhs is read as vec4s or is at least a tile wide; it
// reports whether it did.
func (p *GemmPlan) ToLanes(tg Target) bool {
	s := int64(tg.SubgroupSize)
	// The rhs read as vec4s, or at least a tile's width of columns read
	// one by one (f32 with n not a multiple of 4, bf16, f16): a
	// [1024,1024] x [1024,1023] product took 207.8 ms with a tile per
	// invocation, 154.0 in subgroup tiles (bench/ab -rounds 8).
	rhs := p.rVec != vecNone || p.n >= 4*s
	if !tg.CPU || !tg.SubgroupShuffle || s&(s-1) != 0 || p.k%4 != 0 || !rhs || lanesRows > s {
		return false
	}
	p.Lanes = s
	p.Rows, p.Cols = lanesRows, 4*s
	p.grid(p.Rows, p.Cols, s)
	return true
}

// gemmLoopLanes emits the k loop of a subgroup tile (ToLanes): lane is
// the invocation's lane, lBase and rBase the operands' batch offsets,
// row0 the tile's first row, myRow the start of the lhs row the lane
// reads for the others when the lhs is read along k (row lane of the
// tile, clamped), myCol the lane's first column and rCol its columns'
// starts in the rhs; convA reads an implicit GEMM's lhs row (convRows of
// the lane's row). Each step covers 4 values of k.
//
// A lane's row reaches the others by shuffles with a constant lane:
// llvmpipe turns each into a permute of one register, where a broadcast
// (OpGroupNonUniformBroadcast) is a loop over the lanes that look for an
// active one, and every lane reading the row itself a gather of the same
// texel 8 times. 1024^3: broadcasts 88 ms, each lane reading every row
// 54-59 ms, shuffles 38 ms (the tile per invocation: 55 ms).
func (k *kernelBuilder) gemmLoopLanes(p *GemmPlan, dotBinds []int, lBase, rBase, lane, row0, myRow, myCol spirv.ID, rCol []spirv.ID, convA func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID) (func(i, j int) spirv.ID, error) {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	div4 := func(a spirv.ID) spirv.ID { return op(spirv.OpUDiv, a, cu(4)) }
	load4 := func(bind int, idx4 spirv.ID) spirv.ID { return k.flushSubnormal(k.loadVec4(bind, idx4), 4) }
	part := func(v spirv.ID, c int) spirv.ID { return k.f.Extract(f32, v, uint32(c)) }
	k.b.Capability(spirv.CapabilityGroupNonUniformShuffle)
	scope := k.cu32(spirv.ScopeSubgroup)
	from := func(v spirv.ID, l int64) spirv.ID { return k.f.GroupNonUniformShuffle(f32, scope, v, cu(l)) }
	lVec, rVec := p.lVec, p.rVec
	if !k.isVec(dotBinds[0]) {
		lVec = vecNone
	}
	if !k.isVec(dotBinds[1]) {
		rVec = vecNone
	}
	if convA != nil {
		lVec = vecConv
	}
	nc := p.Cols / p.Lanes
	acc := k.gemmAccumulators(p.Rows, nc)
	myRow4 := div4(myRow)
	// Across, the lhs quads a lane reads (acrossA): its lane within the
	// tile's 4 x Rows/4 (k, quad) grid, its quad of rows (clamped).
	acrossA := lVec == vecAcross && p.Rows%4 == 0 && p.Rows <= p.Lanes
	var laneA, quadA, lBase4 spirv.ID
	if acrossA {
		q := p.Rows / 4
		laneA = k.f.Ext(u32, spirv.GLSLUMin, lane, cu(p.Rows-1))
		quadA = k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, div4(row0), op(spirv.OpUMod, laneA, cu(q))), cu(p.m/4-1))
		lBase4 = div4(lBase)
	}
	var rCol4 []spirv.ID
	for _, c := range rCol {
		rCol4 = append(rCol4, div4(c))
	}
	// The lane's quad of the rhs row at one k (across): the tile's
	// columns start at a multiple of 4, the last quad in bounds for
	// those past the edge.
	myQuad := k.f.Ext(u32, spirv.GLSLUMin, div4(myCol), cu(p.n/4-1))
	rBase4 := div4(rBase)
	// ahead[i][c]: where the lhs at row i and k = 4*k4+c is (a lane and
	// the part of what it read). Lane i reads row i's 4 values of k;
	// across, lane l reads 4 rows at one k: quad l%q at k = 4*k4 + l/q,
	// for q = Rows/4 quads.
	type at struct {
		lane int64
		part int
	}
	ahead := make([][4]at, p.Rows)
	for i := range ahead {
		for c := range 4 {
			ahead[i][c] = at{int64(i), c}
			if acrossA {
				ahead[i][c] = at{int64(c)*(p.Rows/4) + int64(i)/4, i % 4}
			}
		}
	}
	err := k.loop(cu(p.k/4), func(k4 spirv.ID) error {
		kk := func(c int) spirv.ID { return op(spirv.OpIAdd, op(spirv.OpIMul, k4, cu(4)), cu(int64(c))) }
		// mine[c]: what this lane read of the lhs (ahead says whose).
		var mine [4]spirv.ID
		switch {
		case lVec == vecAlong || lVec == vecConv:
			if lVec == vecConv {
				mine = convA(k4, func(b int, i spirv.ID) spirv.ID { return load4(dotBinds[b], i) })[0]
			} else {
				v := load4(dotBinds[0], op(spirv.OpIAdd, myRow4, k4))
				for c := range 4 {
					mine[c] = part(v, c)
				}
			}
		case acrossA:
			q := p.Rows / 4
			c := op(spirv.OpIAdd, op(spirv.OpIMul, k4, cu(4)), op(spirv.OpUDiv, laneA, cu(q)))
			v := load4(dotBinds[0], op(spirv.OpIAdd, op(spirv.OpIAdd, lBase4, op(spirv.OpIMul, c, cu(p.lStride[1]/4))), quadA))
			for r := range 4 {
				mine[r] = part(v, r)
			}
		default:
			for c := range 4 {
				mine[c] = k.flushSubnormal(k.load(dotBinds[0], op(spirv.OpIAdd, myRow, op(spirv.OpIMul, kk(c), cu(p.lStride[1]))), p.in).id, 1)
			}
		}
		// b[j][c]: the rhs at the lane's column j and k = 4*k4+c, all
		// read before the multiply-adds (read as they are used, 1024^3
		// took 53 ms against 38).
		b := make([][4]spirv.ID, nc)
		switch rVec {
		case vecAcross:
			for c := range 4 {
				v := load4(dotBinds[1], op(spirv.OpIAdd, op(spirv.OpIAdd, rBase4, op(spirv.OpIMul, kk(c), cu(p.rStride[0]/4))), myQuad))
				for j := range b {
					b[j][c] = part(v, int(j))
				}
			}
		case vecAlong:
			for j := range b {
				v := load4(dotBinds[1], op(spirv.OpIAdd, rCol4[j], k4))
				for c := range 4 {
					b[j][c] = part(v, c)
				}
			}
		default:
			for j := range b {
				for c := range 4 {
					b[j][c] = k.flushSubnormal(k.load(dotBinds[1], op(spirv.OpIAdd, rCol[j], op(spirv.OpIMul, kk(c), cu(p.rStride[0]))), p.in).id, 1)
				}
			}
		}
		for c := range 4 {
			bc := make([]spirv.ID, nc)
			for j := range bc {
				bc[j] = b[j][c]
			}
			a := make([]spirv.ID, p.Rows)
			for i := range a {
				a[i] = from(mine[ahead[i][c].part], ahead[i][c].lane)
			}
			k.gemmStep(acc, a, bc)
		}
		return nil
	})
	return func(i, j int) spirv.ID { return k.f.Load(f32, acc[i][j]) }, err
}
