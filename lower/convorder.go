package lower

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// canonicalConvs gives a 2-D convolution whose dimension numbers are not
// the implicit GEMM's (input and output b01f, kernel 01io: NHWC and
// HWIO) those orders by transposes of its operands and result, where the
// implicit GEMM then takes it (kgen.convGemmOf). JAX's lax.conv defaults
// to NCHW and OIHW, TensorFlow's graphs have kernels in 01oi, and the
// direct kernel that computes other orders is a loop over the window and
// input features per output element: a 3x3 convolution of
// f32[16,28,28,128] by a 01oi kernel took 1.47 s by it and 36 ms
// transposed (about 100 GFLOP/s on lavapipe). A transpose costs a pass
// over its array, little beside a convolution whose features make it a
// GEMM worth tiling.
func canonicalConvs(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpConvolution: func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		return b.canonicalConv(in, s.tg.CPU)
	}})
}

// canonicalDims are the dimension numbers of a convolution of ns
// spatial dimensions in the orders the implicit GEMM takes, b01f_01io->
// b01f for 2-D (convLabels(ns)); a new value each time: passes may edit
// an instruction's attributes in place.
func canonicalDims(ns int) *hlo.ConvDims {
	f := int64(ns + 1)
	return &hlo.ConvDims{
		InBatch: 0, InSpatial: iotaFrom(1, ns), InFeature: f,
		KSpatial: iotaFrom(0, ns), KIn: f - 1, KOut: f,
		OutBatch: 0, OutSpatial: iotaFrom(1, ns), OutFeature: f,
	}
}

func (b *expander) canonicalConv(in *hlo.Instruction, cpu bool) (*hlo.Instruction, error) {
	c := in.A.ConvDims
	if c == nil || in.Shape.Rank() != len(c.InSpatial)+2 || in.A.Window == nil {
		return in, nil
	}
	if r := b.widenedConv(in, cpu); r != nil {
		return r, nil
	}
	if r := b.depthwiseFilterGrad(in); r != nil {
		return r, nil
	}
	switch len(c.InSpatial) {
	case 2:
		if dense := b.denseGroups(in, cpu); dense != nil {
			return b.canonical2D(dense, dense.Operands[0], dense.Operands[1]), nil
		}
		if r := b.denseBatchGroups(in, cpu); r != nil {
			return r, nil
		}
		return b.canonical2D(in, in.Operands[0], in.Operands[1]), nil
	case 1:
		// A 1-D convolution (audio, text, a Conformer's) is the 2-D one
		// of a unit dimension more, after the others in each operand and
		// the result, a window of one tap along it: the GEMM's where the
		// 2-D one is (1024 features by 64 taps: 1195 -> 57 ms on
		// lavapipe).
		two := *in
		cd := *c
		cd.InSpatial, cd.KSpatial, cd.OutSpatial = []int64{c.InSpatial[0], 3}, []int64{c.KSpatial[0], 3}, []int64{c.OutSpatial[0], 3}
		two.A.ConvDims = &cd
		withWindow(&two, &hlo.Window{Dims: []hlo.WindowDim{in.A.Window.Dims[0], {Size: 1, Stride: 1, LhsDilate: 1, RhsDilate: 1}}})
		unit := func(s hlo.Shape) hlo.Shape { return hlo.ArrayShape(s.Elem, append(slices.Clone(s.Dims), 1)...) }
		two.Shape = unit(in.Shape)
		two.Operands = []*hlo.Instruction{{Shape: unit(in.Operands[0].Shape)}, {Shape: unit(in.Operands[1].Shape)}}
		if !takesGemm(&two) {
			return in, nil
		}
		x, k := b.reshape(in.Operands[0], two.Operands[0].Shape.Dims...), b.reshape(in.Operands[1], two.Operands[1].Shape.Dims...)
		return b.reshape(b.canonical2D(&two, x, k), in.Shape.Dims...), nil
	}
	return b.depthTaps(in)
}

