package kgen

import (
	"github.com/vkjit/vkjit/spirv"
)

// Subgroup tiles, for CPU devices (lavapipe): a subgroup of S invocations
// computes a tileRows(S) x 4S tile of results (8S where the rhs is read
// across as vec4s and is that wide, in products of at least twoQuadMACs
// multiply-adds), each lane tileRows(S) x 4 (or 8) of
// them, lane l the columns 4l .. 4l+3 (8l .. 8l+7) of the tile. llvmpipe
// runs a subgroup as one SIMD vector per value, so this is a BLAS
// micro-kernel's layout: every lhs value read once by one lane and
// handed to the others by a shuffle, the rhs row the tile needs at one k
// one or two vec4s per lane (8 loads and a transpose each for llvmpipe).
// Two quads a lane: 10 fetches per 512 multiply-adds instead of 12, and
// each shuffled lhs value feeds 8 columns; time over one quad's
// (bench/ab -rounds 40): gemm1024 0.896, dense_relu 0.899, mlp_forward
// 0.926, transformer_block 0.936.
//
// What bounds the GEMM there, from llvmpipe's generated code (perf over
// the JIT code, 1024^3): every read of a vec4 is a texel fetch, which
// llvmpipe emits as a call of a function of its own (its formats other
// than RGBA8 are not inlined), and a call clobbers every vector register:
// the accumulators live on the stack across the fetches. So each step
// fetches first (lanesRows/S vec4s of the lhs and 4 or 8 of the rhs per 4
// values of k) and then runs each accumulator's 4 multiply-adds one after
// another: one load and one store of it per step, and no product waits
// in memory. Multiply-adds in the order (k, row, column) let LLVM compute
// the products first and spill them: 24% of the samples on stack traffic
// against 9% in this order, 1024^3 0.81 of the time (below).
//
// The workgroup is the subgroup (S invocations). Each result still sums
// its products in the order of k, as the other tiled kernels do: the
// results are theirs bit for bit.

// lanesRows is the tile's rows, a multiple of S above it (each lane then
// reads lanesRows/S lhs rows for the others): more rows amortize the rhs
// fetches. Time over 8 rows' with the multiply-adds in (k, row, column)
// order (bench/ab, 8-10 rounds): 16 rows 0.976; in the order of this
// kernel: 8 rows 0.953, 16 rows 0.814-0.824, 24 0.829, 32 0.818; with 16
// rows, dense_relu 0.786, mlp_forward 0.886, conv_block 0.908,
// transformer_block 0.838. Before that, with 8 rows: 7 took 1.5x and 6
// 1.7x (fewer rows read the rhs as often for fewer results). Those were
// 8 lanes (256-bit llvmpipe), where 16 rows is two lhs rows a lane; with
// 16 lanes (512 bits, vk.WideLavapipeHost) 16 rows gave each lane one,
// and two again (32 rows) took 0.834-0.863 of the time at 1024^3, 0.856
// at 2048^3, dense_relu 0.886, mlp_forward 0.921, mlp_train 0.906,
// transformer_block 0.898, conv_block 0.921, the bf16 MHA block 0.835,
// the DLRM step 0.974 (bench/ab, 8-20 rounds); 48 and 64 rows no
// better than 32 (0.852, 0.838 at 1024^3). So a tile has lanesRows
// rows, or two a lane where the subgroup is wider than 8 (tileRows).
const lanesRows = 16

// tileRows is a subgroup tile's rows for a subgroup of s lanes.
func tileRows(s int64) int64 { return max(lanesRows, 2*s) }

// shortRows is the rows of a subgroup tile for a product of m rows:
// tileRows, or for fewer rows than that m itself (up to a subgroup, whose
// lanes each read one of them; a multiple of the subgroup above it),
// so that a matrix-vector product does not compute rows to drop them.
func shortRows(m, s int64) int64 {
	rows := tileRows(s)
	if m >= rows {
		return rows
	}
	if m <= s {
		return max(m, 1)
	}
	return (m + s - 1) / s * s
}

