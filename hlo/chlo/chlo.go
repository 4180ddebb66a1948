// Package chlo builds CHLO's special functions out of HLO's elementwise
// ops, as StableHLO's CHLO legalization expands them (the constants are
// Cephes', Giles' and Lanczos' where it uses theirs), so that a device
// runs them with the kernels it has: sinh and cosh through exp with
// log(1/2) folded in, the inverse trigonometric and hyperbolic functions
// through atan2, log1p and sqrt, erfc by its rational approximations,
// erf_inv by Giles' polynomials, lgamma and digamma by Lanczos'
// approximation with Euler's reflection, bessel_i1e by Chebyshev series,
// next_after on the bits and mulhi in the doubled width. Like XLA, floats
// narrower than f32 are computed in f32 and rounded once. The
// trigonometric and hyperbolic functions of complex numbers expand into
// HLO's complex ops (complex.go).
//
// Two readers need them: the StableHLO reader for CHLO's ops, and lower
// for the HLO opcodes of the same functions (sinh, cosh, asin, acos,
// asinh, acosh, atanh: XLA's HLO text has them too). One expansion
// serves both, so a function computes the same whichever text named it.
package chlo

import (
	"fmt"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// floats are the functions of a float (or, where complexFunctions has
// them, a complex number), by CHLO's names (chlo.sinh is "sinh").
var floats = map[string]func(e *expr, x *hlo.Instruction) *hlo.Instruction{
	"sinh": sinhExpr, "cosh": coshExpr, "asin": asinExpr, "acos": acosExpr, "atan": atanExpr,
	"asinh": asinhExpr, "acosh": acoshExpr, "atanh": atanhExpr, "erfc": erfcExpr,
	"erf_inv": erfInvExpr, "lgamma": lgammaExpr, "digamma": digammaExpr, "bessel_i1e": besselI1eExpr,
}

// pairs are the functions of two operands of one type, which check
// their type themselves.
var pairs = map[string]func(e *expr, x, y *hlo.Instruction) *hlo.Instruction{
	"next_after": nextAfterExpr,
	"mulhi":      mulhiExpr,
}

// Opcodes are HLO's opcodes whose meaning is one of the functions
// (hlo.CHLOFunctions), by its name, which is the opcode's; lower expands
// them.
var Opcodes = func() map[hlo.Opcode]string {
	m := map[hlo.Opcode]string{}
	for _, op := range hlo.CHLOFunctions {
		m[op] = op.String()
	}
	return m
}()

// Names are the functions Expand builds.
func Names() []string {
	var names []string
	for name := range floats {
		names = append(names, name)
	}
	for name := range pairs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// A TypeError is a function asked of an element type it is not defined
// for here (most of them of complex numbers).
type TypeError struct {
	Func string
	Type hlo.ElementType
}

func (e *TypeError) Error() string { return fmt.Sprintf("%s of %s", e.Func, e.Type) }

// Expand builds function name of args, each of b's shape, elementwise
// with b, and returns its value, or the first error of the builder: a
// *TypeError where the function does not take b's element type. Floats
// narrower than f32 are computed in f32 and the result rounded once
// (materializeWithUpcast in the legalization).
func Expand(b *formula.Builder, name string, args ...*hlo.Instruction) (*hlo.Instruction, error) {
	e, t := &expr{b}, b.Elem
	var r *hlo.Instruction
	if f := pairs[name]; f != nil {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes two operands, not %d", name, len(args))
		}
		if r = f(e, args[0], args[1]); r == nil {
			return nil, &TypeError{name, t}
		}
	} else if f := floats[name]; f != nil {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s takes one operand, not %d", name, len(args))
		}
		switch {
		case t.Kind() == hlo.KindComplex && complexFunctions[name] != nil:
			r = complexFunctions[name](e, args[0])
		case t.Kind() == hlo.KindComplex || !t.IsFloat():
			return nil, &TypeError{name, t}
		case t.Bits() < 32:
			wide := e.with(hlo.F32)
			r = e.Convert(f(wide, wide.Convert(args[0], hlo.F32)), t)
		default:
			r = f(e, args[0])
		}
	} else {
		return nil, fmt.Errorf("no function %q among CHLO's", name)
	}
	if err := b.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// expr is a formula builder with the helpers for complex values
// (complex.go).
type expr struct{ *formula.Builder }

// with is a builder over the same dimensions in element type t.
func (e *expr) with(t hlo.ElementType) *expr { return &expr{e.With(t)} }

// sinhExpr: (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2 for |x| < 1, where
// e^x - e^-x cancels, else e^(x + log(1/2)) - e^(-x + log(1/2)), which
// overflows only where sinh does. That rounds x + log(1/2): 24 ulp at
// x = 54.7 in f32, where e^(|x|/2) squared in halves is within 3; but
// XLA computes this form, and StableHLO's suite holds vkjit to XLA's
// values (sinh_float32_20_20: XLA's -3136.5972 at x = -8.744041 is 6 ulp
// from the true -3136.5986, and the check allows 0.001), so vkjit
// computes what XLA computes (docs/ACCURACY.md).
func sinhExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	ep, em := halves(e, x)
	return sinhFrom(e, x, ep, em)
}

