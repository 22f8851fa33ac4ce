//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// TestProductsCaptureIntoAGraph: SpMV, SpMM and a solve, each made once
// on the stream (which sizes the workspace and runs the analysis),
// captured into a graph, run again with every launch of it; calls that
// would allocate during a capture are refused, naming why, and the
// capture still ends.
func TestProductsCaptureIntoAGraph(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	// A = [[2 0] [1 4]], lower triangular.
	A, err := sparse.NewCSR(2, 2, alloc(t, s, []int32{0, 1, 3}), alloc(t, s, []int32{0, 0, 1}), alloc(t, s, []float64{2, 1, 4}))
	if err != nil {
		t.Fatal(err)
	}
	x := alloc(t, s, []float64{1, 2})
	y, z := alloc(t, s, []float64{0, 0}), alloc(t, s, []float64{0, 0})
	cm := alloc(t, s, []float64{0, 0})
	B, _ := sparse.NewDense(2, 1, sparse.ColMajor, x)
	C, _ := sparse.NewDense(2, 1, sparse.ColMajor, cm)
	solver, err := sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Lower, sparse.NonUnit)
	if err != nil {
		t.Fatal(err)
	}
	defer solver.Close()
	work := func() error {
		// y = A·x + y, C = A·B + C, z = A⁻¹·x.
		return errors.Join(sparse.SpMV(h, sparse.NoTrans, 1, A, x, 1, y), sparse.SpMM(h, sparse.NoTrans, 1, A, B, 1, C), solver.Solve(1, x, z))
	}
	if err := work(); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	g, err := s.Capture(cuda.CaptureThreadLocal, work)
	var lerr *sparse.Error
	if err != nil && !fakecusparse.Active() && errors.As(err, &lerr) {
		// The real library's own calls under capture are its business:
		// the package's part is what the rest of the test checks.
		t.Skipf("this cuSPARSE refused to be captured: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	e, err := g.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range 2 {
		if err := e.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	// A·x = [2 9]: three products in all.
	if got := download(t, s, y); !slices.Equal(got, []float64{6, 27}) {
		t.Errorf("y = %v, want [6 27]", got)
	}
	if got := download(t, s, cm); !slices.Equal(got, []float64{6, 27}) {
		t.Errorf("C = %v, want [6 27]", got)
	}
	if got := download(t, s, z); !slices.Equal(got, []float64{0.5, 0.375}) {
		t.Errorf("z = %v, want [0.5 0.375]", got)
	}

	// A new handle has no workspace, a new solver no analysis: both would
	// allocate while capturing.
	fresh := newHandle(t, s)
	other, err := sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Lower, sparse.NonUnit)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var spmvErr, solveErr error
	g2, err := s.Capture(cuda.CaptureThreadLocal, func() error {
		spmvErr = sparse.SpMV(fresh, sparse.NoTrans, 1, A, x, 0, y)
		solveErr = other.Solve(1, x, z)
		return nil
	})
	if err == nil {
		g2.Close()
	}
	for what, err := range map[string]error{"SpMV": spmvErr, "Solve": solveErr} {
		if err == nil || !strings.Contains(err.Error(), "the stream is capturing a graph") || !strings.Contains(err.Error(), "make the call once before the capture") {
			t.Errorf("%s while capturing with nothing allocated: %v", what, err)
		}
	}
}
