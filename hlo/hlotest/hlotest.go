// Package hlotest generates HLO modules and inputs for tests: every
// elementwise op with every element type it accepts, and random inputs
// rich in edge cases (NaN, infinities, signed zeros, integer extremes).
// The compiler, runtime and CLI tests share it so that they test the
// same cases.
package hlotest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Case is one generated module.
type Case struct {
	Name string
	Op   hlo.Opcode
	Type hlo.ElementType // the first operand's element type
	Text string
	// Transcendental marks ops whose device results are compared with a
	// tolerance rather than exactly.
	Transcendental bool
}

var (
	floats   = []hlo.ElementType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16}
	ints     = []hlo.ElementType{hlo.S32, hlo.U32, hlo.S64, hlo.U64, hlo.S8, hlo.U8, hlo.S16, hlo.U16}
	numeric  = append(append([]hlo.ElementType{}, ints...), floats...)
	signed   = append([]hlo.ElementType{hlo.S32, hlo.S64, hlo.S8, hlo.S16}, floats...)
	logical  = append([]hlo.ElementType{hlo.PRED}, ints...)
	allTypes = append([]hlo.ElementType{hlo.PRED}, numeric...)
)

// transcendental ops are computed by the device's math library.
var transcendental = map[hlo.Opcode]bool{
	hlo.OpExp: true, hlo.OpExpm1: true, hlo.OpLog: true, hlo.OpLog1p: true, hlo.OpTanh: true,
	hlo.OpLogistic: true, hlo.OpSin: true, hlo.OpCos: true, hlo.OpTan: true, hlo.OpAtan2: true,
	hlo.OpPower: true, hlo.OpErf: true, hlo.OpCbrt: true, hlo.OpRsqrt: true, hlo.OpSqrt: false,
}

func init() {
	for _, op := range hlo.CHLOFunctions {
		transcendental[op] = true
	}
}

// typesOf lists the element types op accepts, as XLA defines it.
func typesOf(op hlo.Opcode) []hlo.ElementType {
	if slices.Contains(hlo.CHLOFunctions, op) {
		return floats
	}
	switch op {
	case hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestAfz, hlo.OpRoundNearestEven, hlo.OpExp, hlo.OpExpm1,
		hlo.OpLog, hlo.OpLog1p, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpCbrt, hlo.OpTanh, hlo.OpLogistic,
		hlo.OpSin, hlo.OpCos, hlo.OpTan, hlo.OpErf, hlo.OpIsFinite, hlo.OpAtan2:
		return floats
	case hlo.OpAbs, hlo.OpSign: // XLA: signed types only
		return signed
	case hlo.OpNegate, hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide,
		hlo.OpRemainder, hlo.OpMaximum, hlo.OpMinimum, hlo.OpPower, hlo.OpClamp:
		return numeric
	case hlo.OpPopcnt, hlo.OpClz, hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		return ints
	case hlo.OpNot, hlo.OpAnd, hlo.OpOr, hlo.OpXor:
		return logical
	case hlo.OpCopy, hlo.OpCompare, hlo.OpSelect, hlo.OpConvert:
		return allTypes
	}
	return nil
}

// ElementwiseOps are the elementwise ops the project targets (complex,
// bitcast-convert and reduce-precision come with their own issue).
var ElementwiseOps = slices.Concat([]hlo.Opcode{
	hlo.OpAbs, hlo.OpCbrt, hlo.OpCeil, hlo.OpClz, hlo.OpConvert, hlo.OpCopy, hlo.OpCos, hlo.OpErf,
	hlo.OpExp, hlo.OpExpm1, hlo.OpFloor, hlo.OpIsFinite, hlo.OpLog, hlo.OpLog1p, hlo.OpLogistic,
	hlo.OpNegate, hlo.OpNot, hlo.OpPopcnt, hlo.OpRoundNearestAfz, hlo.OpRoundNearestEven, hlo.OpRsqrt,
	hlo.OpSign, hlo.OpSin, hlo.OpSqrt, hlo.OpTan, hlo.OpTanh,
}, hlo.CHLOFunctions, []hlo.Opcode{
	hlo.OpAdd, hlo.OpAnd, hlo.OpAtan2, hlo.OpCompare, hlo.OpDivide, hlo.OpMaximum, hlo.OpMinimum,
	hlo.OpMultiply, hlo.OpOr, hlo.OpPower, hlo.OpRemainder, hlo.OpShiftLeft, hlo.OpShiftRightArithmetic,
	hlo.OpShiftRightLogical, hlo.OpSubtract, hlo.OpXor,
	hlo.OpClamp, hlo.OpSelect,
})