// coshExpr: e^(x + log(1/2)) + e^(-x + log(1/2)), as XLA (see sinhExpr).
func coshExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	ep, em := halves(e, x)
	return e.Add(ep, em)
}

// halves is e^(x + log(1/2)) and e^(-x + log(1/2)), whose difference and
// sum are XLA's sinh and cosh.
func halves(e *expr, x *hlo.Instruction) (ep, em *hlo.Instruction) {
	lh := e.K(math.Log(0.5))
	return e.Exp(e.Add(x, lh)), e.Exp(e.Sub(lh, x))
}

// sinhFrom is sinh x from its halves: their difference, or below |x| = 1,
// where it cancels, (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2.
func sinhFrom(e *expr, x, ep, em *hlo.Instruction) *hlo.Instruction {
	m := e.Op(hlo.OpExpm1, x)
	small := e.Mul(e.K(0.5), e.Add(m, e.Div(m, e.Add(m, e.K(1)))))
	return e.Sel(e.Cmp(e.Abs(x), "LT", e.K(1)), small, e.Sub(ep, em))
}

// asinExpr: 2 atan2(x, 1 + sqrt(1 - x^2)), NaN beyond [-1, 1].
func asinExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	one := e.K(1)
	r := e.Sqrt(e.Mul(e.Sub(one, x), e.Add(one, x)))
	return e.Mul(e.K(2), e.Op(hlo.OpAtan2, x, e.Add(one, r)))
}

// acosExpr: 2 atan2(sqrt(1 - x^2), 1 + x), and pi at -1 (where that is
// atan2(0, 0)).
func acosExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	one := e.K(1)
	r := e.Sqrt(e.Mul(e.Sub(one, x), e.Add(one, x)))
	v := e.Mul(e.K(2), e.Op(hlo.OpAtan2, r, e.Add(one, x)))
	return e.Sel(e.Cmp(x, "EQ", e.K(-1)), e.K(math.Pi), v)
}

// atanExpr: atan2(x, 1).
func atanExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	return e.Op(hlo.OpAtan2, x, e.K(1))
}

// asinhExpr: sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), which keeps
// the small arguments' digits, and sign(x) (log|x| + log 2) where x^2
// would overflow; the sign's product keeps -0.
func asinhExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	a := e.Abs(x)
	a2 := e.Mul(a, a)
	mid := e.Log1p(e.Add(a, e.Div(a2, e.Add(e.K(1), e.Sqrt(e.Add(e.K(1), a2))))))
	large := e.Add(e.Log(a), e.K(math.Ln2))
	r := e.Sel(e.Cmp(a, "GE", e.K(math.Sqrt(e.MaxFloat()))), large, mid)
	return e.Mul(e.Op(hlo.OpSign, x), r)
}

// acoshExpr: log1p(y + sqrt(y (x + 1))) with y = x - 1 (exact near 1),
// log x + log 2 where the product would overflow; NaN below 1, as the
// legalization selects it below -1, where y (x + 1) is positive again.
func acoshExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	y := e.Sub(x, e.K(1))
	mid := e.Log1p(e.Add(y, e.Sqrt(e.Mul(y, e.Add(x, e.K(1))))))
	large := e.Add(e.Log(x), e.K(math.Ln2))
	r := e.Sel(e.Cmp(x, "GE", e.K(math.Sqrt(e.MaxFloat()))), large, mid)
	return e.Sel(e.Cmp(x, "LT", e.K(-1)), e.K(math.NaN()), r)
}

// atanhExpr: (log1p(x) - log1p(-x)) / 2: ±inf at ±1, NaN beyond.
func atanhExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	return e.Mul(e.K(0.5), e.Sub(e.Log1p(x), e.Log1p(e.Neg(x))))
}

