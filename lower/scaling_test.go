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

// randomDAG is a module of n elementwise ops on f32[256] values, each
// reading one or two values among the 32 made before it (so values fan
// out to several readers, as a real program's do). A value that leaves
// that window unread is added into a running sum, the root: every value
// is used, and few are live at once, as in a real program.
func randomDAG(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	unary := []string{"negate", "exponential", "tanh", "abs", "sqrt", "log-plus-one"}
	binary := []string{"add", "multiply", "subtract", "maximum", "minimum", "divide"}
	var b strings.Builder
	b.WriteString("HloModule dag\nENTRY main {\n")
	const params, window = 4, 32
	for i := range params {
		fmt.Fprintf(&b, "  v%d = f32[256] parameter(%d)\n", i, i)
	}
	used := make([]bool, n+params)
	pick := func(i int) int {
		j := i - 1 - r.IntN(min(i, window))
		used[j] = true
		return j
	}
	acc := "v0"
	sum := func(j int) {
		fmt.Fprintf(&b, "  acc%d = f32[256] add(%s, v%d)\n", j, acc, j)
		acc = fmt.Sprintf("acc%d", j)
	}
	for i := params; i < n+params; i++ {
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "  v%d = f32[256] %s(v%d)\n", i, unary[r.IntN(len(unary))], pick(i))
		} else {
			fmt.Fprintf(&b, "  v%d = f32[256] %s(v%d, v%d)\n", i, binary[r.IntN(len(binary))], pick(i), pick(i))
		}
		if j := i - window; j >= params && !used[j] {
			sum(j)
		}
	}
	for j := max(params, n+params-window); j < n+params; j++ {
		if !used[j] {
			sum(j)
		}
	}
	fmt.Fprintf(&b, "  ROOT out = f32[256] copy(%s)\n}\n", acc)
	return b.String()
}

var dagSizes = flag.String("dag-sizes", "1000,2000,4000,8000", "instruction counts of BenchmarkCompileScaling's random DAGs")

// BenchmarkCompileScaling compiles random DAGs of growing size
// (-dag-sizes) for lavapipe and prints each one's compile time and the
// exponent of a power law fitted to them: 1 is linear.
//
//	go test -run '^$' -bench CompileScaling -benchtime 1x ./lower -dag-sizes 1000,10000,100000
func BenchmarkCompileScaling(b *testing.B) {
	defer func(c bool) { checkPasses = c }(checkPasses)
	checkPasses = false // the compiler as users run it, without the tests' checks between passes
	var xs, ys []float64
	for _, f := range strings.Split(*dagSizes, ",") {
		n, err := strconv.Atoi(f)
		require.NoError(b, err)
		m, err := hlo.Parse("dag", randomDAG(n, 1))
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