// ElementwiseCases returns one module per op, element type and (for
// compare) direction, over arrays of n elements.
func ElementwiseCases(n int64) []Case {
	var out []Case
	for _, op := range ElementwiseOps {
		for _, t := range typesOf(op) {
			switch op {
			case hlo.OpCompare:
				for _, dir := range []string{"EQ", "NE", "LT", "LE", "GT", "GE"} {
					out = append(out, mk(op, t, hlo.PRED, n, ", direction="+dir, dir))
				}
			case hlo.OpConvert:
				for _, to := range allTypes {
					out = append(out, mk(op, t, to, n, "", to.String()))
				}
			default:
				rt := t
				if op == hlo.OpIsFinite {
					rt = hlo.PRED
				}
				out = append(out, mk(op, t, rt, n, "", ""))
			}
		}
	}
	return out
}

func mk(op hlo.Opcode, t, rt hlo.ElementType, n int64, attrs, suffix string) Case {
	arity := op.Arity()
	var b strings.Builder
	name := fmt.Sprintf("%s_%s", op, t)
	if suffix != "" {
		name += "_" + suffix
	}
	fmt.Fprintf(&b, "HloModule %s\n\nENTRY main {\n", strings.ReplaceAll(name, "-", "_"))
	var params []string
	for i := 0; i < arity; i++ {
		pt := t
		if op == hlo.OpSelect && i == 0 {
			pt = hlo.PRED
		}
		fmt.Fprintf(&b, "  p%d = %s[%d]{0} parameter(%d)\n", i, pt, n, i)
		params = append(params, fmt.Sprintf("p%d", i))
	}
	fmt.Fprintf(&b, "  ROOT r = %s[%d]{0} %s(%s)%s\n}\n", rt, n, op, strings.Join(params, ", "), attrs)
	return Case{Name: name, Op: op, Type: t, Text: b.String(), Transcendental: transcendental[op]}
}

// Inputs makes random arguments for the entry parameters of m: the array
// leaves of every parameter, depth-first. Roughly one element in four is
// an edge case of its type.
func Inputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 0x766b6a6974))
	var out []*hlo.Literal
	for _, p := range m.Entry.Params {
		for _, leaf := range p.Shape.Leaves() {
			out = append(out, Random(leaf, rng))
		}
	}
	return out
}

// Random fills an array shape with random values and edge cases.
func Random(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	n := s.NumElements()
	t := s.Elem
	data := make([]byte, 0, s.ByteSize())
	for i := int64(0); i < n; i++ {
		edge := rng.IntN(4) == 0
		switch t.Kind() {
		case hlo.KindBool:
			data = append(data, byte(rng.IntN(2)))
		case hlo.KindFloat:
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2))
			if edge {
				specials := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2.5, -2.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e30, -1e30, 3e9, -3e9, 1e-30}
				v = specials[rng.IntN(len(specials))]
			}
			bits := hlo.EncodeFloat(t, v)
			for j := 0; j < t.Bytes(); j++ {
				data = append(data, byte(bits>>(8*j)))
			}
		default:
			bits := uint64(rng.IntN(201)) - 100 // small values, negative too
			if rng.IntN(3) == 0 {
				bits = rng.Uint64()
			}
			if edge {
				w := uint(t.Bits())
				specials := []uint64{0, 1, ^uint64(0), 1 << (w - 1), 1<<(w-1) - 1, uint64(w), uint64(w) + 1, 2}
				bits = specials[rng.IntN(len(specials))]
			}
			for j := 0; j < t.Bytes(); j++ {
				data = append(data, byte(bits>>(8*j)))
			}
		}
	}
	return &hlo.Literal{Shape: hlo.ArrayShape(t, s.Dims...), Data: data}
}

