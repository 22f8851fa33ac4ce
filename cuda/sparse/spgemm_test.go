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

func TestSpGEMMMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { spgemmCases[float32, int32](t, s, h) })
	t.Run("float64/int64", func(t *testing.T) { spgemmCases[float64, int64](t, s, h) })
	t.Run("complex64/int32", func(t *testing.T) { spgemmCases[complex64, int32](t, s, h) })
	t.Run("complex128/int64", func(t *testing.T) { spgemmCases[complex128, int64](t, s, h) })
}

// spgemmCases multiplies 19×23 by 23×15 matrices of each pair of
// patterns and checks C: its shape, offsets that start at 0 and never
// fall, each row's columns in range and distinct, its positions those of
// the symbolic product (cancellations stay entries), and its values.
func spgemmCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle) {
	const m, k, n = 19, 23, 15
	rng := rand.New(rand.NewPCG(5, 6))
	cx := isComplex[T]()
	alpha, _ := scalars[T]()
	for _, pa := range patterns {
		for _, pb := range []pattern{patterns[0], patterns[3], patterns[4]} {
			t.Run(name(pa.name, pb.name), func(t *testing.T) {
				a := rounded[T](randomHost(rng, pa, m, k, cx))
				b := rounded[T](randomHost(rng, pb, k, n, cx))
				A := upload[T, I](t, s, a, sparse.CSR)
				B := upload[T, I](t, s, b, sparse.CSR)
				C, err := sparse.SpGEMM(h, alpha, A, B)
				if err != nil {
					t.Fatal(err)
				}
				defer C.Close()
				if C.Format() != sparse.CSR || C.Rows() != m || C.Cols() != n {
					t.Fatalf("C is %v %d×%d, want CSR %d×%d", C.Format(), C.Rows(), C.Cols(), m, n)
				}
				dp, dq, dv := C.Arrays()
				p, q, v := download(t, s, dp), download(t, s, dq), download(t, s, dv)

				// The reference: alpha*A*B, and which positions the product
				// reaches at all.
				want := make([]complex128, m*n)
				scale := make([]complex128, m*n)
				reached := make([]bool, m*n)
				for e := range a.v {
					for f := range b.v {
						if b.r[f] != a.c[e] {
							continue
						}
						at := a.r[e]*n + b.c[f]
						term := fromT(alpha) * a.v[e] * b.v[f]
						want[at] += term
						scale[at] += complex(cmplx.Abs(term), 0)
						reached[at] = true
					}
				}
				symbolic := 0
				for _, r := range reached {
					if r {
						symbolic++
					}
				}
				if C.NNZ() != symbolic || len(q) != symbolic || len(v) != symbolic {
					t.Fatalf("C has %d entries (%d indices, %d values); the product reaches %d positions", C.NNZ(), len(q), len(v), symbolic)
				}
				if len(p) != m+1 || p[0] != 0 || int(p[m]) != symbolic {
					t.Fatalf("row offsets %v: want %d, from 0 to %d", p, m+1, symbolic)
				}
				got := make([]complex128, m*n)
				seen := make([]bool, m*n)
				for i := range m {
					if p[i+1] < p[i] {
						t.Fatalf("row offsets fall at row %d: %v", i, p)
					}
					for e := p[i]; e < p[i+1]; e++ {
						j := int(q[e])
						if j < 0 || j >= n || seen[i*n+j] || !reached[i*n+j] {
							t.Fatalf("row %d: column %d out of range, repeated or not reached by the product", i, j)
						}
						seen[i*n+j] = true
						got[i*n+j] = fromT(v[e])
					}
				}
				compare(t, "C", got, want, scale, tolerance[T]())
			})
		}
	}
}

// TestSpGEMMResultIsUsable multiplies with SpGEMM's result: (A*B)*x
// equals A*(B*x).
func TestSpGEMMResultIsUsable(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	rng := rand.New(rand.NewPCG(7, 8))
	a := rounded[float64](randomHost(rng, patterns[0], 30, 20, false))
	b := rounded[float64](randomHost(rng, patterns[4], 20, 25, false))
	A := upload[float64, int32](t, s, a, sparse.CSR)
	B := upload[float64, int32](t, s, b, sparse.CSR)
	C, err := sparse.SpGEMM(h, 1.0, A, B)
	if err != nil {
		t.Fatal(err)
	}
	defer C.Close()
	x := alloc(t, s, toTs[float64](randomDense(rng, 25, 1, false).v))
	bx, abx, cx := alloc(t, s, make([]float64, 20)), alloc(t, s, make([]float64, 30)), alloc(t, s, make([]float64, 30))
	for _, err := range []error{
		sparse.SpMV(h, sparse.NoTrans, 1.0, B, x, 0, bx),
		sparse.SpMV(h, sparse.NoTrans, 1.0, A, bx, 0, abx),
		sparse.SpMV(h, sparse.NoTrans, 1.0, C, x, 0, cx),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := fromTs(download(t, s, abx))
	scale := make([]complex128, len(want))
	for i := range scale {
		scale[i] = 10
	}
	compare(t, "(A*B)*x", fromTs(download(t, s, cx)), want, scale, 1e-12)
}
