package eval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Known-answer tests from Random123 (threefry2x32_20, philox4x32_10),
// the reference the XLA generators implement.
func TestThreeFryKAT(t *testing.T) {
	for _, tc := range []struct{ k0, k1, x0, x1, y0, y1 uint32 }{
		{0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
		{0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0},
	} {
		a, b := threeFry2x32(tc.k0, tc.k1, tc.x0, tc.x1)
		require.Equal(t, [2]uint32{tc.y0, tc.y1}, [2]uint32{a, b})
	}
}

func TestPhiloxKAT(t *testing.T) {
	for _, tc := range []struct {
		c      [4]uint32
		k0, k1 uint32
		want   [4]uint32
	}{
		{[4]uint32{}, 0, 0, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		require.Equal(t, tc.want, philox4x32(tc.c, tc.k0, tc.k1))
	}
}

func TestThreeFrySplitLayout(t *testing.T) {
	// u32[3,2]: dimension 1 is the first even one; element [i, j] takes
	// word j of position i, counting from the state.
	words, next := threeFry32(7, 100, []int64{3, 2})
	require.Equal(t, uint64(103), next)
	for i := 0; i < 3; i++ {
		a, b := threeFry2x32(7, 0, uint32(100+i), 0)
		require.Equal(t, uint64(a), words[2*i])
		require.Equal(t, uint64(b), words[2*i+1])
	}
	// u32[3]: no even dimension; the largest (0) is split into 2 halves of
	// 2, and the last element is dropped.
	words, next = threeFry32(7, 0, []int64{3})
	require.Equal(t, uint64(2), next)
	a0, b0 := threeFry2x32(7, 0, 0, 0)
	a1, _ := threeFry2x32(7, 0, 1, 0)
	require.Equal(t, []uint64{uint64(a0), uint64(b0), uint64(a1)}, words)
}