// ULPs counts the representable values of float type t between want and
// got (both already of that precision). NaNs match each other; values
// both below the smallest normal count as equal, since devices may flush
// denormals to zero.
func ULPs(t hlo.ElementType, want, got float64) int64 {
	if math.IsNaN(want) || math.IsNaN(got) {
		if math.IsNaN(want) && math.IsNaN(got) {
			return 0
		}
		return math.MaxInt64
	}
	minNormal := map[hlo.ElementType]float64{hlo.F64: 0x1p-1022, hlo.F32: 0x1p-126, hlo.F16: 0x1p-14, hlo.BF16: 0x1p-126}[t]
	if math.Abs(want) < minNormal && math.Abs(got) < minNormal {
		return 0
	}
	// Reinterpret the bits as sign-magnitude integers and map them to a
	// line on which adjacent floats differ by one.
	bits := uint(t.Bits())
	ord := func(f float64) int64 {
		b := int64(hlo.EncodeFloat(t, f))
		if b&(1<<(bits-1)) != 0 {
			return -(b &^ (1 << (bits - 1)))
		}
		return b
	}
	if t == hlo.F64 {
		ord = func(f float64) int64 {
			b := int64(math.Float64bits(f))
			if b < 0 {
				b = math.MinInt64 - b
			}
			return b
		}
	}
	d := ord(want) - ord(got)
	if d < 0 {
		d = -d
	}
	return d
}

// typedCase builds a module of one op over element type t from the
// computations it calls and the entry body, where `T[` stands for t's
// shapes. The case is named prefix+name+"_"+t.
func typedCase(prefix string, op hlo.Opcode, t hlo.ElementType, name, comps, body string) Case {
	ty := t.String()
	caseName := prefix + name + "_" + ty
	text := fmt.Sprintf("HloModule %s\n\n%s\nENTRY main {\n%s\n}\n", strings.ReplaceAll(caseName, "-", "_"), comps, body)
	return Case{Name: caseName, Op: op, Type: t, Text: strings.ReplaceAll(text, "T[", ty+"[")}
}

// binaryComp is the computation `name(a, b) = op(a, b)` over scalars of t.
func binaryComp(name, op string, t hlo.ElementType) string {
	return fmt.Sprintf("%s {\n  a = T[] parameter(0)\n  b = T[] parameter(1)\n  ROOT r = T[] %s(a, b)\n}\n", name, op)
}

// DataMovementCases are modules of one data-movement op each (broadcast,
// transpose, reshape, slice, reverse, pad, concatenate, iota,
// dynamic-slice, dynamic-update-slice) over element type t, with odd
// sizes, sizes 0 and 1, and out-of-range start indices.
func DataMovementCases(t hlo.ElementType) []Case {
	mkc := func(name, params, body string) Case {
		return typedCase("", hlo.OpInvalid, t, name, "", params+"\n"+body)
	}
	p := func(i int, shape string) string { return fmt.Sprintf("  p%d = %s parameter(%d)", i, shape, i) }
	return []Case{
		mkc("broadcast", p(0, "T[3]"), "  ROOT r = T[2,3,5] broadcast(p0), dimensions={1}"),
		mkc("broadcast-scalar", p(0, "T[]"), "  ROOT r = T[7] broadcast(p0), dimensions={}"),
		mkc("broadcast-size1", p(0, "T[1,5]"), "  ROOT r = T[4,5] broadcast(p0), dimensions={0,1}"),
		mkc("transpose", p(0, "T[2,3,5]"), "  ROOT r = T[5,2,3] transpose(p0), dimensions={2,0,1}"),
		mkc("reshape", p(0, "T[6,5]"), "  ROOT r = T[3,10] reshape(p0)"),
		mkc("slice", p(0, "T[7,9]"), "  ROOT r = T[3,3] slice(p0), slice={[1:7:2], [2:9:3]}"),
		mkc("slice-empty", p(0, "T[4]"), "  ROOT r = T[0] slice(p0), slice={[2:2]}"),
		mkc("reverse", p(0, "T[3,4]"), "  ROOT r = T[3,4] reverse(p0), dimensions={1}"),
		mkc("pad", p(0, "T[3,2]")+"\n"+p(1, "T[]"), "  ROOT r = T[8,3] pad(p0, p1), padding=1_2_1x-1_2"),
		mkc("concatenate", p(0, "T[2,3]")+"\n"+p(1, "T[2,1]")+"\n"+p(2, "T[2,4]"), "  ROOT r = T[2,8] concatenate(p0, p1, p2), dimensions={1}"),
		mkc("iota", "", "  ROOT r = T[3,5] iota(), iota_dimension=1"),
		mkc("dynamic-slice", p(0, "T[5,6]")+"\n  i = s32[] constant(4)\n  j = s32[] constant(-2)", "  ROOT r = T[2,3] dynamic-slice(p0, i, j), dynamic_slice_sizes={2,3}"),
		mkc("dynamic-slice-u64", p(0, "T[9]")+"\n  i = u64[] constant(18446744073709551615)", "  ROOT r = T[4] dynamic-slice(p0, i), dynamic_slice_sizes={4}"),
		mkc("dynamic-update-slice", p(0, "T[5,6]")+"\n"+p(1, "T[2,3]")+"\n  i = s32[] constant(1)\n  j = s32[] constant(9)", "  ROOT r = T[5,6] dynamic-update-slice(p0, p1, i, j)"),
	}
}

