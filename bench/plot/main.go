// Command plot draws docs/benchmarks.png from bench/run.sh's results: for
// each workload, the median time of vkjit, NumPy and GoMLX as grouped
// bars on a log scale. Its own module, so that vkjit does not depend on
// gonum/plot.
//
//	cd bench/plot && go run . RESULTS.jsonl OUT.png
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// result is one line of bench/run.sh's results file.
type result struct {
	Workload string  `json:"workload"`
	Peer     string  `json:"peer"`
	MedianMs float64 `json:"median_ms"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: plot RESULTS.jsonl OUT.png")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	var order []string
	seen := map[string]bool{}
	ms := map[string]map[string]float64{} // peer -> workload -> ms
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "bad line:", err)
			os.Exit(1)
		}
		if !seen[r.Workload] {
			seen[r.Workload] = true
			order = append(order, r.Workload)
		}
		if ms[r.Peer] == nil {
			ms[r.Peer] = map[string]float64{}
		}
		ms[r.Peer][r.Workload] = r.MedianMs
	}
	p := plot.New()
	p.Title.Text = "Median time per workload on lavapipe and the host CPU (lower is better; log scale)"
	p.Y.Label.Text = "ms"
	// Bar charts start at 0, which a log axis cannot show: the bars are
	// log10(ms) on a linear axis, ticked in ms.
	p.Y.Tick.Marker = decades{}
	peers := []string{"vkjit", "numpy", "gomlx-go"}
	w := vg.Points(14)
	for i, peer := range peers {
		vals := make(plotter.Values, len(order))
		for j, wl := range order {
			vals[j] = math.Log10(math.Max(ms[peer][wl], 1))
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(i-1)
		p.Add(bars)
		p.Legend.Add(peer, bars)
	}
	p.Legend.Top = true
	p.NominalX(order...)
	p.Y.Min = 0
	top := 0.0
	for _, m := range ms {
		for _, v := range m {
			top = math.Max(top, math.Log10(v))
		}
	}
	p.Y.Max = math.Ceil(top + 0.1)
	if err := p.Save(12*vg.Inch, 4.5*vg.Inch, os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// decades ticks a log10 axis at powers of ten, labelled in ms.
type decades struct{}

func (decades) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(min); e <= math.Ceil(max); e++ {
		ts = append(ts, plot.Tick{Value: e, Label: fmt.Sprintf("%g", math.Pow(10, e))})
	}
	return ts
}
