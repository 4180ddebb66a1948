package stablehlo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Quantized types (!quant.uniform): a value is held as its storage
// integers, and every op computes as the StableHLO specification says
// quantized ops do: uniform_quantize and uniform_dequantize convert, a
// bitcast_convert to or from the storage type passes the integers on,
// and any other op dequantizes its quantized operands, computes in the
// expressed type and quantizes its quantized results.

// QuantType is a uniform quantized element type: value = (q - zero
// point) * scale, per tensor or per slice of one dimension (Axis).
type QuantType struct {
	Storage    hlo.ElementType
	Min, Max   int64
	Expressed  hlo.ElementType
	Axis       int      // -1: per tensor
	Scales     []string // as written; rounded to Expressed where used
	ZeroPoints []int64
}

// parseQuant reads the body of !quant.uniform<...>: storage type [<min:max>]
// : expressed type [: axis] , scale[:zero point] or {scale:zp, ...}.
func parseQuant(body string) (*QuantType, error) {
	head, params, ok := strings.Cut(body, ",")
	if !ok {
		return nil, fmt.Errorf("no scale")
	}
	q := &QuantType{Axis: -1}
	storage := head
	if i := strings.Index(head, "<"); i >= 0 {
		j := strings.Index(head, ">")
		if j < i {
			return nil, fmt.Errorf("bad storage range")
		}
		lo, hi, ok := strings.Cut(head[i+1:j], ":")
		var err1, err2 error
		q.Min, err1 = strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		q.Max, err2 = strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad storage range %q", head[i:j+1])
		}
		storage = head[:i] + head[j+1:]
	}
	parts := strings.Split(storage, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("want storage:expressed[:dimension]")
	}
	st := strings.TrimSpace(parts[0])
	switch {
	case strings.HasPrefix(st, "i"):
		st = "si" + st[1:] // the storage's i8 is signed
	case strings.HasPrefix(st, "u"):
		st = "ui" + st[1:]
	}
	var ok1, ok2 bool
	q.Storage, ok1 = elementTypes[st]
	q.Expressed, ok2 = elementTypes[strings.TrimSpace(parts[1])]
	if !ok1 || !ok2 || !q.Storage.IsInteger() || !q.Expressed.IsFloat() || q.Storage.Bits() < 8 {
		return nil, fmt.Errorf("storage %s, expressed %s", parts[0], parts[1])
	}
	if !strings.Contains(head, "<") {
		q.Min, q.Max = intRange(q.Storage)
	}
	if len(parts) == 3 {
		a, err := strconv.Atoi(strings.TrimSpace(parts[2]))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad quantization dimension %q", parts[2])
		}
		q.Axis = a
	}
	params = strings.TrimSpace(params)
	if strings.HasPrefix(params, "{") {
		params = strings.TrimSuffix(strings.TrimPrefix(params, "{"), "}")
	}
	for _, p := range strings.Split(params, ",") {
		scale, zp, hasZP := strings.Cut(strings.TrimSpace(p), ":")
		if _, err := strconv.ParseFloat(scale, 64); err != nil {
			return nil, fmt.Errorf("bad scale %q", scale)
		}
		z := int64(0)
		if hasZP {
			var err error
			if z, err = strconv.ParseInt(strings.TrimSpace(zp), 10, 64); err != nil {
				return nil, fmt.Errorf("bad zero point %q", zp)
			}
		}
		q.Scales = append(q.Scales, scale)
		q.ZeroPoints = append(q.ZeroPoints, z)
	}
	if q.Axis < 0 && len(q.Scales) != 1 {
		return nil, fmt.Errorf("%d scales for a per-tensor type", len(q.Scales))
	}
	return q, nil
}

// intRange is the values of integer type t.
func intRange(t hlo.ElementType) (lo, hi int64) {
	b := t.Bits()
	if t.Kind() == hlo.KindSigned {
		return -1 << (b - 1), 1<<(b-1) - 1
	}
	if b >= 64 {
		return 0, 1<<63 - 1
	}
	return 0, 1<<b - 1
}

