package kgen

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Vector access: a kernel that writes its results only at its own output
// index computes 8 consecutive elements per invocation (two vec4s), and
// the buffers it accesses only there (its results, and inputs read
// elementwise) are vec4 arrays, loaded and stored 16 bytes at a time;
// other inputs (a broadcast row) stay scalar arrays read per lane.
// Lavapipe's per-lane accesses are gathers and scatters, so a vec4 moves
// 16 bytes per lane access, and the fixed cost per invocation is paid an
// eighth as often. The arithmetic stays scalar: each lane's element is
// computed by the same code as in a scalar kernel, with its reads taken
// from the vec4s loaded once and its writes gathered into vec4 stores
// after all lanes.
//
// Wide loads (CPU devices with shaderInt64): 8 consecutive 32-bit
// elements loaded as one u64vec4, 32 bytes, through a second variable on
// the same binding (wideLoad). Lavapipe runs every load of a vector as a
// loop over the SIMD lanes, each component fetched and bounds-checked on
// its own, so 4 components of 8 bytes take half the steps of 8 of 4. The
// tiled GEMM reads its operands' octets so; vector kernels keep their
// vec4s, where the u64-to-f32 reshuffles cost more than the loads save.
// Stores are where the octets pay: lavapipe stores a vector in a loop
// over the lanes that spills it and reloads each lane's component from
// the stack, about eight instructions a component, against one shuffle
// to pair two f32s into a u64. A vector kernel's 8 results of 32 bits
// are one u64vec4 store (storeWide): bench/ab -rounds 15-20 against
// vec4 stores, stream_copy 0.82-0.85, chain8 0.91, softmax 0.87-0.94,
// mlp_train 0.979, the DLRM step 0.999; conv_block's pooling kernel
// 0.50 -> 0.33 ms (--profile).
//
// Texel loads (CPU devices with uniform texel buffers of R8, R16, R32,
// R32G32 and R32G32B32A32_UINT, unless Options.StorageLoads): a read-only
// input's vec4s (texelLoad4), a vector kernel's 8 narrow elements, and
// single elements of any width (texelLoad1, from kernel.load) are fetched
// through uniform texel buffer views of its buffer, which llvmpipe runs
// as one fetch for all SIMD lanes (8 vector loads and a transpose, or one
// AVX2 gather; no per-lane loop or branch); stores go through the storage
// buffers. Where octets are not used a texel per load is cheaper.
//
// Each choice was measured against the others on the benchmark
// workloads: docs/BENCHMARKS.md (session 6's table of steps and the
// figures after it).

// vec4 is the components of the vectors buffers are read as; a vector
// kernel's invocation reads vectorChunks of them per buffer.
const (
	vec4         = 4
	vectorChunks = 2
	VectorWidth  = vec4 * vectorChunks // elements per invocation
)

// minVectorElements is the smallest output worth a vector kernel.
const minVectorElements = 1024

// vectorMaxLaneWords is the most SPIR-V words one lane's element may take
// in a vector kernel; past it the kernel is generated scalar instead.
// The vector form computes each lane's element with the scalar code, so
// it is about seven times the size, and the driver's compile grows with
// it (lavapipe: ~15-20 us a word at the first dispatch), while it is
// faster only where loads and stores dominate: lavapipe, chains over
// f32[1048576] of sine/tanh/exp with multiplies (vkjit bench, medians of
// 10), 4 ops (1,781 scalar words) 5.3 ms vector against 6.1 ms scalar; 12
// ops (4,231) 12.2 against 11.9; 24 ops 24.3 against 24.2; 60 ops 62.2
// against 61.1; and over f32[4096] the scalar kernels were faster (60
// ops 0.38 against 0.69 ms). The bound was a scalar kernel of 4096 words;
// a lane's element takes 226-1,456 words less than the scalar kernel
// (the module's header, bindings and bounds check: the vectorizable
// kernels of ../shared), and the lane is what the vector kernel knows
// while it generates, so it stops after the first lane past the bound.
const vectorMaxLaneWords = 4096 - 512

