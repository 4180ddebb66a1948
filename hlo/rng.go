package hlo

// ThreeFrySplitDim is the dimension along which rng-bit-generator's
// ThreeFry draw of words of 32 bits or fewer halves its shape (XLA's
// prng.cc): the first dimension of even size, else the first of the
// largest. Each position h of the halved shape draws two words, which
// fill elements 2h and 2h+1 of that dimension. dims must not be empty.
func ThreeFrySplitDim(dims []int64) int {
	split := -1
	for i, d := range dims {
		if d%2 == 0 {
			return i
		}
		if split < 0 || d > dims[split] {
			split = i
		}
	}
	return split
}
