package lower

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// BufferKind says where a buffer's contents come from.
type BufferKind uint8

const (
	BufParam    BufferKind = iota // an entry parameter, uploaded per run
	BufConstant                   // a constant, uploaded once when the executable loads
	BufTemp                       // written by a kernel
	BufBound                      // the result of a while or conditional: bound at run time to the buffers the sub-program produced
)

func (k BufferKind) String() string {
	return [...]string{"param", "constant", "temp", "bound"}[k]
}

// Buffer is one device buffer of the plan.
type Buffer struct {
	Name    string
	Kind    BufferKind
	Param   int       // BufParam: index among the entry parameters' leaves
	Data    []byte    // BufConstant: contents in storage representation
	Shape   hlo.Shape // logical array shape (HLO element type)
	Size    int64     // device bytes
	Offset  int64     // BufTemp, or a donated BufParam: where it lives in the program's arena
	Donated bool      // BufParam: its memory the program's to reuse once it is dead (in the arena, or Alias's)
	// Alias pairs a donated parameter with the result that takes over
	// its memory once it is dead, as XLA's input_output_alias: each holds
	// the other's index plus one (0: none). Neither lives in the arena:
	// the parameter keeps its own buffer (a device argument given to the
	// run is used as it is, not copied), and the result is written there.
	Alias int
}

// InArena reports the buffers that live in the program's arena.
func (b Buffer) InArena() bool {
	return (b.Kind == BufTemp || b.Kind == BufParam && b.Donated) && b.Alias == 0
}

// StepKind says what a step does.
type StepKind uint8

const (
	StepDispatch    StepKind = iota // run a kernel
	StepWhile                       // run Subs[Cond] and Subs[Body] on the loop state until the condition is false
	StepConditional                 // run Subs[Branches[i]] chosen by the predicate or index in buffer Pred
	StepLoop                        // a device loop: run the kernel until it writes 0 to buffer Pred (seqloop.go)
)

// IsDispatch reports the steps that run a kernel on their buffers:
// a dispatch, and a device loop's repeated dispatches.
func (k StepKind) IsDispatch() bool { return k == StepDispatch || k == StepLoop }

// Step is one dispatch (kernel, buffers bound to its bindings in order,
// push constants, workgroup grid), or a control-flow step that the
// runtime drives from the host, reading the predicate back.
type Step struct {
	Kind StepKind
	// Control flow: sub-programs, operand leaves (In; for a conditional,
	// one list per branch), result leaves (Out), the selector (Pred).
	Cond, Body int
	Branches   []int
	In         [][]int
	Out        []int
	Pred       int

	Kernel      int
	Buffers     []int
	Push        []uint32
	Groups      [3]uint32
	Writes      int      // the last Writes buffers are the step's outputs
	AfterWrites bool     // reads something an earlier step wrote: needs a barrier
	Inst        string   // the HLO instruction it computes, for profiles and errors
	Fused       []string // the instructions its kernel computes inline or alongside Inst (fusion)
	InPlace     []int    // dispatch: buffers it reads only at the index where it writes its results (they may share their memory); while: initial state the loop may write over
	Counter     *Counter // while: the counter of a counted loop (nil: its condition decides each iteration)
	// Dispatches: a device loop that so many dispatches surely end
	// (kgen.Loop.Dispatches; 0: read back after each): they run in their
	// batch like other dispatches, the flag (Pred) read once the batch is
	// done, and it lives to the program's end.
	Dispatches int
}

// Counter is a counted while loop's induction variable (hlo.CountedLoop)
// by its leaf of the loop's state: the runtime reads its start and runs
// the iterations that follows from it (hlo.Counter.Iterations) without
// reading the condition back after each.
type Counter struct {
	Leaf int
	hlo.Counter
}