// erfcExpr: 1 - erf(x) for |x| < 1; beyond, Cephes' rational
// approximations times exp(-x^2) (0 where that underflows), and
// 2 - erfc(-x) for negative x.
func erfcExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	a := e.Abs(x)
	z := e.Neg(e.Mul(x, x))
	ez := expMinusSquare(e, a)
	var small, far *hlo.Instruction
	maxLog := 88.72283905206835
	if e.Elem == hlo.F64 {
		maxLog = 7.09782712893383996843e2
		x2 := e.Mul(x, x)
		erf := e.Div(e.Mul(x, e.Poly(x2, erfT64)), e.Poly(x2, erfU64))
		small = e.Sub(e.K(1), erf)
		near := e.Div(e.Mul(ez, e.Poly(a, erfcP64)), e.Poly(a, erfcQ64))
		tail := e.Div(e.Mul(ez, e.Poly(a, erfcR64)), e.Poly(a, erfcS64))
		far = e.Sel(e.Cmp(a, "LT", e.K(8)), near, tail)
	} else {
		erf := e.Mul(x, e.Poly(e.Mul(x, x), erfT32))
		small = e.Sub(e.K(1), erf)
		r2 := e.Div(e.K(1), e.Mul(x, x))
		p := e.Sel(e.Cmp(a, "LT", e.K(2)), e.Poly(r2, erfcP32), e.Poly(r2, erfcR32))
		far = e.Mul(e.Mul(ez, e.Div(e.K(1), a)), p)
	}
	far = e.Sel(e.Cmp(z, "LT", e.K(-maxLog)), e.K(0), far)
	far = e.Sel(e.Cmp(x, "LT", e.K(0)), e.Sub(e.K(2), far), far)
	return e.Sel(e.Cmp(a, "LT", e.K(1)), small, far)
}

// expMinusSquare is e^(-a^2) for a >= 0 without the rounding of a^2
// (Cephes' expx2): a = m + f with m a multiple of 2^-k short enough that
// m^2 is exact, e^(-m^2) e^(-(2m + f) f). Rounding a^2 cost erfc 64 ulp
// at a = 8.9.
func expMinusSquare(e *expr, a *hlo.Instruction) *hlo.Instruction {
	scale := 64.0 // 10 bits of m below 16: m^2 exact in f32's 24
	if e.Elem == hlo.F64 {
		scale = 1 << 20 // 25 bits below 32: m^2 exact in f64's 53
	}
	m := e.Div(e.Floor(e.Add(e.Mul(a, e.K(scale)), e.K(0.5))), e.K(scale))
	f := e.Sub(a, m)
	return e.Mul(e.Exp(e.Neg(e.Mul(m, m))), e.Exp(e.Neg(e.Mul(e.Add(e.Add(m, m), f), f))))
}

// Cephes' erf and erfc coefficients (ndtr.c), highest degree first.
var (
	erfT64  = []float64{9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3, 7.00332514112805075473e3, 5.55923013010394962768e4}
	erfU64  = []float64{1, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3, 2.26290000613890934246e4, 4.92673942608635921086e4}
	erfcP64 = []float64{2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0, 4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2, 9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2}
	erfcQ64 = []float64{1, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2, 9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2}
	erfcR64 = []float64{5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0, 6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0}
	erfcS64 = []float64{1, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1, 1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0}
	erfT32  = []float64{7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3, -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1, 1.128379165726710e0}
	erfcP32 = []float64{2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1, -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1, 3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1}
	erfcR32 = []float64{-1.047766399936249e1, 1.297719955372516e1, -7.495518717768503e0, 2.921019019210786e0, -1.015265279202700e0, 4.218463358204948e-1, -2.820767439740514e-1, 5.641895067754075e-1}
)

