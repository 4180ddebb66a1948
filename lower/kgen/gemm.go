package kgen

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Register-blocked matrix multiply: one invocation computes a tile of
// results (gemmTile x gemmTile, or vecTileRows x vecTileCols when
// operands are read as vec4s), keeping the accumulators in registers and
// loading each operand element once per tile row or column instead of
// once per result, and then applies the dot's epilogue (the consumer
// chain output fusion put in the same kernel: bias, activation) to each
// result. Measured on lavapipe with hand-written kernels (the kernel
// issue): 8x8 register tiles without shared memory were the fastest
// form, 64x64 shared-memory tiles ten times slower.
const gemmTile = 8

// vecTileRows x vecTileCols is the tile of a vec4 GEMM (gemmVec4): on
// lavapipe (2 cores, AVX2) 1024^3 took 164-212 ms with 8x8 tiles,
// 129-143 ms with 8x16, 135-158 ms with 16x8 and 191-228 ms with 4x16,
// interleaved runs of one session.
const vecTileRows, vecTileCols = 8, 16

// gemmGroup is how many tile rows share a walk over the rhs's columns
// (groupedTile). 2048^3 on lavapipe, interleaved runs: 1300-1476 ms
// without groups, 1135-1268 ms with groups of 8 (one outlier at 2000)
// and 1126-1268 with 16; 1024^3's best runs went from 131 to 113 ms.
const gemmGroup = 8

// minGemmWork is the multiply-adds from which a dot is tiled. Below it
// the per-element kernel is as fast; above, the tiled one wins even on
// thin products: the MLP's [256,10] logits (k = 512, 1.3 M multiply-adds)
// took 2.8 ms per element and 1.5 ms tiled, its training step's [512,10]
// and [256,10] gradients 5-6 ms and 1.0-1.7 ms. (Lavapipe compiles a
// tiled kernel at first use in 0.2-0.4 s; Mesa's shader cache keeps it.)
const minGemmWork = 1 << 20

// GemmPlan is a dot that the tiled kernel handles: batch dimensions in
// any number, one free dimension on each side, one contracting
// dimension, f32 results (other types take the general kernel).
type GemmPlan struct {
	dot         *hlo.Instruction
	batch       []int64 // batch dimension sizes
	m, n, k     int64
	lStride     [2]int64 // lhs strides of (row, k)
	rStride     [2]int64 // rhs strides of (k, col)
	lBatchSt    []int64
	rBatchSt    []int64
	tilesM      int64
	tilesN      int64
	Invocations int64
	conv        *convGeom // an implicit GEMM: the lhs is a convolution's input (convGemmOf)
	lVec, rVec  vecLayout
	Rows, Cols  int64 // results per invocation
	Shared      bool  // a workgroup's block tile staged through shared memory (sharedGemm)
	Lanes       int64 // a subgroup of Lanes invocations per tile, lanes over its columns (ToLanes); 0: an invocation per tile
	Swap        bool  // the dot's rhs is the plan's lhs: W @ x for a vector x, as the row x^T W^T (GemmOf)
	// in (the plan's lhs and rhs) and out are the operands' and the
	// result's element types: f32, or bf16 or f16 operands with a result
	// of theirs or f32, widened to f32 as loaded and accumulated in f32
	// as the general kernel does, the result rounded once; or small float
	// codes (f8 parameters a short product reads as they are: lower's
	// widenF8), decoded to f32 as loaded.
	in  [2]hlo.ElementType
	out hlo.ElementType
}

// vecLayout is how a GEMM operand is read as vec4s.
type vecLayout int

const (
	vecNone   vecLayout = iota // scalar loads
	vecAlong                   // 4 consecutive values of k of one row (lhs) or column (rhs)
	vecAcross                  // 4 consecutive rows (lhs) or columns (rhs) at one k
	vecConv                    // a convolution's input: 4 consecutive features at one window position (convRows)
)

// gemmVec4 chooses how each operand of p is read as vec4s: along k
// when k is its innermost dimension, across rows (lhs) or columns (rhs)
// when those are, with every vec4 starting at a multiple of 4 elements.
// Each step of the loop covers 4 values of k; an operand without a vec4
// layout is read by scalar loads. Lavapipe's scalar loads are per-lane
// gathers, a quarter as many with vec4s. It reports whether either
// operand has a layout (k must be a multiple of 4).
func (p *GemmPlan) gemmVec4() bool {
	if p.k%4 != 0 {
		return false
	}
	if p.in != [2]hlo.ElementType{hlo.F32, hlo.F32} { // narrow operands: scalar loads, widened (narrowQuads)
		p.lVec, p.rVec = vecNone, vecNone
		return false
	}
	p.quadLayouts()
	return p.vec4()
}

// quadLayouts sets each operand's vec4 layout from its strides (k a
// multiple of 4): along k where k is innermost, across where its rows
// (columns) are and there are a multiple of 4 of them, every batch
// stride a multiple of 4; else none.
func (p *GemmPlan) quadLayouts() {
	layout := func(batch []int64, kStride, across, size int64) vecLayout {
		for _, x := range batch {
			if x%4 != 0 {
				return vecNone
			}
		}
		switch {
		case kStride == 1 && across%4 == 0:
			return vecAlong
		case across == 1 && kStride%4 == 0 && size%4 == 0:
			return vecAcross
		}
		return vecNone
	}
	p.lVec = layout(p.lBatchSt, p.lStride[1], p.lStride[0], p.m)
	p.rVec = layout(p.rBatchSt, p.rStride[0], p.rStride[1], p.n)
}