// PushBytes encodes the push constants little-endian.
func (s Step) PushBytes() []byte {
	out := make([]byte, 0, 4*len(s.Push))
	for _, w := range s.Push {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	return out
}

// Program is a compiled module: device-independent apart from the Target
// it was generated for.
type Program struct {
	Module       string
	Kernels      []*kgen.Kernel
	Buffers      []Buffer
	Steps        []Step
	Params       []int       // buffer of each entry parameter leaf (tuple parameters flattened depth-first)
	ParamShapes  []hlo.Shape // entry parameter leaf shapes
	Outputs      []int       // buffer of each result leaf, depth-first
	OutputShapes []hlo.Shape
	ResultShape  hlo.Shape
	Subs         []*Program // called computations of while and conditional steps
	ArenaSize    int64      // bytes of the arena that holds every BufTemp (memory.go)
	LiveBound    int64      // the most temporary bytes live at one step: no arena can be smaller
	TempBytes    int64      // the temporaries' bytes without reuse: ArenaSize's saving is TempBytes - ArenaSize
	FusedBytes   int64      // bytes the values computed inside other kernels would have taken (fuse.go)
	// Plan is the kernel plan the steps were generated from, a line per
	// kernel or control step in run order (plan.go): its root, its kind,
	// what it computes first and inline. For Describe and debugging.
	Plan []string
}

// Memory sums a program's memory plan over it and its sub-programs.
type Memory struct {
	Arena, LiveBound, Temps, Fused int64
}

// Memory returns the plan's figures, sub-programs included.
func (p *Program) Memory() Memory {
	m := Memory{p.ArenaSize, p.LiveBound, p.TempBytes, p.FusedBytes}
	for _, s := range p.Subs {
		sm := s.Memory()
		m.Arena += sm.Arena
		m.LiveBound += sm.LiveBound
		m.Temps += sm.Temps
		m.Fused += sm.Fused
	}
	return m
}

// PeakBytes is the most device memory the program's own buffers hold at
// once: the arena, the parameters not donated to it, and constants (not
// sub-programs').
func (p *Program) PeakBytes() int64 {
	n := p.ArenaSize
	for _, b := range p.Buffers {
		if !b.InArena() && b.Kind != BufBound && !(b.Kind == BufTemp && b.Alias != 0) {
			n += PaddedSize(b.Size)
		}
	}
	return n
}

// PaddedSize is what a buffer of n bytes occupies on the device
// (kgen.PaddedSize, which also decides which bindings are addressed).
func PaddedSize(n int64) int64 { return kgen.PaddedSize(n) }

// ToStorage converts host bytes of type t (row-major, as in .npy) to the
// device representation on tg (see StorageType): the same bytes where
// the device stores t as it is.
func ToStorage(t hlo.ElementType, host []byte, tg kgen.Target) []byte {
	t = codeType(t)
	n := len(host) / t.Bytes()
	if st, err := kgen.StorageType(t, tg); err != nil || st == t {
		return host
	}
	out := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		var w uint32
		switch t {
		case hlo.PRED:
			if host[i] != 0 {
				w = 1
			}
		case hlo.U8:
			w = uint32(host[i])
		case hlo.S8:
			w = uint32(int32(int8(host[i])))
		case hlo.U16:
			w = uint32(binary.LittleEndian.Uint16(host[2*i:]))
		case hlo.S16:
			w = uint32(int32(int16(binary.LittleEndian.Uint16(host[2*i:]))))
		case hlo.F16, hlo.BF16:
			w = math.Float32bits(float32(hlo.DecodeFloat(t, uint64(binary.LittleEndian.Uint16(host[2*i:])))))
		}
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// FromStorage converts device bytes on tg back to the host
// representation of n elements of type t.
func FromStorage(t hlo.ElementType, dev []byte, n int64, tg kgen.Target) ([]byte, error) {
	t = codeType(t)
	if st, err := kgen.StorageType(t, tg); err != nil || st == t {
		want := n * int64(t.Bytes())
		if int64(len(dev)) < want {
			return nil, fmt.Errorf("lower: %d device bytes for %d %s elements", len(dev), n, t)
		}
		return dev[:want], nil
	}
	if int64(len(dev)) < 4*n {
		return nil, fmt.Errorf("lower: %d device bytes for %d %s elements", len(dev), n, t)
	}
	out := make([]byte, n*int64(t.Bytes()))
	for i := int64(0); i < n; i++ {
		w := binary.LittleEndian.Uint32(dev[4*i:])
		switch t {
		case hlo.PRED:
			if w != 0 {
				out[i] = 1
			}
		case hlo.U8, hlo.S8:
			out[i] = byte(w)
		case hlo.U16, hlo.S16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(w))
		case hlo.F16, hlo.BF16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(hlo.EncodeFloat(t, float64(math.Float32frombits(w)))))
		}
	}
	return out, nil
}

// BufferType is the element type of the buffer that holds a value of
// type t the device has no kernels for: a complex number's parts (its
// memory form, lower complex), the 8-bit integer of a 2- or 4-bit one
// (widen sub-byte integers); t itself otherwise (a small float type's
// buffer holds its codes, as the host does: f8.go). The runtime converts
// between the buffer type and what the device stores with ToStorage and
// FromStorage.
func BufferType(t hlo.ElementType) hlo.ElementType {
	if rt, ok := t.ComplexPart(); ok {
		return rt
	}
	if w, ok := narrowInt(t); ok {
		return w
	}
	return t
}

// SameBytes reports whether a buffer of type t on target tg holds the
// very bytes a host array of t holds, so that the host may read and
// write it in place: complex numbers (pairs of their real type) and the
// small float types (their codes, a byte each) do; sub-byte integers
// (widened to a byte) and what the device stores widened (pred always;
// 8- and 16-bit types without 8- and 16-bit storage) do not.
func SameBytes(t hlo.ElementType, tg kgen.Target) bool {
	bt := BufferType(t)
	if _, complex := t.ComplexPart(); bt != t && !complex {
		return false
	}
	st, err := kgen.StorageType(bt, tg)
	return err == nil && st == codeType(bt)
}

// codeType is the type whose bytes hold a value of type t as the host
// holds it: u8 for a small float type (its code), t otherwise.
func codeType(t hlo.ElementType) hlo.ElementType {
	if isF8(t) {
		return hlo.U8
	}
	return t
}

// BufferElems is how many buffer elements n values of type t take (a
// complex number two).
func BufferElems(t hlo.ElementType, n int64) int64 {
	if _, ok := t.ComplexPart(); ok {
		return 2 * n
	}
	return n
}

// Words is the SPIR-V words of the program's kernels and its
// sub-programs': what a driver that compiles them all has to compile.
func (p *Program) Words() int {
	n := 0
	for _, k := range p.Kernels {
		n += len(k.Words)
	}
	for _, sp := range p.Subs {
		n += sp.Words()
	}
	return n
}