// erfInvExpr: Giles' approximation ("Approximating the erfinv function",
// GPU Computing Gems): with w = -log(1 - x^2), x p(w) for polynomials
// chosen by the range of w (two in f32, three in f64); ±inf at ±1.
func erfInvExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	// w = -log((1 - x)(1 + x)): log1p(-x^2) would round x^2 first and
	// lose 1 - x^2's digits near ±1 (64898 ulp in f64 at 1 - 7e-8).
	w := e.Neg(e.Add(e.Log1p(x), e.Log1p(e.Neg(x))))
	var p *hlo.Instruction
	if e.Elem == hlo.F64 {
		lt625, lt16 := e.Cmp(w, "LT", e.K(6.25)), e.Cmp(w, "LT", e.K(16))
		sw := e.Sqrt(w)
		w = e.Sel(lt625, e.Sub(w, e.K(3.125)), e.Sub(sw, e.Sel(lt16, e.K(3.25), e.K(5))))
		// The three polynomials have 23, 19 and 17 terms: the higher
		// degrees apply only in their ranges.
		coef := func(i int) *hlo.Instruction {
			c := e.K(erfInvA64[i])
			if i < len(erfInvB64) {
				c = e.Sel(lt625, c, e.K(erfInvB64[i]))
			}
			if i < len(erfInvC64) {
				c = e.Sel(lt16, c, e.K(erfInvC64[i]))
			}
			return c
		}
		// Coefficients are stored lowest index = highest degree; the
		// shorter polynomials' last terms line up with the longest's.
		p = coef(0)
		for i := 1; i < len(erfInvC64); i++ {
			p = e.Add(coef(i), e.Mul(p, w))
		}
		for i := len(erfInvC64); i < len(erfInvB64); i++ {
			p = e.Sel(lt16, e.Add(coef(i), e.Mul(p, w)), p)
		}
		for i := len(erfInvB64); i < len(erfInvA64); i++ {
			p = e.Sel(lt625, e.Add(coef(i), e.Mul(p, w)), p)
		}
	} else {
		lt5 := e.Cmp(w, "LT", e.K(5))
		w = e.Sel(lt5, e.Sub(w, e.K(2.5)), e.Sub(e.Sqrt(w), e.K(3)))
		p = e.Sel(lt5, e.K(erfInvA32[0]), e.K(erfInvB32[0]))
		for i := 1; i < len(erfInvA32); i++ {
			p = e.Add(e.Sel(lt5, e.K(erfInvA32[i]), e.K(erfInvB32[i])), e.Mul(p, w))
		}
	}
	r := e.Mul(p, x)
	return e.Sel(e.Cmp(e.Abs(x), "EQ", e.K(1)), e.Mul(x, e.K(math.Inf(1))), r)
}

var (
	erfInvA32 = []float64{2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941}
	erfInvB32 = []float64{-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682}
	erfInvA64 = []float64{-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18, 1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17, 6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14, 2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11, 1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356}
	erfInvB64 = []float64{2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07, 1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06, 2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796, 0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066, -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635}
	erfInvC64 = []float64{-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09, -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08, 2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07, -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05, 7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221}
)

// Lanczos' approximation of the gamma function with g = 7 and 9 terms
// ("A Precision Approximation of the Gamma Function", SIAM J. Numer.
// Anal. B 1, 1964), the choice least sensitive to an inaccurate log.
const lanczosG = 7

var (
	lanczosBase  = 0.99999999999980993227684700473478
	lanczosCoeff = []float64{676.520368121885098567009190444019, -1259.13921672240287047156078755283, 771.3234287776530788486528258894, -176.61502916214059906584551354, 12.507343278686904814458936853, -0.13857109526572011689554707, 9.984369578019570859563e-6, 1.50563273514931155834e-7}
)

// lanczos returns, for z (x - 1, or -x where x is reflected), the sum
// a(z) = base + sum c_k / (z + k), its derivative a'(z) and
// log(t) for t = z + g + 1/2 computed as log(g + 1/2) + log1p(z / (g + 1/2)).
func lanczos(e *expr, z *hlo.Instruction) (a, da, t, logT *hlo.Instruction) {
	a, da = e.K(lanczosBase), e.K(0)
	for i, c := range lanczosCoeff {
		zk := e.Add(z, e.K(float64(i+1)))
		a = e.Add(a, e.Div(e.K(c), zk))
		da = e.Sub(da, e.Div(e.K(c), e.Mul(zk, zk)))
	}
	gh := e.K(lanczosG + 0.5)
	t = e.Add(gh, z)
	logT = e.Add(e.K(math.Log(lanczosG+0.5)), e.Log1p(e.Div(z, gh)))
	return a, da, t, logT
}

// reflect reports x < 1/2 (Euler's reflection applies) and z: -x there,
// x - 1 elsewhere.
func reflect(e *expr, x *hlo.Instruction) (need, z *hlo.Instruction) {
	need = e.Cmp(x, "LT", e.K(0.5))
	return need, e.Sel(need, e.Neg(x), e.Sub(x, e.K(1)))
}

