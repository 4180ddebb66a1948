package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Register-blocked matrix multiply: one invocation computes a tile of
// gemmTile x gemmTile results, keeping the accumulators in registers and
// loading each operand element once per tile row or column instead of
// once per result, and then applies the dot's epilogue (the consumer
// chain output fusion put in the same kernel: bias, activation) to each
// result. Measured on lavapipe with hand-written kernels (the kernel
// issue): 8x8 register tiles without shared memory were the fastest
// form, 64x64 shared-memory tiles ten times slower.
const gemmTile = 8

// minGemmWork is the multiply-adds from which a dot is tiled.
const minGemmWork = 1 << 24

// gemmPlan is a dot that the tiled kernel handles: batch dimensions in
// any number, one free dimension on each side, one contracting
// dimension, f32 results (other types take the general kernel).
type gemmPlan struct {
	dot         *hlo.Instruction
	batch       []int64 // batch dimension sizes
	m, n, k     int64
	lStride     [2]int64 // lhs strides of (row, k)
	rStride     [2]int64 // rhs strides of (k, col)
	lBatchSt    []int64
	rBatchSt    []int64
	tilesM      int64
	tilesN      int64
	invocations int64
}

// planGemm says whether root's kernel can be a tiled GEMM: root is a dot
// of the supported form, or reads one such dot, fused into it, only at
// its own output index (an epilogue).
func (s *state) planGemm(root *hlo.Instruction) *gemmPlan {
	if len(s.prologue[root]) > 0 || !root.Shape.IsArray() {
		return nil
	}
	dot := root
	if root.Op != hlo.OpDot {
		if !root.Op.IsElementwise() {
			return nil
		}
		dot = nil
		_, cluster := s.clusterInputs(root)
		for _, x := range cluster {
			if x.Op == hlo.OpDot {
				if dot != nil {
					return nil
				}
				dot = x
			} else if expensive(x) {
				return nil
			}
		}
		if dot == nil || !equalDims(dot.Shape.Dims, root.Shape.Dims) || !s.readsOnlyAtOutput(root, dot) {
			return nil
		}
	}
	d := dot.A.Dot
	l, r := dot.Operands[0].Shape, dot.Operands[1].Shape
	if dot.Shape.Elem != hlo.F32 || l.Elem != hlo.F32 || r.Elem != hlo.F32 || len(d.LhsContract) != 1 ||
		l.Rank() != len(d.LhsBatch)+2 || r.Rank() != len(d.RhsBatch)+2 {
		return nil
	}
	p := &gemmPlan{dot: dot}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	used := func(list []int64, x int64) bool {
		for _, y := range list {
			if y == x {
				return true
			}
		}
		return false
	}
	var lFree, rFree int64 = -1, -1
	for i := range l.Dims {
		if !used(d.LhsBatch, int64(i)) && !used(d.LhsContract, int64(i)) {
			lFree = int64(i)
		}
	}
	for i := range r.Dims {
		if !used(d.RhsBatch, int64(i)) && !used(d.RhsContract, int64(i)) {
			rFree = int64(i)
		}
	}
	for i := range d.LhsBatch {
		p.batch = append(p.batch, l.Dims[d.LhsBatch[i]])
		p.lBatchSt = append(p.lBatchSt, ls[d.LhsBatch[i]])
		p.rBatchSt = append(p.rBatchSt, rs[d.RhsBatch[i]])
	}
	p.m, p.n, p.k = l.Dims[lFree], r.Dims[rFree], l.Dims[d.LhsContract[0]]
	p.lStride = [2]int64{ls[lFree], ls[d.LhsContract[0]]}
	p.rStride = [2]int64{rs[d.RhsContract[0]], rs[rFree]}
	p.tilesM = (p.m + gemmTile - 1) / gemmTile
	p.tilesN = (p.n + gemmTile - 1) / gemmTile
	p.invocations = p.tilesM * p.tilesN
	for _, b := range p.batch {
		p.invocations *= b
	}
	if p.m*p.n == 0 || p.k == 0 || p.invocations*gemmTile*gemmTile*p.k < minGemmWork {
		// Small dots take the simple kernel: lavapipe compiles a tiled
		// kernel at first use in 0.2-0.4 s, more than a small dot runs.
		return nil
	}
	return p
}