// narrowQuads gives a product of bf16 or f16 operands, or of small
// float codes (not an implicit GEMM) the vec4 layouts an f32 one would
// have, for a target that reads them through texel views: four elements
// a fetch of an 8-byte texel (texelLoad4Narrow) or of a 4-byte one of
// codes (loadQuad), widened or decoded, where scalar loads fetched each
// alone.
// Only the subgroup tiles take it (ToLanes), on lavapipe, whose fetches
// are what a CPU GEMM pays for; the sums are the scalar form's, bit for
// bit (the same products in the same order). GemmKernel keeps scalar
// loads for an operand not read through a view.
func (p *GemmPlan) narrowQuads(tg Target) {
	if !tg.TexelReads || p.conv != nil || p.k%4 != 0 {
		return
	}
	p.quadLayouts()
}

// invocationCols is the columns of a tile one invocation computes: a
// lane's share of a subgroup tile, else the whole tile's.
func (p *GemmPlan) invocationCols() int64 {
	if p.Lanes > 0 {
		return p.Cols / p.Lanes
	}
	return p.Cols
}

// vec4 reports whether an operand of p is read as vec4s.
func (p *GemmPlan) vec4() bool { return p.lVec != vecNone || p.rVec != vecNone }

// tile sets p's tile (8x16 with vec4 operands, else 8x8; no larger than
// the product, rounded up to quads with vec4s) and counts, and reports
// whether p has the work the tiled kernel pays for (minGemmWork). The
// part of a tile past the product is computed and dropped, and the
// kernel's code grows with the tile: the DLRM step's batched 6x6 dots
// had 8x16 tiles of 25,000 SPIR-V words.
func (p *GemmPlan) tile() bool {
	if p.m*p.n == 0 || p.k == 0 {
		return false // nothing to tile (an empty tile would divide by zero); the general kernel fills zeros
	}
	p.Rows, p.Cols = gemmTile, gemmTile
	fit := func(x int64) int64 { return x }
	if p.vec4() {
		p.Rows, p.Cols = vecTileRows, vecTileCols
		fit = func(x int64) int64 { return (x + 3) / 4 * 4 }
	}
	p.Rows, p.Cols = min(p.Rows, fit(p.m)), min(p.Cols, fit(p.n))
	p.grid(p.Rows, p.Cols, 1)
	return p.Invocations*p.Rows*p.Cols*p.k >= minGemmWork
}

// grid sets p's counts of tiles of rows x cols results and of
// invocations, per of them to a tile.
func (p *GemmPlan) grid(rows, cols, per int64) {
	p.tilesM = (p.m + rows - 1) / rows
	p.tilesN = (p.n + cols - 1) / cols
	p.Invocations = p.tilesM * p.tilesN * per
	for _, b := range p.batch {
		p.Invocations *= b
	}
}

// gemmTypes reports whether the tiled kernel takes a dot of operands of
// types l and r to a result of type out: f32 operands with an f32, bf16
// or f16 result, or bf16 or f16 operands (both the same) with a result
// of their type or f32, or small float codes (one operand or both; f8
// weights and bf16 activations) with an f32, bf16 or f16 result that
// holds every value of their type, the other operand f32, bf16, f16 or
// codes too. The general kernel converts the operands to the result
// type and accumulates in its register type, f32 for all of these, so
// the tiled kernel's sums are its sums where that conversion is exact:
// all but wider operands of a narrower result, which the tiled kernel
// sums unrounded and rounds once, as the evaluator does.
func gemmTypes(l, r, out hlo.ElementType) bool {
	switch {
	case isMini(l) || isMini(r):
		operand := func(t hlo.ElementType) bool {
			return exactIn(t, out) || t == hlo.F32 || t == hlo.BF16 || t == hlo.F16
		}
		return operand(l) && operand(r) && (out == hlo.F32 || out == hlo.BF16 || out == hlo.F16)
	case l != r:
		return false
	case l == hlo.F32:
		return out == hlo.F32 || out == hlo.BF16 || out == hlo.F16
	case l == hlo.BF16 || l == hlo.F16:
		return out == l || out == hlo.F32
	}
	return false
}

// exactIn reports whether every value of small float type t is a value
// of float type out (f32, bf16 or f16).
func exactIn(t, out hlo.ElementType) bool {
	f, ok := hlo.MiniFloatFormatOf(t)
	switch {
	case !ok:
		return false
	case out == hlo.F32 || out == hlo.BF16: // 8 exponent bits: 2^-127 to 2^127, at most 3 mantissa bits
		return true
	case out == hlo.F16:
		return !f.PowersOfTwo && f.Max <= 65504 && f.Emin-f.Man >= -24
	}
	return false
}

// GemmOf plans the tiled kernel of dot, or returns nil when dot is not
// of the supported form or too small to pay. An operand with no free
// dimension (a vector x: x @ W, W @ x) is a matrix of one row: W @ x is
// computed as the row x^T W^T (Swap), whose results lie in the same
// order (the row's dimension has one element). The general kernel took
// such products, an output element an invocation: on lavapipe
// f32[4096] x [4096,4096] took 15.5 ms, 3.2 as a row; [4096,4096] x
// f32[4096] 26.0, 6.7 (W's rows read along k, a gather of 16 rows a
// fetch).
func GemmOf(dot *hlo.Instruction) *GemmPlan {
	if dot.Op == hlo.OpConvolution {
		return convGemmOf(dot)
	}
	d := dot.A.Dot
	l, r := dot.Operands[0].Shape, dot.Operands[1].Shape
	lb, rb, lc, rc := d.LhsBatch, d.RhsBatch, d.LhsContract, d.RhsContract
	lf, rf := d.FreeDims(l.Rank(), r.Rank())
	swap := len(rf) == 0 && len(lf) > 0 // W @ x for a vector x
	if swap {
		l, r, lb, rb, lc, rc, lf, rf = r, l, rb, lb, rc, lc, rf, lf
	}
	if !gemmTypes(l.Elem, r.Elem, dot.Shape.Elem) || len(lc) != 1 || len(lf) > 1 || len(rf) != 1 {
		return nil
	}
	p := &GemmPlan{dot: dot, in: [2]hlo.ElementType{l.Elem, r.Elem}, out: dot.Shape.Elem, Swap: swap}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	rFree := rf[0]
	for i := range lb {
		p.batch = append(p.batch, l.Dims[lb[i]])
		p.lBatchSt = append(p.lBatchSt, ls[lb[i]])
		p.rBatchSt = append(p.rBatchSt, rs[rb[i]])
	}
	p.m, p.n, p.k = 1, r.Dims[rFree], l.Dims[lc[0]]
	p.lStride = [2]int64{p.k, ls[lc[0]]} // a vector's one row: k elements on
	if len(lf) == 1 {
		p.m, p.lStride[0] = l.Dims[lf[0]], ls[lf[0]]
	}
	p.rStride = [2]int64{rs[rc[0]], rs[rFree]}
	p.gemmVec4()
	if !p.tile() {
		return nil
	}
	return p
}

