package mathlib

import "github.com/vkjit/vkjit/spirv"

// impl is the library at one width: fm for f32 (and f16 and bf16, which
// round afterwards), dm for f64. dm embeds fm for its width-generic
// arithmetic and overrides every function.
type impl interface {
	c(v float64) spirv.ID
	add(a, b spirv.ID) spirv.ID
	abs(a spirv.ID) spirv.ID
	lt(a, b spirv.ID) spirv.ID
	self(cond, a, b spirv.ID) spirv.ID
	div(a, b spirv.ID) spirv.ID
	sqrt(x spirv.ID) spirv.ID
	neg(a spirv.ID) spirv.ID
	exp(x spirv.ID) spirv.ID
	expNonPositive(x spirv.ID) spirv.ID
	expm1(x spirv.ID) spirv.ID
	log(x spirv.ID) spirv.ID
	log1p(x spirv.ID) spirv.ID
	tanh(x spirv.ID) spirv.ID
	sinCos(x spirv.ID, cos bool) spirv.ID
	tan(x spirv.ID) spirv.ID
	erf(x spirv.ID) spirv.ID
	cbrt(x spirv.ID) spirv.ID
	atan2(y, x spirv.ID) spirv.ID
	pow(x, y spirv.ID) spirv.ID
	fmod(x, y spirv.ID) (spirv.ID, error)
}

// Lib emits the library's functions at one width into a function body.
type Lib struct{ m impl }

// Driver is what the library must know of the driver's float arithmetic.
type Driver struct {
	// IEEEDivSqrt: the driver's f32 OpFDiv and sqrt are correctly
	// rounded (llvmpipe's); otherwise, on a device with Float64, div and
	// sqrt get IEEE's results through f64.
	IEEEDivSqrt, Float64 bool
	// Contracts: the driver may fuse a multiply into an add wherever
	// SPIR-V lets it (any driver may; llvmpipe is known not to). Every
	// float operation then carries NoContraction, so that a function
	// gives the sequence of roundings whose error docs/ACCURACY.md
	// measured, and the same bits in every kernel it is part of.
	Contracts bool
}

// F32 is the f32 library (f16 and bf16 compute in it and round), emitting
// into function fn of module b for driver d.
func F32(b *spirv.Builder, fn *spirv.Function, d Driver) Lib { return Lib{newF32(b, fn, d)} }

// F64 is the f64 library; a device needs shaderFloat64, not shaderInt64.
func F64(b *spirv.Builder, fn *spirv.Function, d Driver) Lib { return Lib{newF64(b, fn, d)} }

// Div is a/b, IEEE's rounded quotient (see fm.div).
func (l Lib) Div(a, b spirv.ID) spirv.ID { return l.m.div(a, b) }

// Sqrt is the square root of x > 0, finite or not, IEEE's rounded one
// (see fm.sqrt); callers settle zeros and negatives.
func (l Lib) Sqrt(x spirv.ID) spirv.ID { return l.m.sqrt(x) }

func (l Lib) Exp(x spirv.ID) spirv.ID   { return l.m.exp(x) }
func (l Lib) Expm1(x spirv.ID) spirv.ID { return l.m.expm1(x) }
func (l Lib) Log(x spirv.ID) spirv.ID   { return l.m.log(x) }
func (l Lib) Log1p(x spirv.ID) spirv.ID { return l.m.log1p(x) }
func (l Lib) Tanh(x spirv.ID) spirv.ID  { return l.m.tanh(x) }
func (l Lib) Sin(x spirv.ID) spirv.ID   { return l.m.sinCos(x, false) }
func (l Lib) Cos(x spirv.ID) spirv.ID   { return l.m.sinCos(x, true) }
func (l Lib) Tan(x spirv.ID) spirv.ID   { return l.m.tan(x) }
func (l Lib) Erf(x spirv.ID) spirv.ID   { return l.m.erf(x) }
func (l Lib) Cbrt(x spirv.ID) spirv.ID  { return l.m.cbrt(x) }

// ExpNonPositive is Exp for an x known to be at most 0 (a value minus
// its row's maximum), which skips the overflow handling.
func (l Lib) ExpNonPositive(x spirv.ID) spirv.ID { return l.m.expNonPositive(x) }

func (l Lib) Atan2(y, x spirv.ID) spirv.ID { return l.m.atan2(y, x) }
func (l Lib) Pow(x, y spirv.ID) spirv.ID   { return l.m.pow(x, y) }

// Fmod is XLA's remainder: exact, with the sign of x.
func (l Lib) Fmod(x, y spirv.ID) (spirv.ID, error) { return l.m.fmod(x, y) }

// Logistic is 1 / (1 + e^-x) computed from e = e^-|x|, which never
// overflows: 1 / (1 + e) for x >= 0 and e / (1 + e) below, so that far
// below 0 the result is e^x, subnormal where it is (1 / (1 + e^-x) gave
// 0 once e^-x overflowed, from x = -88.72 in f32).
func (l Lib) Logistic(x spirv.ID) spirv.ID {
	m := l.m
	e := m.expNonPositive(m.neg(m.abs(x)))
	d := m.add(m.c(1), e)
	return m.div(m.self(m.lt(x, m.c(0)), e, m.c(1)), d)
}