// param is values (one, or one per slice of dimension axis) of type t
// broadcast to shape s: a quantized type's scales, zero points or
// storage bounds as operands of its arithmetic.
func (c *opContext) param(vals []string, t hlo.ElementType, axis int, s hlo.Shape) (*hlo.Instruction, error) {
	dims, bd, text := []int64{}, []int64{}, vals[0]
	if axis >= 0 {
		if axis >= s.Rank() || int64(len(vals)) != s.Dims[axis] {
			return nil, fmt.Errorf("%d quantization parameters along dimension %d of %v", len(vals), axis, s.Dims)
		}
		dims, bd = []int64{int64(len(vals))}, []int64{int64(axis)}
		text = "{" + strings.Join(vals, ",") + "}"
	}
	l, err := hlo.ParseLiteral(text, hlo.ArrayShape(t, dims...))
	if err != nil {
		return nil, err
	}
	return c.cb.Op(hlo.OpBroadcast, c.cb.Constant(l)).Set("dimensions", list(bd)).WithShape(hlo.ArrayShape(t, s.Dims...)).Instruction, nil
}

// zeroPoints is q's zero points in type t, broadcast to shape s.
func (c *opContext) zeroPoints(q *QuantType, t hlo.ElementType, s hlo.Shape) (*hlo.Instruction, error) {
	zps := make([]string, len(q.ZeroPoints))
	for i, z := range q.ZeroPoints {
		zps[i] = strconv.FormatInt(z, 10)
	}
	return c.param(zps, t, q.Axis, s)
}

// dequantize is x's values (storage integers of type q) in q's expressed
// type: (x - zero point) * scale.
func (c *opContext) dequantize(x *hlo.Instruction, q *QuantType) (*hlo.Instruction, error) {
	// x - zero point exactly, in integers wide enough for any difference.
	wide := hlo.S32
	if q.Storage.Bits() > 16 {
		wide = hlo.S64
	}
	scale, err := c.param(q.Scales, q.Expressed, q.Axis, x.Shape)
	if err != nil {
		return nil, err
	}
	zp, err := c.zeroPoints(q, wide, x.Shape)
	if err != nil {
		return nil, err
	}
	w := hlo.ArrayShape(wide, x.Shape.Dims...)
	d := c.cb.Op(hlo.OpSubtract, c.cb.Op(hlo.OpConvert, x).WithShape(w).Instruction, zp).WithShape(w).Instruction
	f := hlo.ArrayShape(q.Expressed, x.Shape.Dims...)
	df := c.cb.Op(hlo.OpConvert, d).WithShape(f).Instruction
	return c.cb.Op(hlo.OpMultiply, df, scale).WithShape(f).Instruction, nil
}

// quantize is x (of q's expressed type) as storage integers of type q:
// x / scale + zero point, clamped to the storage range, rounded to
// nearest even.
func (c *opContext) quantize(x *hlo.Instruction, q *QuantType) (*hlo.Instruction, error) {
	if x.Shape.Elem != q.Expressed {
		return nil, fmt.Errorf("quantizes %s to a type expressed in %s", x.Shape.Elem, q.Expressed)
	}
	f := x.Shape
	scale, err := c.param(q.Scales, q.Expressed, q.Axis, f)
	if err != nil {
		return nil, err
	}
	zp, err := c.zeroPoints(q, q.Expressed, f)
	if err != nil {
		return nil, err
	}
	lo, err := c.param([]string{strconv.FormatInt(q.Min, 10)}, q.Expressed, -1, f)
	if err != nil {
		return nil, err
	}
	hi, err := c.param([]string{strconv.FormatInt(q.Max, 10)}, q.Expressed, -1, f)
	if err != nil {
		return nil, err
	}
	v := c.cb.Op(hlo.OpDivide, x, scale).WithShape(f).Instruction
	v = c.cb.Op(hlo.OpAdd, v, zp).WithShape(f).Instruction
	v = c.cb.Op(hlo.OpClamp, lo, v, hi).WithShape(f).Instruction
	v = c.cb.Op(hlo.OpRoundNearestEven, v).WithShape(f).Instruction
	return c.cb.Op(hlo.OpConvert, v).WithShape(hlo.ArrayShape(q.Storage, f.Dims...)).Instruction, nil
}

