package kgen

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Kernel is one generated compute shader.
type Kernel struct {
	Name      string
	Words     []uint32 // SPIR-V
	Bindings  int      // storage buffers at set 0, bindings 0..Bindings-1
	PushSize  int      // bytes of push constants
	LocalSize [3]uint32

	Vector int         // elements per invocation: 1, or vectorWidth for a vector kernel (vector.go)
	Lanes  int         // invocations per element: 1, or the subgroup size for a subgroup reduction (subgroup.go)
	Texel  []TexelView // uniform texel buffers at bindings Bindings.., each a view of a storage binding's buffer

	// Addressed lists the bindings the kernel reaches through their
	// buffers' device addresses rather than their descriptors (arrays
	// past Target.AddressAbove): the runtime appends each one's address,
	// 8 bytes, to the step's push constants, in this order, and binds
	// its descriptor no wider than the device allows.
	Addressed []int

	Inputs  []*hlo.Instruction // what the bindings before the results hold
	InPlace []bool             // inputs read only where the results are written (lower/memory.go)
	Fused   []*hlo.Instruction // computed inline or alongside (prologue reduces)
}

// TexelView is a uniform texel buffer binding of a kernel: a view of the
// buffer bound at storage binding Binding, in texels of Bytes bytes (an
// element of 1, 2, 4 or 8 bytes: R8, R16, R32 or R32G32_UINT; a vec4 or
// a vector kernel's 8 narrow elements: R32G32B32A32_UINT or R32G32_UINT).
type TexelView struct{ Binding, Bytes int }

// val is a value in a kernel: a SPIR-V id and the HLO element type it
// holds (pred values are SPIR-V bools).
type val struct {
	id spirv.ID
	t  hlo.ElementType
}

type binding struct {
	v       spirv.ID         // the storage buffer variable; 0 for an addressed binding
	blk     spirv.ID         // the block type the variable points to
	addr    int              // an addressed binding's push field of its address's low word
	byAddr  bool             // reached through its buffer device address (Kernel.Addressed)
	texelOK bool             // an addressed binding a texel buffer view can still hold (Target.MaxTexelElements)
	st      hlo.ElementType  // storage element type
	ro      bool             // read-only
	wide    spirv.ID         // the buffer as a u64vec4 array (vector.go, wideChain); 0 until used
	wideBlk spirv.ID         // that view's block type; 0 until used
	texel   map[int]spirv.ID // the buffer as texel buffers, by texel bytes (vector.go, texelVar)
}

