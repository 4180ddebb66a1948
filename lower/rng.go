package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// expandRng rewrites rng-bit-generator into the integer arithmetic of its
// algorithm, as XLA's RngBitGeneratorExpander does (hlo/builder/lib/
// prng.cc), bit for bit with the evaluator (hlo/eval/rng.go): each output
// position's counter is the state's counter plus an iota, and the rounds
// of ThreeFry-2x32 or Philox-4x32 are elementwise u32 ops (Philox's
// 32x32->64 products in u64), so the whole generator fuses into kernels
// like any other elementwise graph. The state's first word is the key;
// rng_three_fry counts with the second word; rng_philox and rng_default
// (Philox, as on XLA's CPU and GPU backends) with a 128-bit counter,
// words 1 and 2 (for a two-word state, word 1 and the key).
func expandRng(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpRngBitGenerator: (*expander).rngBitGenerator,
	})
}

func (b *expander) rngBitGenerator(in *hlo.Instruction) (*hlo.Instruction, error) {
	st := in.Operands[0]
	if st.Shape.Elem != hlo.U64 || st.Shape.Rank() != 1 || st.Shape.Dims[0] < 2 {
		return nil, in.Errorf("rng-bit-generator's state must be u64[n] with n >= 2, not %s", st.Shape)
	}
	out := in.Shape.Tuple[1]
	w := out.Elem.Bits()
	if out.Elem == hlo.PRED || (w != 8 && w != 16 && w != 32 && w != 64) {
		return nil, in.Errorf("rng-bit-generator of %s is not supported", out.Elem)
	}
	words := st.Shape.Dims[0]
	word := func(i int64) *hlo.Instruction { return b.reshape(b.slice(st, 0, i, i+1)) }
	key := word(0)
	k0, k1 := b.lo32(key), b.hi32(key)
	n := out.NumElements()
	newWords := make([]*hlo.Instruction, words)
	var bits *hlo.Instruction // u64 or u32 words in out's dimensions
	switch in.A.RngAlgorithm {
	case "rng_three_fry":
		ctr := word(1)
		var count int64
		bits, count = b.threeFryBits(k0, k1, ctr, out.Dims, w == 64)
		newWords[1] = b.binary(hlo.OpAdd, ctr, b.constant(hlo.U64, count))
	case "rng_philox", "rng_default", "":
		lo, hi := word(1), key
		if words >= 3 {
			hi = word(2)
		}
		per := int64(4)
		if w == 64 {
			per = 2
		}
		blocks := (n + per - 1) / per
		l, h := b.add128(lo, hi, b.iota(hlo.U64, 0, blocks))
		r := b.philox4x32([4]*hlo.Instruction{b.lo32(l), b.hi32(l), b.lo32(h), b.hi32(h)}, k0, k1)
		parts := r[:]
		if w == 64 {
			parts = []*hlo.Instruction{b.join64(r[0], r[1]), b.join64(r[2], r[3])}
		}
		for i, p := range parts {
			parts[i] = b.reshape(p, blocks, 1)
		}
		flat := b.reshape(b.concat(1, parts...), blocks*per)
		bits = b.reshape(b.slice(flat, 0, 0, n), out.Dims...)
		nl, nh := b.add128(lo, hi, b.constant(hlo.U64, blocks))
		newWords[1] = nl
		if words >= 3 {
			newWords[2] = nh
		}
	default:
		return nil, in.Errorf("rng-bit-generator algorithm %s is not supported", in.A.RngAlgorithm)
	}
	// Narrow types keep the low bits of 32-bit words; the type's own bits
	// come by a bitcast of its width.
	bits = b.convert(bits, hlo.UnsignedOfWidth(w))
	if bits.Shape.Elem != out.Elem {
		bits = b.inst(hlo.OpBitcastConvert, out, bits)
	}
	var pieces []*hlo.Instruction
	for i := int64(0); i < words; i++ {
		if newWords[i] != nil {
			pieces = append(pieces, b.reshape(newWords[i], 1))
		} else {
			pieces = append(pieces, b.slice(st, 0, i, i+1))
		}
	}
	state := b.concat(0, pieces...)
	return b.inst(hlo.OpTuple, in.Shape, state, bits), nil
}

// lo32 and hi32 are the halves of u64 values as u32.
func (b *expander) lo32(x *hlo.Instruction) *hlo.Instruction { return b.convert(x, hlo.U32) }

func (b *expander) hi32(x *hlo.Instruction) *hlo.Instruction {
	return b.convert(b.binary(hlo.OpShiftRightLogical, x, b.constant(hlo.U64, 32)), hlo.U32)
}

// join64 is lo | hi << 32 as u64.
func (b *expander) join64(lo, hi *hlo.Instruction) *hlo.Instruction {
	return b.binary(hlo.OpOr, b.convert(lo, hlo.U64), b.binary(hlo.OpShiftLeft, b.convert(hi, hlo.U64), b.constant(hlo.U64, 32)))
}

