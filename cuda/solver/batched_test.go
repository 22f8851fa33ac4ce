//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

// batchOf lays the matrices ms (all of ms[0]'s shape and stride) one
// after the other, stride elements apart, the gaps marked with padding.
func batchOf(ms []host, stride int) host {
	all := newHost(stride*len(ms), 1, 0)
	for i := range all.v {
		all.v[i] = padding
	}
	for k, m := range ms {
		copy(all.v[k*stride:], m.v)
	}
	return all
}

// nth is matrix k of a batch laid out by batchOf.
func nth(all host, k, stride, rows, cols, ld int) host {
	m := newHost(rows, cols, ld)
	copy(m.v, all.v[k*stride:k*stride+len(m.v)])
	return m
}

// TestPotrfBatchedAndPotrsBatchedSolveEachSystem factors a batch of
// symmetric positive definite matrices, with gaps between them, and
// solves a system with each: ‖L·Lᵀ − A‖ and ‖A·x − b‖ per matrix, the
// gaps untouched.
func TestPotrfBatchedAndPotrsBatchedSolveEachSystem(t *testing.T) {
	forEachType(t, testBatched[float32], testBatched[float64])
}

func testBatched[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(26, 27))
	const n, ld, count = 6, 7, 5
	// The strides keep every matrix 16-byte aligned, as a GPU's vector loads
	// may want.
	const aStride, bStride = ld*n + 2, n + 2
	for _, uplo := range []solver.Fill{solver.Lower, solver.Upper} {
		as, bs := make([]host, count), make([]host, count)
		for k := range as {
			as[k] = spd(rng, n, ld)
			bs[k] = random(rng, n, 1, 0)
		}
		in := make([]host, count)
		for k := range as {
			in[k] = as[k].clone()
			scribble(in[k], uplo)
		}
		da := upload[T](t, s, batchOf(in, aStride))
		db := upload[T](t, s, batchOf(bs, bStride))
		a := solver.Matrix[T]{Mem: da.Mem, Rows: n, Cols: n, Stride: ld}
		b := solver.Matrix[T]{Mem: db.Mem, Rows: n, Cols: 1}
		if err := solver.PotrfBatched(h, uplo, a, solver.Batch{Count: count, Stride: aStride}); err != nil {
			t.Fatalf("%v: %v", uplo, err)
		}
		fa := download(t, s, da)
		for k := range as {
			f := nth(fa, k, aStride, n, n, ld)
			checkPadding(t, "PotrfBatched", f)
			l := lowerFactor(t, f, uplo, false)
			checkResidual[T](t, uplo.String()+": ‖L·Lᵀ − A‖", mul(l, l.t()), as[k], as[k].norm()*n)
		}
		for i := aStride*(count-1) + ld*n; i < len(fa.v); i++ {
			if fa.v[i] != padding {
				t.Fatalf("element %d after the last matrix was written", i)
			}
		}
		if err := solver.PotrsBatched(h, uplo, a, solver.Batch{Count: count, Stride: aStride}, b, solver.Batch{Count: count, Stride: bStride}); err != nil {
			t.Fatal(err)
		}
		fb := download(t, s, db)
		for k := range bs {
			x := nth(fb, k, bStride, n, 1, n)
			checkResidual[T](t, "‖A·x − b‖", mul(as[k], x), bs[k], as[k].norm()*x.norm()*n)
			for i := n; i < bStride && k*bStride+i < len(fb.v); i++ {
				if fb.v[k*bStride+i] != padding {
					t.Fatalf("right-hand side %d: element %d of the gap was written", k, i)
				}
			}
		}
	}
}

// TestPotrfBatchedNamesEachMatrixThatIsNotPositiveDefinite: matrices 1
// and 3 of a packed batch of four 4×4 ones have a negative diagonal
// element (at 2 and 0): the error joins one *InfoError per matrix, each with its place in
// the batch and its minor, and the other matrices are factored.
func TestPotrfBatchedNamesEachMatrixThatIsNotPositiveDefinite(t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(28, 29))
	const n, count = 4, 4
	as := make([]host, count)
	for k := range as {
		as[k] = spd(rng, n, 0)
	}
	as[1].set(2, 2, -100)
	as[3].set(0, 0, -100)
	in := make([]host, count)
	for k := range as {
		in[k] = as[k].clone()
		scribble(in[k], solver.Lower)
	}
	da := upload[float64](t, s, batchOf(in, n*n))
	err := solver.PotrfBatched(h, solver.Lower, solver.Matrix[float64]{Mem: da.Mem, Rows: n, Cols: n}, solver.Batch{Count: count})
	if !errors.Is(err, solver.ErrNotPositiveDefinite) {
		t.Fatalf("PotrfBatched = %v, want ErrNotPositiveDefinite", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("%T is not a joined error", err)
	}
	want := map[int]int{1: 3, 3: 1}
	for _, e := range joined.Unwrap() {
		var ie *solver.InfoError
		if !errors.As(e, &ie) || want[ie.Batch] != ie.Index {
			t.Fatalf("%v: not one of the matrices and minors %v", e, want)
		}
		delete(want, ie.Batch)
	}
	if len(want) != 0 || !strings.Contains(err.Error(), "matrix 1 of the batch") {
		t.Fatalf("%v: matrices %v not reported", err, want)
	}
	fa := download(t, s, da)
	for _, k := range []int{0, 2} {
		l := lowerFactor(t, nth(fa, k, n*n, n, n, n), solver.Lower, false)
		checkResidual[float64](t, "a positive definite matrix of the batch", mul(l, l.t()), as[k], as[k].norm()*n)
	}
}

// TestBatchedBadInputIsRefused: overlapping matrices, a batch longer than
// its memory, negative counts, counts that disagree and more than one
// right-hand side are refused before the library.
func TestBatchedBadInputIsRefused(t *testing.T) {
	h, s := newHandle(t)
	const n = 3
	mem := zeros[float32](t, s, 4*n*n)
	a := solver.Matrix[float32]{Mem: mem, Rows: n, Cols: n}
	b := solver.Matrix[float32]{Mem: mem, Rows: n, Cols: 1}
	b2 := solver.Matrix[float32]{Mem: mem, Rows: n, Cols: 2}
	var closed *cuda.Slice[float32]
	cases := []struct {
		name, want string
		err        error
	}{
		{"overlap", "overlap", solver.PotrfBatched(h, solver.Lower, a, solver.Batch{Count: 2, Stride: n})},
		{"too long", "but its memory has 36", solver.PotrfBatched(h, solver.Lower, a, solver.Batch{Count: 5})},
		{"negative", "negative", solver.PotrfBatched(h, solver.Upper, a, solver.Batch{Count: -1})},
		{"nil memory", "nil memory", solver.PotrfBatched(h, solver.Upper, solver.Matrix[float32]{Mem: closed, Rows: n, Cols: n}, solver.Batch{Count: 1})},
		{"counts", "a batch of 2 matrices and one of 3", solver.PotrsBatched(h, solver.Lower, a, solver.Batch{Count: 2}, b, solver.Batch{Count: 3})},
		{"two right-hand sides", "one right-hand side", solver.PotrsBatched(h, solver.Lower, a, solver.Batch{Count: 1}, b2, solver.Batch{Count: 1})},
		{"unknown triangle", "unknown triangle", solver.PotrfBatched(h, solver.Fill(5), a, solver.Batch{Count: 1})},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, c.err, c.want)
		}
	}
	var null *solver.Handle
	if err := solver.PotrfBatched(null, solver.Lower, a, solver.Batch{Count: 1}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("PotrfBatched on a nil handle = %v, want ErrClosed", err)
	}
}