// ReduceCases are reduce modules over element type t: one or several
// dimensions, all of them, an empty reduced dimension, max, and a
// variadic argmax with ties to the lower index.
func ReduceCases(t hlo.ElementType) []Case {
	comp := func(name, op string) string { return binaryComp(name, op, t) }
	argmax := `argmax {
  av = T[] parameter(0)
  ai = s32[] parameter(1)
  bv = T[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = T[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (T[], s32[]) tuple(v, i)
}
`
	mkc := func(name, comps, body string) Case { return typedCase("reduce-", hlo.OpReduce, t, name, comps, body) }
	return []Case{
		mkc("rows", comp("add", "add"), "  p0 = T[5,7] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[5] reduce(p0, z), dimensions={1}, to_apply=add"),
		mkc("outer", comp("add", "add"), "  p0 = T[3,4,5] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[4] reduce(p0, z), dimensions={0,2}, to_apply=add"),
		mkc("all", comp("mx", "maximum"), "  p0 = T[9,13] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[] reduce(p0, z), dimensions={0,1}, to_apply=mx"),
		mkc("empty", comp("add", "add"), "  p0 = T[4,0] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[4] reduce(p0, z), dimensions={1}, to_apply=add"),
		mkc("argmax", argmax, "  p0 = T[6,10] parameter(0)\n  idx = s32[6,10] iota(), iota_dimension=1\n  init = T[] parameter(1)\n  zi = s32[] constant(0)\n  ROOT r = (T[6], s32[6]) reduce(p0, idx, init, zi), dimensions={1}, to_apply=argmax"),
	}
}

// RowReduceCases are reduces over long innermost dimensions, the shapes
// that take a subgroup per output (lower/kgen/subgroup.go): a row length that
// is not a multiple of the subgroup size, a power of two, two reduced
// dimensions, max, and a variadic argmax with ties to the lower index.
func RowReduceCases(t hlo.ElementType) []Case {
	comp := func(name, op string) string { return binaryComp(name, op, t) }
	mkc := func(name, comps, body string) Case {
		return typedCase("row-reduce-", hlo.OpReduce, t, name, comps, body)
	}
	argmax := ReduceCases(t)[4]
	return []Case{
		mkc("rows100", comp("add", "add"), "  p0 = T[5,100] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[5] reduce(p0, z), dimensions={1}, to_apply=add"),
		mkc("rows256", comp("add", "add"), "  p0 = T[3,256] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[3] reduce(p0, z), dimensions={1}, to_apply=add"),
		mkc("inner2", comp("add", "add"), "  p0 = T[3,5,40] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[3] reduce(p0, z), dimensions={1,2}, to_apply=add"),
		mkc("max", comp("mx", "maximum"), "  p0 = T[7,333] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[7] reduce(p0, z), dimensions={1}, to_apply=mx"),
		{Name: strings.Replace(argmax.Name, "reduce-", "row-reduce-", 1) + "70", Op: hlo.OpReduce, Type: t,
			Text: strings.ReplaceAll(strings.ReplaceAll(argmax.Text, "[6,10]", "[6,70]"), "reduce-argmax", "row-reduce-argmax")},
	}
}