// operandQuant is the quantized type of op's operand i (x), or nil.
func (t *translator) operandQuant(op *Op, i int, x *hlo.Instruction) *QuantType {
	if q := t.quantOf[x]; q != nil {
		return q
	}
	if i < len(op.InTypes) && len(op.InTypes) == len(op.Operands) {
		return op.InTypes[i].Q
	}
	return nil
}

// quantized reports whether op reads or makes a quantized value.
func (t *translator) quantized(op *Op, operands []*hlo.Instruction) bool {
	for i, x := range operands {
		if t.operandQuant(op, i, x) != nil {
			return true
		}
	}
	for _, ty := range op.OutTypes {
		if ty.Q != nil {
			return true
		}
	}
	return false
}

// quantOp translates an op that reads or makes quantized values.
func (t *translator) quantOp(op *Op, sc *scope, operands []*hlo.Instruction) ([]*hlo.Instruction, error) {
	c := &opContext{t: t, op: op, sc: sc, cb: sc.cb, args: operands}
	var outQ *QuantType
	if len(op.OutTypes) == 1 {
		outQ = op.OutTypes[0].Q
	}
	switch op.Name {
	case "stablehlo.constant", "func.call":
		// A constant's text holds the storage integers; a called
		// function takes and returns them (its parameters and results
		// have the quantized types).
		return t.apply(op, sc, operands)
	case "stablehlo.bitcast_convert":
		// To or from the storage type: the integers themselves.
		if len(operands) == 1 && len(op.OutTypes) == 1 && operands[0].Shape.Equal(op.OutTypes[0].Shape()) {
			return operands, nil
		}
		return nil, fmt.Errorf("bitcasts a quantized value to another width")
	case "stablehlo.uniform_quantize", "stablehlo.uniform_dequantize":
		if len(operands) != 1 || len(op.OutTypes) != 1 {
			return nil, fmt.Errorf("takes one operand and makes one value")
		}
		x := operands[0]
		if q := t.operandQuant(op, 0, x); q != nil {
			var err error
			if x, err = c.dequantize(x, q); err != nil {
				return nil, err
			}
		}
		if op.Name == "stablehlo.uniform_dequantize" || outQ == nil {
			if outQ != nil || x.Shape.Elem != op.OutTypes[0].Elem {
				return nil, fmt.Errorf("dequantizes to %s", op.OutTypes[0].Text)
			}
			return []*hlo.Instruction{x}, nil
		}
		x, err := c.quantize(x, outQ)
		return []*hlo.Instruction{x}, err
	}
	// Any other op: on the dequantized values, in the expressed type;
	// its quantized results quantized.
	args := make([]*hlo.Instruction, len(operands))
	for i, x := range operands {
		args[i] = x
		if q := t.operandQuant(op, i, x); q != nil {
			var err error
			if args[i], err = c.dequantize(x, q); err != nil {
				return nil, err
			}
		}
	}
	fop := *op
	fop.InTypes = expressedTypes(op.InTypes)
	fop.OutTypes = expressedTypes(op.OutTypes)
	results, err := t.apply(&fop, sc, args)
	if err != nil {
		return nil, err
	}
	for i, r := range results {
		if i < len(op.OutTypes) && op.OutTypes[i].Q != nil {
			if results[i], err = c.quantize(r, op.OutTypes[i].Q); err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// expressedTypes is ts with quantized tensor types in their expressed
// types.
func expressedTypes(ts []Type) []Type {
	out := make([]Type, len(ts))
	for i, ty := range ts {
		out[i] = ty
		if ty.Q != nil {
			out[i].Elem, out[i].Q, out[i].Quant = ty.Q.Expressed, nil, false
		}
	}
	return out
}