// kernelBuilder holds the module under construction and the ids every
// kernel shares: the invocation index, the push-constant block, the
// storage buffer bindings.
type kernelBuilder struct {
	b        *spirv.Builder
	f        *spirv.Function
	tg       Target
	local    uint32
	bindings []binding
	pcVar    spirv.ID   // the push-constant block, declared by finish
	pcFields []spirv.ID // member types of the push-constant block
	gid, nwg spirv.ID
	// zeroU32 is a u32 0 the driver cannot fold (Target.FoldsZeros), or
	// 0 (no ID) where it needs none.
	zeroU32 spirv.ID
	// zeros are the float zeros made from zeroU32, by sign: constants
	// to the emitter (knownFloat), though not to the driver.
	zeros map[spirv.ID]float64

	// Loop fusion (lower/fuse.go): producers computed inline, the instructions
	// bound as storage buffers in binding order, and the bindings made.
	fused      map[*hlo.Instruction]bool
	inputs     []*hlo.Instruction
	virtual    []fusedOperand
	inputBinds []int // the binding of each of inputs
	bound      map[*hlo.Instruction]int
	err        error // the first error while computing a fused operand

	// In-place updates (lower/memory.go): the invocation's own index, and the
	// bindings accessed anywhere else.
	linear    spirv.ID
	offIndex  map[int]bool
	scalarOut map[int]bool // result bindings only invocation 0 stores (a scalar prologue's)
	// check (Env.Check): offLane records the bindings a vector kernel's
	// lane accessed anywhere but at its element (checkVectorBinds).
	check   bool
	offLane map[int]bool

	// Subgroup reductions (subgroup.go): invocations per output element
	// (0: one), the invocation's lane, and extra entry point inputs.
	lanes uint32
	lane  spirv.ID
	iface []spirv.ID
	wg    bool // the lanes are the workgroup (its local invocation index)
	// orderLanes are the lanes a row reduction's own kernel would give it
	// on a CPU device (Env.WorkgroupLanes, then the subgroup's when
	// Env.SubgroupReduce; 0: none), whose order its fold keeps wherever
	// it is computed (laneOrder).
	orderLanes [2]uint32

	vecMode  bool                            // a vector kernel: 8 elements per invocation (vector.go)
	lockstep bool                            // its workgroups all run every fold's steps (Env.lockstep)
	parts    uint32                          // a parts kernel's elements per invocation (parts.go); 0: one
	own      map[spirv.ID]bool               // a parts kernel's element indices, accesses at which are its own
	deferred *[]deferredStore                // a parts kernel's stores, held until its parts are computed
	rowShape []int64                         // a vector row kernel's prologue: its shape, whose row reductions read 8 elements at a time (rowemit.go)
	online   map[*hlo.Instruction]OnlinePair // max reduces folded with a sum (onlineemit.go)
	texel    []TexelView
	sums     map[*hlo.Instruction]val // online sums already folded, by their reduce
	spill    *rowSpill                // a row kernel's value stored by its reduction, read back by its elements
	vecBinds []bool                   // bindings held as vec4 arrays (vector kernels, GEMM operands)
	vector   *vectorState             // its state inside main()

	regArrays  []regArray  // device loops: small values read at computed indices (seqkernel.go)
	wideArrays []wideArray // workgroup loops: values in shared memory (seqwide.go)
	wideZero   spirv.ID    // workgroup loops on CPUs: a u32 variable, 0, loaded from memory after each barrier (seqwide.go)
	// shuffleDot: where every lane of every subgroup runs the code being
	// emitted (a workgroup loop's phases), the subgroup's size: dots read
	// an operand every output reads alike once a subgroup and shuffle it
	// (dotValue); 0 elsewhere.
	shuffleDot uint32
	// A workgroup loop's dots with a loop-invariant operand (colCache):
	// the columns loaded before the loop, colsHere where a phase every
	// lane runs once may read them, invariant the bindings of the
	// large leaves no iteration writes, colsWanted the dots that
	// qualified, by name, for the next generation (nil: none is kept).
	cols       map[*hlo.Instruction]*colCache
	colsHere   bool
	invariant  map[int]bool
	colsWanted map[string]bool
	sgLane     spirv.ID // the invocation's lane in its subgroup, once loaded (subgroupLane)

	computed  map[computedKey]computedVal   // fused producers' values by element (compute)
	columns   map[computedKey]columnVals    // reductions over columns, by lane 0's element (columnLanes)
	aligned   map[spirv.ID]alignedIdx       // indices known as an aligned base plus a constant (index.go)
	scaled    map[spirv.ID]scaledIdx        // indices known as a product by a constant (index.go)
	raveled   map[spirv.ID]raveledIdx       // indices known as the ravel of a multi-index (index.go)
	sortKeys  map[*hlo.Instruction]*sortKey // sorts' comparators as keys, nil where none (sortkey.go)
	u32Consts map[spirv.ID]uint32           // the u32 constants cu32 made
}

func newKernelBuilder(tg Target, local uint32, pushFields int) *kernelBuilder {
	k := &kernelBuilder{b: spirv.NewBuilder(), tg: tg, local: local, scalarOut: map[int]bool{}}
	u32 := k.b.TypeInt(32, false)
	for i := 0; i < pushFields; i++ {
		k.pcFields = append(k.pcFields, u32)
	}
	// Declared by finish, when the addressed bindings have added theirs.
	k.pcVar = k.b.NewID()
	v3 := k.b.TypeVector(u32, 3)
	k.gid = k.b.Variable(k.b.TypePointer(spirv.StorageInput, v3), spirv.StorageInput)
	k.b.Decorate(k.gid, spirv.DecorationBuiltIn, uint32(spirv.BuiltInGlobalInvocationID))
	k.nwg = k.b.Variable(k.b.TypePointer(spirv.StorageInput, v3), spirv.StorageInput)
	k.b.Decorate(k.nwg, spirv.DecorationBuiltIn, uint32(spirv.BuiltInNumWorkgroups))
	return k
}

// regBits is the register width of element type t: the 8- and 16-bit
// types live in 32-bit registers (see StorageType).
func regBits(t hlo.ElementType) int {
	if t.Bits() < 32 {
		return 32
	}
	return t.Bits()
}

// isNarrow reports the 8- and 16-bit types: held widened in 32-bit
// registers, and in buffers as they are or widened (StorageType).
func isNarrow(t hlo.ElementType) bool { return t != hlo.PRED && t.Bits() < 32 }

