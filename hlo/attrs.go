package hlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Attributes holds the typed form of the semantic attributes. The
// verbatim text stays in Instruction.Attrs (it is what the printer
// writes); these fields are parsed from it once, at parse time, so that a
// malformed value is reported with its position.
type Attributes struct {
	Dimensions    []int64 // dimensions= (broadcast, reduce, transpose, reverse, concatenate, sort, ...)
	HasDimensions bool
	Slice         []SliceDim // slice=
	DynSliceSizes []int64    // dynamic_slice_sizes=
	Padding       []PadDim   // padding= (pad)
	Window        *Window    // window= (convolution, reduce-window, select-and-scatter)
	ConvDims      *ConvDims  // dim_labels=
	FeatureGroups int64      // feature_group_count=, 1 when absent
	BatchGroups   int64      // batch_group_count=, 1 when absent
	Dot           *DotDims   // lhs_/rhs_ batch and contracting dims
	Gather        *GatherDims
	Scatter       *ScatterDims
	Direction     string // compare: EQ NE LT LE GT GE
	CompareType   string // compare: FLOAT TOTALORDER SIGNED UNSIGNED (empty: by element type)
	Index         int64  // get-tuple-element
	IotaDim       int64  // iota
	IsStable      bool   // sort
	NumCarries    int64  // scan: num_carries=, its last operands the carries' initial values
	IsReverse     bool   // scan: is_reverse=, the scan dimension from its end
	K             int64  // topk
	Largest       bool   // topk (true when absent)
	ExponentBits  int64  // reduce-precision
	MantissaBits  int64
	RngAlgorithm  string  // rng-bit-generator: rng_default, rng_three_fry, rng_philox
	DotAlgorithm  string  // dot: XLA's algorithm (dot_bf16_bf16_f32 and the like: dotalgorithm.go), "" for the default
	Distribution  string  // rng: rng_uniform, rng_normal
	Target        string  // custom-call target
	SideEffect    bool    // custom-call: custom_call_has_side_effect (an effect beyond its result: effects.go)
	FftType       string  // fft: FFT, IFFT, RFFT, IRFFT
	FftLength     []int64 // fft: the lengths of the transformed (last) dimensions
	// triangular-solve: solve op(a) x = b (left_side) or x op(a) = b, a
	// lower or upper triangular (the other triangle unread), its diagonal
	// ones when UnitDiagonal, op(a) = a, a^T or a^H (TransposeA NO_TRANSPOSE,
	// TRANSPOSE, ADJOINT).
	LeftSide, Lower, UnitDiagonal bool
	TransposeA                    string
}

// SliceDim is one dimension of a slice: [Start:Limit:Stride].
type SliceDim struct{ Start, Limit, Stride int64 }

// PadDim is one dimension of a pad: low, high and interior padding.
type PadDim struct{ Lo, Hi, Interior int64 }

// WindowDim is one dimension of a window.
type WindowDim struct {
	Size, Stride, PadLo, PadHi, LhsDilate, RhsDilate int64
	Reversal                                         bool
}

// Window describes the window of a convolution or reduce-window.
type Window struct{ Dims []WindowDim }

// String is w in HLO's syntax ({size=3x3 stride=2x2 pad=1_1x1_1 ...}),
// the fields at their defaults left out, as parseWindow reads it back.
func (w *Window) String() string {
	join := func(v func(WindowDim) string) string {
		parts := make([]string, len(w.Dims))
		for i, d := range w.Dims {
			parts[i] = v(d)
		}
		return strings.Join(parts, "x")
	}
	num := func(v func(WindowDim) int64) func(WindowDim) string {
		return func(d WindowDim) string { return strconv.FormatInt(v(d), 10) }
	}
	fields := []string{"size=" + join(num(func(d WindowDim) int64 { return d.Size }))}
	// Each other field where some dimension is off its default.
	add := func(name string, off func(WindowDim) bool, v func(WindowDim) string) {
		if slices.ContainsFunc(w.Dims, off) {
			fields = append(fields, name+"="+join(v))
		}
	}
	// Values off the defaults as they are (a stride of 0 stays 0, for
	// the verifier to name).
	add("stride", func(d WindowDim) bool { return d.Stride != 1 }, num(func(d WindowDim) int64 { return d.Stride }))
	add("pad", func(d WindowDim) bool { return d.PadLo != 0 || d.PadHi != 0 }, func(d WindowDim) string { return fmt.Sprintf("%d_%d", d.PadLo, d.PadHi) })
	add("lhs_dilate", func(d WindowDim) bool { return d.LhsDilate != 1 }, num(func(d WindowDim) int64 { return d.LhsDilate }))
	add("rhs_dilate", func(d WindowDim) bool { return d.RhsDilate != 1 }, num(func(d WindowDim) int64 { return d.RhsDilate }))
	add("rhs_reversal", func(d WindowDim) bool { return d.Reversal }, func(d WindowDim) string {
		if d.Reversal {
			return "1"
		}
		return "0"
	})
	if len(w.Dims) == 0 {
		return "{}"
	}
	return "{" + strings.Join(fields, " ") + "}"
}

