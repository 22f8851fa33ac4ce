//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

// TestBadInputIsRefusedBeforeTheLibrary calls every function with each
// kind of bad argument: each fails with an error saying what is wrong,
// and the memory of every argument keeps its values.
func TestBadInputIsRefusedBeforeTheLibrary(t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(19, 20))
	const n = 4
	a := upload[float64](t, s, random(rng, n, n, 0))
	b := upload[float64](t, s, random(rng, n, 2, 0))
	wide := upload[float64](t, s, random(rng, n-1, n, 0))
	vec := uploadSlice(t, s, []float64{1, 2, 3, 4})
	short := uploadSlice(t, s, []float64{1, 2, 3})
	ipiv := uploadSlice(t, s, []int32{1, 2, 3, 4})
	ipivShort := uploadSlice(t, s, []int32{1, 2})
	closed, err := cuda.AllocSlice[float64](s, n*n)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	shortMem := solver.Matrix[float64]{Mem: short, Rows: n, Cols: n}
	negative := solver.Matrix[float64]{Mem: a.Mem, Rows: -1, Cols: n}
	badStride := solver.Matrix[float64]{Mem: a.Mem, Rows: n, Cols: n, Stride: n - 1}
	tooLong := solver.Matrix[float64]{Mem: a.Mem, Rows: n, Cols: n, Stride: n + 1} // 19 elements in 16
	huge := solver.Matrix[float64]{Mem: a.Mem, Rows: 1 << 31, Cols: 1}
	nilMem := solver.Matrix[float64]{Rows: n, Cols: n}
	closedMem := solver.Matrix[float64]{Mem: closed, Rows: n, Cols: n}
	none := solver.Matrix[float64]{}
	cases := []struct {
		name, want string
		call       func() error
		closed     bool // the error must match cuda.ErrClosed
	}{
		{"Getrf negative rows", "negative sizes", func() error { return solver.Getrf(h, negative, ipiv) }, false},
		{"Getrf stride shorter than a column", "stride is shorter than a column", func() error { return solver.Getrf(h, badStride, ipiv) }, false},
		{"Getrf memory too small", "but its memory has 16", func() error { return solver.Getrf(h, tooLong, ipiv) }, false},
		{"Getrf short slice", "but its memory has 3", func() error { return solver.Getrf(h, shortMem, ipiv) }, false},
		{"Getrf sizes over 32 bits", "below 2³¹", func() error { return solver.Getrf(h, huge, ipiv) }, false},
		{"Getrf nil memory", "nil memory", func() error { return solver.Getrf(h, nilMem, ipiv) }, true},
		{"Getrf closed memory", "A", func() error { return solver.Getrf(h, closedMem, ipiv) }, true},
		{"Getrf short ipiv", "ipiv", func() error { return solver.Getrf(h, a, ipivShort) }, false},
		{"Getrf nil ipiv", "ipiv", func() error { return solver.Getrf(h, a, nil) }, true},
		{"Getrs not square", "not square", func() error { return solver.Getrs(h, solver.NoTrans, wide, ipiv, b) }, false},
		{"Getrs rows of B", "B needs 4 rows", func() error { return solver.Getrs(h, solver.NoTrans, a, ipiv, wide) }, false},
		{"Getrs unknown op", "unknown operation", func() error { return solver.Getrs(h, solver.Op(7), a, ipiv, b) }, false},
		{"Getrs short ipiv", "ipiv", func() error { return solver.Getrs(h, solver.Trans, a, ipivShort, b) }, false},
		{"Potrf not square", "not square", func() error { return solver.Potrf(h, solver.Lower, wide) }, false},
		{"Potrf unknown triangle", "unknown triangle", func() error { return solver.Potrf(h, solver.Fill(2), a) }, false},
		{"Potrf closed memory", "A", func() error { return solver.Potrf(h, solver.Upper, closedMem) }, true},
		{"Potrs rows of B", "B needs 4 rows", func() error { return solver.Potrs(h, solver.Lower, a, wide) }, false},
		{"Potrs unknown triangle", "unknown triangle", func() error { return solver.Potrs(h, solver.Fill(-1), a, b) }, false},
		{"Geqrf short tau", "tau", func() error { return solver.Geqrf(h, a, short) }, false},
		{"Geqrf stride", "stride", func() error { return solver.Geqrf(h, badStride, vec) }, false},
		{"Ormqr rows of A", "A needs 2 rows", func() error { return solver.Ormqr(h, solver.Right, solver.NoTrans, a, vec, b) }, false},
		{"Ormqr unknown side", "unknown side", func() error { return solver.Ormqr(h, solver.Side(3), solver.NoTrans, a, vec, b) }, false},
		{"Ormqr unknown op", "unknown operation", func() error { return solver.Ormqr(h, solver.Left, solver.Op(2), a, vec, b) }, false},
		{"Ormqr short tau", "tau", func() error { return solver.Ormqr(h, solver.Left, solver.Trans, a, short, b) }, false},
		{"Syevd not square", "not square", func() error { return solver.Syevd(h, true, solver.Lower, wide, vec) }, false},
		{"Syevd short W", "W", func() error { return solver.Syevd(h, true, solver.Lower, a, short) }, false},
		{"Syevd unknown triangle", "unknown triangle", func() error { return solver.Syevd(h, false, solver.Fill(9), a, vec) }, false},
		{"Gesvd wide A", "at least as many rows as columns", func() error { return solver.Gesvd(h, wide, vec, none, none) }, false},
		{"Gesvd U of another shape", "U must be 4×4, 4×4 or empty", func() error { return solver.Gesvd(h, a, vec, b, none) }, false},
		{"Gesvd VT of another shape", "VT must be 4×4 or empty", func() error { return solver.Gesvd(h, a, vec, none, b) }, false},
		{"Gesvd short S", "S", func() error { return solver.Gesvd(h, a, short, none, none) }, false},
		{"Gesvd closed U", "U", func() error { return solver.Gesvd(h, a, vec, closedMem, none) }, true},
	}
	before := snapshot(t, s, a, b, wide)
	for _, c := range cases {
		err := c.call()
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		case c.closed != errors.Is(err, cuda.ErrClosed):
			t.Errorf("%s: %v; matches ErrClosed: %v, want %v", c.name, err, !c.closed, c.closed)
		}
		var ie *solver.InfoError
		if errors.As(err, &ie) {
			t.Errorf("%s: %v reached cuSOLVER", c.name, err)
		}
	}
	after := snapshot(t, s, a, b, wide)
	for i := range before {
		if !slices.Equal(before[i], after[i]) {
			t.Errorf("argument %d changed under refused calls", i)
		}
	}
}

func snapshot(t *testing.T, s *cuda.Stream, ms ...solver.Matrix[float64]) [][]float64 {
	var out [][]float64
	for _, m := range ms {
		out = append(out, downloadSlice(t, s, m.Mem, m.Mem.Len()))
	}
	return out
}
