package lower

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// A compact binary form of a Program, for the compile cache: varints and
// length-prefixed lists in field order. It decodes a typical program in
// tens of microseconds, where encoding/gob took 0.3-0.4 ms (most of a
// cache hit). programFormat changes whenever the layout does.
const programFormat = 7

// MarshalBinary encodes p.
func (p *Program) MarshalBinary() ([]byte, error) {
	e := &encoder{}
	e.uint(programFormat)
	e.program(p)
	return e.b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote; damaged input is an
// error, never a panic.
func (p *Program) UnmarshalBinary(b []byte) (err error) {
	d := &decoder{b: b}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lower: program encoding: %v", r)
		}
	}()
	if v := d.uint(); v != programFormat {
		return fmt.Errorf("lower: program encoding format %d, want %d", v, programFormat)
	}
	*p = *d.program()
	if len(d.b) != 0 {
		return errors.New("lower: program encoding: trailing bytes")
	}
	return nil
}

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) bool(v bool)     { e.b = append(e.b, map[bool]byte{false: 0, true: 1}[v]) }
func (e *encoder) bytes(v []byte)  { e.uint(uint64(len(v))); e.b = append(e.b, v...) }
func (e *encoder) string(v string) { e.bytes([]byte(v)) }
func (e *encoder) ints(v []int) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.int(int64(x))
	}
}
func (e *encoder) int64s(v []int64) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.int(x)
	}
}
func (e *encoder) u32s(v []uint32) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.b = binary.LittleEndian.AppendUint32(e.b, x)
	}
}
func (e *encoder) strings(v []string) {
	e.uint(uint64(len(v)))
	for _, s := range v {
		e.string(s)
	}
}

func (e *encoder) shape(s hlo.Shape) {
	e.uint(uint64(s.Elem))
	e.int64s(s.Dims)
	e.uint(uint64(len(s.Dynamic)))
	for _, x := range s.Dynamic {
		e.bool(x)
	}
	e.bool(s.Layout != nil)
	if s.Layout != nil {
		e.int64s(s.Layout.MinorToMajor)
		e.string(s.Layout.Extra)
	}
	e.uint(uint64(len(s.Tuple)))
	for _, t := range s.Tuple {
		e.shape(t)
	}
	e.bool(s.Buffer)
}

func (e *encoder) shapes(v []hlo.Shape) {
	e.uint(uint64(len(v)))
	for _, s := range v {
		e.shape(s)
	}
}

func (e *encoder) program(p *Program) {
	e.string(p.Module)
	e.uint(uint64(len(p.Kernels)))
	for _, k := range p.Kernels {
		e.string(k.Name)
		e.u32s(k.Words)
		e.int(int64(k.Bindings))
		e.int(int64(k.PushSize))
		e.u32s(k.LocalSize[:])
		e.uint(uint64(len(k.Texel)))
		for _, t := range k.Texel {
			e.int(int64(t.Binding))
			e.int(int64(t.Bytes))
		}
		e.ints(k.Addressed)
	}
	e.uint(uint64(len(p.Buffers)))
	for _, b := range p.Buffers {
		e.string(b.Name)
		e.uint(uint64(b.Kind))
		e.int(int64(b.Param))
		e.bytes(b.Data)
		e.shape(b.Shape)
		e.int(b.Size)
		e.int(b.Offset)
		e.bool(b.Donated)
		e.int(int64(b.Alias))
	}
	e.uint(uint64(len(p.Steps)))
	for _, s := range p.Steps {
		e.uint(uint64(s.Kind))
		e.int(int64(s.Cond))
		e.int(int64(s.Body))
		e.ints(s.Branches)
		e.uint(uint64(len(s.In)))
		for _, in := range s.In {
			e.ints(in)
		}
		e.ints(s.Out)
		e.int(int64(s.Pred))
		e.int(int64(s.Kernel))
		e.ints(s.Buffers)
		e.u32s(s.Push)
		e.u32s(s.Groups[:])
		e.int(int64(s.Writes))
		e.bool(s.AfterWrites)
		e.string(s.Inst)
		e.strings(s.Fused)
		e.ints(s.InPlace)
		e.int(int64(s.Dispatches))
		e.bool(s.Counter != nil)
		if c := s.Counter; c != nil {
			e.int(int64(c.Leaf))
			e.int(int64(c.Index))
			e.uint(uint64(c.Elem))
			e.int(c.Limit)
			e.int(c.Step)
			e.string(c.Dir)
		}
	}
	e.ints(p.Params)
	e.shapes(p.ParamShapes)
	e.ints(p.Outputs)
	e.shapes(p.OutputShapes)
	e.shape(p.ResultShape)
	e.uint(uint64(len(p.Subs)))
	for _, s := range p.Subs {
		e.program(s)
	}
	for _, v := range []int64{p.ArenaSize, p.LiveBound, p.TempBytes, p.FusedBytes} {
		e.int(v)
	}
	e.strings(p.Plan)
}

