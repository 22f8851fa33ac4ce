//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
)

func TestSpSMMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { spsmCases[float32, int32](t, s, h) })
	t.Run("float64/int64", func(t *testing.T) { spsmCases[float64, int64](t, s, h) })
	t.Run("complex64/int32", func(t *testing.T) { spsmCases[complex64, int32](t, s, h) })
	t.Run("complex128/int64", func(t *testing.T) { spsmCases[complex128, int64](t, s, h) })
}

// spsmCases solves with 30×30 triangles in CSR and COO, of each fill and
// diagonal type and operation, for B and C in either order: three
// solves on one solver, of 4, 4 and then 2 columns (which takes a new
// analysis), each checked column by column against the dense reference.
func spsmCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle) {
	const n = 30
	rng := rand.New(rand.NewPCG(21, 22))
	cx := isComplex[T]()
	alpha, _ := scalars[T]()
	for _, f := range []sparse.Format{sparse.CSR, sparse.COO} {
		for _, fill := range []sparse.Fill{sparse.Lower, sparse.Upper} {
			for _, diag := range []sparse.Diag{sparse.NonUnit, sparse.Unit} {
				for _, op := range opsOf[T]() {
					for _, order := range []sparse.Order{sparse.ColMajor, sparse.RowMajor} {
						t.Run(name(f, fill, diag, op, order), func(t *testing.T) {
							a := rounded[T](triangle(rng, n, fill, diag, cx))
							A := upload[T, I](t, s, a, f)
							solver, err := sparse.NewTriangularSolver(h, op, A, fill, diag)
							if err != nil {
								t.Fatal(err)
							}
							defer solver.Close()
							for round, k := range []int{4, 4, 2} {
								b := randomDense(rng, n, k, cx)
								b.v = fromTs(toTs[T](b.v))
								ld := n
								if order == sparse.RowMajor {
									ld = k
								}
								db := alloc(t, s, toTs[T](b.layout(order, ld)))
								dc := alloc(t, s, make([]T, n*k))
								B, err := sparse.NewDense(n, k, order, db)
								if err != nil {
									t.Fatal(err)
								}
								C, err := sparse.NewDense(n, k, order, dc)
								if err != nil {
									t.Fatal(err)
								}
								err = solver.SolveDense(alpha, B, C)
								unsupported(t, err)
								if err != nil {
									t.Fatalf("solve %d: %v", round, err)
								}
								got := unlayout(fromTs(download(t, s, dc)), n, k, order, ld)
								for j := range k {
									want := refSolve(op, a, fill, diag, fromT(alpha), b.v[j*n:(j+1)*n])
									scale := make([]complex128, n)
									for i := range scale {
										scale[i] = complex(4*cmplx.Abs(want[i])+1, 0)
									}
									compare(t, name("solve", round, "column", j), got.v[j*n:(j+1)*n], want, scale, 10*tolerance[T]())
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestSpSMSolvesOnce: the one-call SpSM gives the reference's answer.
func TestSpSMSolvesOnce(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	rng := rand.New(rand.NewPCG(23, 24))
	const n, k = 20, 3
	a := rounded[float64](triangle(rng, n, sparse.Lower, sparse.NonUnit, false))
	A := upload[float64, int32](t, s, a, sparse.COO)
	b := randomDense(rng, n, k, false)
	db, dc := alloc(t, s, toTs[float64](b.v)), alloc(t, s, make([]float64, n*k))
	B, _ := sparse.NewDense(n, k, sparse.ColMajor, db)
	C, _ := sparse.NewDense(n, k, sparse.ColMajor, dc)
	err := sparse.SpSM(h, sparse.NoTrans, 0.5, A, sparse.Lower, sparse.NonUnit, B, C)
	unsupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	got := fromTs(download(t, s, dc))
	for j := range k {
		want := refSolve(sparse.NoTrans, a, sparse.Lower, sparse.NonUnit, 0.5, b.v[j*n:(j+1)*n])
		scale := make([]complex128, n)
		for i := range scale {
			scale[i] = complex(4*cmplx.Abs(want[i])+1, 0)
		}
		compare(t, name("column", j), got[j*n:(j+1)*n], want, scale, 1e-11)
	}
}