// ToLanes makes p a subgroup-tile plan when tg can run one (a CPU device
// whose subgroups shuffle, of a power-of-two size that lanesRows is a
// multiple of when it is below lanesRows) and p is a dot or implicit GEMM
// whose rhs is read as vec4s or is at least a tile wide; it reports
// whether it did.
func (p *GemmPlan) ToLanes(tg Target) bool {
	s := int64(tg.SubgroupSize)
	if tg.CPU && tg.SubgroupShuffle {
		p.narrowQuads(tg)
	}
	// The rhs read as vec4s, or at least a tile's width of columns read
	// one by one (f32 with n not a multiple of 4, bf16, f16): a
	// [1024,1024] x [1024,1023] product took 207.8 ms with a tile per
	// invocation, 154.0 in subgroup tiles (bench/ab -rounds 8).
	rhs := p.rVec != vecNone || p.n >= 4*s
	if !tg.CPU || !tg.SubgroupShuffle || s&(s-1) != 0 || p.k%4 != 0 || !rhs || (lanesRows > s && lanesRows%s != 0) {
		return false
	}
	p.Lanes = s
	p.Rows, p.Cols = shortRows(p.m, s), 4*s
	switch {
	case p.rVec == vecAcross && p.m <= shortQuadRows:
		st, _ := StorageType(p.in[1], tg)
		p.Cols = shortQuads(p.n, s, int64(tg.Cores), max(1, int64(st.Bytes()))) * 4 * s
	case p.rVec == vecAcross && p.n >= 2*4*s && p.macs() >= twoQuadMACs:
		p.Cols = 2 * 4 * s // two quads a lane
	}
	p.grid(p.Rows, p.Cols, s)
	return true
}

// shortQuadsMost is the most rhs quads a lane reads at each k in a
// product of at most shortQuadRows rows (a matrix-vector product: a
// dense layer at batch 1, as a model decodes token by token); how many
// it reads is shortRowBytes' worth of each rhs row for the tile.
const shortQuadsMost = 8

// shortRowBytes is the bytes of each rhs row that a short product's tile
// of s lanes reads (shortQuads). Such a product is bound by reading the
// rhs, a row at each k, the next one a row's length on; how long a run
// of each row reads fastest depends on the host's memory system, not on
// the arithmetic. vkjit bench --iterations 10, two rounds, ms for 1, 2,
// 4 and 8 quads a lane, contiguous in each lane:
//
//   - 8 lanes, Intel Xeon (256-bit lavapipe, the CI kind of host):
//     f32[1,4096] x [4096,4096] 16.8-17.6, 16.3-17.3, 15.9-17.1,
//     11.4-13.0; [1,8192] x [8192,8192] 78-94, 70-71, 67-70, 45-48;
//     [1,1024] x [1024,4096] 5.6-6.3, 3.0-3.9, 2.4-3.6, 2.2-2.4;
//     [4,4096] x [4096,4096] 17.9-19.3, 19.3-21.2, 15.0-16.7, 9.7-12.4;
//     bf16 [1,4096] x [4096,4096] 12.5-12.8 with one quad, 7.0-7.9 with
//     8 (16: 5.5-10.3). Best: 1 KiB of an f32 row, 512 bytes of a bf16.
//   - 16 lanes, AMD Zen 5 (512-bit lavapipe): [1,4096] x [4096,4096]
//     4.0-4.2, 3.1-3.2, 4.3-4.4, 6.6; [1,8192] x [8192,8192] 16.1-16.2,
//     13.0-13.2, 17.8, 26.2-26.3; [1,1024] x [1024,4096] 1.2-1.4,
//     0.82-0.88, 1.1-1.3, 1.7-2.0; [4,4096] x [4096,4096] 4.2-4.6,
//     3.9-4.0, 6.8-7.3, 7.2-7.7; [1,512] x [512,512] 0.17-0.20,
//     0.13-0.18, 0.14-0.22; bf16 [1,4096] x [4096,4096] 3.0-3.1,
//     2.6, 2.5-2.9, 2.4. Best: 512 bytes of an f32 row, 512-1024 of a
//     bf16. The same host at 8 lanes (LP_NATIVE_VECTOR_WIDTH=256, not
//     its default) was best at 2 quads too (f32 [1,4096] 3.0 against 6.6
//     with 8), and the lanes' quads interleaved (a fetch reading one run
//     across the subgroup) measured 3.8-4.5 ms for every count.
//
// So 1 KiB at 8 lanes (the Intel hosts lavapipe runs at 256 bits) and
// 512 bytes at 16 (the AMD hosts vk runs at 512): the two kinds of host
// measured, by the lanes each runs at.
func shortRowBytes(s int64) int64 {
	if s <= 8 {
		return 1024
	}
	return 512
}

