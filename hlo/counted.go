package hlo

import "math/big"

// Counter is the induction variable of a counted while loop, as JAX's
// fori_loop and scan write them: a scalar integer element of the state
// that the body steps by a constant and that alone the condition
// compares with a constant. Its start may be any value: the number of
// iterations follows from it (Iterations), as XLA's
// ComputeWhileLoopTripCount finds it.
type Counter struct {
	Index int         // the state's tuple element
	Elem  ElementType // its type
	Limit int64       // the constant the condition compares it with
	Step  int64       // what the body adds to it each iteration
	Dir   string      // the condition: counter Dir Limit (LT, LE, GT, GE or NE)
}

// swapped is the direction of a comparison with its operands swapped.
var swapped = map[string]string{"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE"}

// CountedLoop recognizes a counted loop's condition and body (each of
// one tuple parameter): the condition's root compares element Index of
// its parameter with a constant, the body's root is a tuple whose
// element Index adds (or subtracts) a constant to the same element.
func CountedLoop(cond, body *Computation) (Counter, bool) {
	c := cond.Root
	if c.Op != OpCompare || len(cond.Params) != 1 || len(body.Params) != 1 || body.Root.Op != OpTuple {
		return Counter{}, false
	}
	g, limit, dir := Element(c.Operands[0]), Element(c.Operands[1]), c.A.Direction
	if g.Op == OpConstant {
		g, limit, dir = limit, g, swapped[dir]
	}
	if g.Op != OpGetTupleElement || g.Operands[0] != cond.Params[0] || limit.Op != OpConstant || swapped[dir] == "" {
		return Counter{}, false
	}
	t := g.Shape.Elem
	if !g.Shape.IsArray() || g.Shape.Rank() != 0 || !t.IsInteger() {
		return Counter{}, false
	}
	own := "SIGNED" // the comparison its type makes
	if t.Kind() == KindUnsigned {
		own = "UNSIGNED"
	}
	if ct := c.A.CompareType; ct != "" && ct != own {
		return Counter{}, false
	}
	i := int(g.A.Index)
	if i >= len(body.Root.Operands) {
		return Counter{}, false
	}
	next := Element(body.Root.Operands[i])
	if next.Op != OpAdd && next.Op != OpSubtract {
		return Counter{}, false
	}
	x, k := Element(next.Operands[0]), Element(next.Operands[1])
	if next.Op == OpAdd && x.Op == OpConstant {
		x, k = k, x
	}
	if x.Op != OpGetTupleElement || x.Operands[0] != body.Params[0] || int(x.A.Index) != i || k.Op != OpConstant {
		return Counter{}, false
	}
	step, ok1 := ScalarInt(k.Literal)
	lim, ok2 := ScalarInt(limit.Literal)
	if !ok1 || !ok2 || step == 0 {
		return Counter{}, false
	}
	if next.Op == OpSubtract {
		step = -step
	}
	return Counter{Index: i, Elem: t, Limit: lim, Step: step, Dir: dir}, true
}

// Element is x, or, where x takes an element of a tuple instruction (a
// get-tuple-element of a tuple: loop invariant code motion writes a
// body's results so), that element, as often as it is one.
func Element(x *Instruction) *Instruction {
	for x.Op == OpGetTupleElement && len(x.Operands) == 1 && x.Operands[0].Op == OpTuple && x.A.Index >= 0 && int(x.A.Index) < len(x.Operands[0].Operands) {
		x = x.Operands[0].Operands[x.A.Index]
	}
	return x
}

// ScalarInt reads a rank-0 integer literal of 8 to 64 bits (a u64
// past int64: false).
func ScalarInt(l *Literal) (int64, bool) {
	if l == nil || l.Elided || l.Shape.Rank() != 0 || !l.Shape.Elem.IsInteger() {
		return 0, false
	}
	v, err := l.Ints() // an error past int64
	if err != nil || len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

// Iterations is how many times a loop whose counter starts at start
// runs its body, and whether that is known: the counter moves toward the
// limit and stops within its type's range (a counter that would wrap
// around, or never meet a limit it must equal, is not counted).
func (c Counter) Iterations(start int64) (int64, bool) {
	bits := uint(8 * c.Elem.Bytes())
	lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), bits)
	if c.Elem.Kind() == KindUnsigned {
		hi.Sub(hi, big.NewInt(1))
	} else {
		hi.Rsh(hi, 1)
		lo.Neg(hi)
		hi.Sub(hi, big.NewInt(1))
	}
	s, l, k := big.NewInt(start), big.NewInt(c.Limit), big.NewInt(c.Step)
	if s.Cmp(lo) < 0 || s.Cmp(hi) > 0 || l.Cmp(lo) < 0 || l.Cmp(hi) > 0 {
		return 0, false
	}
	gap := new(big.Int).Sub(l, s) // what the counter has to go
	up := c.Step > 0
	var n *big.Int
	switch {
	case c.Dir == "NE":
		q, r := new(big.Int).QuoRem(gap, k, new(big.Int))
		if r.Sign() != 0 || q.Sign() < 0 {
			return 0, false // steps past the limit: wraps around, or never ends
		}
		n = q
	case (c.Dir == "LT" || c.Dir == "LE") != up:
		// Stepping away from the limit: runs not at all, or until the
		// counter wraps around.
		if holds(c.Dir, s, l) {
			return 0, false
		}
		return 0, true
	default:
		if !holds(c.Dir, s, l) {
			return 0, true
		}
		// The first n with start + n*step past the limit.
		d := new(big.Int).Abs(gap)
		a := new(big.Int).Abs(k)
		if c.Dir == "LE" || c.Dir == "GE" {
			d.Add(d, big.NewInt(1))
		}
		n = d.Add(d, a).Sub(d, big.NewInt(1))
		n.Quo(n, a)
	}
	last := new(big.Int).Add(s, new(big.Int).Mul(n, k)) // the value it stops at
	if last.Cmp(lo) < 0 || last.Cmp(hi) > 0 || !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// holds evaluates x dir y.
func holds(dir string, x, y *big.Int) bool {
	c := x.Cmp(y)
	switch dir {
	case "LT":
		return c < 0
	case "LE":
		return c <= 0
	case "GT":
		return c > 0
	case "GE":
		return c >= 0
	case "NE":
		return c != 0
	}
	return false
}
