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
)

// TestBadInputIsRefusedBeforeCuSPARSE: each bad argument gets an error
// that names it, none of them a cuSPARSE status (the library was not
// reached), and the outputs keep what they held.
func TestBadInputIsRefusedBeforeCuSPARSE(t *testing.T) {
	ctx, s := libtest.Stream(t)
	h := newHandle(t, s)
	// A: 3×4 CSR with 5 entries; S: 3×3 CSR; K: 4×3 CSC.
	off := alloc(t, s, []int32{0, 2, 3, 5})
	col := alloc(t, s, []int32{0, 3, 1, 0, 2})
	val := alloc(t, s, []float32{1, 2, 3, 4, 5})
	A, err := sparse.NewCSR(3, 4, off, col, val)
	if err != nil {
		t.Fatal(err)
	}
	S, err := sparse.NewCSR(3, 3, off, col, val)
	if err != nil {
		t.Fatal(err)
	}
	K, err := sparse.NewCSC(4, 3, off, col, val)
	if err != nil {
		t.Fatal(err)
	}
	C, err := sparse.NewCOO(3, 4, col, col, val)
	if err != nil {
		t.Fatal(err)
	}
	x4, y3 := alloc(t, s, []float32{1, 1, 1, 1}), alloc(t, s, []float32{7, 7, 7})
	x3 := alloc(t, s, []float32{1, 1, 1})
	b := alloc(t, s, make([]float32, 8))
	c := alloc(t, s, []float32{7, 7, 7, 7, 7, 7})
	c6 := alloc(t, s, make([]float32, 6))
	B, _ := sparse.NewDense(4, 2, sparse.ColMajor, b)
	Cd, _ := sparse.NewDense(3, 2, sparse.ColMajor, c)
	Cr, _ := sparse.NewDense(3, 2, sparse.RowMajor, c6)
	bTail, err := b.Sub(2, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer bTail.Close()
	Cover, _ := sparse.NewDense(3, 2, sparse.ColMajor, bTail) // in B's memory
	sub, err := y3.Sub(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	col3, err := col.Sub(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer col3.Close()
	y4 := alloc(t, s, []float32{7, 7, 7, 7})
	over, err := y4.Sub(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	x3over, err := y4.Sub(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer x3over.Close()

	// Memory of another context than the handle's.
	other, err := cuda.NewContext(ctx.Device())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign, err := cuda.AllocSliceFrom(other, []float32{1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()

	newErr := func(_ any, err error) error { return err }
	for what, tc := range map[string]struct {
		err  error
		want string
	}{
		"CSR offsets":        {newErr(sparse.NewCSR(4, 4, off, col, val)), "row offsets has 4 elements, want 5"},
		"CSR indices":        {newErr(sparse.NewCSR(3, 4, off, col3, val)), "column indices has 3 elements and values 5"},
		"CSC offsets":        {newErr(sparse.NewCSC(3, 4, off, col, val)), "column offsets has 4 elements, want 5"},
		"COO indices":        {newErr(sparse.NewCOO(3, 4, off, col, val)), "row indices has 4 elements, want 5"},
		"negative rows":      {newErr(sparse.NewCOO(-1, 4, col, col, val)), "a -1×4 matrix"},
		"dense too short":    {newErr(sparse.NewDense(3, 3, sparse.ColMajor, b)), "needs 9 elements, the Slice has 8"},
		"dense ld":           {newErr(sparse.NewDenseLD(3, 2, 2, sparse.ColMajor, b)), "leading dimension 2"},
		"dense order":        {newErr(sparse.NewDense(2, 2, sparse.Order(7), b)), "unknown order Order(7)"},
		"SpMV x":             {sparse.SpMV(h, sparse.NoTrans, 1, A, x3, 0, y3), "x has 3 elements and y 3, want 4 and 3"},
		"SpMV y":             {sparse.SpMV(h, sparse.NoTrans, 1, A, x4, 0, sub), "x has 4 elements and y 2, want 4 and 3"},
		"SpMV transposed":    {sparse.SpMV(h, sparse.Trans, 1, A, x4, 0, y3), "op(A) is 4×3"},
		"SpMV op":            {sparse.SpMV(h, sparse.Op(5), 1, A, x4, 0, y3), "unknown operation Op(5)"},
		"SpMV overlap":       {sparse.SpMV(h, sparse.NoTrans, 1, S, x3over, 0, over), "x and y overlap"},
		"SpMV other context": {sparse.SpMV(h, sparse.NoTrans, 1, A, foreign, 0, y3), "x is memory of another context"},
		"SpMM shapes":        {sparse.SpMM(h, sparse.Trans, 1, A, B, 0, Cd), "do not multiply"},
		"SpMM orders":        {sparse.SpMM(h, sparse.NoTrans, 1, A, B, 0, Cr), "B is ColMajor and C RowMajor"},
		"SpMM overlap":       {sparse.SpMM(h, sparse.NoTrans, 1, A, B, 0, Cover), "B and C overlap"},
		"SpMM op":            {sparse.SpMM(h, sparse.Op(-1), 1, A, B, 0, Cd), "unknown operation"},
		"SpGEMM format":      {newErr(sparse.SpGEMM(h, 1, A, K)), "B CSC: cuSPARSE's SpGEMM takes CSR matrices"},
		"SpGEMM shapes":      {newErr(sparse.SpGEMM(h, 1, A, A)), "A 3×4 and B 3×4 do not multiply"},
		"SpSV CSC":           {newErr(sparse.NewTriangularSolver(h, sparse.NoTrans, K, sparse.Lower, sparse.NonUnit)), "A is CSC"},
		"SpSV square":        {newErr(sparse.NewTriangularSolver(h, sparse.NoTrans, C, sparse.Lower, sparse.NonUnit)), "A is 3×4: a triangular solve needs a square matrix"},
		"SpSV fill":          {newErr(sparse.NewTriangularSolver(h, sparse.NoTrans, S, sparse.Fill(2), sparse.NonUnit)), "unknown fill mode Fill(2)"},
		"SpSV diag":          {newErr(sparse.NewTriangularSolver(h, sparse.NoTrans, S, sparse.Lower, sparse.Diag(3))), "unknown diagonal type Diag(3)"},
		"SpSV x":             {sparse.SpSV(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, x4, y3), "x has 4 elements and y 3, want 3"},
		"SpSV overlap":       {sparse.SpSV(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, y3, y3), "x and y overlap"},
		"SpSM rows":          {sparse.SpSM(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, B, Cd), "A is 3×3, B 4×2 and C 3×2"},
		"SpSM orders":        {sparse.SpSM(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, Cd, Cr), "B is ColMajor and C RowMajor"},
		"SpSM overlap":       {sparse.SpSM(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, Cd, Cd), "B and C overlap"},
		"SpSV other context": {sparse.SpSV(h, sparse.NoTrans, 1, S, sparse.Lower, sparse.NonUnit, x3, foreign3(t, other)), "y is memory of another context"},
	} {
		var lerr *sparse.Error
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error, want one containing %q", what, tc.want)
		case !strings.Contains(tc.err.Error(), tc.want):
			t.Errorf("%s: %v, want an error containing %q", what, tc.err, tc.want)
		case errors.As(tc.err, &lerr):
			t.Errorf("%s: %v comes from cuSPARSE, not from the package's checks", what, tc.err)
		case errors.Is(tc.err, cuda.ErrClosed):
			t.Errorf("%s: %v matches ErrClosed", what, tc.err)
		}
	}
	if got := download(t, s, y3); !slices.Equal(got, []float32{7, 7, 7}) {
		t.Errorf("y after the refused calls: %v, want it untouched", got)
	}
	if got := download(t, s, c); !slices.Equal(got, []float32{7, 7, 7, 7, 7, 7}) {
		t.Errorf("C after the refused calls: %v, want it untouched", got)
	}
	if got := download(t, s, y4); !slices.Equal(got, []float32{7, 7, 7, 7}) {
		t.Errorf("y4 after the refused calls: %v, want it untouched", got)
	}
}

func foreign3(t *testing.T, ctx *cuda.Context) *cuda.Slice[float32] {
	t.Helper()
	d, err := cuda.AllocSliceFrom(ctx, []float32{0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestNilAndClosedArgumentsAreErrClosed: nil or closed Slices, matrices,
// handles and solvers give errors matching cuda.ErrClosed.
func TestNilAndClosedArgumentsAreErrClosed(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	off := alloc(t, s, []int64{0, 1, 2})
	col := alloc(t, s, []int64{0, 1})
	val := alloc(t, s, []float64{1, 2})
	x, y := alloc(t, s, []float64{1, 1}), alloc(t, s, []float64{5, 5})
	A, err := sparse.NewCSR(2, 2, off, col, val)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := cuda.AllocSliceFrom(s, []float64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	// A matrix whose values were closed after it was made.
	gone, err := cuda.AllocSliceFrom(s, []float64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	G, err := sparse.NewCSR(2, 2, off, col, gone)
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	dead, err := sparse.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	var nilHandle *sparse.Handle
	solver, err := sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Lower, sparse.NonUnit)
	if err != nil {
		t.Fatal(err)
	}
	if err := solver.Close(); err != nil {
		t.Fatal(err)
	}
	newErr := func(_ any, err error) error { return err }
	for what, err := range map[string]error{
		"nil values":           newErr(sparse.NewCSR[float64, int64](2, 2, off, col, nil)),
		"nil offsets":          newErr(sparse.NewCSR(2, 2, nil, col, val)),
		"closed values":        newErr(sparse.NewCSR(2, 2, off, col, closed)),
		"nil dense data":       newErr(sparse.NewDense[float64](1, 1, sparse.ColMajor, nil)),
		"nil x":                sparse.SpMV(h, sparse.NoTrans, 1, A, nil, 0, y),
		"closed x":             sparse.SpMV(h, sparse.NoTrans, 1, A, closed, 0, y),
		"nil matrix":           sparse.SpMV(h, sparse.NoTrans, 1, (*sparse.Matrix[float64, int64])(nil), x, 0, y),
		"values closed later":  sparse.SpMV(h, sparse.NoTrans, 1, G, x, 0, y),
		"nil handle":           sparse.SpMV(nilHandle, sparse.NoTrans, 1, A, x, 0, y),
		"zero handle":          sparse.SpMV(&sparse.Handle{}, sparse.NoTrans, 1, A, x, 0, y),
		"closed handle":        sparse.SpMV(dead, sparse.NoTrans, 1, A, x, 0, y),
		"closed handle SpMM":   sparse.SpMM(dead, sparse.NoTrans, 1, A, dense2(t, x), 0, dense2(t, y)),
		"nil dense":            sparse.SpMM(h, sparse.NoTrans, 1, A, nil, 0, dense2(t, y)),
		"closed handle GEMM":   newErr(sparse.SpGEMM(dead, 1, A, A)),
		"nil B of SpGEMM":      newErr(sparse.SpGEMM(h, 1, A, nil)),
		"closed handle SpSV":   sparse.SpSV(dead, sparse.NoTrans, 1, A, sparse.Lower, sparse.NonUnit, x, y),
		"closed solver":        solver.Solve(1, x, y),
		"closed solver, dense": solver.SolveDense(1, dense2(t, x), dense2(t, y)),
		"nil dense of SpSM":    sparse.SpSM(h, sparse.NoTrans, 1, A, sparse.Lower, sparse.NonUnit, nil, dense2(t, y)),
		"nil solver":           (*sparse.TriangularSolver[float64, int64])(nil).Solve(1, x, y),
		"Version of closed":    newErr(dead.Version()),
		"Clone of closed":      newErr(dead.Clone()),
		"Clone of nil":         newErr(nilHandle.Clone()),
		"New on a nil stream":  newErr(sparse.New(nil)),
	} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s: %v, want an error matching ErrClosed", what, err)
		}
	}
	if dead.Stream() != nil || nilHandle.Stream() != nil {
		t.Error("Stream of a closed or nil handle is not nil")
	}
	if err := solver.Close(); err != nil {
		t.Errorf("second Close of a solver: %v", err)
	}
	if got := download(t, s, y); !slices.Equal(got, []float64{5, 5}) {
		t.Errorf("y after the refused calls: %v, want it untouched", got)
	}
}

func dense2(t *testing.T, d *cuda.Slice[float64]) *sparse.Dense[float64] {
	t.Helper()
	m, err := sparse.NewDense(2, 1, sparse.ColMajor, d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCloneOutlivesTheOriginal: a clone works after the handle it was
// made from is closed, and the workspace it shares stays.
func TestCloneOutlivesTheOriginal(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	off := alloc(t, s, []int32{0, 1, 2})
	col := alloc(t, s, []int32{1, 0})
	val := alloc(t, s, []float32{3, 4})
	A, err := sparse.NewCSR(2, 2, off, col, val)
	if err != nil {
		t.Fatal(err)
	}
	x, y := alloc(t, s, []float32{1, 2}), alloc(t, s, []float32{0, 0})
	if err := sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("SpMV on the closed original: %v", err)
	}
	if err := sparse.SpMV(c, sparse.NoTrans, 2, A, x, 1, y); err != nil {
		t.Fatal(err)
	}
	// y = 2*A*x + A*x = 3*[6, 4].
	if got := download(t, s, y); !slices.Equal(got, []float32{18, 12}) {
		t.Fatalf("y = %v, want [18 12]", got)
	}
}
