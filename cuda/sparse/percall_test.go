//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
)

// tinySpMV is a 2×2 diagonal CSR matrix and its vectors on a handle of
// its own: a call whose cost is the package's and the library's, not the
// arithmetic's.
type tinySpMV struct {
	h    *sparse.Handle
	a    *sparse.Matrix[float32, int32]
	x, y *cuda.Slice[float32]
}

func newTinySpMV(tb testing.TB) tinySpMV {
	tb.Helper()
	_, s := libtest.Stream(tb)
	h, err := sparse.New(s)
	if err != nil {
		tb.Skipf("no cuSPARSE: %v", err)
	}
	tb.Cleanup(func() { h.Close() })
	slice := func(v []float32) *cuda.Slice[float32] {
		d, err := cuda.AllocSliceFrom(s, v)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { d.Close() })
		return d
	}
	off, err := cuda.AllocSliceFrom(s, []int32{0, 1, 2})
	if err != nil {
		tb.Fatal(err)
	}
	col, err := cuda.AllocSliceFrom(s, []int32{0, 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { off.Close(); col.Close() })
	a, err := sparse.NewCSR(2, 2, off, col, slice([]float32{1, 2}))
	if err != nil {
		tb.Fatal(err)
	}
	return tinySpMV{h: h, a: a, x: slice([]float32{1, 1}), y: slice([]float32{0, 0})}
}

func (c tinySpMV) run(tb testing.TB) {
	if err := sparse.SpMV(c.h, sparse.NoTrans, 1, c.a, c.x, 0, c.y); err != nil {
		tb.Fatal(err)
	}
}

// TestSpMVAllocatesTwice checks that a call on a matrix and vectors the
// handle has seen allocates no more than the two objects it needs (the
// memory it holds and the function the handle runs), rather than names
// for errors it does not return: at a few µs per call, each allocation
// is a visible part of a small SpMV's cost.
func TestSpMVAllocatesTwice(t *testing.T) {
	c := newTinySpMV(t)
	c.run(t) // makes and keeps the descriptors
	if n := testing.AllocsPerRun(100, func() { c.run(t) }); n > 2 {
		t.Errorf("SpMV allocates %v objects per call, want at most 2", n)
	}
}

// BenchmarkSpMVTinyMatrix is the cost of one SpMV call on a 2×2 matrix:
// on the fake driver and fake cuSPARSE mostly the package's own, on a
// GPU the library's enqueueing besides.
func BenchmarkSpMVTinyMatrix(b *testing.B) {
	c := newTinySpMV(b)
	b.ReportAllocs()
	for b.Loop() {
		c.run(b)
	}
}