// shortQuadRows is the most rows of a product that takes shortQuads:
// the kernel grows with rows x quads, and lavapipe compiles it at its
// first dispatch. Fresh caches, first run and then steady ms, one quad
// against 8: 1 row 632-641 / 16.2-17.2 against 705-737 / 8.6-9.4; 4
// rows 626-697 / 20.5-20.7 against 833-912 / 11.7-12.4; 8 rows, 2 and 4
// quads against one: 485-860 ms first and 19.3-25.3 steady against
// 550-698 / 22.0-22.2, no gain (8 lanes, the Xeon).
const shortQuadRows = 4

// shortQuads is the rhs quads a lane of s reads in a short product of n
// columns whose rhs elements take elemBytes each: shortRowBytes of each
// row for the tile, at most shortQuadsMost, fewer where the tile would
// be wider than the product or leave fewer tiles than the device has
// cores.
func shortQuads(n, s, cores, elemBytes int64) int64 {
	q := min(shortQuadsMost, max(1, shortRowBytes(s)/(4*s*elemBytes)))
	for q > 1 && (n < q*4*s || n/(q*4*s) < cores) {
		q /= 2
	}
	return q
}

// twoQuadMACs is the size (multiply-adds) from which a lane takes two
// rhs quads: the kernel is about twice the SPIR-V (a 16x64 tile 17,000
// words against 9,000), and lavapipe compiles it at first use in time
// that grows faster than that. The corpus's DLRM training step, five
// GEMMs of 231M multiply-adds each, took 2.72 -> 3.65 s cold with two
// quads everywhere (whole-process timing -n 5, fresh caches) for about 1 ms a step;
// 1024^3 gains 3-4 ms a run.
const twoQuadMACs = 1 << 28

// macs is the product's multiply-adds.
func (p *GemmPlan) macs() int64 {
	n := p.m * p.n * p.k
	for _, b := range p.batch {
		n *= b
	}
	return n
}