// lgammaExpr: lgamma(z + 1) = log(2 pi) / 2 + (z + 1/2 - t / log t) log t
// + log a(z) (the product so arranged that it does not overflow), and
// for x < 1/2, log(pi) - log|sin(pi frac|x|)| - lgamma(1 - x), with the
// fraction folded below 1/2 for precision; +inf at ±inf.
func lgammaExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	need, z := reflect(e, x)
	a, _, t, logT := lanczos(e, z)
	r := e.Mul(e.Sub(e.Add(z, e.K(0.5)), e.Div(t, logT)), logT)
	lg := e.Add(e.Add(e.K((math.Ln2+math.Log(math.Pi))/2), r), e.Log(a))
	ax := e.Abs(x)
	frac := e.Sub(ax, e.Floor(ax))
	frac = e.Sel(e.Cmp(e.K(0.5), "LT", frac), e.Sub(e.K(1), frac), frac)
	den := e.Log(e.Op(hlo.OpSin, e.Mul(e.K(math.Pi), frac)))
	refl := e.Sub(e.Sub(e.K(math.Log(math.Pi)), den), lg)
	// Where den is infinite (x an integer), it decides: +inf, not inf - inf.
	refl = e.Sel(e.Op(hlo.OpIsFinite, den), refl, e.Neg(den))
	lg = e.Sel(need, refl, lg)
	isInf := e.Cmp(ax, "EQ", e.K(math.Inf(1)))
	return e.Sel(isInf, e.K(math.Inf(1)), lg)
}

// digammaExpr: digamma(z + 1) = log t + a'(z)/a(z) - g/t, and for
// x < 1/2, digamma(1 - x) - pi cos(pi x)/sin(pi x) with x shifted into
// [-1/2, 1/2] first; NaN at the negative integers, -inf at 0.
func digammaExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	need, z := reflect(e, x)
	a, da, t, logT := lanczos(e, z)
	dg := e.Sub(e.Add(logT, e.Div(da, a)), e.Div(e.K(lanczosG), t))
	rx := e.Add(x, e.Abs(e.Floor(e.Add(x, e.K(0.5)))))
	px := e.Mul(e.K(math.Pi), rx)
	refl := e.Sub(dg, e.Div(e.Mul(e.K(math.Pi), e.Op(hlo.OpCos, px)), e.Op(hlo.OpSin, px)))
	dg = e.Sel(need, refl, dg)
	zero := e.K(0)
	negInt := e.Op(hlo.OpAnd, e.Cmp(x, "LT", zero), e.Cmp(x, "EQ", e.Floor(x)))
	dg = e.Sel(negInt, e.K(math.NaN()), dg)
	return e.Sel(e.Cmp(x, "EQ", zero), e.K(math.Inf(-1)), dg)
}

// besselI1eExpr: the exponentially scaled modified Bessel function of
// order one, by Cephes' Chebyshev series (i1.c): |x| times the series at
// |x|/2 - 2 up to 8, the series at 32/|x| - 2 over sqrt|x| beyond, with
// x's sign.
func besselI1eExpr(e *expr, x *hlo.Instruction) *hlo.Instruction {
	a, b := besselI1eA32, besselI1eB32
	if e.Elem == hlo.F64 {
		a, b = besselI1eA64, besselI1eB64
	}
	z := e.Abs(x)
	near := e.Mul(z, chebyshev(e, e.Sub(e.Mul(e.K(0.5), z), e.K(2)), a))
	far := e.Div(chebyshev(e, e.Sub(e.Div(e.K(32), z), e.K(2)), b), e.Sqrt(z))
	return e.Mul(e.Op(hlo.OpSign, x), e.Sel(e.Cmp(z, "LE", e.K(8)), near, far))
}

// chebyshev evaluates a Chebyshev series (Cephes' chbevl: coefficients
// highest order first, the constant term halved) at x.
func chebyshev(e *expr, x *hlo.Instruction, cs []float64) *hlo.Instruction {
	b0, b1, b2 := e.K(0), e.K(0), e.K(0)
	for _, c := range cs {
		b2, b1 = b1, b0
		b0 = e.Add(e.Sub(e.Mul(x, b1), b2), e.K(c))
	}
	return e.Mul(e.K(0.5), e.Sub(b0, b2))
}

var (
	besselI1eA32 = []float64{9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7, -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5, 4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4, -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2, 2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1, -1.76416518357834055153e-1, 2.52587186443633654823e-1}
	besselI1eB32 = []float64{-3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7, -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3, 7.78576235018280120474e-1}
	besselI1eA64 = append([]float64{2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16, -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14, 3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11, -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9}, besselI1eA32...)
	besselI1eB64 = append([]float64{7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17, -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16, -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14, 4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13, -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11, 3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10}, besselI1eB32...)
)