// gemmKernel generates the tiled kernel for root (the dot itself, or its
// epilogue with the dot fused in). Push constant 0 is the tile count.
func gemmKernel(root *hlo.Instruction, p *gemmPlan, env kernelEnv) (*Kernel, error) {
	k := env.builder(1)
	dot := p.dot
	var reg *val
	var rootBinds []int
	dotBinds, err := k.bindOperands(dot)
	if err != nil {
		return nil, err
	}
	if root != dot {
		reg = k.inRegister(dot)
		if rootBinds, err = k.bindOperands(root); err != nil {
			return nil, err
		}
	}
	outs, err := k.bindResults(root)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("gemm%dx%d_f32", gemmTile, gemmTile)
	if root != dot {
		name += "_" + root.Op.String()
	}
	return k.perElement(name, func(t spirv.ID) error {
		u32, f32 := k.u32(), k.b.TypeFloat(32)
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Op(o, u32, uint32(a), uint32(b)) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		// t -> (batch..., tile row, tile col).
		dims := append(append([]int64{}, p.batch...), p.tilesM, p.tilesN)
		ix := k.unravel(t, dims)
		nb := len(p.batch)
		lBase, rBase := cu(0), cu(0)
		for i := 0; i < nb; i++ {
			lBase = op(spirv.OpIAdd, lBase, op(spirv.OpIMul, ix[i], cu(p.lBatchSt[i])))
			rBase = op(spirv.OpIAdd, rBase, op(spirv.OpIMul, ix[i], cu(p.rBatchSt[i])))
		}
		row0 := op(spirv.OpIMul, ix[nb], cu(gemmTile))
		col0 := op(spirv.OpIMul, ix[nb+1], cu(gemmTile))
		// Rows and columns past the edge read the last one (in bounds)
		// and are not stored.
		var rows, cols, lRow, rCol [gemmTile]spirv.ID
		for i := 0; i < gemmTile; i++ {
			rows[i] = op(spirv.OpIAdd, row0, cu(int64(i)))
			cols[i] = op(spirv.OpIAdd, col0, cu(int64(i)))
			lRow[i] = op(spirv.OpIAdd, lBase, op(spirv.OpIMul, k.f.Ext(u32, spirv.GLSLUMin, rows[i], cu(p.m-1)), cu(p.lStride[0])))
			rCol[i] = op(spirv.OpIAdd, rBase, op(spirv.OpIMul, k.f.Ext(u32, spirv.GLSLUMin, cols[i], cu(p.n-1)), cu(p.rStride[1])))
		}
		var acc [gemmTile][gemmTile]spirv.ID
		ptr := k.b.TypePointer(spirv.StorageFunction, f32)
		for i := range acc {
			for j := range acc[i] {
				acc[i][j] = k.f.LocalVariable(ptr)
				k.f.Void(spirv.OpStore, uint32(acc[i][j]), uint32(k.b.ConstF32(0)))
			}
		}
		err := k.loop(cu(p.k), func(kk spirv.ID) error {
			lk, rk := op(spirv.OpIMul, kk, cu(p.lStride[1])), op(spirv.OpIMul, kk, cu(p.rStride[0]))
			var a, b [gemmTile]spirv.ID
			for i := 0; i < gemmTile; i++ {
				a[i] = k.load(dotBinds[0], op(spirv.OpIAdd, lRow[i], lk), hlo.F32).id
				b[i] = k.load(dotBinds[1], op(spirv.OpIAdd, rCol[i], rk), hlo.F32).id
			}
			for i := range acc {
				for j := range acc[i] {
					x := k.f.Op(spirv.OpLoad, f32, uint32(acc[i][j]))
					y := k.f.Op(spirv.OpFAdd, f32, uint32(x), uint32(k.f.Op(spirv.OpFMul, f32, uint32(a[i]), uint32(b[j]))))
					k.f.Void(spirv.OpStore, uint32(acc[i][j]), uint32(y))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Results: the output index of (batch, row, col), then the
		// epilogue at that index with the dot's value in a register. The
		// epilogue is emitted once, in a loop over the tile (the
		// accumulators copied to an array first): 64 inlined copies made
		// lavapipe's first-use compile take seconds.
		outBase := cu(0)
		outSt := hlo.RowMajorStrides(root.Shape.Dims)
		for i := 0; i < nb; i++ {
			outBase = op(spirv.OpIAdd, outBase, op(spirv.OpIMul, ix[i], cu(outSt[i])))
		}
		if root == dot { // no epilogue: store the registers directly
			for i := range acc {
				for j := range acc[i] {
					inside := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, rows[i], cu(p.m)), k.boolOp(spirv.OpULessThan, cols[j], cu(p.n)))
					i, j := i, j
					err := k.ifThen(inside, func() error {
						idx := op(spirv.OpIAdd, outBase, op(spirv.OpIAdd, op(spirv.OpIMul, rows[i], cu(p.n)), cols[j]))
						k.store(outs[0], idx, val{k.f.Op(spirv.OpLoad, f32, uint32(acc[i][j])), hlo.F32})
						return nil
					})
					if err != nil {
						return err
					}
				}
			}
			return nil
		}
		arrT := k.b.TypeArray(f32, cu(gemmTile*gemmTile), 0)
		arr := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, arrT))
		elemPtr := k.b.TypePointer(spirv.StorageFunction, f32)
		for i := range acc {
			for j := range acc[i] {
				p := k.f.Op(spirv.OpAccessChain, elemPtr, uint32(arr), uint32(cu(int64(i*gemmTile+j))))
				k.f.Void(spirv.OpStore, uint32(p), uint32(k.f.Op(spirv.OpLoad, f32, uint32(acc[i][j]))))
			}
		}
		return k.loop(cu(gemmTile*gemmTile), func(e spirv.ID) error {
			row := op(spirv.OpIAdd, row0, op(spirv.OpUDiv, e, cu(gemmTile)))
			col := op(spirv.OpIAdd, col0, op(spirv.OpUMod, e, cu(gemmTile)))
			inside := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, row, cu(p.m)), k.boolOp(spirv.OpULessThan, col, cu(p.n)))
			return k.ifThen(inside, func() error {
				idx := op(spirv.OpIAdd, outBase, op(spirv.OpIAdd, op(spirv.OpIMul, row, cu(p.n)), col))
				pv := k.f.Op(spirv.OpAccessChain, elemPtr, uint32(arr), uint32(e))
				v := val{k.f.Op(spirv.OpLoad, f32, uint32(pv)), hlo.F32}
				if root != dot {
					*reg = v
					v = k.compute(fusedOperand{in: root, binds: rootBinds}, idx)
					if k.err != nil {
						return k.err
					}
				}
				k.store(outs[0], idx, v)
				return nil
			})
		})

	})
}