// gemmLoopLanes emits the k loop of a subgroup tile (ToLanes): lane is
// the invocation's lane, lBase and rBase the operands' batch offsets,
// row0 the tile's first row, myRows the starts of the lhs rows the lane
// reads for the others when the lhs is read along k (rows lane,
// lane+S, ... of the tile, clamped), myCol the lane's first column and
// rCol its columns' starts in the rhs; convA reads an implicit GEMM's
// lhs rows (convRows of the lane's rows). Each step covers 4 values of k.
//
// A lane's rows reach the others by shuffles with a constant lane:
// llvmpipe turns each into a permute of one register, where a broadcast
// (OpGroupNonUniformBroadcast) is a loop over the lanes that look for an
// active one, and every lane reading the row itself a gather of the same
// texel 8 times. 1024^3: broadcasts 88 ms, each lane reading every row
// 54-59 ms, shuffles 38 ms (the tile per invocation: 55 ms).
func (k *kernelBuilder) gemmLoopLanes(p *GemmPlan, dotBinds []int, lBase, rBase, lane, row0 spirv.ID, myRows []spirv.ID, myCol spirv.ID, rCol []spirv.ID, convA func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID) (func(i, j int) spirv.ID, error) {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	div4 := func(a spirv.ID) spirv.ID { return op(spirv.OpUDiv, a, cu(4)) }
	load4 := func(o int, idx4 spirv.ID) spirv.ID {
		return k.flushSubnormal(k.loadQuad(dotBinds[o], idx4, p.in[o]), 4)
	} // operand o's
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
	groups := len(myRows) // lhs reads per lane and step
	myRow4 := make([]spirv.ID, groups)
	for g, r := range myRows {
		myRow4[g] = div4(r)
	}
	// Across, the lhs quads a lane reads (acrossA): the tile's 4 x q
	// grid of (k, quad of rows), q = Rows/4, has Rows cells, cell
	// l + g*S the lane's g-th (clamped): quad cell%q at k = 4*k4 +
	// cell/q.
	acrossA := lVec == vecAcross && p.Rows%4 == 0
	var quadA, kA []spirv.ID
	var lBase4 spirv.ID
	if acrossA {
		q := p.Rows / 4
		for g := range groups {
			cell := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lane, cu(int64(g)*p.Lanes)), cu(p.Rows-1))
			quadA = append(quadA, k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, div4(row0), op(spirv.OpUMod, cell, cu(q))), cu(p.m/4-1)))
			kA = append(kA, op(spirv.OpUDiv, cell, cu(q)))
		}
		lBase4 = div4(lBase)
	}
	var rCol4 []spirv.ID
	for _, c := range rCol {
		rCol4 = append(rCol4, div4(c))
	}
	// The lane's quad of the rhs row at one k (across): the tile's
	// columns start at a multiple of 4, the last quad in bounds for
	// those past the edge.
	var myQuad []spirv.ID
	for q := range (nc + 3) / 4 {
		myQuad = append(myQuad, k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, div4(myCol), cu(q)), cu(p.n/4-1)))
	}
	rBase4 := div4(rBase)
	// ahead[i][c]: where the lhs at row i and k = 4*k4+c is (a lane, its
	// read and the part of it). Row i is lane i%S's read i/S along k;
	// across, cell c*q + i/4 of the grid holds it.
	type at struct {
		lane int64
		read int
		part int
	}
	ahead := make([][4]at, p.Rows)
	for i := range ahead {
		for c := range 4 {
			ahead[i][c] = at{int64(i) % p.Lanes, i / int(p.Lanes), c}
			if acrossA {
				cell := int64(c)*(p.Rows/4) + int64(i)/4
				ahead[i][c] = at{cell % p.Lanes, int(cell / p.Lanes), i % 4}
			}
		}
	}
	err := k.loop(cu(p.k/4), func(k4 spirv.ID) error {
		kk := func(c int) spirv.ID { return op(spirv.OpIAdd, op(spirv.OpIMul, k4, cu(4)), cu(int64(c))) }
		// mine[c]: what this lane read of the lhs (ahead says whose).
		// mine[g][c]: what this lane read of the lhs (ahead says whose).
		mine := make([][4]spirv.ID, groups)
		switch {
		case lVec == vecConv:
			mine = convA(k4, load4)
		case lVec == vecAlong:
			for g := range mine {
				v := load4(0, op(spirv.OpIAdd, myRow4[g], k4))
				for c := range 4 {
					mine[g][c] = part(v, c)
				}
			}
		case acrossA:
			for g := range mine {
				c := op(spirv.OpIAdd, op(spirv.OpIMul, k4, cu(4)), kA[g])
				v := load4(0, op(spirv.OpIAdd, op(spirv.OpIAdd, lBase4, op(spirv.OpIMul, c, cu(p.lStride[1]/4))), quadA[g]))
				for r := range 4 {
					mine[g][r] = part(v, r)
				}
			}
		default:
			for g := range mine {
				for c := range 4 {
					mine[g][c] = k.flushSubnormal(k.load(dotBinds[0], op(spirv.OpIAdd, myRows[g], op(spirv.OpIMul, kk(c), cu(p.lStride[1]))), p.in[0]).id, 1)
				}
			}
		}
		// b[j][c]: the rhs at the lane's column j and k = 4*k4+c, all
		// read before the multiply-adds (read as they are used, 1024^3
		// took 53 ms against 38).
		b := make([][4]spirv.ID, nc)
		switch rVec {
		case vecAcross:
			for c := range 4 {
				for q, quad := range myQuad {
					v := load4(1, op(spirv.OpIAdd, op(spirv.OpIAdd, rBase4, op(spirv.OpIMul, kk(c), cu(p.rStride[0]/4))), quad))
					for j := 4 * q; j < min(4*q+4, int(nc)); j++ {
						b[j][c] = part(v, j-4*q)
					}
				}
			}
		case vecAlong:
			for j := range b {
				v := load4(1, op(spirv.OpIAdd, rCol4[j], k4))
				for c := range 4 {
					b[j][c] = part(v, c)
				}
			}
		default:
			for j := range b {
				for c := range 4 {
					b[j][c] = k.flushSubnormal(k.load(dotBinds[1], op(spirv.OpIAdd, rCol[j], op(spirv.OpIMul, kk(c), cu(p.rStride[0]))), p.in[1]).id, 1)
				}
			}
		}
		// Each accumulator's 4 multiply-adds one after another (see
		// the top of this file), its row's 4 lhs values shared by its
		// columns.
		for i := range acc {
			var a [4]spirv.ID
			for c := range 4 {
				at := ahead[i][c]
				a[c] = from(mine[at.read][at.part], at.lane)
			}
			for j := range acc[i] {
				x := k.f.Load(f32, acc[i][j])
				for c := range 4 {
					x = k.f.FAdd(f32, x, k.f.FMul(f32, a[c], b[j][c]))
				}
				k.f.Store(acc[i][j], x)
			}
		}
		return nil
	})
	return func(i, j int) spirv.ID { return k.f.Load(f32, acc[i][j]) }, err
}
