package fakecuda_test

import (
	"fmt"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// want2D returns n words of old with height rows of width words, pitch
// words apart, set to v.
func want2D(n int, old, v uint32, pitch, width, height int) []uint32 {
	w := make([]uint32, n)
	for i := range w {
		w[i] = old
	}
	for r := range height {
		for c := range width {
			w[r*pitch+c] = v
		}
	}
	return w
}

func sameWords(t *testing.T, what string, got, want []uint32) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\ngot  %#x\nwant %#x", what, got, want)
	}
}

// TestMemsetD2D32: rows and columns of 32-bit values, synchronous and in
// stream order, leave the bytes between them alone, and the driver's
// checks of pointer, pitch and range hold.
func TestMemsetD2D32(t *testing.T) {
	primary(t)
	const n = 64
	p := alloc(t, 4*n)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	for _, c := range []struct {
		name                 string
		pitch, width, height int // pitch and width in words
		async                bool
	}{
		{"columns", 4, 2, 5, false},
		{"one column", 2, 1, 9, true},
		{"rows", 5, 3, 2, false},
		{"rows in stream order", 7, 4, 4, true},
		{"contiguous", 3, 3, 6, true},
		{"one row", 1, 10, 1, false},
	} {
		must(t, cu.MemsetD32(p, 0xEEEEEEEE, n))
		must(t, cu.StreamSynchronize(0)) // before s's work, which does not wait for the NULL stream
		pitch, width, height := uint64(4*c.pitch), uint64(c.width), uint64(c.height)
		if c.async {
			must(t, cu.MemsetD2D32Async(p+4, pitch, 0x11223344, width, height, s))
			must(t, cu.StreamSynchronize(s))
		} else {
			must(t, cu.MemsetD2D32(p+4, pitch, 0x11223344, width, height))
		}
		want := want2D(n-1, 0xEEEEEEEE, 0x11223344, c.pitch, c.width, c.height)
		sameWords(t, c.name, words(t, p, n)[1:], want)
	}

	is(t, "misaligned pointer", cu.MemsetD2D32(p+2, 8, 1, 1, 2), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "misaligned pitch", cu.MemsetD2D32(p, 6, 1, 1, 2), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "pitch below the width", cu.MemsetD2D32(p, 8, 1, 3, 2), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "past the allocation", cu.MemsetD2D32Async(p, 8, 1, 1, n/2+1, s), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "a pointer never allocated", cu.MemsetD2D32(p+8*n, 8, 1, 1, 2), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.MemsetD2D32(p, 6, 7, 2, 1)) // one row: the pitch is unused
	must(t, cu.MemsetD2D32(p, 8, 7, 1, 0))
}

// TestMemsetD2D32AfterMemsets: a column's range spans bytes it does not
// write, and a memset queued before it that the range covers must still
// run, although the stream skips a memset that the next one covers. The
// stream is kept busy so that each case is queued before it runs.
func TestMemsetD2D32AfterMemsets(t *testing.T) {
	primary(t)
	const n = 16
	busy := alloc(t, 64<<20)
	p := alloc(t, 4*n)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	run := func(what string, queue func(), want func(i int) uint32) {
		t.Helper()
		must(t, cu.MemsetD32(p, 0xEEEEEEEE, n))
		must(t, cu.StreamSynchronize(0)) // before s's work, which does not wait for the NULL stream
		for range 20 {
			must(t, cu.MemsetD8Async(busy, 0, 64<<20, s))
		}
		queue()
		must(t, cu.StreamSynchronize(s))
		w := make([]uint32, n)
		for i := range w {
			w[i] = want(i)
		}
		sameWords(t, what, words(t, p, n), w)
	}
	// Words 0..14, then the even ones: the column's range is the memset's.
	run("a column after a memset of its range", func() {
		must(t, cu.MemsetD32Async(p, 0xAAAAAAAA, n-1, s))
		must(t, cu.MemsetD2D32Async(p, 8, 0xBBBBBBBB, 1, n/2, s))
	}, func(i int) uint32 {
		switch {
		case i == n-1:
			return 0xEEEEEEEE
		case i%2 == 1:
			return 0xAAAAAAAA
		}
		return 0xBBBBBBBB
	})
	// The two halves of 8-byte elements, as Slice.Fill sets them.
	run("two columns", func() {
		must(t, cu.MemsetD2D32Async(p, 8, 0x05060708, 1, n/2, s))
		must(t, cu.MemsetD2D32Async(p+4, 8, 0x01020304, 1, n/2, s))
	}, func(i int) uint32 {
		if i%2 == 1 {
			return 0x01020304
		}
		return 0x05060708
	})
}