// The kernel gradient of a depthwise convolution is a convolution of
// as many batch groups as features, each group one input batch element
// (a feature of the input) and one output feature: output (tap t,
// feature o) sums x[i, p + t, o] * g[i, p, o] over the batch i and the
// positions p. Its kernel ran one invocation per output, each a serial
// loop over every batch element and position (32,768 steps for
// f32[8,64,64,256]: 150 ms on lavapipe), and dense it would do the
// features times the work. Per tap it is the product of a slice of the
// padded input and the gradient, reduced over all but the feature; up
// to tapsPerReduce taps are one variadic reduction that keeps its
// operands' minor dimension, whose vector lanes fold 8 features a step
// (kgen's columnLanes), reading the gradient once a step.

// maxFilterTaps bounds the taps of a depthwise kernel gradient computed
// as reductions of tap products (depthwiseFilterGrad).
const maxFilterTaps = 64

// depthwiseFilterGrad is the depthwise kernel gradient in as reductions
// of its taps' products, or nil where in is not one (stride
// 1, no dilation or reversal, one float type, at most maxFilterTaps
// taps).
func (b *expander) depthwiseFilterGrad(in *hlo.Instruction) *hlo.Instruction {
	c, w := in.A.ConvDims, in.A.Window
	x, k := in.Operands[0], in.Operands[1]
	g, t := in.A.BatchGroups, in.Shape.Elem
	if g < 2 || max(in.A.FeatureGroups, 1) != 1 || k.Shape.Dims[c.KOut] != g || x.Shape.Dims[c.InBatch] != g ||
		in.Shape.Dims[c.OutBatch] != 1 || x.Shape.Elem != t || k.Shape.Elem != t || !t.IsFloat() || t.Bits() < 16 {
		return nil
	}
	ns := len(c.InSpatial)
	taps := make([]int64, ns)
	count := int64(1)
	for i, wd := range w.Dims {
		if wd.Stride != 1 || wd.LhsDilate != 1 || wd.RhsDilate != 1 || wd.Reversal {
			return nil
		}
		taps[i] = in.Shape.Dims[c.OutSpatial[i]]
		count *= taps[i]
	}
	if count > maxFilterTaps {
		return nil
	}
	// Both as [batch i, spatial..., feature o]; the input padded.
	pads := make([]hlo.PadDim, x.Shape.Rank())
	for i, wd := range w.Dims {
		pads[c.InSpatial[i]] = hlo.PadDim{Lo: wd.PadLo, Hi: wd.PadHi}
	}
	// Narrower floats summed in f32 and rounded once, as the direct
	// kernel sums them.
	at := t
	if t.Bits() < 32 {
		at = hlo.F32
		x, k = b.convert(x, at), b.convert(k, at)
	}
	xt := b.transposeIf(b.pad(x, pads, b.constant(at, 0)), slices.Concat([]int64{c.InFeature}, c.InSpatial, []int64{c.InBatch}))
	kt := b.transposeIf(k, slices.Concat([]int64{c.KIn}, c.KSpatial, []int64{c.KOut}))
	// A reduction of the products of up to tapsPerReduce taps: each step
	// reads the gradient once and the input at each tap.
	var rows []*hlo.Instruction
	all := combinations(taps)
	groups := (len(all) + tapsPerReduce - 1) / tapsPerReduce
	for part := 0; len(all) > 0; part++ {
		n := (len(all) + groups - 1) / groups
		rows = append(rows, b.tapSums(all[:n], xt, kt, g, at, part)...)
		all, groups = all[n:], groups-1
	}
	// [taps..., 1, o], then in the result's order.
	st := b.reshape(b.concat(0, rows...), slices.Concat(taps, []int64{1, g})...)
	perm := make([]int64, ns+2)
	for i := range ns {
		perm[c.OutSpatial[i]] = int64(i)
	}
	perm[c.OutBatch], perm[c.OutFeature] = int64(ns), int64(ns+1)
	return b.convert(b.transposeIf(st, perm), t)
}

// tapsPerReduce bounds the taps one reduction of a depthwise kernel
// gradient sums: each is a result, an init and a partial result of its
// split reduction to bind (49 taps bound 147 buffers, lavapipe allows
// 32).
const tapsPerReduce = 9