// errNotVector stops a vector kernel whose accesses turned out not to be
// at the invocation's own elements, or whose code is too large; the
// scalar kernel is used.
var errNotVector = errors.New("lower: not a vector kernel")

// notVector is errNotVector naming the vec4 binding a lane accessed
// elsewhere than at its element (-1: the kernel is too large, or a lane
// did not write a result), which checkVectorBinds reports as the
// analysis's error.
type notVector struct{ bind int }

func (e *notVector) Error() string        { return errNotVector.Error() }
func (e *notVector) Is(target error) bool { return target == errNotVector }

// vectorState is a vector kernel's per-invocation state.
type vectorState struct {
	lanes   map[spirv.ID]int   // lane element index -> lane
	loaded  map[int][]spirv.ID // input binding -> its vec4s at the invocation
	pending map[int][]spirv.ID // result binding -> lane values to store
	width   int                // lanes
	idxs    []spirv.ID         // each lane's element index
	at      int                // where code all lanes share goes (a Function.Len)
	rows    map[rowKey][]spirv.ID
}

// rowKey is a broadcast's operand read by a vector kernel's lanes as one
// row of vec4s (vectorRow).
type rowKey struct {
	in   *hlo.Instruction
	bind int
}

// vectorShape reports whether an output of n elements may be computed
// by a vector kernel on tg: whole octets, enough of them, and buffers
// aligned for vec4s.
func vectorShape(n int64, tg Target) bool {
	return n >= minVectorElements && vectorAligned(n, tg)
}

// vectorAligned reports whether an output of n elements is whole octets
// in buffers aligned for vec4s on tg.
func vectorAligned(n int64, tg Target) bool {
	return n%VectorWidth == 0 && tg.StorageAlign%16 == 0 && tg.StorageAlign != 0
}

// vectorElems runs body for each lane of this invocation's vec4: it
// loads every input binding's vec4 first, calls body with each lane's
// element index, then stores each result binding's vec4.
func (k *kernelBuilder) vectorElems(idx4 spirv.ID, body func(idx spirv.ID) error) error {
	preload := k.inputBinds
	if k.spill != nil && k.spill.ready {
		preload = append(slices.Clone(preload), k.spill.bind)
	}
	return k.vectorLanes(idx4, vectorChunks, preload, func(_ int, idx spirv.ID) error { return body(idx) })
}