// scalarType is the SPIR-V type of a value of element type t in registers.
func (k *kernelBuilder) scalarType(t hlo.ElementType) spirv.ID {
	switch t.Kind() {
	case hlo.KindBool:
		return k.b.TypeBool()
	case hlo.KindFloat:
		return k.b.TypeFloat(regBits(t))
	case hlo.KindSigned:
		return k.b.TypeInt(regBits(t), true)
	case hlo.KindUnsigned:
		return k.b.TypeInt(regBits(t), false)
	}
	panic(fmt.Sprintf("lower: no register type for %s", t))
}

func (k *kernelBuilder) u32() spirv.ID   { return k.b.TypeInt(32, false) }
func (k *kernelBuilder) boolT() spirv.ID { return k.b.TypeBool() }
func (k *kernelBuilder) cu32(v uint32) spirv.ID {
	id := k.b.ConstU32(v)
	if k.u32Consts == nil {
		k.u32Consts = map[spirv.ID]uint32{}
	}
	k.u32Consts[id] = v
	return id
}

// addBuffer declares a storage buffer of n elements of type t (HLO
// type; stored as StorageType) at the next binding: a descriptor, or for
// more bytes than Target.AddressAbove a buffer device address pushed
// with the push constants (the only way a kernel reaches an array past
// maxStorageBufferRange).
func (k *kernelBuilder) addBuffer(t hlo.ElementType, name string, readonly bool, n int64) (int, error) {
	st, err := StorageType(t, k.tg)
	if err != nil {
		return 0, err
	}
	elem := k.storageElem(st)
	arr := k.b.TypeRuntimeArray(elem, uint32(st.Bytes()))
	switch {
	case k.isVec(len(k.bindings)) && isNarrow(st): // 8 elements in words
		w := narrowWords(st)
		arr = k.b.TypeRuntimeArray(k.b.TypeVector(k.u32(), w), uint32(4*w))
	case k.isVec(len(k.bindings)):
		arr = k.b.TypeRuntimeArray(k.b.TypeVector(elem, vec4), uint32(vec4*st.Bytes()))
	}
	blk := k.b.TypeBlock([]spirv.ID{arr}, []uint32{0})
	i := len(k.bindings)
	if bytes := PaddedSize(n * int64(st.Bytes())); k.tg.AddressAbove > 0 && bytes > k.tg.AddressAbove {
		switch {
		case k.pushFits(2):
			k.b.PhysicalAddressing()
			texelOK := k.tg.MaxTexelElements > 0 && n <= k.tg.MaxTexelElements
			k.bindings = append(k.bindings, binding{blk: blk, addr: len(k.pcFields), byAddr: true, texelOK: texelOK, st: st, ro: readonly})
			k.pcFields = append(k.pcFields, k.u32(), k.u32())
			return i, nil
		case k.tg.MaxStorageRange > 0 && bytes > k.tg.MaxStorageRange:
			return 0, fmt.Errorf("a kernel reaches more arrays past maxStorageBufferRange (%d bytes) than its %d bytes of push constants hold the addresses of", k.tg.MaxStorageRange, k.tg.MaxPushBytes)
		}
		// One a descriptor can bind keeps it when the push constants are
		// full (AddressAbove below the range, in tests).
	}
	v := k.b.Variable(k.b.TypePointer(spirv.StorageStorageBuffer, blk), spirv.StorageStorageBuffer)
	k.b.Decorate(v, spirv.DecorationDescriptorSet, 0)
	k.b.Decorate(v, spirv.DecorationBinding, uint32(i))
	if readonly {
		k.b.Decorate(v, spirv.DecorationNonWritable)
	}
	k.b.Name(v, name)
	k.bindings = append(k.bindings, binding{v: v, blk: blk, st: st, ro: readonly})
	return i, nil
}

// pushFits reports whether n more u32 push constants fit the device's
// push constant bytes.
func (k *kernelBuilder) pushFits(n int) bool {
	return k.tg.MaxPushBytes == 0 || 4*(len(k.pcFields)+n) <= int(k.tg.MaxPushBytes)
}

// class is the storage class of pointers into binding b.
func (k *kernelBuilder) class(b int) spirv.StorageClass {
	if k.bindings[b].byAddr {
		return spirv.StoragePhysicalStorageBuffer
	}
	return spirv.StorageStorageBuffer
}

