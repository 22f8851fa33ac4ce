//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// TestEveryDescriptorIsDestroyed counts the fake cuSPARSE's live objects
// around each operation: whatever a call makes (matrix, vector and
// SpGEMM and SpSV descriptors) it destroys, and Close destroys the
// handles. Only the fake can count them.
func TestEveryDescriptorIsDestroyed(t *testing.T) {
	if !fakecusparse.Active() {
		t.Skip("the real cuSPARSE does not count its objects: this test runs on the fake")
	}
	_, s := libtest.Stream(t)
	before, err := fakecusparse.Live()
	if err != nil {
		t.Fatal(err)
	}
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
	expect := func(what string, handles, spsv int) {
		t.Helper()
		now, err := fakecusparse.Live()
		if err != nil {
			t.Fatal(err)
		}
		want := before
		want.Handles += handles
		want.SpSVDescrs += spsv
		if now != want {
			t.Fatalf("after %s: live %+v, want %+v", what, now, want)
		}
	}
	expect("New", 1, 0)
	if err := sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y); err != nil {
		t.Fatal(err)
	}
	expect("SpMV", 1, 0)
	if err := sparse.SpMM(h, sparse.Trans, 1, A, B, 0, C); err != nil {
		t.Fatal(err)
	}
	expect("SpMM", 1, 0)
	P, err := sparse.SpGEMM(h, 1, A, A)
	if err != nil {
		t.Fatal(err)
	}
	expect("SpGEMM", 1, 0)
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
	// The solver keeps the analyses: their descriptors and A's.
	now, _ := fakecusparse.Live()
	if now.SpSVDescrs != before.SpSVDescrs+1 || now.SpSMDescrs != before.SpSMDescrs+1 || now.SpMats != before.SpMats+1 {
		t.Fatalf("during a solver's life: live %+v, want one SpSV and one SpSM descriptor and one matrix more than %+v", now, before)
	}
	if err := solver.Close(); err != nil {
		t.Fatal(err)
	}
	expect("the solver's Close", 1, 0)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	expect("Close", 0, 0)
}
