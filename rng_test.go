package vkjit_test

import (
	"fmt"
	"testing"
)

// TestRngBitGenerator draws bits on the device with each algorithm, state
// size and output type, and requires the evaluator's bits exactly (its
// ThreeFry and Philox follow XLA's prng.cc; the StableHLO suite's
// rng_bit_generator_uint32_4 holds XLA's own draw of u64[100,100]). The
// states are edge values, so the 128-bit counter's carry is crossed; a
// second draw from the first one's new state checks that state.
func TestRngBitGenerator(t *testing.T) {
	defer noValidationMessages(t)
	seed := uint64(1)
	for _, alg := range []string{"rng_three_fry", "rng_philox", "rng_default"} {
		for _, words := range []int{2, 3} {
			for _, out := range []string{"u64[3,5]", "s32[4,6]", "u8[5,3,3]", "s16[]", "s64[2,1,3]", "u32[3,1025]"} {
				name := fmt.Sprintf("%s state u64[%d] to %s", alg, words, out)
				st := fmt.Sprintf("(u64[%d], %s)", words, out)
				src := fmt.Sprintf(`HloModule m
ENTRY e {
  s = u64[%[1]d] parameter(0)
  r = %[2]s rng-bit-generator(s), algorithm=%[3]s
  s1 = u64[%[1]d] get-tuple-element(r), index=0
  b1 = %[4]s get-tuple-element(r), index=1
  r2 = %[2]s rng-bit-generator(s1), algorithm=%[3]s
  s2 = u64[%[1]d] get-tuple-element(r2), index=0
  b2 = %[4]s get-tuple-element(r2), index=1
  ROOT t = (u64[%[1]d], %[4]s, u64[%[1]d], %[4]s) tuple(s1, b1, s2, b2)
}`, words, st, alg, out)
				seed++
				requireExact(t, name, src, edgeInputs(seed))
			}
		}
	}
}