// decoder panics on damaged input; UnmarshalBinary turns that into an
// error.
type decoder struct{ b []byte }

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		panic("truncated")
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		panic("truncated")
	}
	d.b = d.b[n:]
	return v
}

// count reads a list length, refusing one longer than the bytes left.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) || n > math.MaxInt32 {
		panic("list longer than its encoding")
	}
	return int(n)
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		panic("truncated")
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.count()
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

// list decodes a count and that many elements (nil for none, as the
// encoder reads nil and empty alike).
func list[T any](d *decoder, elem func() T) []T {
	n := d.count()
	if n == 0 {
		return nil
	}
	v := make([]T, n)
	for i := range v {
		v[i] = elem()
	}
	return v
}

func (d *decoder) ints() []int       { return list(d, func() int { return int(d.int()) }) }
func (d *decoder) int64s() []int64   { return list(d, d.int) }
func (d *decoder) strings() []string { return list(d, d.string) }
func (d *decoder) shapes() []hlo.Shape {
	return list(d, d.shape)
}

func (d *decoder) u32s() []uint32 {
	n := d.count()
	if 4*n > len(d.b) {
		panic("truncated")
	}
	v := make([]uint32, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(d.b[4*i:])
	}
	d.b = d.b[4*n:]
	return v
}

func (d *decoder) shape() hlo.Shape {
	s := hlo.Shape{Elem: hlo.ElementType(d.uint())}
	s.Dims = d.int64s()
	s.Dynamic = list(d, d.bool)
	if d.bool() {
		s.Layout = &hlo.Layout{MinorToMajor: d.int64s(), Extra: d.string()}
	}
	s.Tuple = list(d, d.shape)
	s.Buffer = d.bool()
	return s
}

func (d *decoder) program() *Program {
	p := &Program{Module: d.string()}
	for n := d.count(); n > 0; n-- {
		k := &kgen.Kernel{Name: d.string(), Words: d.u32s(), Bindings: int(d.int()), PushSize: int(d.int())}
		ls := d.u32s()
		if len(ls) != 3 {
			panic("local size")
		}
		copy(k.LocalSize[:], ls)
		k.Texel = list(d, func() kgen.TexelView { return kgen.TexelView{Binding: int(d.int()), Bytes: int(d.int())} })
		k.Addressed = d.ints()
		p.Kernels = append(p.Kernels, k)
	}
	for n := d.count(); n > 0; n-- {
		b := Buffer{Name: d.string(), Kind: BufferKind(d.uint()), Param: int(d.int()), Data: d.bytes()}
		b.Shape, b.Size, b.Offset, b.Donated, b.Alias = d.shape(), d.int(), d.int(), d.bool(), int(d.int())
		if len(b.Data) == 0 {
			b.Data = nil
		}
		p.Buffers = append(p.Buffers, b)
	}
	for n := d.count(); n > 0; n-- {
		s := Step{Kind: StepKind(d.uint()), Cond: int(d.int()), Body: int(d.int()), Branches: d.ints()}
		for m := d.count(); m > 0; m-- {
			s.In = append(s.In, d.ints())
		}
		s.Out, s.Pred, s.Kernel, s.Buffers, s.Push = d.ints(), int(d.int()), int(d.int()), d.ints(), d.u32s()
		if len(s.Push) == 0 {
			s.Push = nil
		}
		g := d.u32s()
		if len(g) != 3 {
			panic("groups")
		}
		copy(s.Groups[:], g)
		s.Writes, s.AfterWrites, s.Inst, s.Fused, s.InPlace = int(d.int()), d.bool(), d.string(), d.strings(), d.ints()
		s.Dispatches = int(d.int())
		if d.bool() {
			s.Counter = &Counter{Leaf: int(d.int())}
			s.Counter.Index, s.Counter.Elem = int(d.int()), hlo.ElementType(d.uint())
			s.Counter.Limit, s.Counter.Step, s.Counter.Dir = d.int(), d.int(), d.string()
		}
		p.Steps = append(p.Steps, s)
	}
	p.Params, p.ParamShapes, p.Outputs, p.OutputShapes = d.ints(), d.shapes(), d.ints(), d.shapes()
	p.ResultShape = d.shape()
	for n := d.count(); n > 0; n-- {
		p.Subs = append(p.Subs, d.program())
	}
	p.ArenaSize, p.LiveBound, p.TempBytes, p.FusedBytes = d.int(), d.int(), d.int(), d.int()
	p.Plan = d.strings()
	return p
}