// tapSums is, for each tap of taps, the sum over all but the last
// dimension of the products of xt's slice at the tap and kt (both of
// type t, [batch, spatial..., g]), reshaped to [1, g]: one variadic
// reduction, part of the kernel gradient's.
func (b *expander) tapSums(taps [][]int64, xt, kt *hlo.Instruction, g int64, t hlo.ElementType, part int) []*hlo.Instruction {
	ns := kt.Shape.Rank() - 2
	var prods, zeros []*hlo.Instruction
	sums := make([]hlo.Shape, len(taps))
	for i, tap := range taps {
		sl := b.block(xt, slices.Concat([]int64{0}, tap, []int64{0}), kt.Shape.Dims)
		prods, zeros = append(prods, b.binary(hlo.OpMultiply, sl, kt)), append(zeros, b.constant(t, 0))
		sums[i] = hlo.ArrayShape(t, g)
	}
	shape := sums[0]
	if len(sums) > 1 {
		shape = hlo.TupleShape(sums...)
	}
	r := b.inst(hlo.OpReduce, shape, slices.Concat(prods, zeros)...)
	r.A.Dimensions, r.A.HasDimensions = iotaDims(ns+1), true
	r.Called = []*hlo.Computation{b.sums(fmt.Sprintf("/sums%d", part), t, len(prods))}
	var rows []*hlo.Instruction
	for _, v := range b.leaves(r, len(prods)) {
		rows = append(rows, b.reshape(v, 1, g))
	}
	return rows
}

// sums is the reducer of n sums of type t at once, named after the
// instruction b expands and suffix.
func (b *expander) sums(suffix string, t hlo.ElementType, n int) *hlo.Computation {
	ts := make([]hlo.ElementType, 2*n)
	for i := range ts {
		ts[i] = t
	}
	c := b.scalarComputation(suffix, ts...)
	in := &expander{from: b.from, n: b.n}
	adds := make([]*hlo.Instruction, n)
	for i := range adds {
		adds[i] = in.binary(hlo.OpAdd, c.Params[i], c.Params[n+i])
	}
	if n == 1 {
		c.Root = adds[0]
	} else {
		c.Root = in.tuple(adds...)
	}
	c.Instructions = append(c.Instructions, in.out...)
	return c
}

// depthTaps is a convolution of three or more spatial dimensions (video,
// volumes) as the sum over the taps of its first window dimension of
// convolutions of one dimension fewer, that dimension's output positions
// folded into the batch: tap z reads, for output position o, input
// position o*stride + z*dilation of the padded input, a strided slice
// of it. Each is then a 2-D convolution the implicit GEMM takes (a
// 3x3x3 convolution of f32[2,16,32,32,32] to 64 features: 1817 -> 48 ms
// on lavapipe). Where the 2-D convolution would not take the GEMM (or
// the first dimension is dilated, or batch groups split the batch), the
// convolution stays as it is.
func (b *expander) depthTaps(in *hlo.Instruction) (*hlo.Instruction, error) {
	c := in.A.ConvDims
	ns := len(c.InSpatial)
	wd := in.A.Window.Dims[0]
	if ns < 3 || in.A.BatchGroups > 1 || max(wd.LhsDilate, 1) != 1 || wd.Reversal || wd.Size < 1 || in.Shape.NumElements() == 0 {
		return in, nil
	}
	x, k := in.Operands[0], in.Operands[1]
	// Operands in [batch, spatial..., feature] and [spatial..., in, out]
	// orders, the result computed in [batch, spatial..., feature].
	lPerm, kPerm, oPerm := convPerms(c)
	xs, ks, os := transposedShape(x.Shape, lPerm), transposedShape(k.Shape, kPerm), transposedShape(in.Shape, oPerm)
	nb, do := xs.Dims[0], os.Dims[1]
	sub := *in
	sub.A.ConvDims = canonicalDims(ns - 1)
	withWindow(&sub, &hlo.Window{Dims: slices.Clone(in.A.Window.Dims[1:])})
	sub.Attrs = withAttr(sub.Attrs, "dim_labels", convLabels(ns-1))
	sub.Shape = hlo.ArrayShape(in.Shape.Elem, slices.Concat([]int64{nb * do}, os.Dims[2:])...)
	sub.Operands = []*hlo.Instruction{
		{Shape: hlo.ArrayShape(x.Shape.Elem, slices.Concat([]int64{nb * do}, xs.Dims[2:])...)},
		{Shape: hlo.ArrayShape(k.Shape.Elem, ks.Dims[1:]...)},
	}
	if ns-1 == 2 && !takesGemm(&sub) {
		return in, nil
	}
	xt, kt := b.transposeIf(x, lPerm), b.transposeIf(k, kPerm)
	// The first dimension padded (negative padding sliced off).
	lo, hi := wd.PadLo, wd.PadHi
	if lo < 0 || hi < 0 {
		xt = b.slice(xt, 1, max(-lo, 0), xs.Dims[1]-max(-hi, 0))
		lo, hi = max(lo, 0), max(hi, 0)
	}
	if lo > 0 || hi > 0 {
		xt = b.padAlong(xt, 1, lo, hi, b.constant(x.Shape.Elem, 0))
	}
	stride, rd := max(wd.Stride, 1), max(wd.RhsDilate, 1)
	var sums []*hlo.Instruction
	for z := range wd.Size {
		xz := b.strided(xt, 1, z*rd, z*rd+(do-1)*stride+1, stride)
		kz := b.reshape(b.slice(kt, 0, z, z+1), ks.Dims[1:]...)
		conv := sub
		conv.Operands = []*hlo.Instruction{b.reshape(xz, sub.Operands[0].Shape.Dims...), kz}
		r, err := b.depthTaps(&conv) // more dimensions to fold, or conv
		if err != nil {
			return nil, err
		}
		if r == &conv {
			r = b.place(&conv)
		}
		sums = append(sums, b.reshape(r, os.Dims...))
	}
	return b.transposeIf(b.foldTree(hlo.OpAdd, sums), inversePerm(oPerm)), nil
}

