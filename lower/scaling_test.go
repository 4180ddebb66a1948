package lower

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// randomDAG is a module of about n instructions on f32[256] values, each
// reading one or two values among the 32 made before it, so values fan
// out to several readers, as a real program's do. A value about to
// leave that window unread is read by the op at hand, so that every
// value is used and few are live at once; the root is the last value.
// The ops are elementwise, or with mixed, one in eight is a small dot
// (16x16 by 16x16) or a row sum subtracted from its rows (64 rows of 4:
// a row kernel on lavapipe), through reshapes.
func randomDAG(n int, seed uint64, mixed bool) string {
	r := rand.New(rand.NewPCG(seed, 1))
	unary := []string{"negate", "exponential", "tanh", "abs", "sqrt", "log-plus-one"}
	binary := []string{"add", "multiply", "subtract", "maximum", "minimum", "divide"}
	var b strings.Builder
	b.WriteString("HloModule dag\nsum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nENTRY main {\n  v0z = f32[] constant(0)\n")
	const params, window = 4, 32
	for i := range params {
		fmt.Fprintf(&b, "  v%d = f32[256] parameter(%d)\n", i, i)
	}
	used := make([]bool, params)
	pick := func(i int) int {
		j := i - 1 - r.IntN(min(i, window))
		used[j] = true
		return j
	}
	count := params
	for i := params; count < n+params; i++ {
		root := ""
		if count >= n+params-1 {
			root = "ROOT "
		}
		used = append(used, false)
		count++
		if mixed && r.IntN(8) == 0 {
			a, c := pick(i), pick(i)
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "  a%d = f32[16,16] reshape(v%d)\n", i, a)
				fmt.Fprintf(&b, "  c%d = f32[16,16] reshape(v%d)\n", i, c)
				fmt.Fprintf(&b, "  d%d = f32[16,16] dot(a%d, c%d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", i, i, i)
			} else {
				// A row sum subtracted from its rows: 64 rows make a row
				// kernel on lavapipe (fuseRows).
				fmt.Fprintf(&b, "  a%d = f32[64,4] reshape(v%d)\n", i, a)
				fmt.Fprintf(&b, "  s%d = f32[64] reduce(a%d, v0z), dimensions={1}, to_apply=sum\n", i, i)
				fmt.Fprintf(&b, "  c%d = f32[64,4] broadcast(s%d), dimensions={0}\n", i, i)
				fmt.Fprintf(&b, "  d%d = f32[64,4] subtract(a%d, c%d)\n", i, i, i)
			}
			fmt.Fprintf(&b, "  %sv%d = f32[256] reshape(d%d)\n", root, i, i)
			count += 4
			continue
		}
		if j := i - window; j >= 0 && !used[j] {
			used[j] = true
			fmt.Fprintf(&b, "  %sv%d = f32[256] %s(v%d, v%d)\n", root, i, binary[r.IntN(len(binary))], j, pick(i))
		} else if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "  %sv%d = f32[256] %s(v%d)\n", root, i, unary[r.IntN(len(unary))], pick(i))
		} else {
			fmt.Fprintf(&b, "  %sv%d = f32[256] %s(v%d, v%d)\n", root, i, binary[r.IntN(len(binary))], pick(i), pick(i))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// trainDAG is a module of about n instructions shaped like a training
// step's: a forward chain of layers (a 16x16 dot, then tanh) whose every
// activation the backward chain reads again, in reverse order, so that
// the values live at once grow with the program (n/4 at the turn), as a
// real training step's saved activations do.
func trainDAG(n int) string {
	var b strings.Builder
	b.WriteString("HloModule train\nENTRY main {\n  w = f32[16,16] parameter(0)\n  v0 = f32[16,16] parameter(1)\n  g0 = f32[16,16] parameter(2)\n")
	layers := max(n/4, 1)
	for i := 1; i <= layers; i++ {
		fmt.Fprintf(&b, "  d%d = f32[16,16] dot(v%d, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", i, i-1)
		fmt.Fprintf(&b, "  v%d = f32[16,16] tanh(d%d)\n", i, i)
	}
	for i := 1; i <= layers; i++ {
		fmt.Fprintf(&b, "  m%d = f32[16,16] multiply(g%d, v%d)\n", i, i-1, layers+1-i)
		fmt.Fprintf(&b, "  g%d = f32[16,16] dot(m%d, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n", i, i)
	}
	fmt.Fprintf(&b, "  ROOT r = f32[16,16] add(g%d, v0)\n}\n", layers)
	return b.String()
}

var (
	dagSizes = flag.String("dag-sizes", "1000,2000,4000,8000", "instruction counts of BenchmarkCompileScaling's random DAGs")
	dagMixed = flag.Bool("dag-mixed", false, "BenchmarkCompileScaling's DAGs have dots and row sums among their ops")
	dagTrain = flag.Bool("dag-train", false, "BenchmarkCompileScaling compiles training steps (trainDAG: live values grow with the program) instead of random DAGs")
)

// BenchmarkCompileScaling compiles random DAGs of growing size
// (-dag-sizes) for lavapipe and prints each one's compile time and the
// exponent of a power law fitted to them: 1 is linear.
//
//	go test -run '^$' -bench CompileScaling -benchtime 1x ./lower -dag-sizes 1000,10000,100000 [-dag-mixed | -dag-train]
func BenchmarkCompileScaling(b *testing.B) {
	defer func(c bool) { checkPasses = c }(checkPasses)
	checkPasses = false // the compiler as users run it, without the tests' checks between passes
	var xs, ys []float64
	for _, f := range strings.Split(*dagSizes, ",") {
		n, err := strconv.Atoi(f)
		require.NoError(b, err)
		text := randomDAG(n, 1, *dagMixed)
		if *dagTrain {
			text = trainDAG(n)
		}
		m, err := hlo.Parse("dag", text)
		require.NoError(b, err)
		best := time.Duration(math.MaxInt64)
		for range b.N {
			start := time.Now()
			_, err := Compile(m, LlvmpipeTarget, Options{})
			require.NoError(b, err)
			best = min(best, time.Since(start))
		}
		b.Logf("%7d instructions: %v", n, best)
		xs, ys = append(xs, math.Log(float64(n))), append(ys, math.Log(best.Seconds()))
	}
	if len(xs) > 1 {
		b.Logf("fitted exponent %.2f (time ~ n^k; 1 is linear)", slope(xs, ys))
	}
}

// slope is the least-squares slope of ys against xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	return num / den
}