// base points at binding b's block of type blk (the binding's own, or
// another view of its bytes such as wideChain's): its variable, or a
// pointer made from its pushed address. An address is loaded afresh at
// each access, so that the pointer dominates its uses wherever the code
// is; the driver folds the repeats.
func (k *kernelBuilder) base(b int, blk, v spirv.ID) spirv.ID {
	bd := k.bindings[b]
	if !bd.byAddr {
		return v
	}
	u64 := k.b.TypeInt(64, false)
	pair := k.f.CompositeConstruct(k.b.TypeVector(k.u32(), 2), k.push(bd.addr), k.push(bd.addr+1))
	return k.f.ConvertUToPtr(k.b.TypePointer(spirv.StoragePhysicalStorageBuffer, blk), k.f.Bitcast(u64, pair))
}

// chain points at member idx... of binding b's array, an element of
// type t.
func (k *kernelBuilder) chain(b int, t spirv.ID, idx ...spirv.ID) spirv.ID {
	bd := k.bindings[b]
	return k.f.AccessChain(k.b.TypePointer(k.class(b), t), k.base(b, bd.blk, bd.v), append([]spirv.ID{k.cu32(0)}, idx...)...)
}

// loadFrom loads a value of type t through pointer p into binding b:
// through an address, with the alignment every element of the binding
// has (SPIR-V requires it there).
func (k *kernelBuilder) loadFrom(b int, t, p spirv.ID) spirv.ID {
	if k.bindings[b].byAddr {
		return k.f.LoadAligned(t, p, uint32(k.bindings[b].st.Bytes()))
	}
	return k.f.Load(t, p)
}

// storeTo is loadFrom's store.
func (k *kernelBuilder) storeTo(b int, p, v spirv.ID) {
	if k.bindings[b].byAddr {
		k.f.StoreAligned(p, v, uint32(k.bindings[b].st.Bytes()))
		return
	}
	k.f.Store(p, v)
}

// begin opens main().
func (k *kernelBuilder) begin() {
	void := k.b.TypeVoid()
	k.f = k.b.Function(void, k.b.TypeFunction(void))
	k.b.Name(k.f.ID, "main")
	k.f.Label(0)
	if k.tg.FoldsZeros {
		// gl_GlobalInvocationID.z: every dispatch is one workgroup deep
		// (grid) of workgroups one invocation deep, so it is 0, and the
		// driver cannot know it. Defined first, it dominates every use.
		g := k.f.Load(k.b.TypeVector(k.u32(), 3), k.gid)
		k.zeroU32 = k.f.Extract(k.u32(), g, 2)
	}
}

// finish closes main() and returns the module.
func (k *kernelBuilder) finish(name string) *Kernel {
	k.f.Void(spirv.OpReturn)
	k.f.End()
	k.b.EntryPoint(k.f.ID, "main", append([]spirv.ID{k.gid, k.nwg}, k.iface...)...)
	k.b.LocalSize(k.f.ID, k.local, 1, 1)
	f64 := k.b.HasCapability(spirv.CapabilityFloat64)
	for _, w := range []struct {
		zeros, denorms bool
		width          uint32
		used           bool
	}{
		{k.tg.SignedZeroInfNan32, k.tg.DenormPreserve32, 32, true},
		{k.tg.SignedZeroInfNan64, k.tg.DenormPreserve64, 64, f64},
	} {
		if w.zeros && w.used {
			k.b.SignedZeroInfNanPreserve(k.f.ID, w.width) // inf*0 is NaN, -0+0 is +0 (Target)
		}
		if w.denorms && w.used {
			k.b.DenormPreserve(k.f.ID, w.width) // subnormals kept, as XLA keeps them (Target)
		}
	}
	fused := k.fusedInstructions()
	// An input may share memory with the results when every access to
	// it and to every result is at the invocation's own index.
	inPlace := make([]bool, len(k.inputs))
	results := true
	for b := range k.bindings {
		// A scalar result stored by invocation 0 (a prologue's) after its
		// own reads: no other invocation reads the element it writes.
		if k.offIndex[b] && !k.isInput(b) && !k.scalarOut[b] {
			results = false
		}
	}
	for i, b := range k.inputBinds {
		inPlace[i] = results && !k.offIndex[b]
	}
	vector := 1
	switch {
	case k.vecMode:
		vector = VectorWidth
	case k.parts > 1:
		vector = int(k.parts)
	}
	var addressed []int
	for b, bd := range k.bindings {
		if bd.byAddr {
			addressed = append(addressed, b)
		}
	}
	if len(k.pcFields) > 0 {
		offs := make([]uint32, len(k.pcFields))
		for i := range offs {
			offs[i] = uint32(4 * i)
		}
		blk := k.b.TypeBlock(k.pcFields, offs)
		k.b.VariableAt(k.pcVar, k.b.TypePointer(spirv.StoragePushConstant, blk), spirv.StoragePushConstant)
		k.b.Name(k.pcVar, "params")
	}
	return &Kernel{
		Addressed: addressed,
		Inputs:    k.inputs,
		InPlace:   inPlace,
		Fused:     fused,
		Vector:    vector,
		Lanes:     max(int(k.lanes), 1),
		Texel:     k.texel,
		Name:      name,
		Words:     k.b.Words(),
		Bindings:  len(k.bindings),
		PushSize:  4 * len(k.pcFields),
		LocalSize: [3]uint32{k.local, 1, 1},
	}
}