// GemmKernel generates the tiled kernel for root (the dot itself, or its
// epilogue with the dot fused in). Push constant 0 is the tile count.
func GemmKernel(root *hlo.Instruction, p *GemmPlan, env Env) (*Kernel, error) {
	if !p.vec4() { // scalar operand loads; a bare result may still be stored by quads
		g, err := gemmBind(env.builder(1), root, p)
		if err != nil {
			return nil, err
		}
		vb := make([]bool, g.bindings)
		if directQuads(root, p, g, vb); !slices.Contains(vb, true) {
			vb = nil
		}
		return gemmKernelMode(root, p, env, vb)
	}
	// The operands' buffers as vec4 arrays (a fused operand, computed per
	// element, keeps scalar loads): which bindings they are is known once
	// the kernel's buffers are bound, before any code.
	g, err := gemmBind(env.builder(1), root, p)
	if err != nil {
		return nil, err
	}
	dotBinds := g.dot
	vb := make([]bool, g.bindings)
	for i, l := range []vecLayout{p.lVec, p.rVec} {
		if l != vecNone && isBuffer(dotBinds[i]) && (p.in[i] == hlo.F32 || g.k.texelAccess(dotBinds[i])) {
			vb[dotBinds[i]] = true
		}
	}
	if p.conv != nil && (!isBuffer(dotBinds[0]) || !isBuffer(dotBinds[1]) || dotBinds[0] == dotBinds[1]) {
		return nil, fmt.Errorf("lower: the implicit GEMM of %s needs its operands in two buffers", p.dot.Name)
	}
	if dotBinds[0] == dotBinds[1] && (p.lVec == vecNone) != (p.rVec == vecNone) || !slices.Contains(vb, true) {
		return gemmKernelMode(root, p, env, nil) // one buffer read both ways, or no operand in a buffer: scalar loads
	}
	quadEpilogue(root, p, g, vb)
	directQuads(root, p, g, vb)
	return gemmKernelMode(root, p, env, vb)
}

// quadEpilogue marks in vb, where it can, the buffers of root's epilogue
// to be read and written as vec4s: four consecutive columns of a row at
// a time (gemmStore). Llvmpipe fetches each texel with a call of its
// own, so an epilogue's scalar reads cost as much as the k loop's in a
// product of small k: a [6272,192] x [192,192] dot with a fused bias,
// compare and select (the DLRM step's backward ReLU) took 1.3-1.45x the
// bare dot's time. The buffers it reads only at its own element, of
// 32-bit elements, become vec4 arrays (a broadcast row, read elsewhere,
// is fetched as vec4s by vectorRow where it can be); none of them may
// be a dot operand read as vec4s, the result must be 32-bit, and the
// tile's columns start at multiples of 4 in rows a multiple of 4 long.
// The result is written by quads even where the epilogue reads nothing
// so (a bias row, a ReLU): no gain in the runs measured when the
// epilogue was a loop (conv_block 1.03, dense_relu 0.99), but as copies
// per quad (gemmStoreQuads) a quarter of the code of one per element.
func quadEpilogue(root *hlo.Instruction, p *GemmPlan, g gemmBinds, vb []bool) {
	if g.reg == nil || !quadRows(root, p) {
		return
	}
	w := &readWalk{k: g.k, off: map[int]bool{}, read: map[int]bool{}, seen: map[[2]int]bool{}}
	w.instruction(root, g.root, true)
	var quad []int
	for b := range w.read {
		switch {
		case slices.Contains(g.dot, b):
			if vb[b] {
				return // read here as the dot's vec4s
			}
		case !w.off[b] && g.k.bindings[b].st.Bytes() == 4:
			quad = append(quad, b)
		}
	}
	for _, b := range quad {
		vb[b] = true
	}
	vb[g.outs[0]] = true
}

// directQuads marks, where it can, the result of a GEMM kernel without
// an epilogue (root is the dot, or a reshape of it) in vb to be written
// as vec4s: four consecutive columns of a row a store (gemmStore).
// Llvmpipe stores to a storage buffer in a loop over the SIMD lanes that
// reloads the lane's mask and value from the stack, spilled just before
// (a store-to-load forwarding stall per lane), once per store
// instruction: a 16x32 subgroup tile's 64 scalar stores took a quarter
// of a [6272,192] x [192,192] product's samples, and one vec4 store
// pays the loop once for 4 values. bench/ab -rounds 20: that product
// 0.900, gemm1024 0.973; dense_relu (an epilogue: unchanged) 1.014.
// Tiles that read their operands by scalars (k not a multiple of 4)
// store so too: the DLRM step's [6272,15] x [15,192] 0.916, mlp_train
// 0.907.
// The result must have 32-bit elements in rows a multiple of 4 long,
// and the tile's columns start at multiples of 4.
func directQuads(root *hlo.Instruction, p *GemmPlan, g gemmBinds, vb []bool) {
	if g.reg != nil || !quadRows(root, p) || len(g.outs) != 1 {
		return
	}
	vb[g.outs[0]] = true
}