// ConvDims are a convolution's dimension numbers (dim_labels).
type ConvDims struct {
	InBatch, InFeature   int64
	InSpatial            []int64
	KIn, KOut            int64 // kernel input and output feature dimensions
	KSpatial             []int64
	OutBatch, OutFeature int64
	OutSpatial           []int64
}

// DotDims are a dot's dimension numbers.
type DotDims struct {
	LhsBatch, RhsBatch, LhsContract, RhsContract []int64
}

// FreeDims are the dimensions of operands of ranks lRank and rRank that
// are neither batch nor contracting, in order: a dot's output has the
// batch dimensions, then lhs's free ones, then rhs's.
func (d *DotDims) FreeDims(lRank, rRank int) (lFree, rFree []int64) {
	free := func(rank int, lists ...[]int64) []int64 {
		used := map[int64]bool{}
		for _, xs := range lists {
			for _, x := range xs {
				used[x] = true
			}
		}
		var out []int64
		for i := range int64(rank) {
			if !used[i] {
				out = append(out, i)
			}
		}
		return out
	}
	return free(lRank, d.LhsBatch, d.LhsContract), free(rRank, d.RhsBatch, d.RhsContract)
}

// Bases are where output multi-index o reads lhs and rhs (row-major
// strides ls, rs) with the contracting indices at 0.
func (d *DotDims) Bases(o, lFree, rFree, ls, rs []int64) (lb, rb int64) {
	k := 0
	for i := range d.LhsBatch {
		lb += o[k] * ls[d.LhsBatch[i]]
		rb += o[k] * rs[d.RhsBatch[i]]
		k++
	}
	for _, x := range lFree {
		lb += o[k] * ls[x]
		k++
	}
	for _, x := range rFree {
		rb += o[k] * rs[x]
		k++
	}
	return lb, rb
}

// GatherDims are a gather's dimension numbers.
type GatherDims struct {
	OffsetDims, CollapsedSliceDims, StartIndexMap []int64
	OperandBatchingDims, StartIndicesBatchingDims []int64
	IndexVectorDim                                int64
	SliceSizes                                    []int64
	IndicesAreSorted                              bool
}

// ScatterDims are a scatter's dimension numbers.
type ScatterDims struct {
	UpdateWindowDims, InsertedWindowDims, ScatterDimsToOperandDims []int64
	InputBatchingDims, ScatterIndicesBatchingDims                  []int64
	IndexVectorDim                                                 int64
	IndicesAreSorted, UniqueIndices                                bool
}

