package stablehlo

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The collectives: how each splits a run_parallel's grid into process
// groups (the specification's strategies) and what each process of a
// group receives, as data movement between the processes' values.

// strategy is how a collective splits the grid into process groups
// (the specification's cross_replica, cross_partition,
// cross_replica_and_partition and flattened_ids).
type strategy int

const (
	crossReplica strategy = iota
	crossPartition
	crossReplicaAndPartition
	flattenedIDs
)

// processGroups applies s to groups of replica, partition or flattened
// process ids; no groups at all means one group of every id.
func (g grid) processGroups(s strategy, groups [][]int) ([][]int, error) {
	n, what := g.replicas, "replicas"
	switch s {
	case crossPartition:
		n, what = g.partitions, "partitions"
	case flattenedIDs:
		n, what = g.size(), "processes"
	}
	if len(groups) == 0 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		groups = [][]int{all}
	}
	for _, gr := range groups {
		for _, id := range gr {
			if id >= n {
				return nil, fmt.Errorf("a group names %d, and the grid has %d %s", id, n, what)
			}
		}
	}
	P := g.partitions
	var out [][]int
	for _, gr := range groups {
		switch s {
		case crossReplica:
			for p := 0; p < P; p++ {
				var pg []int
				for _, r := range gr {
					pg = append(pg, r*P+p)
				}
				out = append(out, pg)
			}
		case crossPartition:
			for r := 0; r < g.replicas; r++ {
				var pg []int
				for _, p := range gr {
					pg = append(pg, r*P+p)
				}
				out = append(out, pg)
			}
		case crossReplicaAndPartition:
			var pg []int
			for p := 0; p < P; p++ {
				for _, r := range gr {
					pg = append(pg, r*P+p)
				}
			}
			out = append(out, pg)
		case flattenedIDs:
			out = append(out, gr)
		}
	}
	return out, nil
}

var channelHandleRE = regexp.MustCompile(`handle\s*=\s*(-?\d+)`)

// channelID is an op's channel: its channel_handle's handle (or
// channel_id), 0 when it has none.
func channelID(op *Op) (int64, error) {
	if a := op.Attr("channel_handle"); a != nil {
		m := channelHandleRE.FindStringSubmatch(a.Body)
		if m == nil {
			return 0, fmt.Errorf("channel_handle %s names no handle", a.Describe())
		}
		return strconv.ParseInt(m[1], 10, 64)
	}
	if a := op.Attr("channel_id"); a != nil {
		return a.Int()
	}
	return 0, nil
}