// quadRows reports whether root's result (p's tile, written by the
// register tiles, not shared blocks) can be written four columns at a
// time: 32-bit elements in rows a multiple of 4 long, each invocation's
// columns starting at multiples of 4 (quadEpilogue, directQuads).
func quadRows(root *hlo.Instruction, p *GemmPlan) bool {
	return !p.Shared && p.n%vec4 == 0 && p.invocationCols()%vec4 == 0 && !root.Shape.IsTuple() && root.Shape.Elem.Bytes() == 4
}

// gemmInside is whether element (row, col) of p's product is in it (a
// tile's rows and columns run past the edge).
func (k *kernelBuilder) gemmInside(p *GemmPlan, row, col spirv.ID) spirv.ID {
	return k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, row, k.cu32(uint32(p.m))), k.boolOp(spirv.OpULessThan, col, k.cu32(uint32(p.n))))
}

// gemmIndex is the output index of element (row, col) of p's product
// in the batch whose first output element is outBase.
func (k *kernelBuilder) gemmIndex(p *GemmPlan, outBase, row, col spirv.ID) spirv.ID {
	u32 := k.u32()
	return k.f.Apply(spirv.OpIAdd, u32, outBase, k.f.Apply(spirv.OpIAdd, u32, k.f.Apply(spirv.OpIMul, u32, row, k.cu32(uint32(p.n))), col))
}

// gemmBinds are a GEMM kernel's bindings: the dot's operands', the
// epilogue's (rootBinds) with the dot's value in a register (reg), the
// results', and how many there are.
type gemmBinds struct {
	dot, root, outs []int
	reg             *val
	bindings        int
	k               *kernelBuilder // the builder they were bound on
}

// gemmBind binds a GEMM kernel's buffers on k: the dot's operands, then
// unless the tile's results are root's own (root is the dot or a
// reshape of it) the epilogue's, then the results.
func gemmBind(k *kernelBuilder, root *hlo.Instruction, p *GemmPlan) (g gemmBinds, err error) {
	if g.dot, err = k.bindOperands(p.dot); err != nil {
		return g, err
	}
	if p.Swap {
		g.dot[0], g.dot[1] = g.dot[1], g.dot[0]
	}
	if root != p.dot && root.Op != hlo.OpReshape {
		g.reg = k.inRegister(p.dot)
		if g.root, err = k.bindOperands(root); err != nil {
			return g, err
		}
	}
	if g.outs, err = k.bindResults(root); err != nil {
		return g, err
	}
	g.bindings, g.k = len(k.bindings), k
	return g, nil
}

