package hlo

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// approxTopK checks XLA's ApproxTopK custom-call (CallApproxTopK): n
// arrays of one shape, n scalars of their types, a comparator of 2n
// scalars, and results of the operands' shapes and types but for the
// reduction dimension, cut to ApproxTopKOutputSize.
func approxTopK(in *Instruction) (*CustomCall, error) {
	bad := func(why string, a ...any) error {
		return fmt.Errorf("custom-call ApproxTopK: "+why, a...)
	}
	ops := in.Operands
	n := len(ops) / 2
	if n == 0 || len(ops)%2 != 0 {
		return nil, bad("takes n arrays and n scalar initial values, not %d operands", len(ops))
	}
	x := ops[0].Shape
	for i := range n {
		o, init := ops[i].Shape, ops[n+i].Shape
		if !o.IsArray() || o.Rank() == 0 || !o.SameDims(x) || !init.IsArray() || init.Rank() != 0 || init.Elem != o.Elem {
			return nil, bad("takes arrays of one shape and a scalar of each one's type")
		}
	}
	if len(in.Called) != 1 || len(in.Called[0].Params) != 2*n {
		return nil, bad("needs a comparator of %d scalars (called_computations)", 2*n)
	}
	cfg, err := approxTopKConfig(in)
	if err != nil {
		return nil, bad("%v", err)
	}
	d := cfg.dim
	if d < 0 || d >= int64(x.Rank()) {
		return nil, bad("reduction_dim %d of a rank %d operand", d, x.Rank())
	}
	size, err := ApproxTopKOutputSize(x.Dims[d], int64(x.Rank()), cfg.k, cfg.recall, cfg.aggregate, cfg.override)
	if err != nil {
		return nil, bad("%v", err)
	}
	res := []Shape{in.Shape}
	if in.Shape.IsTuple() {
		res = in.Shape.Tuple
	}
	if len(res) != n {
		return nil, bad("returns one array per operand, %d, not %d", n, len(res))
	}
	for i, r := range res {
		want := ArrayShape(ops[i].Shape.Elem, ops[i].Shape.Dims...)
		want.Dims[d] = size
		if !r.Equal(want) {
			return nil, bad("result %d is %s where top_k %d of %d along dimension %d gives %s", i, r, cfg.k, x.Dims[d], d, want)
		}
	}
	return &CustomCall{Kind: CallApproxTopK, Dim: d}, nil
}

// approxTopKSettings are ApproxTopK's backend_config fields.
type approxTopKSettings struct {
	dim, k, override int64
	recall           float32
	aggregate        bool
}

// approxTopKConfig reads ApproxTopK's backend_config (configFields).
// JAX writes every field; top_k and reduction_dim have no default.
func approxTopKConfig(in *Instruction) (approxTopKSettings, error) {
	s := approxTopKSettings{override: -1, recall: 0.95, aggregate: true}
	fields := configFields(in)
	for _, name := range []string{"reduction_dim", "top_k", "reduction_input_size_override", "recall_target", "aggregate_to_topk", "is_fallback"} {
		val, ok := fields[name]
		if !ok {
			if name == "reduction_dim" || name == "top_k" {
				return s, fmt.Errorf("backend_config has no %s", name)
			}
			continue
		}
		var err error
		switch name {
		case "reduction_dim":
			s.dim, err = strconv.ParseInt(val, 10, 64)
		case "top_k":
			s.k, err = strconv.ParseInt(val, 10, 64)
		case "reduction_input_size_override":
			s.override, err = strconv.ParseInt(val, 10, 64)
		case "recall_target":
			var r float64
			r, err = strconv.ParseFloat(val, 32)
			s.recall = float32(r)
		case "aggregate_to_topk":
			s.aggregate, err = strconv.ParseBool(val)
		case "is_fallback":
			_, err = strconv.ParseBool(val)
		}
		if err != nil {
			return s, fmt.Errorf("backend_config's %s = %s: %v", name, val, err)
		}
	}
	if s.k < 1 {
		return s, fmt.Errorf("top_k %d", s.k)
	}
	return s, nil
}

// ApproxTopKOutputSize is the length ApproxTopK cuts its reduction
// dimension of n to, as XLA's ApproxTopKReductionOutputSize
// (xla/hlo/builder/lib/approx_topk_shape.cc) computes it, so that
// results have the shapes JAX's abstract evaluation gave them: top_k
// where aggregate_to_topk; else n for short rows (up to TPU's tiling,
// 1024 for rank 1 and 128 otherwise) or a recall target of 1, the
// tiling for top_k 1, and otherwise enough windows of the tiling that a
// top-k element collides with another in its window with probability
// about 1 - recall (M = (1 - k) / ln(recall) windows).
func ApproxTopKOutputSize(n, rank, k int64, recall float32, aggregate bool, override int64) (int64, error) {
	if aggregate {
		if k > n {
			return 0, fmt.Errorf("top_k %d of %d elements", k, n)
		}
		return k, nil
	}
	tiling := int64(128)
	if rank == 1 {
		tiling = 1024
	}
	if n <= tiling {
		return n, nil
	}
	if override >= 0 && n > override {
		return 0, fmt.Errorf("reduction_input_size_override %d is below the dimension's %d", override, n)
	}
	logical := n
	if override >= 0 {
		logical = override
	}
	log2Floor := func(v uint64) int64 {
		if v == 0 {
			return 0
		}
		return int64(bits.Len64(v) - 1)
	}
	log2Ceil := func(v uint64) int64 {
		if v <= 1 {
			return 0
		}
		return int64(bits.Len64(v - 1))
	}
	ceilDiv := func(a, b int64) int64 { return (a + b - 1) / b }
	if k == 1 {
		return tiling, nil
	}
	if recall == 1 {
		return n, nil
	}
	if recall <= 0 || recall > 1 {
		return 0, fmt.Errorf("recall_target %g outside (0, 1]", recall)
	}
	m := uint64((1 - float64(k)) / math.Log(float64(recall)))
	m = min(max(m, uint64(tiling)), uint64(n))
	reduction := log2Floor(uint64(logical) / m)
	if reduction == 0 {
		return n, nil
	}
	reduction = min(reduction, log2Ceil(uint64(n/tiling)))
	return ceilDiv(ceilDiv(n, tiling), 1<<reduction) * tiling, nil
}
