package eval

import (
	"math/bits"

	"github.com/vkjit/vkjit/hlo"
)

// rngBitGenerator follows XLA's RngBitGeneratorExpander and
// hlo/builder/lib/prng.cc bit for bit. The state's first word is the key;
// three_fry counts with the second word; philox counts with a 128-bit
// counter (words 1 and 2, or for a two-word state the words reversed).
// rng_default is Philox, as on XLA's CPU and GPU backends.
func rngBitGenerator(in *hlo.Instruction, state *hlo.Literal) (*Value, error) {
	out := in.Shape.Tuple[1]
	st := make([]uint64, state.Shape.NumElements())
	for i := range st {
		st[i] = get(state, int64(i)).u
	}
	if len(st) < 2 {
		return nil, in.Errorf("state must have at least 2 words, has %d", len(st))
	}
	w := out.Elem.Bits()
	if out.Elem == hlo.PRED || !out.Elem.IsArray() || (w != 64 && w != 32 && w != 16 && w != 8) {
		return nil, in.Errorf("%w", &Unsupported{"rng-bit-generator of " + out.Elem.String()})
	}
	var words []uint64
	newState := append([]uint64(nil), st...)
	switch in.A.RngAlgorithm {
	case "rng_three_fry":
		if w == 64 {
			words, newState[1] = threeFry64(st[0], st[1], out.Dims)
		} else {
			words, newState[1] = threeFry32(st[0], st[1], out.Dims)
		}
	case "rng_philox", "rng_default", "":
		lo, hi := st[1], uint64(0)
		if len(st) >= 3 {
			hi = st[2]
		} else {
			lo, hi = st[1], st[0]
		}
		var nlo, nhi uint64
		words, nlo, nhi = philox(st[0], lo, hi, out.NumElements(), w == 64)
		newState[1] = nlo
		if len(st) >= 3 {
			newState[2] = nhi
		}
	default:
		return nil, in.Errorf("%w", &Unsupported{"rng algorithm " + in.A.RngAlgorithm})
	}
	data := newLit(out.Elem, out.Dims)
	for i, x := range words {
		if w < 32 {
			x &= 1<<uint(w) - 1 // narrow types keep the low bits of 32-bit words
		}
		putBits(data.Data, out.Elem, int64(i), x)
	}
	ns := newLit(state.Shape.Elem, state.Shape.Dims)
	for i, x := range newState {
		putBits(ns.Data, state.Shape.Elem, int64(i), x)
	}
	return &Value{Tuple: []*Value{{Lit: ns}, {Lit: data}}}, nil
}

func threeFry2x32(k0, k1, x0, x1 uint32) (uint32, uint32) {
	rot := [8]int{13, 15, 26, 6, 17, 29, 16, 24}
	k2 := 0x1BD11BDA ^ k0 ^ k1
	ks := [3]uint32{k0, k1, k2}
	x0 += k0
	x1 += k1
	for i := 0; i < 5; i++ {
		for j := 0; j < 4; j++ {
			x0 += x1
			x1 = bits.RotateLeft32(x1, rot[4*(i%2)+j])
			x1 ^= x0
		}
		x0 += ks[(i+1)%3]
		x1 += ks[(i+2)%3] + uint32(i+1)
	}
	return x0, x1
}

// threeFry32 makes 32-bit words for dims: the shape is split in halves
// along hlo.ThreeFrySplitDim, each half position p counts from the state, and the two output words of position p fill
// the elements 2h and 2h+1 of the split dimension.
func threeFry32(key, counter uint64, dims []int64) ([]uint64, uint64) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	if len(dims) == 0 {
		a, _ := threeFry2x32(uint32(key), uint32(key>>32), uint32(counter), uint32(counter>>32))
		return []uint64{uint64(a)}, counter + 1
	}
	split := hlo.ThreeFrySplitDim(dims)
	half := append([]int64{}, dims...)
	half[split] = (dims[split] + 1) / 2
	halfN := int64(1)
	for _, d := range half {
		halfN *= d
	}
	hs := strides(half)
	out := make([]uint64, n)
	hidx := make([]int64, len(dims))
	forEach(dims, func(idx []int64, lin int64) {
		copy(hidx, idx)
		hidx[split] = idx[split] / 2
		c := counter + uint64(linear(hidx, hs))
		a, b := threeFry2x32(uint32(key), uint32(key>>32), uint32(c), uint32(c>>32))
		if idx[split]%2 == 0 {
			out[lin] = uint64(a)
		} else {
			out[lin] = uint64(b)
		}
	})
	return out, counter + uint64(halfN)
}

func threeFry64(key, counter uint64, dims []int64) ([]uint64, uint64) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	out := make([]uint64, n)
	for i := range out {
		c := counter + uint64(i)
		a, b := threeFry2x32(uint32(key), uint32(key>>32), uint32(c), uint32(c>>32))
		out[i] = uint64(a) | uint64(b)<<32
	}
	return out, counter + uint64(n)
}

func philox4x32(c [4]uint32, k0, k1 uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
		hi0, lo0 := bits.Mul32(c[0], 0xD2511F53)
		hi1, lo1 := bits.Mul32(c[2], 0xCD9E8D57)
		c = [4]uint32{hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0}
		k0 += 0x9E3779B9
		k1 += 0xBB67AE85
	}
	return c
}

// philox makes n words (32- or 64-bit) from a 128-bit counter: block i
// is Philox4x32 of counter+i, and its words are laid out round robin.
func philox(key, lo, hi uint64, n int64, wide bool) ([]uint64, uint64, uint64) {
	per := int64(4)
	if wide {
		per = 2
	}
	blocks := (n + per - 1) / per
	out := make([]uint64, 0, blocks*per)
	for i := int64(0); i < blocks; i++ {
		l, carry := bits.Add64(lo, uint64(i), 0)
		h := hi + carry
		r := philox4x32([4]uint32{uint32(l), uint32(l >> 32), uint32(h), uint32(h >> 32)}, uint32(key), uint32(key>>32))
		if wide {
			out = append(out, uint64(r[0])|uint64(r[1])<<32, uint64(r[2])|uint64(r[3])<<32)
		} else {
			out = append(out, uint64(r[0]), uint64(r[1]), uint64(r[2]), uint64(r[3]))
		}
	}
	nl, carry := bits.Add64(lo, uint64(blocks), 0)
	return out[:n], nl, hi + carry
}
