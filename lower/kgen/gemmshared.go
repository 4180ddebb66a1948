package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Shared-memory tiles, for GPUs: a workgroup of SharedThreads
// invocations computes a sharedBM x sharedBN block of results, sharedTM
// x sharedTN per invocation, staging sharedBK values of k of both
// operands' block in shared memory per step (each invocation loads 4 of
// each, then a barrier), so that every operand element is read from
// device memory once per block instead of once per invocation tile. On
// lavapipe 64x64 shared tiles ran ten times slower than register tiles
// (the kernel issue's measurement: barriers cost more than a CPU's
// caches save), so CPU devices use them only with Options.SharedGemm;
// no GPU was at hand to tune the sizes. Each result still sums its
// products in the order of k (padding adds +0 products past the edges),
// bit for bit what the register-tiled kernel computes.
const (
	sharedBM, sharedBN, sharedBK = 64, 64, 16
	sharedTM, sharedTN           = 4, 4
	SharedThreads                = (sharedBM / sharedTM) * (sharedBN / sharedTN)
)

// ToShared makes p a shared-memory plan when tg can run one (a workgroup
// of sharedThreads) and p is a plain dot (an implicit GEMM keeps its
// register tiles) of more rows than a register tile holds; it reports
// whether it did. A product of at most gemmTile rows (a matrix-vector
// product) keeps the register tiles, which compute its rows alone: a
// block would compute 64 rows, all but those dropped.
func (p *GemmPlan) ToShared(tg Target) bool {
	if p.conv != nil || tg.MaxWorkgroupSize < SharedThreads || p.in != [2]hlo.ElementType{hlo.F32, hlo.F32} || p.m <= gemmTile {
		return false
	}
	p.Shared = true
	p.lVec, p.rVec = vecNone, vecNone
	p.Rows, p.Cols = sharedTM, sharedTN
	p.grid(sharedBM, sharedBN, SharedThreads) // tiles are blocks
	return true
}

// gemmLoopShared is gemmLoop for a shared-memory block (toShared): the
// block's first row and column, and the invocation's place in the
// workgroup (l) and in the block's grid of tiles (tr, tc).
func (k *kernelBuilder) gemmLoopShared(p *GemmPlan, dotBinds []int, lBase, rBase, bRow, bCol, l, tr, tc spirv.ID) (func(i, j int) spirv.ID, error) {
	u32, f32, bt := k.u32(), k.b.TypeFloat(32), k.boolT()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	lt := func(a, b spirv.ID) spirv.ID { return k.f.ULessThan(bt, a, b) }
	umin := func(a spirv.ID, b int64) spirv.ID { return k.f.Ext(u32, spirv.GLSLUMin, a, cu(b)) }
	ptr := k.b.TypePointer(spirv.StorageWorkgroup, f32)
	tileA := k.b.Variable(k.b.TypePointer(spirv.StorageWorkgroup, k.b.TypeArray(f32, cu(sharedBK*sharedBM), 0)), spirv.StorageWorkgroup)
	tileB := k.b.Variable(k.b.TypePointer(spirv.StorageWorkgroup, k.b.TypeArray(f32, cu(sharedBK*sharedBN), 0)), spirv.StorageWorkgroup)
	at := func(v, i spirv.ID) spirv.ID { return k.f.AccessChain(ptr, v, i) }
	zero := k.b.ConstF32(0)
	acc := k.gemmAccumulators(p.Rows, p.Cols)
	const per = sharedBK * sharedBM / SharedThreads // elements of each operand an invocation stages
	err := k.loop(cu((p.k+sharedBK-1)/sharedBK), func(kb spirv.ID) error {
		k0 := op(spirv.OpIMul, kb, cu(sharedBK))
		for q := int64(0); q < per; q++ {
			e := op(spirv.OpIAdd, op(spirv.OpIMul, l, cu(per)), cu(q))
			// A: e -> (row r, step kk), stored at [kk][r]; B: e -> (kk, column c), at [kk][c].
			r, kk := op(spirv.OpUDiv, e, cu(sharedBK)), op(spirv.OpUMod, e, cu(sharedBK))
			row, kg := op(spirv.OpIAdd, bRow, r), op(spirv.OpIAdd, k0, kk)
			addr := op(spirv.OpIAdd, lBase, op(spirv.OpIAdd, op(spirv.OpIMul, umin(row, p.m-1), cu(p.lStride[0])), op(spirv.OpIMul, umin(kg, p.k-1), cu(p.lStride[1]))))
			x := k.flushSubnormal(k.load(dotBinds[0], addr, hlo.F32).id, 1)
			x = k.f.Select(f32, k.boolOp(spirv.OpLogicalAnd, lt(row, cu(p.m)), lt(kg, cu(p.k))), x, zero)
			k.f.Store(at(tileA, op(spirv.OpIAdd, op(spirv.OpIMul, kk, cu(sharedBM)), r)), x)
			kk, c := op(spirv.OpUDiv, e, cu(sharedBN)), op(spirv.OpUMod, e, cu(sharedBN))
			col, kg := op(spirv.OpIAdd, bCol, c), op(spirv.OpIAdd, k0, kk)
			addr = op(spirv.OpIAdd, rBase, op(spirv.OpIAdd, op(spirv.OpIMul, umin(kg, p.k-1), cu(p.rStride[0])), op(spirv.OpIMul, umin(col, p.n-1), cu(p.rStride[1]))))
			y := k.flushSubnormal(k.load(dotBinds[1], addr, hlo.F32).id, 1)
			y = k.f.Select(f32, k.boolOp(spirv.OpLogicalAnd, lt(col, cu(p.n)), lt(kg, cu(p.k))), y, zero)
			k.f.Store(at(tileB, op(spirv.OpIAdd, op(spirv.OpIMul, kk, cu(sharedBN)), c)), y)
		}
		k.barrier()
		r0, c0 := op(spirv.OpIMul, tr, cu(sharedTM)), op(spirv.OpIMul, tc, cu(sharedTN))
		for kk := int64(0); kk < sharedBK; kk++ {
			a, b := make([]spirv.ID, p.Rows), make([]spirv.ID, p.Cols)
			for i := range a {
				a[i] = k.f.Load(f32, at(tileA, op(spirv.OpIAdd, cu(kk*sharedBM+int64(i)), r0)))
			}
			for j := range b {
				b[j] = k.f.Load(f32, at(tileB, op(spirv.OpIAdd, cu(kk*sharedBN+int64(j)), c0)))
			}
			k.gemmStep(acc, a, b)
		}
		k.barrier()
		return nil
	})
	return func(i, j int) spirv.ID { return k.f.Load(f32, acc[i][j]) }, err
}
