package kgen

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// RealFftRows is a real transform's passes run by one kernel: a
// workgroup of RealFftLanes invocations transforms PerGroup sequences,
// the first pass reading them from the source, each pass's tasks shared
// out among the lanes, the values between passes held in shared memory
// (a barrier after each pass), the last pass writing the destination.
// Each value is loaded from and stored to device memory once, where a
// kernel per pass loads and stores it at every pass; the arithmetic is
// the passes' own, so the values are the same.
type RealFftRows struct {
	Passes   []RealFftPass // in order, each over all the sequences
	PerGroup int64
}

// RealFftLanes is the rows kernel's workgroup size.
const RealFftLanes = 64

// realFftShared bounds the rows kernel's shared memory: Vulkan's least
// maxComputeSharedMemorySize.
const realFftShared = 16384

// arrays is how many shared arrays the passes between need: one for a
// value between two passes, two to alternate between more.
func (rs RealFftRows) arrays() int64 { return min(int64(len(rs.Passes))-1, 2) }

// PlanRealFftRows is the rows kernel for passes over part type t, or
// false where there are fewer than two passes or a sequence's values
// between them do not fit the shared memory. A workgroup takes as many
// sequences as give its lanes a task each in the pass with the most
// (at least one).
func PlanRealFftRows(t hlo.ElementType, passes []RealFftPass) (RealFftRows, bool) {
	rs := RealFftRows{Passes: passes}
	if len(passes) < 2 {
		return rs, false
	}
	per := passes[0].Length() * int64(t.Bytes()) * rs.arrays()
	if per > realFftShared {
		return rs, false
	}
	tasks := int64(1)
	for _, p := range passes {
		tasks = max(tasks, p.tasks())
	}
	rs.PerGroup = max(1, min(RealFftLanes/tasks, realFftShared/per, passes[0].Rows))
	return rs, true
}

// Groups is the rows kernel's workgroup count.
func (rs RealFftRows) Groups() int64 {
	return (rs.Passes[0].Rows + rs.PerGroup - 1) / rs.PerGroup
}

// Twiddles is the length of the rows kernel's table: the passes' tables
// one after another.
func (rs RealFftRows) Twiddles() int64 {
	var n int64
	for _, p := range rs.Passes {
		n += p.Twiddles()
	}
	return n
}

// RealFftRowsKernel generates rs over real values of type t. Bindings:
// the source, the twiddles where there are any, the destination. Push
// constant 0: the workgroup count (Groups).
func RealFftRowsKernel(env Env, t hlo.ElementType, rs RealFftRows) (*Kernel, error) {
	for _, p := range rs.Passes {
		if err := p.check(t); err != nil {
			return nil, err
		}
	}
	if len(rs.Passes) < 2 || rs.PerGroup < 1 || rs.PerGroup*rs.Passes[0].Length()*int64(t.Bytes())*rs.arrays() > realFftShared {
		return nil, fmt.Errorf("kgen: real FFT rows kernel of %d passes, %d sequences a workgroup", len(rs.Passes), rs.PerGroup)
	}
	first, last := rs.Passes[0], rs.Passes[len(rs.Passes)-1]
	inLen, _ := first.strides()
	_, outLen := last.strides()
	n, rows, per := first.Length(), first.Rows, rs.PerGroup
	env.Local = RealFftLanes
	k := env.builder(1)
	k.lanes, k.wg = RealFftLanes, true
	src, tw, dst, err := k.bindRealFft(t, rows*inLen, rs.Twiddles(), rows*outLen)
	if err != nil {
		return nil, err
	}
	u32, typ := k.u32(), k.scalarType(t)
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	ptr := k.b.TypePointer(spirv.StorageWorkgroup, typ)
	var shared [2]spirv.ID
	for i := range rs.arrays() {
		shared[i] = k.b.Variable(k.b.TypePointer(spirv.StorageWorkgroup, k.b.TypeArray(typ, cu(per*n), 0)), spirv.StorageWorkgroup)
	}
	return k.perElement(fmt.Sprintf("rfft_rows_%s_%s", passNames(rs.Passes), t), func(group spirv.ID) error {
		base := k.f.IMul(u32, group, cu(per)) // the group's first sequence
		start := func(s spirv.ID, stride int64) spirv.ID { return k.f.IMul(u32, k.f.IAdd(u32, base, s), cu(stride)) }
		local := func(b int, s, pos spirv.ID) spirv.ID {
			return k.f.AccessChain(ptr, shared[b], k.f.IAdd(u32, k.f.IMul(u32, s, cu(n)), pos))
		}
		for pi, p := range rs.Passes {
			in, out := (pi+1)%2, pi%2 // the shared arrays read and written
			load := func(s, pos spirv.ID, zero bool) val {
				if pi == 0 {
					return k.load(src, k.seqIndex(start(s, inLen), pos, p.HalfIn, zero), t)
				}
				return val{k.f.Load(typ, local(in, s, pos)), t}
			}
			store := func(s, pos spirv.ID, zero bool, v val) {
				if pi == len(rs.Passes)-1 {
					k.storeElem(dst, k.seqIndex(start(s, outLen), pos, p.HalfOut, zero), v.id)
					return
				}
				k.f.Store(local(out, s, pos), v.id)
			}
			zeros := func(s spirv.ID) { k.storeHalfZeros(dst, t, start(s, outLen), n) }
			tasks := p.tasks()
			count := per * tasks
			task := func(it spirv.ID) error {
				e := k.f.IAdd(u32, k.f.IMul(u32, it, cu(RealFftLanes)), k.lane)
				// Tasks past the group's, or of sequences past the last.
				seq := k.f.IAdd(u32, base, k.f.UDiv(u32, e, cu(tasks)))
				ok := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, e, cu(count)), k.boolOp(spirv.OpULessThan, seq, cu(rows)))
				return k.f.If(ok, func() error { return realPassTask(k, t, p, e, tw, load, store, zeros) })
			}
			var err error
			if iters := (count + RealFftLanes - 1) / RealFftLanes; iters == 1 {
				err = task(cu(0))
			} else {
				err = k.loop(cu(iters), task)
			}
			if err != nil {
				return err
			}
			tw.at += p.Twiddles()
			if pi < len(rs.Passes)-1 {
				k.barrier()
			}
		}
		return nil
	})
}