// parseTypedAttrs fills in.A from in.Attrs.
func parseTypedAttrs(in *Instruction) error {
	in.A.FeatureGroups, in.A.BatchGroups, in.A.Largest = 1, 1, true
	var err error
	for i := range in.Attrs {
		a := &in.Attrs[i]
		v := a.Value
		bad := func(e error) error {
			return &Error{Pos: a.Pos, Msg: fmt.Sprintf("%s: bad %s=%s: %v", in.Name, a.Name, v, e)}
		}
		switch a.Name {
		case "dimensions":
			in.A.HasDimensions = true
			in.A.Dimensions, err = parseIntList(v)
		case "slice":
			in.A.Slice, err = parseSlice(v)
		case "dynamic_slice_sizes":
			in.A.DynSliceSizes, err = parseIntList(v)
		case "padding":
			if in.Op == OpPad {
				in.A.Padding, err = parsePadding(v)
			}
		case "window":
			in.A.Window, err = parseWindow(v)
		case "dim_labels":
			in.A.ConvDims, err = parseDimLabels(v)
		case "feature_group_count":
			in.A.FeatureGroups, err = strconv.ParseInt(v, 10, 64)
		case "batch_group_count":
			in.A.BatchGroups, err = strconv.ParseInt(v, 10, 64)
		case "lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims":
			if in.A.Dot == nil {
				in.A.Dot = &DotDims{}
			}
			var l []int64
			l, err = parseIntList(v)
			switch a.Name {
			case "lhs_batch_dims":
				in.A.Dot.LhsBatch = l
			case "rhs_batch_dims":
				in.A.Dot.RhsBatch = l
			case "lhs_contracting_dims":
				in.A.Dot.LhsContract = l
			default:
				in.A.Dot.RhsContract = l
			}
		case "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
			"start_indices_batching_dims", "slice_sizes":
			if in.A.Gather == nil {
				in.A.Gather = &GatherDims{}
			}
			var l []int64
			l, err = parseIntList(v)
			g := in.A.Gather
			*map[string]*[]int64{"offset_dims": &g.OffsetDims, "collapsed_slice_dims": &g.CollapsedSliceDims,
				"start_index_map": &g.StartIndexMap, "operand_batching_dims": &g.OperandBatchingDims,
				"start_indices_batching_dims": &g.StartIndicesBatchingDims, "slice_sizes": &g.SliceSizes}[a.Name] = l
		case "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
			"scatter_indices_batching_dims":
			if in.A.Scatter == nil {
				in.A.Scatter = &ScatterDims{}
			}
			var l []int64
			l, err = parseIntList(v)
			s := in.A.Scatter
			*map[string]*[]int64{"update_window_dims": &s.UpdateWindowDims, "inserted_window_dims": &s.InsertedWindowDims,
				"scatter_dims_to_operand_dims": &s.ScatterDimsToOperandDims, "input_batching_dims": &s.InputBatchingDims,
				"scatter_indices_batching_dims": &s.ScatterIndicesBatchingDims}[a.Name] = l
		case "index_vector_dim", "indices_are_sorted", "unique_indices":
			// Shared by gather and scatter; assigned once the op is known below.
		case "direction":
			if !comparisonDirections[v] {
				err = fmt.Errorf("want EQ, NE, LT, LE, GT or GE")
			}
			in.A.Direction = v
		case "type":
			if in.Op == OpCompare {
				switch v {
				case "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "PARTIALORDER":
					in.A.CompareType = v
				default:
					err = fmt.Errorf("want FLOAT, TOTALORDER, SIGNED or UNSIGNED")
				}
			}
		case "index":
			in.A.Index, err = strconv.ParseInt(v, 10, 64)
		case "iota_dimension":
			in.A.IotaDim, err = strconv.ParseInt(v, 10, 64)
		case "is_stable":
			in.A.IsStable, err = strconv.ParseBool(v)
		case "num_carries":
			in.A.NumCarries, err = strconv.ParseInt(v, 10, 64)
		case "is_reverse":
			in.A.IsReverse, err = strconv.ParseBool(v)
		case "is_associative":
			_, err = strconv.ParseBool(v) // a hint to XLA's scan rewriters: the scan's order is its meaning
		case "k":
			in.A.K, err = strconv.ParseInt(v, 10, 64)
		case "largest":
			in.A.Largest, err = strconv.ParseBool(v)
		case "exponent_bits":
			in.A.ExponentBits, err = strconv.ParseInt(v, 10, 64)
		case "mantissa_bits":
			in.A.MantissaBits, err = strconv.ParseInt(v, 10, 64)
		case "algorithm":
			if strings.HasPrefix(v, "dot_") {
				in.A.DotAlgorithm, err = v, DotAlgorithmName(v)
			} else {
				in.A.RngAlgorithm = v
			}
		case "distribution":
			in.A.Distribution = v
		case "custom_call_target":
			in.A.Target = strings.Trim(v, `"`)
		case "custom_call_has_side_effect":
			in.A.SideEffect, err = strconv.ParseBool(v)
		case "fft_type":
			switch v {
			case "FFT", "IFFT", "RFFT", "IRFFT":
				in.A.FftType = v
			default:
				err = fmt.Errorf("want FFT, IFFT, RFFT or IRFFT")
			}
		case "fft_length":
			in.A.FftLength, err = parseIntList(v)
		case "left_side":
			in.A.LeftSide, err = strconv.ParseBool(v)
		case "lower":
			in.A.Lower, err = strconv.ParseBool(v)
		case "unit_diagonal":
			in.A.UnitDiagonal, err = strconv.ParseBool(v)
		case "transpose_a":
			switch v {
			case "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT":
				in.A.TransposeA = v
			default:
				err = fmt.Errorf("want NO_TRANSPOSE, TRANSPOSE or ADJOINT")
			}
		}
		if err != nil {
			return bad(err)
		}
	}
	ivd, hasIVD := in.AttrValue("index_vector_dim")
	var ivdN int64
	if hasIVD {
		if ivdN, err = strconv.ParseInt(ivd, 10, 64); err != nil {
			return &Error{Pos: in.Attr("index_vector_dim").Pos, Msg: fmt.Sprintf("%s: bad index_vector_dim=%s", in.Name, ivd)}
		}
	}
	boolAttr := func(name string) (bool, error) {
		v, ok := in.AttrValue(name)
		if !ok {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, &Error{Pos: in.Attr(name).Pos, Msg: fmt.Sprintf("%s: bad %s=%s", in.Name, name, v)}
		}
		return b, nil
	}
	sorted, err := boolAttr("indices_are_sorted")
	if err != nil {
		return err
	}
	unique, err := boolAttr("unique_indices")
	if err != nil {
		return err
	}
	switch in.Op {
	case OpGather:
		if in.A.Gather == nil {
			in.A.Gather = &GatherDims{}
		}
		in.A.Gather.IndexVectorDim, in.A.Gather.IndicesAreSorted = ivdN, sorted
	case OpScatter:
		if in.A.Scatter == nil {
			in.A.Scatter = &ScatterDims{}
		}
		in.A.Scatter.IndexVectorDim, in.A.Scatter.IndicesAreSorted, in.A.Scatter.UniqueIndices = ivdN, sorted, unique
	case OpDot:
		if in.A.Dot == nil {
			in.A.Dot = &DotDims{}
		}
	case OpReduceWindow, OpSelectAndScatter:
		// An absent window is the empty one (a scalar's), as XLA's
		// parser makes it; the evaluator and lower read it.
		if in.A.Window == nil {
			in.A.Window = &Window{}
		}
	}
	return nil
}