// ColumnReduceCases are reduces that keep the innermost dimension, with
// outputs long enough for vector kernels (8 outputs an invocation, whose
// columns fold together: lower/kgen/reduce.go, columnLanes): one and two
// reduced leading dimensions, a middle one, max, a variadic argmax with
// ties to the lower index, and a mean (the sum inline in a divide).
func ColumnReduceCases(t hlo.ElementType) []Case {
	comp := func(name, op string) string { return binaryComp(name, op, t) }
	mkc := func(name, comps, body string) Case {
		return typedCase("column-reduce-", hlo.OpReduce, t, name, comps, body)
	}
	argmax := ReduceCases(t)[4]
	argmax.Text = strings.NewReplacer("[6,10]", "[9,1024]", "[6]", "[1024]", "iota_dimension=1", "iota_dimension=0",
		"dimensions={1}", "dimensions={0}", "reduce-argmax", "column-reduce-argmax").Replace(argmax.Text)
	argmax.Name = strings.Replace(argmax.Name, "reduce-", "column-reduce-", 1)
	cases := []Case{
		mkc("cols", comp("add", "add"), "  p0 = T[37,1024] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[1024] reduce(p0, z), dimensions={0}, to_apply=add"),
		mkc("outer2", comp("add", "add"), "  p0 = T[3,5,1032] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[1032] reduce(p0, z), dimensions={0,1}, to_apply=add"),
		mkc("middle", comp("add", "add"), "  p0 = T[4,9,512] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[4,512] reduce(p0, z), dimensions={1}, to_apply=add"),
		mkc("max", comp("mx", "maximum"), "  p0 = T[21,2048] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[2048] reduce(p0, z), dimensions={0}, to_apply=mx"),
		argmax,
	}
	if t != hlo.PRED {
		// A column's max taken from each of its elements, then summed (a
		// softmax over a leading axis): the max is the sum's prologue,
		// held in a register for its lane.
		cases = append(cases, mkc("centered", comp("add", "add")+comp("mx", "maximum"), "  p0 = T[2,16,32] parameter(0)\n  z = T[] parameter(1)\n  m = T[2,32] reduce(p0, z), dimensions={1}, to_apply=mx\n  mb = T[2,16,32] broadcast(m), dimensions={0,2}\n  d = T[2,16,32] subtract(p0, mb)\n  ROOT r = T[2,32] reduce(d, z), dimensions={1}, to_apply=add"))
	}
	if t.IsFloat() {
		cases = append(cases, mkc("mean", comp("add", "add"), "  p0 = T[19,1024] parameter(0)\n  z = T[] parameter(1)\n  s = T[1024] reduce(p0, z), dimensions={0}, to_apply=add\n  n = T[] constant(19)\n  bn = T[1024] broadcast(n), dimensions={}\n  ROOT r = T[1024] divide(s, bn)"))
	}
	return cases
}