// push loads push-constant field i (a u32).
func (k *kernelBuilder) push(i int) spirv.ID {
	u32 := k.u32()
	p := k.f.AccessChain(k.b.TypePointer(spirv.StoragePushConstant, u32), k.pcVar, k.cu32(uint32(i)))
	return k.f.Load(u32, p)
}

// linearIndex is this invocation's element index in a grid that may be
// two-dimensional (more workgroups than maxComputeWorkGroupCount[0]):
// gid.x + gid.y * numWorkgroups.x * localSize.
func (k *kernelBuilder) linearIndex() spirv.ID {
	u32 := k.u32()
	v3 := k.b.TypeVector(u32, 3)
	g := k.f.Load(v3, k.gid)
	n := k.f.Load(v3, k.nwg)
	x := k.f.Extract(u32, g, 0)
	y := k.f.Extract(u32, g, 1)
	nx := k.f.Extract(u32, n, 0)
	row := k.f.IMul(u32, nx, k.cu32(k.local))
	return k.f.IAdd(u32, x, k.f.IMul(u32, y, row))
}

// elemPtr points at element idx of binding bind.
func (k *kernelBuilder) elemPtr(bind int, idx spirv.ID) spirv.ID {
	k.noteIndex(bind, idx)
	t := k.storageElem(k.bindings[bind].st)
	if k.isVec(bind) { // a vec4 array: the component of element idx/4
		u32 := k.u32()
		q := k.f.UDiv(u32, idx, k.cu32(vec4))
		r := k.f.UMod(u32, idx, k.cu32(vec4))
		return k.chain(bind, t, q, r)
	}
	return k.chain(bind, t, idx)
}

// loadElem loads element idx of binding bind as stored.
func (k *kernelBuilder) loadElem(bind int, idx spirv.ID) spirv.ID {
	return k.loadFrom(bind, k.storageElem(k.bindings[bind].st), k.elemPtr(bind, idx))
}

// storeElem stores v, as stored, at element idx of binding bind.
func (k *kernelBuilder) storeElem(bind int, idx, v spirv.ID) {
	k.storeTo(bind, k.elemPtr(bind, idx), v)
}

// noteIndex records an access of binding bind at idx: one not at the
// invocation's own element keeps the binding from in-place updates.
func (k *kernelBuilder) noteIndex(bind int, idx spirv.ID) {
	if k.check && k.vector != nil {
		if _, lane := k.vector.lanes[idx]; !lane {
			if k.offLane == nil {
				k.offLane = map[int]bool{}
			}
			k.offLane[bind] = true
		}
	}
	if idx != k.linear && !k.own[idx] {
		if k.offIndex == nil {
			k.offIndex = map[int]bool{}
		}
		k.offIndex[bind] = true
	}
}

// load reads element idx of a binding as a value of HLO type t; a
// fused operand's element is computed instead.
func (k *kernelBuilder) load(bind int, idx spirv.ID, t hlo.ElementType) val {
	if bind >= wideBase {
		return k.sharedLoad(bind, idx)
	}
	if bind >= regBase {
		return k.regLoad(bind, idx)
	}
	if bind >= virtualBase {
		return k.compute(k.virtual[bind-virtualBase], idx)
	}
	bd := k.bindings[bind]
	var raw spirv.ID
	switch {
	case k.vector != nil && k.isVec(bind):
		raw, _ = k.vectorLoad(bind, idx)
	case k.texelAccess(bind):
		k.noteIndex(bind, idx)
		raw = k.texelLoad1(bind, idx)
	default:
		raw = k.widen(k.loadElem(bind, idx), bd.st)
	}
	switch {
	case t == hlo.PRED:
		return val{k.f.INotEqual(k.boolT(), raw, k.cu32(0)), t}
	case isMini(t): // its code (minifloat.go)
		return val{k.decodeMini(raw, t), t}
	}
	return val{raw, t}
}