// vectorLanes is vectorElems over chunks vec4s (4*chunks lanes) at vec4
// index idx4*chunks, preloading the vec4 bindings among preload; body
// gets each lane's number and element index.
func (k *kernelBuilder) vectorLanes(idx4 spirv.ID, chunks int, preload []int, body func(lane int, idx spirv.ID) error) error {
	width := vec4 * chunks
	vs := &vectorState{lanes: map[spirv.ID]int{}, loaded: map[int][]spirv.ID{}, pending: map[int][]spirv.ID{}, width: width, rows: map[rowKey][]spirv.ID{}}
	k.vector = vs
	u32 := k.u32()
	chunk := func(c int) spirv.ID { // the vec4 index of chunk c
		if chunks == 1 {
			return idx4
		}
		return k.f.IAdd(u32, k.f.IMul(u32, idx4, k.cu32(uint32(chunks))), k.cu32(uint32(c)))
	}
	for _, b := range preload {
		if !k.isVec(b) {
			continue
		}
		bd := k.bindings[b]
		if isNarrow(bd.st) { // the 8 elements are one vector of words
			if chunks != vectorChunks {
				return fmt.Errorf("kgen: internal error: narrow binding %d in a vector of %d lanes", b, width)
			}
			if k.texelAccess(b) {
				vs.loaded[b] = []spirv.ID{k.texelFetch(b, idx4, 4*narrowWords(bd.st))}
				continue
			}
			vw := k.b.TypeVector(u32, narrowWords(bd.st))
			vs.loaded[b] = []spirv.ID{k.loadFrom(b, vw, k.chain(b, vw, idx4))}
			continue
		}
		for c := range chunks {
			vs.loaded[b] = append(vs.loaded[b], k.loadVec4(b, chunk(c)))
		}
	}
	// Not a scaledIndex: a division of base must not give back idx4,
	// which noteIndex takes for the own element (k.linear) while it is
	// the invocation's number, not an element's index.
	base := k.f.IMul(u32, idx4, k.cu32(uint32(width)))
	for lane := range width {
		idx := k.offsetIndex(base, uint32(lane), uint32(width))
		vs.lanes[idx] = lane
		vs.idxs = append(vs.idxs, idx)
	}
	vs.at = k.f.Len()
	for lane, idx := range vs.idxs {
		if err := body(lane, idx); err != nil {
			return err
		}
	}
	for b := range len(k.bindings) {
		parts := vs.pending[b]
		if parts == nil {
			continue
		}
		for _, p := range parts {
			if p == 0 {
				return &notVector{b} // a lane did not write this result
			}
		}
		bd := k.bindings[b]
		if isNarrow(bd.st) {
			k.storeNarrowLanes(b, idx4, parts)
			continue
		}
		if chunks == 2 && bd.st.Bits() == 32 && k.wideStore(b) {
			k.storeWide(b, idx4, parts)
			continue
		}
		v4 := k.b.TypeVector(k.scalarType(bd.st), vec4)
		for c := range chunks {
			q := parts[vec4*c:]
			v := k.f.CompositeConstruct(v4, q[0], q[1], q[2], q[3])
			k.storeTo(b, k.chain(b, v4, chunk(c)), v)
		}
	}
	return nil
}

// vectorLoad is load in a vector kernel: a lane of the binding's vec4.
func (k *kernelBuilder) vectorLoad(bind int, idx spirv.ID) (spirv.ID, bool) {
	lane, ok := k.vector.lanes[idx]
	v4, loaded := k.vector.loaded[bind]
	if !ok || !loaded {
		if k.err == nil {
			k.err = &notVector{bind}
		}
		return k.zero(k.bindings[bind].st), false
	}
	st := k.bindings[bind].st
	if isNarrow(st) {
		per := VectorWidth / narrowWords(st) // elements per word
		w := k.f.Extract(k.u32(), v4[0], uint32(lane/per))
		bits := k.uop(spirv.OpShiftRightLogical, w, k.cu32(uint32(st.Bits()*(lane%per))))
		if lane%per != per-1 {
			bits = k.uop(spirv.OpBitwiseAnd, bits, k.cu32(uint32(1)<<st.Bits()-1))
		}
		return k.widenBits(bits, st), true
	}
	return k.f.Extract(k.scalarType(st), v4[lane/vec4], uint32(lane%vec4)), true
}