// add128 adds u64 values i to the 128-bit counter (lo, hi), the carry
// into hi where the low word wraps.
func (b *expander) add128(lo, hi, i *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	l := b.binary(hlo.OpAdd, lo, i)
	lb := lo
	if lo.Shape.Rank() < l.Shape.Rank() {
		lb = b.bcast(lo, l.Shape.Dims...)
	}
	wrapped := b.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED, l.Shape.Dims...), l, lb)
	wrapped.A.Direction = "LT"
	return l, b.binary(hlo.OpAdd, hi, b.convert(wrapped, hlo.U64))
}

// threeFryBits makes the words of a ThreeFry draw of dims: 64-bit words
// from the two halves of the block at counter+i for element i; 32-bit
// words with dims split in halves along hlo.ThreeFrySplitDim, half
// position p taking counter+p and its two words
// filling elements 2h and 2h+1 of the split dimension. It returns the
// words and how many counter values they used.
func (b *expander) threeFryBits(k0, k1, ctr *hlo.Instruction, dims []int64, wide bool) (*hlo.Instruction, int64) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	if wide || len(dims) == 0 {
		c := b.binary(hlo.OpAdd, ctr, b.iota(hlo.U64, 0, n))
		x0, x1 := b.threeFry2x32(k0, k1, b.lo32(c), b.hi32(c))
		if !wide {
			return b.reshape(x0), 1
		}
		return b.reshape(b.join64(x0, x1), dims...), n
	}
	split := hlo.ThreeFrySplitDim(dims)
	half := append([]int64{}, dims...)
	half[split] = (dims[split] + 1) / 2
	h := int64(1)
	for _, d := range half {
		h *= d
	}
	c := b.binary(hlo.OpAdd, ctr, b.iota(hlo.U64, 0, h))
	x0, x1 := b.threeFry2x32(k0, k1, b.lo32(c), b.hi32(c))
	// [.., H, ..] twice -> [.., H, 2, ..] -> [.., 2H, ..], cut to dims.
	pair := append(append(append([]int64{}, half[:split+1]...), 1), half[split+1:]...)
	both := b.concat(split+1, b.reshape(x0, pair...), b.reshape(x1, pair...))
	doubled := append([]int64{}, half...)
	doubled[split] *= 2
	return b.slice(b.reshape(both, doubled...), split, 0, dims[split]), h
}

// threeFry2x32 is Threefry-2x32 of 20 rounds (Salmon et al., as XLA
// computes it) on u32 arrays x0, x1 with the scalar key (k0, k1).
func (b *expander) threeFry2x32(k0, k1, x0, x1 *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	rot := [8]int64{13, 15, 26, 6, 17, 29, 16, 24}
	k2 := b.binary(hlo.OpXor, b.constant(hlo.U32, 0x1BD11BDA), b.binary(hlo.OpXor, k0, k1))
	ks := [3]*hlo.Instruction{k0, k1, k2}
	add := func(x, y *hlo.Instruction) *hlo.Instruction { return b.binary(hlo.OpAdd, x, y) }
	x0, x1 = add(x0, k0), add(x1, k1)
	for i := 0; i < 5; i++ {
		for j := 0; j < 4; j++ {
			r := rot[4*(i%2)+j]
			x0 = add(x0, x1)
			x1 = b.binary(hlo.OpOr, b.binary(hlo.OpShiftLeft, x1, b.constant(hlo.U32, r)),
				b.binary(hlo.OpShiftRightLogical, x1, b.constant(hlo.U32, 32-r)))
			x1 = b.binary(hlo.OpXor, x1, x0)
		}
		x0 = add(x0, ks[(i+1)%3])
		x1 = add(x1, add(ks[(i+2)%3], b.constant(hlo.U32, int64(i+1))))
	}
	return x0, x1
}

// philox4x32 is Philox-4x32 of 10 rounds (Salmon et al.) on the u32
// arrays c with the scalar key (k0, k1); each 32x32-bit product is
// formed in u64 and split.
func (b *expander) philox4x32(c [4]*hlo.Instruction, k0, k1 *hlo.Instruction) [4]*hlo.Instruction {
	mul := func(x *hlo.Instruction, m int64) (hi, lo *hlo.Instruction) {
		p := b.binary(hlo.OpMultiply, b.convert(x, hlo.U64), b.constant(hlo.U64, m))
		return b.hi32(p), b.lo32(p)
	}
	xor := func(x, y *hlo.Instruction) *hlo.Instruction { return b.binary(hlo.OpXor, x, y) }
	for r := 0; r < 10; r++ {
		hi0, lo0 := mul(c[0], 0xD2511F53)
		hi1, lo1 := mul(c[2], 0xCD9E8D57)
		c = [4]*hlo.Instruction{xor(xor(hi1, c[1]), k0), lo1, xor(xor(hi0, c[3]), k1), lo0}
		k0 = b.binary(hlo.OpAdd, k0, b.constant(hlo.U32, 0x9E3779B9))
		k1 = b.binary(hlo.OpAdd, k1, b.constant(hlo.U32, 0xBB67AE85))
	}
	return c
}