// DotCases are dot modules: a matrix product, batch dimensions, a
// contraction over a leading dimension, two contracting dimensions, a
// vector dot, and mixed operand and result types.
func DotCases() []Case {
	mkc := func(name, params, body string) Case {
		text := fmt.Sprintf("HloModule dot_%s\n\nENTRY main {\n%s\n%s\n}\n", name, params, body)
		return Case{Name: "dot_" + name, Op: hlo.OpDot, Text: text}
	}
	return []Case{
		mkc("matmul_f32", "  a = f32[5,7] parameter(0)\n  b = f32[7,3] parameter(1)", "  ROOT r = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mkc("batch_s32", "  a = s32[2,3,4] parameter(0)\n  b = s32[2,4,5] parameter(1)", "  ROOT r = s32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"),
		mkc("leading_f64", "  a = f64[6,2] parameter(0)\n  b = f64[6,3] parameter(1)", "  ROOT r = f64[2,3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		mkc("two_contract_f32", "  a = f32[2,3,4] parameter(0)\n  b = f32[4,3,5] parameter(1)", "  ROOT r = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}"),
		mkc("vector_u32", "  a = u32[9] parameter(0)\n  b = u32[9] parameter(1)", "  ROOT r = u32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		mkc("s8_to_s32", "  a = s8[4,6] parameter(0)\n  b = s8[6,2] parameter(1)", "  ROOT r = s32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mkc("bf16_to_f32", "  a = bf16[3,8] parameter(0)\n  b = bf16[8,4] parameter(1)", "  ROOT r = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mkc("bf16", "  a = bf16[3,8] parameter(0)\n  b = bf16[8,4] parameter(1)", "  ROOT r = bf16[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mkc("f16", "  a = f16[2,5] parameter(0)\n  b = f16[5,2] parameter(1)", "  ROOT r = f16[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mkc("empty_contract_f32", "  a = f32[3,0] parameter(0)\n  b = f32[0,2] parameter(1)", "  ROOT r = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
	}
}

// SmallIntInputs makes arguments whose values are small integers (floats
// too, integer-valued in [-4, 4]; unsigned in [0, 8]), so that sums of
// products are exact in any accumulation order and precision: what
// compares a device dot or convolution with the evaluator bit for bit.
func SmallIntInputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 0x736d616c6c))
	var out []*hlo.Literal
	for _, p := range m.Entry.Params {
		for _, s := range p.Shape.Leaves() {
			n := s.NumElements()
			data := make([]byte, 0, s.ByteSize())
			for i := int64(0); i < n; i++ {
				v := int64(rng.IntN(9)) - 4
				var bits uint64
				switch s.Elem.Kind() {
				case hlo.KindFloat:
					bits = hlo.EncodeFloat(s.Elem, float64(v))
				case hlo.KindUnsigned:
					bits = uint64(v + 4)
				case hlo.KindBool:
					bits = uint64(v & 1)
				default:
					bits = uint64(v)
				}
				for j := 0; j < s.Elem.Bytes(); j++ {
					data = append(data, byte(bits>>(8*j)))
				}
			}
			out = append(out, &hlo.Literal{Shape: s, Data: data})
		}
	}
	return out
}

// UniformInputs makes well-conditioned arguments, as XLA's
// run_hlo_module does: floats (and both parts of complex numbers) uniform
// in [-1, 1), signed integers in [-5, 5), unsigned in [0, 10), pred
// either. vkjit run --random-args uses
// them; the differential tests use Inputs, which seeks out edge cases.
func UniformInputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	var leaves []hlo.Shape
	for _, p := range m.Entry.Params {
		leaves = append(leaves, p.Shape.Leaves()...)
	}
	return UniformLeaves(leaves, seed)
}

// UniformLeaves is UniformInputs for parameter leaves of the shapes
// given, in order: the same values for the same shapes and seed.
func UniformLeaves(leaves []hlo.Shape, seed uint64) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 0x756e69666f726d))
	var out []*hlo.Literal
	for _, s := range leaves {
		n := s.NumElements()
		data := make([]byte, 0, s.ByteSize())
		for i := int64(0); i < n; i++ {
			if s.Elem.Kind() == hlo.KindComplex {
				part := hlo.F32
				if s.Elem == hlo.C128 {
					part = hlo.F64
				}
				for range 2 {
					bits := hlo.EncodeFloat(part, 2*rng.Float64()-1)
					for j := 0; j < part.Bytes(); j++ {
						data = append(data, byte(bits>>(8*j)))
					}
				}
				continue
			}
			var bits uint64
			switch s.Elem.Kind() {
			case hlo.KindFloat:
				bits = hlo.EncodeFloat(s.Elem, 2*rng.Float64()-1)
			case hlo.KindUnsigned:
				bits = uint64(rng.IntN(10))
			case hlo.KindBool:
				bits = uint64(rng.IntN(2))
			default:
				bits = uint64(int64(rng.IntN(10)) - 5)
			}
			for j := 0; j < s.Elem.Bytes(); j++ {
				data = append(data, byte(bits>>(8*j)))
			}
		}
		out = append(out, &hlo.Literal{Shape: s, Data: data})
	}
	return out
}