// vectorRow is element idx of broadcast in, whose operand is read
// through binding bind, in a vector kernel whose lanes' elements lie in
// one row of it: where the broadcast keeps its operand's minor
// dimension as its own, consecutive lanes read consecutive elements of
// the operand, so the lanes share one fetch of them as vec4s (emitted
// once, ahead of every lane's code: Function.Hoist) where each lane
// would fetch its own (a call of its own on llvmpipe). ok is false
// where that does not hold: the caller reads the element alone.
func (k *kernelBuilder) vectorRow(in *hlo.Instruction, bind int, idx spirv.ID) (v val, ok bool) {
	vs := k.vector
	if vs == nil || !isBuffer(bind) || k.isVec(bind) || !k.texelAccess(bind) {
		return val{}, false
	}
	lane, own := vs.lanes[idx]
	s, out := in.Operands[0].Shape, in.Shape
	r, d := s.Rank(), in.A.Dimensions
	if !own || r == 0 || d[r-1] != int64(out.Rank()-1) || s.Dims[r-1] != out.Dims[out.Rank()-1] ||
		s.Dims[r-1]%int64(vs.width) != 0 || k.bindings[bind].st.Bytes() != 4 || s.Elem == hlo.PRED {
		return val{}, false
	}
	key := rowKey{in, bind}
	row, done := vs.rows[key]
	if !done {
		mark := k.f.Len()
		// Unshared: the hoisted code may not reuse values emitted after vs.at.
		k.f.Unshared(func() {
			first := k.broadcastSource(in, vs.idxs[0]) // a multiple of the lanes: rows of s are
			k.noteIndex(bind, first)
			idx4 := k.f.UDiv(k.u32(), first, k.cu32(vec4))
			for c := range vs.width / vec4 {
				row = append(row, k.texelLoad4(bind, k.f.IAdd(k.u32(), idx4, k.cu32(uint32(c))))) // not idx4 itself: see base
			}
		})
		k.f.Hoist(vs.at, mark)
		vs.at += k.f.Len() - mark
		vs.rows[key] = row
	}
	st := k.bindings[bind].st
	return val{k.f.Extract(k.scalarType(st), row[lane/vec4], uint32(lane%vec4)), s.Elem}, true
}

// narrowWords is how many u32 words hold a vector kernel's 8 elements
// of narrow storage type st: 4 for 16-bit, 2 for 8-bit.
func narrowWords(st hlo.ElementType) int { return VectorWidth * st.Bits() / 32 }

// storeNarrowLanes packs the 8 lanes' values of narrow binding b into
// words and stores them at vector index idx8: as u64s where the target
// allows (wideStore: half the components, each a loop over the lanes on
// lavapipe; bench/ab -rounds 30, bf16 x*y+x over 4M elements 0.928, s8
// x+y 0.602), else as u32 words.
func (k *kernelBuilder) storeNarrowLanes(b int, idx8 spirv.ID, lanes []spirv.ID) {
	bd := k.bindings[b]
	words := narrowWords(bd.st)
	per := VectorWidth / words
	ws := make([]uint32, words)
	for w := range ws {
		var acc spirv.ID
		for j := range per {
			bits := k.narrowBits(lanes[w*per+j], bd.st)
			if j > 0 {
				bits = k.uop(spirv.OpShiftLeftLogical, bits, k.cu32(uint32(bd.st.Bits()*j)))
				bits = k.uop(spirv.OpBitwiseOr, acc, bits)
			}
			acc = bits
		}
		ws[w] = uint32(acc)
	}
	vw := k.b.TypeVector(k.u32(), words)
	v := k.f.Op(spirv.OpCompositeConstruct, vw, ws...)
	if k.wideStore(b) {
		p, t := k.wideChain(b, idx8)
		k.storeTo(b, p, k.f.Bitcast(t, v))
		return
	}
	k.storeTo(b, k.chain(b, vw, idx8), v)
}

// vectorStore is store in a vector kernel: the lane's part of the vec4.
func (k *kernelBuilder) vectorStore(bind int, idx, id spirv.ID) {
	lane, ok := k.vector.lanes[idx]
	if !ok {
		if k.err == nil {
			k.err = &notVector{bind}
		}
		return
	}
	if k.vector.pending[bind] == nil {
		k.vector.pending[bind] = make([]spirv.ID, k.vector.width)
	}
	k.vector.pending[bind][lane] = id
}

// vectorElement reports whether elements of storage type st may be
// accessed 8 at a time by a vector kernel: 32-bit ones as two vec4s,
// narrower ones as words.
func vectorElement(st hlo.ElementType) bool { return st.Bytes() == 4 || isNarrow(st) }