// store writes v to element idx of a binding.
func (k *kernelBuilder) store(bind int, idx spirv.ID, v val) {
	if k.deferred != nil {
		*k.deferred = append(*k.deferred, deferredStore{bind, idx, v})
		return
	}
	id := v.id
	switch {
	case v.t == hlo.PRED:
		id = k.f.Select(k.u32(), v.id, k.cu32(1), k.cu32(0))
	case isMini(v.t): // its code (minifloat.go)
		id = k.encodeMini(v.id, v.t)
	}
	if k.vector != nil && k.isVec(bind) {
		k.vectorStore(bind, idx, id)
		return
	}
	if st := k.bindings[bind].st; isNarrow(st) {
		id = k.narrow(id, st)
	}
	if k.lanes > 0 { // a subgroup per element: lane 0 stores
		k.f.If(k.boolOp(spirv.OpIEqual, k.lane, k.cu32(0)), func() error {
			k.storeElem(bind, idx, id)
			return nil
		})
		return
	}
	k.storeElem(bind, idx, id)
}

// bind declares the storage buffers of instruction in: read-only ones for
// its operands, then writable ones for its result leaves, and returns
// their binding numbers.
func (k *kernelBuilder) bind(in *hlo.Instruction) (ins, outs []int, err error) {
	if ins, err = k.bindOperands(in); err != nil {
		return nil, nil, err
	}
	outs, err = k.bindResults(in)
	return ins, outs, err
}

// bindOperands returns the binding of each operand of in: a read-only
// storage buffer per distinct materialized input, in first-use order, or
// a fused producer's virtual binding.
func (k *kernelBuilder) bindOperands(in *hlo.Instruction) ([]int, error) {
	var binds []int
	for _, o := range in.Operands {
		b, err := k.operandBinding(o)
		if err != nil {
			return nil, err
		}
		binds = append(binds, b)
	}
	return binds, nil
}

// bindResults declares a writable storage buffer for each array leaf of
// in's result, after the operands.
func (k *kernelBuilder) bindResults(in *hlo.Instruction) ([]int, error) {
	var outs []int
	for i, s := range in.Shape.Leaves() {
		b, err := k.addBuffer(s.Elem, fmt.Sprintf("out%d", i), false, s.NumElements())
		if err != nil {
			return nil, in.Errorf("%v", err)
		}
		outs = append(outs, b)
	}
	return outs, nil
}

// perElement emits main() running body for each invocation index below
// push constant 0 (the element, slice or output count of the dispatch)
// and returns the finished kernel.
func (k *kernelBuilder) perElement(name string, body func(idx spirv.ID) error) (*Kernel, error) {
	k.begin()
	idx := k.linearIndex()
	if k.lanes > 0 {
		if k.wg {
			k.lane = k.localIndex()
		} else {
			k.lane = k.laneID()
		}
		idx = k.f.UDiv(k.u32(), idx, k.cu32(k.lanes))
	}
	k.linear = idx
	if k.parts > 1 {
		k.linear = 0 // the invocation's number, not an element's index: its own elements are k.own
	}
	n := k.push(0)
	inRange := k.f.ULessThan(k.boolT(), idx, n)
	switch {
	case k.vecMode:
		inner := body
		body = func(idx4 spirv.ID) error { return k.vectorElems(idx4, inner) }
	case k.parts > 1:
		inner := body
		body = func(i spirv.ID) error { return k.partsElems(i, inner) }
	}
	if err := k.f.If(inRange, func() error { return body(idx) }); err != nil {
		return nil, err
	}
	if k.err != nil {
		return nil, k.err
	}
	return k.finish(name), nil
}

func (k *kernelBuilder) isInput(b int) bool {
	for _, x := range k.inputBinds {
		if x == b {
			return true
		}
	}
	return false
}

// fusedInstructions lists what the kernel computes inline (a prologue
// reduce too, read from its register), in the order bound.
func (k *kernelBuilder) fusedInstructions() []*hlo.Instruction {
	var fused []*hlo.Instruction
	for _, v := range k.virtual {
		fused = append(fused, v.in)
	}
	return fused
}