// gemmKernelMode generates the tiled kernel, with the bindings vecBinds
// marks (nil: none) held as vec4 arrays; it also returns the bindings of
// the dot's operands.
func gemmKernelMode(root *hlo.Instruction, p *GemmPlan, env Env, vecBinds []bool) (*Kernel, error) {
	k := env.builder(1)
	k.vecBinds = vecBinds
	dot := p.dot
	g, err := gemmBind(k, root, p)
	if err != nil {
		return nil, err
	}
	dotBinds := g.dot
	vec4 := vecBinds != nil && p.vec4() // operands read as vec4s (gemmLoopVec4)
	kern, err := k.perElement(gemmName(root, p, vec4), func(t spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		// t -> (batch..., tile row, tile col), the tiles in groups of
		// gemmGroup tile rows walked column by column (consecutive
		// invocations share the rhs columns they read, and each column
		// panel of the rhs is read once per group, not once per tile row).
		dims := append(append([]int64{}, p.batch...), p.tilesM*p.tilesN)
		nb := len(p.batch)
		var l, tr, tc spirv.ID // shared: the invocation's place in its workgroup and block
		var ix []spirv.ID
		nc := p.invocationCols()
		var lane spirv.ID
		if p.Lanes > 0 {
			lane = k.laneID()
			ix = k.unravel(op(spirv.OpUDiv, t, cu(p.Lanes)), dims)
			ix = append(ix[:nb], k.groupedTile(ix[nb], p.tilesM, p.tilesN)...)
		} else if p.Shared {
			l = op(spirv.OpUMod, t, cu(SharedThreads))
			tr, tc = op(spirv.OpUDiv, l, cu(sharedBN/sharedTN)), op(spirv.OpUMod, l, cu(sharedBN/sharedTN))
			ix = k.unravel(op(spirv.OpUDiv, t, cu(SharedThreads)), dims)
			ix = append(ix[:nb], op(spirv.OpUDiv, ix[nb], cu(p.tilesN)), op(spirv.OpUMod, ix[nb], cu(p.tilesN)))
		} else {
			ix = k.unravel(t, dims)
			ix = append(ix[:nb], k.groupedTile(ix[nb], p.tilesM, p.tilesN)...)
		}
		lBase, rBase := cu(0), cu(0)
		for i := 0; i < nb; i++ {
			lBase = op(spirv.OpIAdd, lBase, op(spirv.OpIMul, ix[i], cu(p.lBatchSt[i])))
			rBase = op(spirv.OpIAdd, rBase, op(spirv.OpIMul, ix[i], cu(p.rBatchSt[i])))
		}
		row0 := op(spirv.OpIMul, ix[nb], cu(p.Rows))
		col0 := op(spirv.OpIMul, ix[nb+1], cu(p.Cols))
		if p.Lanes > 0 {
			col0 = op(spirv.OpIAdd, col0, op(spirv.OpIMul, lane, cu(nc)))
		}
		var bRow, bCol spirv.ID
		if p.Shared {
			bRow, bCol = op(spirv.OpIMul, ix[nb], cu(sharedBM)), op(spirv.OpIMul, ix[nb+1], cu(sharedBN))
			row0 = op(spirv.OpIAdd, bRow, op(spirv.OpIMul, tr, cu(sharedTM)))
			col0 = op(spirv.OpIAdd, bCol, op(spirv.OpIMul, tc, cu(sharedTN)))
		}
		// Rows and columns past the edge read the last one (in bounds)
		// and are not stored. The lhs rows' starts are the register
		// tiles' (the subgroup tile reads one row a lane, the shared
		// blocks theirs).
		rows, lRow := make([]spirv.ID, p.Rows), make([]spirv.ID, p.Rows)
		cols, rCol := make([]spirv.ID, nc), make([]spirv.ID, nc)
		for i := range rows {
			rows[i] = op(spirv.OpIAdd, row0, cu(int64(i)))
			if p.Lanes == 0 && !p.Shared {
				lRow[i] = op(spirv.OpIAdd, lBase, op(spirv.OpIMul, k.f.Ext(u32, spirv.GLSLUMin, rows[i], cu(p.m-1)), cu(p.lStride[0])))
			}
		}
		for j := range cols {
			cols[j] = op(spirv.OpIAdd, col0, cu(int64(j)))
			rCol[j] = op(spirv.OpIAdd, rBase, op(spirv.OpIMul, k.f.Ext(u32, spirv.GLSLUMin, cols[j], cu(p.n-1)), cu(p.rStride[1])))
		}
		var accAt func(i, j int) spirv.ID // the result of row i, column j of the tile
		if p.Lanes > 0 {
			// The lhs rows lane l reads for the others: l, l+Lanes, ...
			// of the tile (clamped).
			var mine, myRows []spirv.ID
			for g := int64(0); g < max(1, p.Rows/p.Lanes); g++ {
				r := op(spirv.OpIAdd, row0, k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lane, cu(g*p.Lanes)), cu(p.Rows-1)))
				mine = append(mine, r)
				myRows = append(myRows, op(spirv.OpIAdd, lBase, op(spirv.OpIMul, k.f.Ext(u32, spirv.GLSLUMin, r, cu(p.m-1)), cu(p.lStride[0]))))
			}
			var convA func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID
			if p.conv != nil {
				convA = k.convRows(p, mine)
			}
			accAt, err = k.gemmLoopLanes(p, dotBinds, lBase, rBase, lane, row0, myRows, col0, rCol, convA)
		} else if p.Shared {
			accAt, err = k.gemmLoopShared(p, dotBinds, lBase, rBase, bRow, bCol, l, tr, tc)
		} else if p.conv != nil && vec4 {
			accAt, err = k.gemmLoopVec4(p, dotBinds, lBase, rBase, row0, col0, lRow, rCol, k.convRows(p, rows))
		} else if vec4 {
			accAt, err = k.gemmLoopVec4(p, dotBinds, lBase, rBase, row0, col0, lRow, rCol, nil)
		} else {
			accAt, err = k.gemmLoop(p, dotBinds, lRow, rCol)
		}
		if err != nil {
			return err
		}
		outBase := cu(0)
		outSt := hlo.RowMajorStrides(dot.Shape.Dims)
		for i := 0; i < nb; i++ {
			outBase = op(spirv.OpIAdd, outBase, op(spirv.OpIMul, ix[i], cu(outSt[i])))
		}
		return k.gemmStore(root, p, g, outBase, rows, cols, accAt)

	})
	return kern, err
}

// gemmLoop emits the k loop of the scalar tiled kernel: per k, a load
// per tile row and column and a multiply-add per result. It returns the tile's results.
func (k *kernelBuilder) gemmLoop(p *GemmPlan, dotBinds []int, lRow, rCol []spirv.ID) (func(i, j int) spirv.ID, error) {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	acc := k.gemmAccumulators(p.Rows, p.Cols)
	err := k.loop(cu(p.k), func(kk spirv.ID) error {
		lk, rk := op(spirv.OpIMul, kk, cu(p.lStride[1])), op(spirv.OpIMul, kk, cu(p.rStride[0]))
		a, b := make([]spirv.ID, p.Rows), make([]spirv.ID, p.Cols)
		for i := range a {
			a[i] = k.flushSubnormal(k.load(dotBinds[0], op(spirv.OpIAdd, lRow[i], lk), p.in[0]).id, 1)
		}
		for j := range b {
			b[j] = k.flushSubnormal(k.load(dotBinds[1], op(spirv.OpIAdd, rCol[j], rk), p.in[1]).id, 1)
		}
		k.gemmStep(acc, a, b)
		return nil
	})
	return func(i, j int) spirv.ID { return k.f.Load(f32, acc[i][j]) }, err
}