// iotaFrom is [from, from+1, ..., from+n-1].
func iotaFrom(from int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// convLabels are canonicalDims(ns) as dim_labels: b01f_01io->b01f and
// the like.
func convLabels(ns int) string {
	sp := ""
	for i := range ns {
		sp += strconv.Itoa(i)
	}
	return "b" + sp + "f_" + sp + "io->b" + sp + "f"
}

// widenedConv is convolution in of f16 or bf16 operands or result
// computed in f32, its operands converted and its result rounded back
// once, where the f32 convolution's canonical forms include an implicit
// GEMM (the GEMM's convolutions are f32), else nil. XLA's CPU backend
// computes narrow convolutions so (its float normalization); the direct
// kernel also accumulates in f32, so only the order of the sums
// changes. A 3x3 stride-2 bf16 convolution of [8,64,64,64] to 128
// features: 1170 -> 25 ms on lavapipe.
func (b *expander) widenedConv(in *hlo.Instruction, cpu bool) *hlo.Instruction {
	types := []hlo.ElementType{in.Operands[0].Shape.Elem, in.Operands[1].Shape.Elem, in.Shape.Elem}
	narrow := func(t hlo.ElementType) bool { return t == hlo.F16 || t == hlo.BF16 }
	if !slices.ContainsFunc(types, narrow) || slices.ContainsFunc(types, func(t hlo.ElementType) bool { return !narrow(t) && t != hlo.F32 }) {
		return nil
	}
	// Tried in an expander of its own, kept where it made a GEMM.
	trial := &expander{from: b.from, n: b.n}
	c32 := *in
	c32.Operands = []*hlo.Instruction{trial.convert(in.Operands[0], hlo.F32), trial.convert(in.Operands[1], hlo.F32)}
	c32.Shape = hlo.ArrayShape(hlo.F32, in.Shape.Dims...)
	r, err := trial.canonicalConv(&c32, cpu)
	if err != nil || r == &c32 || !slices.ContainsFunc(trial.out, func(x *hlo.Instruction) bool {
		return x.Op == hlo.OpConvolution && kgen.GemmOf(x) != nil
	}) {
		return nil
	}
	b.out = append(b.out, trial.out...)
	return b.convert(r, in.Shape.Elem)
}

// maxDenseGroups bounds the groups of a convolution computed as
// the dense one of a block-diagonal kernel (XLA's convolution group
// converter expands filters so), on CPUs and on GPUs. The dense
// convolution does groups times the multiply-adds as an implicit GEMM;
// the grouped one runs the direct kernel. Lavapipe, f32[8,56,56,128] by
// 3x3 to 128 features: the dense convolution 54 ms; grouped, 4 groups
// 779 ms, 8 groups 404, 32 groups 105 (the direct kernel ~1 GMAC/s, the
// GEMM ~70): past about 60 groups the direct kernel wins. A GPU's
// direct kernel is less far behind its GEMM. A depthwise convolution
// whose vector lanes fold together (kgen.DepthwiseLanes) stays at any
// count: f32[8,112,112,32] by 3x3, 32 groups dense 31.4-32.8 ms, depthwise
// lanes 8.7.
func maxDenseGroups(cpu bool) int64 {
	if cpu {
		return 32
	}
	return 8
}

// denseGroups is 2-D convolution in of feature groups as the dense
// convolution of its kernel made block-diagonal (an unplaced
// instruction, its kernel placed), where the GEMM takes that and the
// groups are few enough (maxDenseGroups), else nil: group g's outputs
// read its own input features, zeros weight the others.
func (b *expander) denseGroups(in *hlo.Instruction, cpu bool) *hlo.Instruction {
	g := in.A.FeatureGroups
	if g <= 1 || g > maxDenseGroups(cpu) || in.A.BatchGroups > 1 || kgen.DepthwiseLanes(in, kgen.VectorWidth) {
		return nil
	}
	c := in.A.ConvDims
	k := in.Operands[1]
	ciG, out := k.Shape.Dims[c.KIn], k.Shape.Dims[c.KOut]
	dims := slices.Clone(k.Shape.Dims)
	dims[c.KIn] = ciG * g
	dense := *in
	dense.A.FeatureGroups = 1
	dense.Attrs = withAttr(in.Attrs, "feature_group_count", "1")
	dense.Operands = []*hlo.Instruction{in.Operands[0], {Shape: hlo.ArrayShape(k.Shape.Elem, dims...)}}
	if !takesGemm(&dense) {
		return nil
	}
	// G copies of the kernel along its input features; input feature
	// i weighs output o where i / ciG == o / (out/G).
	copies := make([]*hlo.Instruction, g)
	for i := range copies {
		copies[i] = k
	}
	tiled := b.concat(int(c.KIn), copies...)
	ig := b.binary(hlo.OpDivide, b.iota(hlo.S32, int(c.KIn), dims...), b.constant(hlo.S32, ciG))
	og := b.binary(hlo.OpDivide, b.iota(hlo.S32, int(c.KOut), dims...), b.constant(hlo.S32, out/g))
	dense.Operands[1] = b.sel(b.compare(ig, og, "EQ"), tiled, b.zeros(tiled.Shape))
	return &dense
}

// denseBatchGroups is 2-D convolution in of batch groups (the kernel
// gradient of a grouped convolution: output feature group g reads input
// batch group g) as the diagonal blocks of the dense convolution of
// every input batch with every output feature, where the GEMM takes that
// and the groups are few enough (maxDenseGroups), else nil. The blocks
// are slices, joined along the output features: no arithmetic beyond
// the dense convolution's.
func (b *expander) denseBatchGroups(in *hlo.Instruction, cpu bool) *hlo.Instruction {
	g := in.A.BatchGroups
	if g <= 1 || g > maxDenseGroups(cpu) || in.A.FeatureGroups > 1 {
		return nil
	}
	c := in.A.ConvDims
	ob, of := int(c.OutBatch), int(c.OutFeature)
	nb, nf := in.Shape.Dims[ob], in.Shape.Dims[of]/g // per group
	dense := *in
	dense.A.BatchGroups = 1
	dense.Attrs = withAttr(in.Attrs, "batch_group_count", "1")
	dense.Shape = hlo.ArrayShape(in.Shape.Elem, slices.Clone(in.Shape.Dims)...)
	dense.Shape.Dims[ob] = nb * g
	if !takesGemm(&dense) {
		return nil
	}
	d := b.canonical2D(&dense, in.Operands[0], in.Operands[1])
	blocks := make([]*hlo.Instruction, g)
	for i := range g {
		blocks[i] = b.slice(b.slice(d, ob, i*nb, (i+1)*nb), of, i*nf, (i+1)*nf)
	}
	return b.concat(of, blocks...)
}

// convPerms are the transposes that give conv's input, kernel and
// result the canonical orders ([batch, spatial..., feature] and
// [spatial..., in, out]).
func convPerms(c *hlo.ConvDims) (lPerm, kPerm, oPerm []int64) {
	return slices.Concat([]int64{c.InBatch}, c.InSpatial, []int64{c.InFeature}),
		slices.Concat(c.KSpatial, []int64{c.KIn, c.KOut}),
		slices.Concat([]int64{c.OutBatch}, c.OutSpatial, []int64{c.OutFeature})
}

// inversePerm is the transpose that undoes transpose perm.
func inversePerm(perm []int64) []int64 {
	back := make([]int64, len(perm))
	for i, d := range perm {
		back[d] = int64(i)
	}
	return back
}

// canonicalTemplate is 2-D convolution conv in the canonical orders, its
// operands unplaced stand-ins of their shapes.
func canonicalTemplate(conv *hlo.Instruction) *hlo.Instruction {
	lPerm, kPerm, oPerm := convPerms(conv.A.ConvDims)
	t := *conv
	t.A.ConvDims = canonicalDims(2)
	t.Operands = []*hlo.Instruction{
		{Op: hlo.OpTranspose, Shape: transposedShape(conv.Operands[0].Shape, lPerm)},
		{Op: hlo.OpTranspose, Shape: transposedShape(conv.Operands[1].Shape, kPerm)},
	}
	t.Shape = transposedShape(conv.Shape, oPerm)
	t.Attrs = withAttr(conv.Attrs, "dim_labels", convLabels(2))
	return &t
}

// takesGemm reports whether the implicit GEMM takes 2-D convolution conv
// in the canonical orders (types, groups, dilations, feature counts).
func takesGemm(conv *hlo.Instruction) bool {
	return kgen.GemmOf(canonicalTemplate(conv)) != nil
}

// canonical2D is 2-D convolution conv (or its template) of input x and
// kernel k, placed in the canonical orders between transposes where the
// GEMM then takes it, else as it is.
func (b *expander) canonical2D(conv, x, k *hlo.Instruction) *hlo.Instruction {
	place := func(c *hlo.Instruction) *hlo.Instruction {
		if c == b.from && c.Operands[0] == x && c.Operands[1] == k {
			return c // the instruction expanded, unchanged
		}
		d := *c
		d.Operands = []*hlo.Instruction{x, k}
		return b.place(&d)
	}
	if isCanonicalConv(conv.A.ConvDims) || !takesGemm(conv) {
		return place(conv)
	}
	lPerm, kPerm, oPerm := convPerms(conv.A.ConvDims)
	x, k = b.transposeIf(x, lPerm), b.transposeIf(k, kPerm)
	return b.transposeIf(place(canonicalTemplate(conv)), inversePerm(oPerm))
}

func isCanonicalConv(c *hlo.ConvDims) bool {
	k := canonicalDims(len(c.InSpatial))
	return c.InBatch == k.InBatch && c.InFeature == k.InFeature && slices.Equal(c.InSpatial, k.InSpatial) &&
		c.KIn == k.KIn && c.KOut == k.KOut && slices.Equal(c.KSpatial, k.KSpatial) &&
		c.OutBatch == k.OutBatch && c.OutFeature == k.OutFeature && slices.Equal(c.OutSpatial, k.OutSpatial)
}

// transposedShape is s with its dimension i s's perm[i] (a transpose's shape).
func transposedShape(s hlo.Shape, perm []int64) hlo.Shape {
	dims := make([]int64, len(perm))
	for i, p := range perm {
		dims[i] = s.Dims[p]
	}
	return hlo.ArrayShape(s.Elem, dims...)
}

// transposeIf is b.transpose(x, perm), or x where perm keeps the order.
func (b *expander) transposeIf(x *hlo.Instruction, perm []int64) *hlo.Instruction {
	for i, p := range perm {
		if p != int64(i) {
			return b.transpose(x, perm...)
		}
	}
	return x
}

// withAttr is attrs with name's value set to value (its verbatim text,
// which the printer writes).
func withAttr(attrs []hlo.Attr, name, value string) []hlo.Attr {
	out := append([]hlo.Attr{}, attrs...)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = value
			return out
		}
	}
	return append(out, hlo.Attr{Name: name, Value: value})
}