// ReduceWindowCases are reduce-window modules over element type t:
// pooling with stride, padding, base (lhs) and window (rhs) dilation.
func ReduceWindowCases(t hlo.ElementType) []Case {
	comp := func(name, op string) string { return binaryComp(name, op, t) }
	mkc := func(name, comps, body string) Case {
		return typedCase("reduce-window-", hlo.OpReduceWindow, t, name, comps, body)
	}
	return []Case{
		mkc("maxpool", comp("mx", "maximum"), "  p0 = T[4,6] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[2,3] reduce-window(p0, z), window={size=2x2 stride=2x2}, to_apply=mx"),
		mkc("padded_sum", comp("add", "add"), "  p0 = T[3,5] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[3,5] reduce-window(p0, z), window={size=3x3 pad=1_1x1_1}, to_apply=add"),
		mkc("dilated", comp("add", "add"), "  p0 = T[5,4] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[8,2] reduce-window(p0, z), window={size=2x2 stride=1x1 pad=0_0x0_0 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add"),
		mkc("cumsum", comp("add", "add"), "  p0 = T[7] parameter(0)\n  z = T[] parameter(1)\n  ROOT r = T[7] reduce-window(p0, z), window={size=7 pad=6_0}, to_apply=add"),
	}
}

// ScatterCases are scatter modules over element type t: scalar updates
// with repeated and out-of-range indices (negative and too large), row
// windows, overwriting, and two-component indices.
func ScatterCases(t hlo.ElementType) []Case {
	add := binaryComp("add", "add", t)
	set := "set {\n  a = T[] parameter(0)\n  ROOT b = T[] parameter(1)\n}\n"
	mkc := func(name, comps, body string) Case { return typedCase("scatter-", hlo.OpScatter, t, name, comps, body) }
	return []Case{
		mkc("points", add, "  x = T[6] parameter(0)\n  i = s32[5,1] constant({{1}, {4}, {1}, {-1}, {6}})\n  u = T[5] parameter(1)\n  ROOT r = T[6] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add"),
		mkc("rows", add, "  x = T[4,3] parameter(0)\n  i = s32[3] constant({3, 0, 3})\n  u = T[3,3] parameter(1)\n  ROOT r = T[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add"),
		mkc("set_window", set, "  x = T[5,5] parameter(0)\n  i = s64[2,2] constant({{0, 3}, {3, 1}})\n  u = T[2,2,2] parameter(1)\n  ROOT r = T[5,5] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=set"),
	}
}

// GatherCases are gather modules over element type t: rows by index
// (with out-of-range indices, clamped), 2-D windows with two-component
// indices, and an implicit trailing index vector dimension.
func GatherCases(t hlo.ElementType) []Case {
	mkc := func(name, body string) Case { return typedCase("gather-", hlo.OpGather, t, name, "", body) }
	return []Case{
		mkc("rows", "  x = T[5,3] parameter(0)\n  i = s32[4] constant({0, 4, -2, 9})\n  ROOT g = T[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}"),
		mkc("windows", "  x = T[6,7] parameter(0)\n  i = s64[3,2] constant({{0, 0}, {5, 6}, {2, 3}})\n  ROOT g = T[3,2,3] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}"),
		mkc("implicit", "  x = T[8] parameter(0)\n  i = u32[2,2] constant({{1, 7}, {3, 0}})\n  ROOT g = T[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1}"),
	}
}