// vectorBinds says, per binding of bound kernel k (in, its operands
// bound as binds, and prologue ps), whether a vector kernel holds it as
// a vec4 array: accessed only at the invocation's own element, with
// 32-bit or narrower elements. It returns nil where a result is not one
// of those: the kernel has no vector form.
func (k *kernelBuilder) vectorBinds(in *hlo.Instruction, binds []int, ps *prologue) []bool {
	off := k.offElement(in, binds, ps)
	scalar := map[int]bool{} // a scalar prologue's result, stored by lane 0 alone
	for i, p := range ps.pro {
		if p.Shape.Rank() == 0 && ps.outs[i] >= 0 {
			scalar[ps.outs[i]] = true
		}
	}
	vb := make([]bool, len(k.bindings))
	for b, bd := range k.bindings {
		vb[b] = !off[b] && !scalar[b] && vectorElement(bd.st)
		if !vb[b] && !k.isInput(b) && !scalar[b] {
			return nil
		}
	}
	return vb
}

// isVec reports whether binding b is a vec4 array in this vector kernel.
func (k *kernelBuilder) isVec(b int) bool { return b < len(k.vecBinds) && k.vecBinds[b] }

// elementCount is the number of elements of in's (first) result.
func elementCount(in *hlo.Instruction) int64 { return in.Shape.Leaves()[0].NumElements() }

// wideAccess reports whether binding b may be loaded as u64vec4s:
// 32-bit elements not read through texel views, on a target with wide
// access.
func (k *kernelBuilder) wideAccess(b int) bool {
	return k.tg.WideAccess && b < len(k.bindings) && k.bindings[b].st.Bits() == 32 && !k.texelAccess(b)
}

// wideChain points at u64 group idx8 of binding b viewed as an array of
// the u64s that hold 8 of its elements each (wideType, t): through a
// second variable on the binding, declared at first use, or the
// binding's address.
func (k *kernelBuilder) wideChain(b int, idx8 spirv.ID) (p, t spirv.ID) {
	bd := &k.bindings[b]
	t = k.wideType(bd.st)
	if bd.wideBlk == 0 {
		bd.wideBlk = k.b.TypeBlock([]spirv.ID{k.b.TypeRuntimeArray(t, uint32(VectorWidth*bd.st.Bytes()))}, []uint32{0})
	}
	blk := bd.wideBlk
	if bd.wide == 0 && !bd.byAddr {
		v := k.b.Variable(k.b.TypePointer(spirv.StorageStorageBuffer, blk), spirv.StorageStorageBuffer)
		k.b.Decorate(v, spirv.DecorationDescriptorSet, 0)
		k.b.Decorate(v, spirv.DecorationBinding, uint32(b))
		if bd.ro {
			k.b.Decorate(v, spirv.DecorationNonWritable)
		}
		bd.wide = v
	}
	base := k.base(b, blk, k.bindings[b].wide)
	return k.f.AccessChain(k.b.TypePointer(k.class(b), t), base, k.cu32(0), idx8), t
}

// wideType is the type of 8 elements of storage type st (32-bit or
// narrow) as u64s: a u64vec4 for 32 bits, a u64vec2 for 16, a u64 for 8.
func (k *kernelBuilder) wideType(st hlo.ElementType) spirv.ID {
	u64 := k.b.TypeInt(64, false)
	if n := VectorWidth * st.Bits() / 64; n > 1 {
		return k.b.TypeVector(u64, n)
	}
	return u64
}

// wideStore reports whether a vector kernel may store its 8 elements of
// binding b as u64s (storeWide, storeNarrowLanes): 32-bit or narrow
// elements on a target with wide access.
func (k *kernelBuilder) wideStore(b int) bool {
	st := k.bindings[b].st
	return k.tg.WideAccess && (st.Bits() == 32 || isNarrow(st))
}

// storeWide stores xs, 8 values of binding b's scalar type, as elements
// 8*idx8 .. 8*idx8+7 of b: one u64vec4, each component a pair of them.
func (k *kernelBuilder) storeWide(b int, idx8 spirv.ID, xs []spirv.ID) {
	pair, u64 := k.b.TypeVector(k.scalarType(k.bindings[b].st), 2), k.b.TypeInt(64, false)
	var ws [4]spirv.ID
	for c := range ws {
		ws[c] = k.f.Bitcast(u64, k.f.CompositeConstruct(pair, xs[2*c], xs[2*c+1]))
	}
	p, u4 := k.wideChain(b, idx8)
	k.storeTo(b, p, k.f.CompositeConstruct(u4, ws[:]...))
}