// parseIntList reads "{1,2,3}" or "{}".
func parseIntList(v string) ([]int64, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, fmt.Errorf("want {n,...}")
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	out := []int64{}
	if body == "" {
		return out, nil
	}
	for _, f := range strings.Split(body, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", strings.TrimSpace(f))
		}
		out = append(out, n)
	}
	return out, nil
}

// parseSlice reads "{[0:2], [1:3:2]}".
func parseSlice(v string) ([]SliceDim, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, fmt.Errorf("want {[start:limit:stride], ...}")
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	out := []SliceDim{}
	if body == "" {
		return out, nil
	}
	for _, f := range strings.Split(body, ",") {
		f = strings.TrimSpace(f)
		if !strings.HasPrefix(f, "[") || !strings.HasSuffix(f, "]") {
			return nil, fmt.Errorf("%q is not [start:limit]", f)
		}
		parts := strings.Split(f[1:len(f)-1], ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("%q is not [start:limit:stride]", f)
		}
		d := SliceDim{Stride: 1}
		nums := []*int64{&d.Start, &d.Limit, &d.Stride}
		for i, s := range parts {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", s)
			}
			*nums[i] = n
		}
		out = append(out, d)
	}
	return out, nil
}

// parsePadding reads "0_0x1_2_1": low_high[_interior] per dimension.
func parsePadding(v string) ([]PadDim, error) {
	out := []PadDim{}
	if strings.TrimSpace(v) == "" || v == "{}" {
		return out, nil
	}
	for _, f := range strings.Split(v, "x") {
		parts := strings.Split(f, "_")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("%q is not low_high[_interior]", f)
		}
		var d PadDim
		nums := []*int64{&d.Lo, &d.Hi, &d.Interior}
		for i, s := range parts {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", s)
			}
			*nums[i] = n
		}
		out = append(out, d)
	}
	return out, nil
}