// ConvolutionCases are convolution modules: 2-D NHWC with padding and
// stride, dilations and reversal, depthwise (feature groups), batch
// groups (a weight gradient), mixed types, and odd dimension labels.
func ConvolutionCases() []Case {
	mkc := func(name, params, body string) Case {
		text := fmt.Sprintf("HloModule conv_%s\n\nENTRY main {\n%s\n%s\n}\n", name, params, body)
		return Case{Name: "conv_" + name, Op: hlo.OpConvolution, Text: text}
	}
	return []Case{
		mkc("nhwc_f32", "  x = f32[2,5,6,3] parameter(0)\n  k = f32[3,3,3,4] parameter(1)", "  ROOT r = f32[2,3,3,4] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
		mkc("dilated_s32", "  x = s32[1,3,9] parameter(0)\n  k = s32[2,3,3] parameter(1)", "  ROOT r = s32[1,2,17] convolution(x, k), window={size=3 pad=2_2 lhs_dilate=2 rhs_dilate=2 rhs_reversal=1}, dim_labels=bf0_oi0->bf0"),
		mkc("depthwise_bf16", "  x = bf16[1,6,6,4] parameter(0)\n  k = bf16[3,3,1,4] parameter(1)", "  ROOT r = bf16[1,4,4,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4"),
		mkc("batch_groups_f32", "  x = f32[4,5,2] parameter(0)\n  k = f32[2,2,2] parameter(1)", "  ROOT r = f32[2,4,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2"),
		mkc("s8_to_s32", "  x = s8[1,4,4,2] parameter(0)\n  k = s8[2,2,2,3] parameter(1)", "  ROOT r = s32[1,3,3,3] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f"),
		mkc("f01b_f16", "  x = f16[3,5,5,2] parameter(0)\n  k = f16[2,2,3,1] parameter(1)", "  ROOT r = f16[1,4,4,2] convolution(x, k), window={size=2x2}, dim_labels=f01b_01io->f01b"),
	}
}

// SortCases are sort modules over element type t: ascending along the
// last dimension with odd lengths, descending along the first, and a
// key/value sort whose ties must keep their order (stable).
func SortCases(t hlo.ElementType) []Case {
	cmp := func(name, dir string, extra string) string {
		return fmt.Sprintf("%s {\n  a = T[] parameter(0)\n  b = T[] parameter(1)\n%s  ROOT r = pred[] compare(a, b), direction=%s\n}\n", name, extra, dir)
	}
	mkc := func(name, comps, body string) Case { return typedCase("sort-", hlo.OpSort, t, name, comps, body) }
	return []Case{
		mkc("rows", cmp("lt", "LT", ""), "  x = T[3,13] parameter(0)\n  ROOT s = T[3,13] sort(x), dimensions={1}, to_apply=lt"),
		mkc("cols_desc", cmp("gt", "GT", ""), "  x = T[7,2] parameter(0)\n  ROOT s = T[7,2] sort(x), dimensions={0}, to_apply=gt"),
		mkc("one", cmp("lt", "LT", ""), "  x = T[4,1] parameter(0)\n  ROOT s = T[4,1] sort(x), dimensions={1}, to_apply=lt"),
		mkc("keyval", cmp("lt", "LT", "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"), "  k = T[2,33] parameter(0)\n  v = s32[2,33] iota(), iota_dimension=1\n  ROOT s = (T[2,33], s32[2,33]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt"),
		// A slice of one block, and a middle dimension: blocks and merges
		// over elements that are not contiguous.
		mkc("block_keyval", cmp("lt", "LT", "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"), "  k = T[5,8] parameter(0)\n  v = s32[5,8] iota(), iota_dimension=1\n  ROOT s = (T[5,8], s32[5,8]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt"),
		mkc("middle", cmp("lt", "LT", ""), "  x = T[2,70,3] parameter(0)\n  ROOT s = T[2,70,3] sort(x), dimensions={1}, to_apply=lt"),
		// Long slices: many passes (odd lengths, past a power of two).
		mkc("long_keyval", cmp("lt", "LT", "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"), "  k = T[2,3001] parameter(0)\n  v = s32[2,3001] iota(), iota_dimension=1\n  ROOT s = (T[2,3001], s32[2,3001]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt"),
		mkc("long_cols_desc", cmp("gt", "GT", ""), "  x = T[1025,3] parameter(0)\n  ROOT s = T[1025,3] sort(x), dimensions={0}, to_apply=gt"),
		// Whole octets: a minor dimension's merges store 8 places at a
		// time to the scratch copies and the results, a middle one's to
		// the scratch copies only.
		mkc("octets_keyval", cmp("lt", "LT", "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"), "  k = T[3,1024] parameter(0)\n  v = s32[3,1024] iota(), iota_dimension=1\n  ROOT s = (T[3,1024], s32[3,1024]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt"),
		mkc("octets_middle", cmp("gt", "GT", ""), "  x = T[2,512,3] parameter(0)\n  ROOT s = T[2,512,3] sort(x), dimensions={1}, to_apply=gt"),
	}
}

// TotalOrderCases compares floats of type t in XLA's total order.
func TotalOrderCases(t hlo.ElementType, n int64) []Case {
	var out []Case
	for _, dir := range []string{"LT", "GE", "EQ"} {
		c := mk(hlo.OpCompare, t, hlo.PRED, n, ", direction="+dir+", type=TOTALORDER", "totalorder_"+dir)
		out = append(out, c)
	}
	return out
}