// wideLoad loads elements 8*idx8 .. 8*idx8+7 of binding b as one
// u64vec4 and returns them as two vec4s of the binding's scalar type.
func (k *kernelBuilder) wideLoad(b int, idx8 spirv.ID) []spirv.ID {
	st := k.scalarType(k.bindings[b].st)
	p, u4 := k.wideChain(b, idx8)
	w := k.loadFrom(b, u4, p)
	var xs [VectorWidth]spirv.ID
	for c := range 4 {
		pair := k.f.Bitcast(k.b.TypeVector(st, 2), k.f.Extract(k.b.TypeInt(64, false), w, uint32(c)))
		for h := range 2 {
			xs[2*c+h] = k.f.Extract(st, pair, uint32(h))
		}
	}
	v4 := k.b.TypeVector(st, vec4)
	return []spirv.ID{
		k.f.CompositeConstruct(v4, xs[0], xs[1], xs[2], xs[3]),
		k.f.CompositeConstruct(v4, xs[4], xs[5], xs[6], xs[7]),
	}
}

// texelAccess reports whether binding b is read through texel buffer
// views: a read-only binding on a target with texel loads, one reached
// by device address too where a view holds it (binding.texelOK).
func (k *kernelBuilder) texelAccess(b int) bool {
	return k.tg.TexelReads && b < len(k.bindings) && k.bindings[b].ro && (!k.bindings[b].byAddr || k.bindings[b].texelOK)
}

// texelVar is binding b's view as a uniform texel buffer of texels of
// bytes bytes (1, 2, 4, 8 or 16: R8, R16, R32, R32G32 or R32G32B32A32
// UINT), declared at its first use as binding Bindings+i
// (Kernel.Texel[i]).
func (k *kernelBuilder) texelVar(b, bytes int) (v, img spirv.ID) {
	img = k.b.TypeBufferImage(k.u32())
	bd := &k.bindings[b]
	if bd.texel == nil {
		bd.texel = map[int]spirv.ID{}
	}
	if bd.texel[bytes] == 0 {
		v := k.b.Variable(k.b.TypePointer(spirv.StorageUniformConstant, img), spirv.StorageUniformConstant)
		k.b.Decorate(v, spirv.DecorationDescriptorSet, 0)
		k.b.Decorate(v, spirv.DecorationBinding, uint32(len(k.bindings)+len(k.texel)))
		k.texel = append(k.texel, TexelView{Binding: b, Bytes: bytes})
		bd.texel[bytes] = v
	}
	return bd.texel[bytes], img
}

// texelFetch fetches texel i of binding b's view in texels of bytes
// bytes: its u32 words (a uvec4 or uvec2), or for texels of at most 4
// bytes a u32 holding the texel's bits, zeros above.
func (k *kernelBuilder) texelFetch(b int, i spirv.ID, bytes int) spirv.ID {
	v, img := k.texelVar(b, bytes)
	u32 := k.u32()
	t := k.f.ImageFetch(k.b.TypeVector(u32, 4), k.f.Load(img, v), i)
	switch bytes {
	case 16:
		return t
	case 8:
		return k.f.CompositeConstruct(k.b.TypeVector(u32, 2), k.f.Extract(u32, t, 0), k.f.Extract(u32, t, 1))
	}
	return k.f.Extract(u32, t, 0)
}