// gemmLoopVec4 is gemmLoop with vec4 operands (gemmPlan.gemmVec4): each
// step covers 4 values of k. A lhs read along k loads a vec4 per row per
// step; across rows, a vec4 per 4 rows per value of k; the rhs likewise
// with columns; an operand without a vec4 layout (or a fused one) loads
// scalars. Each result still sums its products in the order of k, as
// gemmLoop does.
func (k *kernelBuilder) gemmLoopVec4(p *GemmPlan, dotBinds []int, lBase, rBase, row0, col0 spirv.ID, lRow, rCol []spirv.ID, convA func(k4 spirv.ID, load4 func(int, spirv.ID) spirv.ID) [][4]spirv.ID) (func(i, j int) spirv.ID, error) {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	umin := func(a spirv.ID, b int64) spirv.ID { return k.f.Ext(u32, spirv.GLSLUMin, a, cu(b)) }
	div4 := func(a spirv.ID) spirv.ID { return op(spirv.OpUDiv, a, cu(4)) }
	lVec, rVec := p.lVec, p.rVec
	if !k.isVec(dotBinds[0]) {
		lVec = vecNone
	}
	if convA != nil {
		lVec = vecConv
	}
	if !k.isVec(dotBinds[1]) {
		rVec = vecNone
	}
	acc := k.gemmAccumulators(p.Rows, p.Cols)
	typeOf := map[int]hlo.ElementType{dotBinds[0]: p.in[0], dotBinds[1]: p.in[1]} // one buffer read both ways: one type
	load4 := func(bind int, idx4 spirv.ID) spirv.ID {
		return k.flushSubnormal(k.loadQuad(bind, idx4, typeOf[bind]), 4)
	}
	lane := func(v spirv.ID, c int) spirv.ID { return k.f.Extract(f32, v, uint32(c)) }
	// Loop-invariant vec4 indices of one operand: along k, each row's
	// (column's) start; across, the tile's quads from the first row
	// (column), the last quad in bounds for those past the edge (read,
	// not stored).
	vecIndex := func(layout vecLayout, starts []spirv.ID, first spirv.ID, n, size int64) (along, quads []spirv.ID) {
		switch layout {
		case vecAlong:
			for _, st := range starts {
				along = append(along, div4(st))
			}
		case vecAcross:
			for q := int64(0); q < n/4; q++ {
				quads = append(quads, umin(op(spirv.OpIAdd, div4(first), cu(q)), size/4-1))
			}
		}
		return along, quads
	}
	lRow4, rowQ := vecIndex(lVec, lRow, row0, p.Rows, p.m)
	rCol4, colQ := vecIndex(rVec, rCol, col0, p.Cols, p.n)
	// An operand read across is read as 32-byte octets (wideLoad) where
	// the device has wide access (and no texel loads, which are cheaper
	// still) and every octet starts at a multiple of 8 elements: 1024^3
	// on lavapipe took 97-100 ms against 116-123 with the rhs in vec4s
	// (min of 10, two interleaved rounds). octs are the tile's octet
	// indices from the first row (column), clamped as the quads are.
	wideOcts := func(bind int, layout vecLayout, first spirv.ID, n, size, kStride int64, batchSt []int64) (octs []spirv.ID) {
		if layout != vecAcross || !k.wideAccess(bind) || typeOf[bind] != hlo.F32 || n%8 != 0 || size%8 != 0 || kStride%8 != 0 {
			return nil
		}
		for _, st := range batchSt {
			if st%8 != 0 {
				return nil
			}
		}
		for h := int64(0); h < n/8; h++ {
			octs = append(octs, umin(op(spirv.OpIAdd, op(spirv.OpUDiv, first, cu(8)), cu(h)), size/8-1))
		}
		return octs
	}
	lOcts := wideOcts(dotBinds[0], lVec, row0, p.Rows, p.m, p.lStride[1], p.lBatchSt)
	rOcts := wideOcts(dotBinds[1], rVec, col0, p.Cols, p.n, p.rStride[0], p.rBatchSt)
	err := k.loop(cu(p.k/4), func(k4 spirv.ID) error {
		// a[i][c], b[j][c]: the operands at row i, column j and k = 4*k4+c.
		kk := func(c int) spirv.ID { return op(spirv.OpIAdd, op(spirv.OpIMul, k4, cu(4)), cu(int64(c))) }
		// operand reads n rows (lhs) or columns (rhs) of one operand
		// by its layout: along k from each one's vec4 index, across
		// from base4 and the quads' indices, or scalars from each
		// one's start.
		operand := func(layout vecLayout, bind int, n int64, along, quads, octs []spirv.ID, base spirv.ID, kStride int64, starts []spirv.ID) [][4]spirv.ID {
			x := make([][4]spirv.ID, n)
			base4 := div4(base)
			switch {
			case octs != nil:
				base8 := op(spirv.OpUDiv, base, cu(8))
				for c := range 4 {
					at := op(spirv.OpIAdd, base8, op(spirv.OpIMul, kk(c), cu(kStride/8)))
					for h, ih := range octs {
						for half, v := range k.wideLoad(bind, op(spirv.OpIAdd, at, ih)) {
							v = k.flushSubnormal(v, 4)
							for r := range 4 {
								x[8*h+4*half+r][c] = lane(v, r)
							}
						}
					}
				}
				return x
			}
			switch layout {
			case vecAlong:
				for i := range x {
					v := load4(bind, op(spirv.OpIAdd, along[i], k4))
					for c := range 4 {
						x[i][c] = lane(v, c)
					}
				}
			case vecAcross:
				for c := range 4 {
					at := op(spirv.OpIAdd, base4, op(spirv.OpIMul, kk(c), cu(kStride/4)))
					for q, iq := range quads {
						v := load4(bind, op(spirv.OpIAdd, at, iq))
						for r := range 4 {
							x[4*q+r][c] = lane(v, r)
						}
					}
				}
			default:
				for c := range 4 {
					kc := op(spirv.OpIMul, kk(c), cu(kStride))
					for i := range x {
						x[i][c] = k.flushSubnormal(k.load(bind, op(spirv.OpIAdd, starts[i], kc), hlo.F32).id, 1)
					}
				}
			}
			return x
		}
		var a [][4]spirv.ID
		if lVec == vecConv {
			a = convA(k4, func(b int, i spirv.ID) spirv.ID { return load4(dotBinds[b], i) })
		} else {
			a = operand(lVec, dotBinds[0], p.Rows, lRow4, rowQ, lOcts, lBase, p.lStride[1], lRow)
		}
		b := operand(rVec, dotBinds[1], p.Cols, rCol4, colQ, rOcts, rBase, p.rStride[0], rCol)
		for c := range 4 {
			ac, bc := make([]spirv.ID, len(a)), make([]spirv.ID, len(b))
			for i := range a {
				ac[i] = a[i][c]
			}
			for j := range b {
				bc[j] = b[j][c]
			}
			k.gemmStep(acc, ac, bc)
		}
		return nil
	})
	return func(i, j int) spirv.ID { return k.f.Load(f32, acc[i][j]) }, err
}