// nextAfterExpr steps x's bits one toward y: y where they are equal
// (zeros of either sign included), the smallest subnormal of y's sign
// from a zero, NaN if either is.
func nextAfterExpr(e *expr, x, y *hlo.Instruction) *hlo.Instruction {
	t := e.Elem
	if !t.IsFloat() || t.Bits() < 16 {
		return nil
	}
	it := map[int]hlo.ElementType{16: hlo.S16, 32: hlo.S32, 64: hlo.S64}[t.Bits()]
	ie := e.with(it)
	asInt := func(v *hlo.Instruction) *hlo.Instruction {
		return e.Make(hlo.OpBitcastConvert, ie.Shape(), v)
	}
	xi, yi := asInt(x), asInt(y)
	sign := uint64(1) << (t.Bits() - 1)
	xAbs, yAbs := ie.Op(hlo.OpAnd, xi, ie.Bits(sign-1)), ie.Op(hlo.OpAnd, yi, ie.Bits(sign-1))
	xSign, ySign := ie.Op(hlo.OpAnd, xi, ie.Bits(sign)), ie.Op(hlo.OpAnd, yi, ie.Bits(sign))
	zero, one := ie.Bits(0), ie.Bits(1)
	smaller := e.Op(hlo.OpOr, ie.Cmp(xAbs, "GT", yAbs), ie.Cmp(xSign, "NE", ySign))
	r := ie.Add(xi, ie.Sel(smaller, ie.Bits(^uint64(0)), one))
	fromZero := ie.Sel(ie.Cmp(yAbs, "EQ", zero), yi, ie.Op(hlo.OpOr, ySign, one))
	r = ie.Sel(ie.Cmp(xAbs, "EQ", zero), fromZero, r)
	r = ie.Sel(e.Cmp(x, "EQ", y), yi, r)
	nan := asInt(e.K(math.NaN()))
	r = ie.Sel(e.Op(hlo.OpOr, e.Cmp(x, "NE", x), e.Cmp(y, "NE", y)), nan, r)
	return e.Make(hlo.OpBitcastConvert, e.Shape(), r)
}

// mulhiExpr is the high half of the integers' full product: through the
// doubled width for 8 to 32 bits; for 64, from the 32-bit halves'
// products, the signed result corrected from the unsigned one.
func mulhiExpr(e *expr, x, y *hlo.Instruction) *hlo.Instruction {
	t := e.Elem
	if !t.IsInteger() {
		return nil
	}
	signed := t.Kind() == hlo.KindSigned
	w := t.Bits()
	if w < 64 {
		wide := map[bool]map[int]hlo.ElementType{true: {8: hlo.S16, 16: hlo.S32, 32: hlo.S64}, false: {8: hlo.U16, 16: hlo.U32, 32: hlo.U64}}[signed][w]
		we := e.with(wide)
		p := we.Mul(e.Convert(x, wide), e.Convert(y, wide))
		shift := hlo.OpShiftRightLogical
		if signed {
			shift = hlo.OpShiftRightArithmetic
		}
		return we.Convert(we.Op(shift, p, we.Bits(uint64(w))), t)
	}
	ue := e.with(hlo.U64)
	a, b := x, y
	if signed {
		a, b = e.Convert(a, hlo.U64), e.Convert(b, hlo.U64)
	}
	lo := func(v *hlo.Instruction) *hlo.Instruction { return ue.Op(hlo.OpAnd, v, ue.Bits(0xffffffff)) }
	hi := func(v *hlo.Instruction) *hlo.Instruction { return ue.Op(hlo.OpShiftRightLogical, v, ue.Bits(32)) }
	al, ah, bl, bh := lo(a), hi(a), lo(b), hi(b)
	ll, lh, hl, hh := ue.Mul(al, bl), ue.Mul(al, bh), ue.Mul(ah, bl), ue.Mul(ah, bh)
	mid := ue.Add(ue.Add(hi(ll), lo(lh)), lo(hl))
	r := ue.Add(ue.Add(ue.Add(hh, hi(lh)), hi(hl)), hi(mid))
	if !signed {
		return r
	}
	// The signed product's high half: subtract b where a < 0 and a where
	// b < 0 (mod 2^64).
	zero := e.Bits(0)
	r = ue.Sub(r, ue.Sel(e.Cmp(x, "LT", zero), b, ue.Bits(0)))
	r = ue.Sub(r, ue.Sel(e.Cmp(y, "LT", zero), a, ue.Bits(0)))
	return ue.Convert(r, t)
}