// loadVec4 loads vec4 idx4 (elements 4*idx4 .. 4*idx4+3) of 32-bit
// vec4 binding b as a vec4 of its scalar type: through a texel view
// where the binding has one (texelAccess), else from the storage buffer.
func (k *kernelBuilder) loadVec4(b int, idx4 spirv.ID) spirv.ID {
	if st := k.bindings[b].st; isNarrow(st) && st.Bits() == 16 && k.texelAccess(b) {
		return k.texelLoad4Narrow(b, idx4)
	}
	if k.texelAccess(b) {
		return k.texelLoad4(b, idx4)
	}
	v4 := k.b.TypeVector(k.scalarType(k.bindings[b].st), vec4)
	return k.loadFrom(b, v4, k.chain(b, v4, idx4))
}

// loadQuad is elements 4*idx4 .. 4*idx4+3 of binding b, which holds
// values of type t, as a vec4 of their registers: loadVec4's, or for a
// small float type its codes decoded to f32 (decodeMini), from one
// 4-byte texel of four codes (8-bit storage: texelAccess) or a vec4 of
// them a word each.
func (k *kernelBuilder) loadQuad(b int, idx4 spirv.ID, t hlo.ElementType) spirv.ID {
	if !isMini(t) {
		return k.loadVec4(b, idx4)
	}
	u32 := k.u32()
	var codes [4]spirv.ID
	if k.bindings[b].st.Bits() == 8 {
		w := k.texelFetch(b, idx4, 4)
		for c := range codes {
			codes[c] = k.uop(spirv.OpBitwiseAnd, k.uop(spirv.OpShiftRightLogical, w, k.cu32(uint32(8*c))), k.cu32(0xff))
		}
	} else {
		v := k.loadVec4(b, idx4)
		for c := range codes {
			codes[c] = k.f.Extract(u32, v, uint32(c))
		}
	}
	var xs [4]spirv.ID
	for c, code := range codes {
		xs[c] = k.decodeMini(code, t)
	}
	return k.f.CompositeConstruct(k.b.TypeVector(k.b.TypeFloat(32), vec4), xs[:]...)
}

// texelLoad4 is vec4 idx4 of 32-bit binding b (texelAccess): the bits of
// elements 4*idx4 .. 4*idx4+3, as a vec4 of the binding's scalar type.
func (k *kernelBuilder) texelLoad4(b int, idx4 spirv.ID) spirv.ID {
	t := k.texelFetch(b, idx4, 16)
	if st := k.scalarType(k.bindings[b].st); st != k.u32() {
		return k.f.Bitcast(k.b.TypeVector(st, 4), t)
	}
	return t
}

// texelLoad4Narrow is elements 4*idx4 .. 4*idx4+3 of 16-bit binding b
// (texelAccess, bf16 or f16: a GEMM's operand, narrowQuads) widened to a
// vec4 of f32: one 8-byte texel, its four halves widened as a scalar
// load widens each.
func (k *kernelBuilder) texelLoad4Narrow(b int, idx4 spirv.ID) spirv.ID {
	st := k.bindings[b].st
	u32 := k.u32()
	w := k.texelFetch(b, idx4, 8)
	var xs [4]spirv.ID
	for c := range xs {
		word := k.f.Extract(u32, w, uint32(c/2))
		if c%2 == 0 {
			word = k.uop(spirv.OpBitwiseAnd, word, k.cu32(0xffff))
		} else {
			word = k.uop(spirv.OpShiftRightLogical, word, k.cu32(16))
		}
		xs[c] = k.widenBits(word, st)
	}
	return k.f.CompositeConstruct(k.b.TypeVector(k.scalarType(st), vec4), xs[:]...)
}

// texelLoad1 is element idx of binding b (texelAccess) in registers, as
// a storage buffer load and widen give it.
func (k *kernelBuilder) texelLoad1(b int, idx spirv.ID) spirv.ID {
	st := k.bindings[b].st
	t := k.texelFetch(b, idx, st.Bytes()) // a u32, or a uvec2 for 8 bytes
	switch {
	case isNarrow(st):
		return k.widenBits(t, st)
	case k.scalarType(st) == k.u32():
		return t
	}
	return k.f.Bitcast(k.scalarType(st), t)
}

