package model

import "math/bits"

// bitset is a fixed-size set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) add(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// union adds every element of o to b.
func (b bitset) union(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// intersects reports whether b and o share an element.
func (b bitset) intersects(o bitset) bool {
	for i := range b {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// count is the number of elements.
func (b bitset) count() int {
	c := 0
	for _, word := range b {
		c += bits.OnesCount64(word)
	}
	return c
}

// each calls f on the elements in ascending order.
func (b bitset) each(f func(int)) {
	for w, word := range b {
		for word != 0 {
			f(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}