// Convolutions as GEMMs (implicit GEMM): a 2-D convolution of an NHWC
// input with an HWIO kernel is the matrix product of the [N*Ho*Wo,
// KH*KW*Ci] window matrix (never stored: each row is an output pixel's
// receptive field, read from the input where the tiled kernel needs it,
// zero in the padding) and the kernel as a [KH*KW*Ci, Co] matrix. The
// reduction runs over (ky, kx, ci) in that order, the direct kernel's
// (conv.go) order. Other layouts, groups, input dilation and window
// reversal take the direct kernel.

// groupedTile maps tile number t of a tilesM x tilesN grid to (tile row,
// tile column): groups of gemmGroup tile rows (the last group may be
// smaller), each walked column by column, row fastest.
func (k *kernelBuilder) groupedTile(t spirv.ID, tilesM, tilesN int64) []spirv.ID {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	g := min(gemmGroup, tilesM)
	if g <= 1 {
		return []spirv.ID{op(spirv.OpUDiv, t, cu(tilesN)), op(spirv.OpUMod, t, cu(tilesN))}
	}
	per := g * tilesN // tiles per full group
	group := op(spirv.OpUDiv, t, cu(per))
	first := op(spirv.OpIMul, group, cu(g))
	rows := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpISub, cu(tilesM), first), cu(g)) // rows in this group
	in := op(spirv.OpUMod, t, cu(per))
	return []spirv.ID{op(spirv.OpIAdd, first, op(spirv.OpUMod, in, rows)), op(spirv.OpUDiv, in, rows)}
}

// flushSubnormal makes subnormal f32 values (one, or a vec4 when n is 4)
// signed zeros: the tiled kernel reads its operands as XLA's CPU and GPU
// backends do, with denormals flushed. On lavapipe a subnormal operand
// takes the x86 microcode path: a 256^3 product of softmax probabilities
// scaled into the subnormal range ran in 44 ms against 5.7 ms.
func (k *kernelBuilder) flushSubnormal(x spirv.ID, n int) spirv.ID {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	ut, ft, bt := u32, f32, k.boolT()
	expo, sign, zero := k.cu32(0x7f800000), k.cu32(0x80000000), k.cu32(0)
	if n > 1 {
		ut, ft, bt = k.b.TypeVector(u32, n), k.b.TypeVector(f32, n), k.b.TypeVector(k.boolT(), n)
		splat := func(c spirv.ID) spirv.ID {
			parts := make([]spirv.ID, n)
			for i := range parts {
				parts[i] = c
			}
			return k.b.ConstantComposite(ut, parts...)
		}
		expo, sign, zero = splat(expo), splat(sign), splat(zero)
	}
	bits := k.f.Bitcast(ut, x)
	tiny := k.f.IEqual(bt, k.f.BitwiseAnd(ut, bits, expo), zero)
	flushed := k.f.Select(ut, tiny, k.f.BitwiseAnd(ut, bits, sign), bits)
	return k.f.Bitcast(ft, flushed)
}

// gemmAccumulators makes an invocation's rows x cols accumulators, zeroed.
func (k *kernelBuilder) gemmAccumulators(rows, cols int64) [][]spirv.ID {
	f32 := k.b.TypeFloat(32)
	acc := make([][]spirv.ID, rows)
	ptr := k.b.TypePointer(spirv.StorageFunction, f32)
	for i := range acc {
		acc[i] = make([]spirv.ID, cols)
		for j := range acc[i] {
			acc[i][j] = k.f.LocalVariable(ptr)
			k.f.Store(acc[i][j], k.constFloat(hlo.F32, 0))
		}
	}
	return acc
}

// gemmStep adds a[i]*b[j] to every accumulator: one value of k.
func (k *kernelBuilder) gemmStep(acc [][]spirv.ID, a, b []spirv.ID) {
	f32 := k.b.TypeFloat(32)
	for i := range acc {
		for j := range acc[i] {
			x := k.f.Load(f32, acc[i][j])
			y := k.f.FAdd(f32, x, k.f.FMul(f32, a[i], b[j]))
			k.f.Store(acc[i][j], y)
		}
	}
}