// Which bindings a vector kernel holds as vec4s is decided from the
// bound kernel before any code: a binding is read at the invocation's
// own element only when every path from the kernel's outputs to it goes
// through operands read at the reader's own element (ownRead). The rule
// is the emitters' own: they pass the element index on unchanged to
// exactly those operands, and every other read is at a computed index,
// so the analysis and the emitted accesses agree (were they ever to
// differ, the vector kernel fails with errNotVector and the scalar one
// is used).

// offElement returns the bindings kernel k reads anywhere but at its
// own element, with in (its operands bound as binds) and prologue ps
// computed at the own element.
func (k *kernelBuilder) offElement(in *hlo.Instruction, binds []int, ps *prologue) map[int]bool {
	w := &readWalk{k: k, off: map[int]bool{}, seen: map[[2]int]bool{}}
	for i, p := range ps.pro {
		w.instruction(p, ps.binds[i], p.Shape.Rank() > 0) // a scalar's at its one element
	}
	w.instruction(in, binds, true)
	return w.off
}

// readWalk follows a kernel's reads through its fused operands.
type readWalk struct {
	k    *kernelBuilder
	off  map[int]bool
	read map[int]bool    // every buffer read (when not nil)
	seen map[[2]int]bool // virtual binding, own (0 or 1)
}

// instruction walks the reads of in's element, own saying whether it
// is computed at the invocation's own element.
func (w *readWalk) instruction(in *hlo.Instruction, binds []int, own bool) {
	for i, b := range binds {
		read, at := ownRead(in, i)
		if read {
			w.binding(b, own && at)
		}
	}
}

// binding records a read through binding b, at the own element or not:
// a buffer's, or a fused operand's, whose own reads are walked once for
// each of the two.
func (w *readWalk) binding(b int, own bool) {
	if isBuffer(b) {
		if !own {
			w.off[b] = true
		}
		if w.read != nil {
			w.read[b] = true
		}
		return
	}
	key := [2]int{b, 0}
	if own {
		key[1] = 1
	}
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	if f := w.k.virtual[b-virtualBase]; f.reg == nil {
		w.instruction(f.in, f.binds, own)
	}
}

// ownRead says whether in's element reads operand i, and whether it
// reads it at the same element index: elementwise ops their operands of
// in's rank, reshapes, bitcasts and the transposes and broadcasts that
// keep the order their operand (the same row-major position), dynamic-update-slice the array it updates (its update is
// not read when empty).
func ownRead(in *hlo.Instruction, i int) (read, own bool) {
	switch {
	case keepsOrder(in):
		return true, i == 0
	case in.Op == hlo.OpDynamicUpdateSlice:
		if i == 1 && in.Operands[1].Shape.NumElements() == 0 {
			return false, false
		}
		return true, i == 0
	case OpKind(in.Op) == KindElementwise:
		return true, in.Operands[i].Shape.Rank() > 0 || in.Shape.Rank() == 0
	}
	return true, false
}

// checkVectorBinds checks the vector kernel k just made against its
// bindings' analysis (offElement, rowOffElement): err, the generation's
// outcome, is not a vec4 binding read elsewhere than at a lane's element,
// and no binding that could have been a vec4 one (eligible) was read by
// the lanes only at their elements. The vector kernels are the same as
// when each binding was found by generating the kernel and retrying.
func (k *kernelBuilder) checkVectorBinds(name string, err error, eligible func(hlo.ElementType) bool) error {
	if !k.check {
		return err
	}
	var nv *notVector
	if errors.As(err, &nv) && nv.bind >= 0 {
		return fmt.Errorf("kgen: internal error: %s reads vec4 binding %d elsewhere than at a lane's element", name, nv.bind)
	}
	if err != nil {
		return err
	}
	for b, bd := range k.bindings {
		if !k.vecBinds[b] && eligible(bd.st) && !k.offLane[b] {
			return fmt.Errorf("kgen: internal error: %s reads binding %d only at a lane's element, but not as vec4s", name, b)
		}
	}
	return nil
}
