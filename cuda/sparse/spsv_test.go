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

// triangle makes an n×n triangular matrix of the fill with a strong
// diagonal (absent where diag is Unit, which must not read it): well
// conditioned, so the solution is accurate to a few roundings.
func triangle(rng *rand.Rand, n int, fill sparse.Fill, diag sparse.Diag, cx bool) host {
	h := host{rows: n, cols: n}
	for i := range n {
		for j := range n {
			switch {
			case i == j:
				if diag == sparse.NonUnit {
					h.add(i, j, 2+randomValue(rng, cx))
				}
			case (fill == sparse.Lower) == (j < i) && rng.Float64() < 0.3:
				h.add(i, j, randomValue(rng, cx)/4)
			}
		}
	}
	return h
}

// refSolve solves op(A)*y = alpha*x by dense substitution.
func refSolve(op sparse.Op, a host, fill sparse.Fill, diag sparse.Diag, alpha complex128, x []complex128) []complex128 {
	n := a.rows
	full := make([]complex128, n*n)
	r, c, v := a.entries(op)
	for k := range v {
		full[r[k]*n+c[k]] += v[k]
	}
	if diag == sparse.Unit {
		for i := range n {
			full[i*n+i] = 1
		}
	}
	lower := (fill == sparse.Lower) == (op == sparse.NoTrans)
	y := make([]complex128, n)
	for step := range n {
		i := step
		if !lower {
			i = n - 1 - step
		}
		sum := alpha * x[i]
		for j := range n {
			if j != i {
				sum -= full[i*n+j] * y[j]
			}
		}
		y[i] = sum / full[i*n+i]
	}
	return y
}

func TestSpSVMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { spsvCases[float32, int32](t, s, h) })
	t.Run("float64/int64", func(t *testing.T) { spsvCases[float64, int64](t, s, h) })
	t.Run("complex64/int64", func(t *testing.T) { spsvCases[complex64, int64](t, s, h) })
	t.Run("complex128/int32", func(t *testing.T) { spsvCases[complex128, int32](t, s, h) })
}

// spsvCases solves with 40×40 triangles in CSR and COO, of each fill and
// diagonal type, for each operation: the solver's two solves, with
// different right-hand sides, must both be right.
func spsvCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle) {
	const n = 40
	rng := rand.New(rand.NewPCG(9, 10))
	cx := isComplex[T]()
	alpha, _ := scalars[T]()
	for _, f := range []sparse.Format{sparse.CSR, sparse.COO} {
		for _, fill := range []sparse.Fill{sparse.Lower, sparse.Upper} {
			for _, diag := range []sparse.Diag{sparse.NonUnit, sparse.Unit} {
				for _, op := range opsOf[T]() {
					t.Run(name(f, fill, diag, op), func(t *testing.T) {
						a := rounded[T](triangle(rng, n, fill, diag, cx))
						A := upload[T, I](t, s, a, f)
						solver, err := sparse.NewTriangularSolver(h, op, A, fill, diag)
						if err != nil {
							t.Fatal(err)
						}
						defer solver.Close()
						for round := range 2 {
							x := fromTs(toTs[T](randomDense(rng, n, 1, cx).v))
							dx, dy := alloc(t, s, toTs[T](x)), alloc(t, s, make([]T, n))
							err := solver.Solve(alpha, dx, dy)
							unsupported(t, err)
							if err != nil {
								t.Fatalf("solve %d: %v", round, err)
							}
							want := refSolve(op, a, fill, diag, fromT(alpha), x)
							scale := make([]complex128, n)
							for i := range scale {
								scale[i] = complex(4*cmplx.Abs(want[i])+1, 0)
							}
							compare(t, name("y of solve", round), fromTs(download(t, s, dy)), want, scale, 10*tolerance[T]())
						}
					})
				}
			}
		}
	}
}

// TestSpSVSolvesOnce: the one-call SpSV gives the solver's answer.
func TestSpSVSolvesOnce(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	rng := rand.New(rand.NewPCG(11, 12))
	a := rounded[float64](triangle(rng, 25, sparse.Upper, sparse.NonUnit, false))
	A := upload[float64, int32](t, s, a, sparse.CSR)
	x := toTs[float64](randomDense(rng, 25, 1, false).v)
	dx, dy := alloc(t, s, x), alloc(t, s, make([]float64, 25))
	if err := sparse.SpSV(h, sparse.NoTrans, 2.0, A, sparse.Upper, sparse.NonUnit, dx, dy); err != nil {
		t.Fatal(err)
	}
	want := refSolve(sparse.NoTrans, a, sparse.Upper, sparse.NonUnit, 2, fromTs(x))
	scale := make([]complex128, len(want))
	for i := range scale {
		scale[i] = complex(4*cmplx.Abs(want[i])+1, 0)
	}
	compare(t, "y", fromTs(download(t, s, dy)), want, scale, 1e-11)
}