// parseWindow reads "{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}".
func parseWindow(v string) (*Window, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, fmt.Errorf("want {size=... stride=... pad=...}")
	}
	fields := strings.Fields(v[1 : len(v)-1])
	w := &Window{}
	get := func(i int) *WindowDim {
		for len(w.Dims) <= i {
			w.Dims = append(w.Dims, WindowDim{Stride: 1, LhsDilate: 1, RhsDilate: 1})
		}
		return &w.Dims[i]
	}
	sawSize := false
	for _, f := range fields {
		kv := strings.SplitN(f, "=", 2)
		if len(kv) != 2 {
			return nil, fmt.Errorf("%q is not key=value", f)
		}
		parts := strings.Split(kv[1], "x")
		for i, s := range parts {
			d := get(i)
			switch kv[0] {
			case "pad":
				lh := strings.Split(s, "_")
				if len(lh) != 2 {
					return nil, fmt.Errorf("pad %q is not low_high", s)
				}
				lo, e1 := strconv.ParseInt(lh[0], 10, 64)
				hi, e2 := strconv.ParseInt(lh[1], 10, 64)
				if e1 != nil || e2 != nil {
					return nil, fmt.Errorf("pad %q is not low_high", s)
				}
				d.PadLo, d.PadHi = lo, hi
			case "size", "stride", "lhs_dilate", "rhs_dilate", "rhs_reversal":
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s %q is not an integer", kv[0], s)
				}
				switch kv[0] {
				case "size":
					d.Size, sawSize = n, true
				case "stride":
					d.Stride = n
				case "lhs_dilate":
					d.LhsDilate = n
				case "rhs_dilate":
					d.RhsDilate = n
				default:
					d.Reversal = n != 0
				}
			default:
				return nil, fmt.Errorf("unknown window field %q", kv[0])
			}
		}
	}
	if len(w.Dims) > 0 && !sawSize {
		return nil, fmt.Errorf("window has no size")
	}
	return w, nil
}

// parseDimLabels reads convolution dimension labels such as
// "b01f_01io->b01f": batch b, feature f, spatial digits for the input and
// output; input feature i, output feature o, spatial digits for the kernel.
func parseDimLabels(v string) (*ConvDims, error) {
	parts := strings.Split(v, "->")
	if len(parts) != 2 {
		return nil, fmt.Errorf("want lhs_rhs->out")
	}
	io := strings.Split(parts[0], "_")
	if len(io) != 2 {
		return nil, fmt.Errorf("want lhs_rhs->out")
	}
	c := &ConvDims{}
	var err error
	if c.InBatch, c.InFeature, c.InSpatial, err = labels(io[0], 'b', 'f'); err != nil {
		return nil, err
	}
	if c.KIn, c.KOut, c.KSpatial, err = labels(io[1], 'i', 'o'); err != nil {
		return nil, err
	}
	if c.OutBatch, c.OutFeature, c.OutSpatial, err = labels(parts[1], 'b', 'f'); err != nil {
		return nil, err
	}
	if len(c.InSpatial) != len(c.KSpatial) || len(c.InSpatial) != len(c.OutSpatial) {
		return nil, fmt.Errorf("spatial dimension counts differ")
	}
	return c, nil
}

func labels(s string, a, b byte) (int64, int64, []int64, error) {
	ia, ib := int64(-1), int64(-1)
	var spatial []int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == a:
			ia = int64(i)
		case c == b:
			ib = int64(i)
		case c >= '0' && c <= '9':
			n := int(c - '0')
			for len(spatial) <= n {
				spatial = append(spatial, -1)
			}
			spatial[n] = int64(i)
		default:
			return 0, 0, nil, fmt.Errorf("unexpected %q in %q", c, s)
		}
	}
	if ia < 0 || ib < 0 {
		return 0, 0, nil, fmt.Errorf("%q needs %c and %c", s, a, b)
	}
	for _, d := range spatial {
		if d < 0 {
			return 0, 0, nil, fmt.Errorf("%q skips a spatial dimension", s)
		}
	}
	if spatial == nil {
		spatial = []int64{}
	}
	return ia, ib, spatial, nil
}