// gemmStoreQuads is gemmStore for quadEpilogue: the epilogue's vec4
// buffers are read and its result written a vec4 at a time, each
// column's element computed by the scalar epilogue (vectorLanes) with
// the accumulator in the register, in one copy per quad of the tile
// (rows, cols and accAt as gemmStore's).
//
// One copy per quad, not a loop over an array of the accumulators: an
// array indexed by the loop's counter is one lavapipe does not keep in
// registers, and its first-use compile of the kernel took seconds in
// LLVM's coroutine passes. [256,784] x [784,512] + bias, ReLU on 16
// lanes: 1.32 s -> 0.20 s (`vkjit run --stats-json`'s run_ms on fresh
// caches), with a GELU 1.42 -> 0.31 s, an erf GELU 1.30 -> 0.66 s; runs
// (bench/ab -rounds 15, time over the loop's): dense_relu 0.956,
// mlp_forward 0.939, transformer_block 0.921, conv_block 0.870,
// mlp_train 0.943; the same bits.
func (k *kernelBuilder) gemmStoreQuads(root *hlo.Instruction, p *GemmPlan, g gemmBinds, outBase spirv.ID, rows, cols []spirv.ID, accAt func(i, j int) spirv.ID) error {
	u32 := k.u32()
	// The vec4 accesses are not noted (vectorLanes): the results are
	// not at the invocation's own index, so no input shares their memory.
	for _, b := range g.outs {
		k.noteIndex(b, k.cu32(0))
	}
	var preload []int
	for b := range g.bindings {
		if k.isVec(b) && !slices.Contains(g.dot, b) && !slices.Contains(g.outs, b) {
			preload = append(preload, b)
		}
	}
	for i := range rows {
		for q := 0; q < len(cols); q += vec4 {
			// A quad is in bounds or past the edge as a whole: its first
			// column is a multiple of 4, and so is n.
			i, q := i, q
			err := k.f.If(k.gemmInside(p, rows[i], cols[q]), func() error {
				idx4 := k.f.Apply(spirv.OpUDiv, u32, k.gemmIndex(p, outBase, rows[i], cols[q]), k.cu32(vec4))
				return k.vectorLanes(idx4, 1, preload, func(lane int, idx spirv.ID) error {
					*g.reg = k.normalize(val{accAt(i, q+lane), p.out})
					v := k.compute(fusedOperand{in: root, binds: g.root}, idx)
					if k.err != nil {
						return k.err
					}
					k.store(g.outs[0], idx, v)
					return nil
				})
			})
			k.vector = nil
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// gemmName names a tiled kernel by its tile, types, form and epilogue.
func gemmName(root *hlo.Instruction, p *GemmPlan, vec4 bool) string {
	name := fmt.Sprintf("gemm%dx%d_%s", p.Rows, p.Cols, p.out)
	switch {
	case p.in[0] != p.in[1]:
		name = fmt.Sprintf("gemm%dx%d_%s_%s_%s", p.Rows, p.Cols, p.in[0], p.in[1], p.out)
	case p.in[0] != p.out:
		name = fmt.Sprintf("gemm%dx%d_%s_%s", p.Rows, p.Cols, p.in[0], p.out)
	}
	if p.Shared {
		name = fmt.Sprintf("gemm%dx%d_shared%dx%d_f32", p.Rows, p.Cols, sharedBM, sharedBN)
	}
	if p.Lanes > 0 {
		name += fmt.Sprintf("_lanes%d", p.Lanes)
	}
	if vec4 {
		name += "_vec4"
	}
	if root != p.dot {
		name += "_" + root.Op.String()
	}
	return name
}

// gemmStore stores a tile's results (accAt: row i, column j of the
// tile, rows and cols its output rows and columns, outBase its batch's
// first output element): straight from the registers where the results
// are root's own (g.reg nil), else through root's epilogue at each
// output index with the dot's value in a register, one copy of it per
// element or quad.
func (k *kernelBuilder) gemmStore(root *hlo.Instruction, p *GemmPlan, g gemmBinds, outBase spirv.ID, rows, cols []spirv.ID, accAt func(i, j int) spirv.ID) error {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	dot, outs := p.dot, g.outs
	// direct: the tile's results are stored as they are, at the dot's
	// row-major indices (a reshape of the dot has the same).
	direct := root == dot || root.Op == hlo.OpReshape
	// Results: the output index of (batch, row, col), then the
	// epilogue at that index with the dot's value in a register.
	if direct && k.isVec(outs[0]) { // four columns a store (directQuads)
		bd := k.bindings[outs[0]]
		v4 := k.b.TypeVector(k.scalarType(bd.st), vec4)
		k.noteIndex(outs[0], cu(0)) // not the invocation's own element
		for i := range rows {
			for q := 0; q < len(cols); q += vec4 {
				// A quad is in bounds or past the edge as a whole: its
				// first column is a multiple of 4, and so is n.
				inside := k.gemmInside(p, rows[i], cols[q])
				i, q := i, q
				err := k.f.If(inside, func() error {
					idx4 := op(spirv.OpUDiv, k.gemmIndex(p, outBase, rows[i], cols[q]), cu(vec4))
					var parts [vec4]spirv.ID
					for c := range parts {
						parts[c] = k.normalize(val{accAt(i, q+c), p.out}).id
					}
					k.storeTo(outs[0], k.chain(outs[0], v4, idx4), k.f.CompositeConstruct(v4, parts[:]...))
					return nil
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
	if !direct && k.isVec(outs[0]) { // quadEpilogue: four columns a step
		return k.gemmStoreQuads(root, p, g, outBase, rows, cols, accAt)
	}
	// An element at a time, the epilogue's copy for each with its
	// accumulator as it is (see gemmStoreQuads): a bf16 result's dense
	// layer + bias + ReLU on 16 lanes compiled in 1.37 -> 0.58 s, one
	// of 510 columns 1.26 -> 0.30 s, with an erf GELU 1.31 -> 1.12 s,
	// against a loop over an array of the accumulators; runs 0.94-1.01
	// of the loop's time (bench/ab -rounds 15), the same bits.
	for i := range rows {
		for j := range cols {
			i, j := i, j
			err := k.f.If(k.gemmInside(p, rows[i], cols[j]), func() error {
				idx := k.gemmIndex(p, outBase, rows[i], cols[j])
				v := k.normalize(val{accAt(i, j), p.out})
				if !direct {
					*g.reg = v
					v = k.compute(fusedOperand{in: root, binds: g.root}, idx)
					if k.err != nil {
						return k.err
					}
				}
				k.store(outs[0], idx, v)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