// idGroups reads a 2-dimensional integer attribute (replica_groups,
// source_target_pairs) as its rows, leaving out the -1s that pad
// ragged groups.
func idGroups(op *Op, name string) ([][]int, error) {
	a := op.Attr(name)
	if a == nil {
		return nil, nil
	}
	v, err := a.Ints()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(v) == 0 {
		return nil, nil
	}
	if a.Type == nil || len(a.Type.Dims) != 2 || a.Type.Dims[0]*a.Type.Dims[1] != int64(len(v)) {
		return nil, fmt.Errorf("%s must be a 2-dimensional tensor", name)
	}
	cols := int(a.Type.Dims[1])
	var out [][]int
	for i := 0; i < len(v); i += cols {
		var g []int
		for _, id := range v[i : i+cols] {
			if id >= 0 {
				g = append(g, int(id))
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// collective is one collective op's rules.
type collective struct {
	// partitioned: a positive channel_id makes the groups
	// cross_replica_and_partition (flattened_ids with
	// use_global_device_ids); otherwise it makes them cross_partition.
	partitioned bool
	// pairs: the groups are source_target_pairs, and a process joins
	// every process of its grid's row (cross_partition) or column
	// (cross_replica); otherwise a process joins its group.
	pairs bool
	// outsiders: a process in no group receives zeros (and joins no
	// other); otherwise every process must be in a group.
	outsiders bool
	// combine makes each member's results from all members' operands
	// (args[i] are members[i]'s, members in the group's order).
	combine func(c *opContext, groups [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error)
}

// collectives are the collective ops by name.
var collectives map[string]*collective

func init() {
	collectives = map[string]*collective{
		"stablehlo.all_reduce":           {partitioned: true, combine: allReduce},
		"stablehlo.all_gather":           {partitioned: true, combine: allGather},
		"stablehlo.reduce_scatter":       {partitioned: true, combine: reduceScatter},
		"stablehlo.all_to_all":           {combine: allToAll},
		"stablehlo.collective_permute":   {pairs: true, combine: collectivePermute},
		"stablehlo.collective_broadcast": {outsiders: true, combine: collectiveBroadcast},
		// collective_reduce is the reference interpreter's: the group's
		// first process receives the reduction, the others zeros.
		"stablehlo.collective_reduce": {partitioned: true, combine: collectiveReduce},
	}
}

func (k *collective) strategy(op *Op) (strategy, error) {
	ch, err := channelID(op)
	if err != nil {
		return 0, err
	}
	global := op.Attr("use_global_device_ids") != nil && (&opContext{op: op}).boolean("use_global_device_ids")
	switch {
	case !k.partitioned && ch > 0:
		return crossPartition, nil
	case !k.partitioned:
		return crossReplica, nil
	case global && ch <= 0:
		return 0, fmt.Errorf("use_global_device_ids needs a positive channel_id")
	case global:
		return flattenedIDs, nil
	case ch > 0:
		return crossReplicaAndPartition, nil
	}
	return crossReplica, nil
}

// members returns op's process groups and the processes that process x
// joins at op, in the order op combines them.
func (k *collective) members(op *Op, g grid, x int) (groups [][]int, members []int, err error) {
	s, err := k.strategy(op)
	if err != nil {
		return nil, nil, err
	}
	attr := "replica_groups"
	if k.pairs {
		attr = "source_target_pairs"
	}
	ids, err := idGroups(op, attr)
	if err != nil {
		return nil, nil, err
	}
	if k.pairs {
		for _, p := range ids {
			if len(p) != 2 {
				return nil, nil, fmt.Errorf("source_target_pairs must be pairs")
			}
		}
		if len(ids) == 0 {
			return nil, []int{x}, nil
		}
	}
	if groups, err = g.processGroups(s, ids); err != nil {
		return nil, nil, err
	}
	if k.pairs {
		for id := 0; id < g.size(); id++ {
			if s == crossReplica && id%g.partitions == x%g.partitions || s == crossPartition && id/g.partitions == x/g.partitions {
				members = append(members, id)
			}
		}
		return groups, members, nil
	}
	for _, pg := range groups {
		if slices.Contains(pg, x) {
			return groups, pg, nil
		}
	}
	if k.outsiders {
		return groups, []int{x}, nil
	}
	return nil, nil, fmt.Errorf("process %d is in none of its %s", x, attr)
}

// same gives every one of n members the same results.
func same(res []*hlo.Instruction, n int) [][]*hlo.Instruction {
	out := make([][]*hlo.Instruction, n)
	for i := range out {
		out[i] = res
	}
	return out
}

// operand k of every member.
func column(args [][]*hlo.Instruction, k int) []*hlo.Instruction {
	out := make([]*hlo.Instruction, len(args))
	for i, a := range args {
		out[i] = a[k]
	}
	return out
}

// reduceAll folds xs with the op's reducer, elementwise, in order.
func (c *opContext) reduceAll(xs []*hlo.Instruction) (*hlo.Instruction, error) {
	acc := xs[0]
	if len(xs) == 1 {
		return acc, nil
	}
	comp, err := c.onlyRegion("computation", "reducer")
	if err != nil {
		return nil, err
	}
	dims := make([]int64, acc.Shape.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	for _, x := range xs[1:] {
		if !x.Shape.Equal(acc.Shape) {
			return nil, fmt.Errorf("reduces %s with %s", typeText(acc.Shape), typeText(x.Shape))
		}
		acc = c.cb.Op(hlo.OpMap, acc, x).WithShape(acc.Shape).Set("dimensions", list(dims)).Calls(comp).Instruction
	}
	return acc, nil
}

func allReduce(c *opContext, _ [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	res := make([]*hlo.Instruction, len(args[0]))
	for k := range res {
		r, err := c.reduceAll(column(args, k))
		if err != nil {
			return nil, err
		}
		res[k] = r
	}
	return same(res, len(members)), nil
}

func collectiveReduce(c *opContext, groups [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	all, err := allReduce(c, groups, members, args)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(members); i++ {
		all[i] = c.zerosLike(args[i])
	}
	return all, nil
}

// dimAttr reads an op's dimension attribute, within rank.
func (c *opContext) dimAttr(name string, rank int) (int, error) {
	d, ok, err := c.int(name)
	if err != nil || !ok || d < 0 || d >= int64(rank) {
		return 0, fmt.Errorf("needs %s in [0, %d)", name, rank)
	}
	return int(d), nil
}

func allGather(c *opContext, _ [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	d, err := c.dimAttr("all_gather_dim", args[0][0].Shape.Rank())
	if err != nil {
		return nil, err
	}
	res := make([]*hlo.Instruction, len(args[0]))
	for k := range res {
		res[k] = concat(c.cb, column(args, k), d)
	}
	return same(res, len(members)), nil
}

func reduceScatter(c *opContext, _ [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	d, err := c.dimAttr("scatter_dimension", args[0][0].Shape.Rank())
	if err != nil {
		return nil, err
	}
	out := make([][]*hlo.Instruction, len(members))
	for k := range args[0] {
		r, err := c.reduceAll(column(args, k))
		if err != nil {
			return nil, err
		}
		n := int64(len(members))
		if r.Shape.Dims[d]%n != 0 {
			return nil, fmt.Errorf("scatters dimension %d of size %d over %d processes", d, r.Shape.Dims[d], n)
		}
		part := r.Shape.Dims[d] / n
		for i := range members {
			out[i] = append(out[i], sliceDim(c.cb, r, d, int64(i)*part, int64(i+1)*part))
		}
	}
	return out, nil
}

func allToAll(c *opContext, _ [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	rank := args[0][0].Shape.Rank()
	split, err := c.dimAttr("split_dimension", rank)
	if err != nil {
		return nil, err
	}
	cat, err := c.dimAttr("concat_dimension", rank)
	if err != nil {
		return nil, err
	}
	if n, ok, err := c.int("split_count"); err != nil || !ok || n != int64(len(members)) {
		return nil, fmt.Errorf("needs split_count, the %d processes of its group", len(members))
	}
	out := make([][]*hlo.Instruction, len(members))
	for k := range args[0] {
		for j := range members {
			var parts []*hlo.Instruction
			for _, x := range column(args, k) {
				if x.Shape.Rank() != rank || x.Shape.Dims[split]%int64(len(members)) != 0 {
					return nil, fmt.Errorf("splits %s into %d parts", typeText(x.Shape), len(members))
				}
				part := x.Shape.Dims[split] / int64(len(members))
				parts = append(parts, sliceDim(c.cb, x, split, int64(j)*part, int64(j+1)*part))
			}
			out[j] = append(out[j], concat(c.cb, parts, cat))
		}
	}
	return out, nil
}

func collectivePermute(c *opContext, groups [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	out := make([][]*hlo.Instruction, len(members))
	for i, id := range members {
		out[i] = c.zerosLike(args[i])
		for _, pair := range groups {
			if pair[1] == id {
				out[i] = args[slices.Index(members, pair[0])]
			}
		}
	}
	return out, nil
}

// collectiveBroadcast gives every process of a group its first
// process's operands; with has_dynamic_root, the last operand holds,
// for each other operand, the index in the group of the process whose
// value everyone receives (each process reads its own).
func collectiveBroadcast(c *opContext, groups [][]int, members []int, args [][]*hlo.Instruction) ([][]*hlo.Instruction, error) {
	dynamic := c.op.Attr("has_dynamic_root") != nil && c.boolean("has_dynamic_root")
	data := func(a []*hlo.Instruction) []*hlo.Instruction {
		if dynamic {
			return a[:len(a)-1]
		}
		return a
	}
	if !slices.ContainsFunc(groups, func(g []int) bool { return slices.Equal(g, members) }) {
		return [][]*hlo.Instruction{c.zerosLike(data(args[0]))}, nil // in no group
	}
	if !dynamic {
		return same(args[0], len(members)), nil
	}
	out := make([][]*hlo.Instruction, len(members))
	for i := range members {
		root := args[i][len(args[i])-1]
		if n := len(args[i]) - 1; root.Shape.Rank() != 1 || root.Shape.Dims[0] != int64(n) || !root.Shape.Elem.IsInteger() {
			return nil, fmt.Errorf("has_dynamic_root needs a last operand of %d integers, found %s", n, typeText(root.Shape))
		}
		for k := range data(args[i]) {
			idx := c.cb.Op(hlo.OpReshape, sliceDim(c.cb, root, 0, int64(k), int64(k+1))).WithShape(hlo.ArrayShape(root.Shape.Elem)).Instruction
			out[i] = append(out[i], pick(c.cb, column(args, k), idx))
		}
	}
	return out, nil
}

// pick is xs[idx] for a run-time scalar idx (clamped into range, as
// dynamic_slice clamps): the xs stacked on a new leading dimension and
// the one at idx sliced out.
func pick(cb *hlo.CompBuilder, xs []*hlo.Instruction, idx *hlo.Instruction) *hlo.Instruction {
	s := xs[0].Shape
	one := hlo.ArrayShape(s.Elem, append([]int64{1}, s.Dims...)...)
	rows := make([]*hlo.Instruction, len(xs))
	for i, x := range xs {
		rows[i] = cb.Op(hlo.OpReshape, x).WithShape(one).Instruction
	}
	stacked := concat(cb, rows, 0)
	starts := []*hlo.Instruction{idx}
	zero := cb.Constant(hlo.ScalarLiteral(idx.Shape.Elem, 0))
	for range s.Dims {
		starts = append(starts, zero)
	}
	sizes := make([]int64, len(one.Dims))
	copy(sizes, one.Dims)
	row := cb.Op(hlo.OpDynamicSlice, append([]*hlo.Instruction{stacked}, starts...)...).WithShape(one).Set("dynamic_slice_sizes", list(sizes)).Instruction
	return cb.Op(hlo.OpReshape, row).WithShape(s).Instruction
}

// zerosLike makes zeros of each of xs's shapes.
func (c *opContext) zerosLike(xs []*hlo.Instruction) []*hlo.Instruction {
	out := make([]*hlo.Instruction, len(xs))
	for i, x := range xs {
		out[i] = zeros(c.cb, x.Shape)
	}
	return out
}

// zeros is an array of shape s, all zero: a constant, broadcast.
func zeros(cb *hlo.CompBuilder, s hlo.Shape) *hlo.Instruction {
	scalar := hlo.ArrayShape(s.Elem)
	lit, err := hlo.NewLiteral(scalar, make([]byte, scalar.ByteSize()))
	if err != nil {
		panic(err) // a scalar's bytes, of its own size
	}
	z := cb.Constant(lit)
	if s.Rank() == 0 {
		return z
	}
	return cb.Op(hlo.OpBroadcast, z).WithShape(s).Set("dimensions", "{}").Instruction
}

// sliceDim slices [lo, hi) of x's dimension d.
func sliceDim(cb *hlo.CompBuilder, x *hlo.Instruction, d int, lo, hi int64) *hlo.Instruction {
	dims := slices.Clone(x.Shape.Dims)
	parts := make([]string, len(dims))
	for i, n := range dims {
		parts[i] = fmt.Sprintf("[0:%d:1]", n)
	}
	parts[d] = fmt.Sprintf("[%d:%d:1]", lo, hi)
	dims[d] = hi - lo
	return cb.Op(hlo.OpSlice, x).WithShape(hlo.ArrayShape(x.Shape.Elem, dims...)).Set("slice", "{"+strings.Join(parts, ", ")+"}").Instruction
}

// concat concatenates xs along dimension d (one is itself).
func concat(cb *hlo.CompBuilder, xs []*hlo.Instruction, d int) *hlo.Instruction {
	if len(xs) == 1 {
		return xs[0]
	}
	dims := slices.Clone(xs[0].Shape.Dims)
	for _, x := range xs[1:] {
		dims[d] += x.Shape.Dims[d]
	}
	return cb.Op(hlo.OpConcatenate, xs...).WithShape(hlo.ArrayShape(xs[0].Shape.Elem, dims...)).Set("dimensions", fmt.Sprintf("{%d}", d)).Instruction
}
