//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// live is the fake's count of live objects; the test fails where the
// real cuSPARSE is loaded, which does not count them.
func live(t *testing.T) fakecusparse.Counts {
	t.Helper()
	n, err := fakecusparse.Live()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func onTheFake(t *testing.T) {
	t.Helper()
	if !fakecusparse.Active() {
		t.Skip("the real cuSPARSE does not count its objects: this test runs on the fake")
	}
}

// TestEveryDescriptorIsDestroyed counts the fake cuSPARSE's live objects
// around each operation: SpMV and SpMM keep their descriptors in the
// handle's cache (a second call with the same operands makes none),
// SpGEMM destroys what it makes, a solver keeps its analysis until Close,
// and the handle's last Close destroys the rest.
func TestEveryDescriptorIsDestroyed(t *testing.T) {
	onTheFake(t)
	_, s := libtest.Stream(t)
	before := live(t)
	h, err := sparse.New(s)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(16, 17))
	a := rounded[float32](triangle(rng, 12, sparse.Upper, sparse.NonUnit, false))
	A := upload[float32, int64](t, s, a, sparse.CSR)
	x, y := alloc(t, s, make([]float32, 12)), alloc(t, s, make([]float32, 12))
	B, _ := sparse.NewDense(12, 1, sparse.RowMajor, x)
	C, _ := sparse.NewDense(12, 1, sparse.RowMajor, y)
	expect := func(what string, want fakecusparse.Counts) {
		t.Helper()
		if now := live(t); now != want {
			t.Fatalf("after %s: live %+v, want %+v", what, now, want)
		}
	}
	want := before
	want.Handles++
	expect("New", want)
	for range 2 {
		if err := sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y); err != nil {
			t.Fatal(err)
		}
	}
	want.SpMats++
	want.DnVecs += 2
	expect("two SpMVs", want)
	for range 2 {
		if err := sparse.SpMM(h, sparse.Trans, 1, A, B, 0, C); err != nil {
			t.Fatal(err)
		}
	}
	want.DnMats += 2
	expect("two SpMMs", want)
	P, err := sparse.SpGEMM(h, 1, A, A)
	if err != nil {
		t.Fatal(err)
	}
	expect("SpGEMM", want)
	if err := P.Close(); err != nil {
		t.Fatal(err)
	}
	solver, err := sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Upper, sparse.NonUnit)
	if err != nil {
		t.Fatal(err)
	}
	if err := solver.Solve(1, x, y); err != nil {
		t.Fatal(err)
	}
	if err := solver.SolveDense(1, B, C); err != nil {
		t.Fatal(err)
	}
	during := want
	during.SpMats++
	during.SpSVDescrs++
	during.SpSMDescrs++
	expect("a solver's solves", during)
	if err := solver.Close(); err != nil {
		t.Fatal(err)
	}
	expect("the solver's Close", want)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	expect("Close", before)
}

// TestDescriptorCacheIsBounded: SpMV on many different vectors keeps at
// most the cache's bound of descriptors, and every product is right.
func TestDescriptorCacheIsBounded(t *testing.T) {
	onTheFake(t)
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	before := live(t)
	const n, calls = 8, 200
	a := host{rows: n, cols: n}
	for i := range n {
		a.add(i, i, complex(float64(i+1), 0))
	}
	A := upload[float64, int32](t, s, a, sparse.COO)
	xs := make([]float64, n+calls)
	for i := range xs {
		xs[i] = float64(i)
	}
	x := alloc(t, s, xs)
	y := alloc(t, s, make([]float64, n))
	most := 0
	for c := range calls {
		xc, err := x.Sub(c, c+n) // another address each call
		if err != nil {
			t.Fatal(err)
		}
		if err := sparse.SpMV(h, sparse.NoTrans, 1, A, xc, 0, y); err != nil {
			t.Fatal(err)
		}
		got := download(t, s, y)
		xc.Close()
		for i := range n {
			if want := float64((i + 1) * (c + i)); got[i] != want {
				t.Fatalf("call %d: y[%d] = %v, want %v", c, i, got[i], want)
			}
		}
		most = max(most, live(t).DnVecs-before.DnVecs)
	}
	if most > 70 {
		t.Fatalf("up to %d dense vector descriptors cached, want the bound (64) and the two of a call", most)
	}
}
