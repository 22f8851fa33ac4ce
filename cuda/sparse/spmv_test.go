//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

var formats = []sparse.Format{sparse.CSR, sparse.CSC, sparse.COO}

// opsOf are the operations tested for T: ConjTrans only where it differs
// from Trans.
func opsOf[T sparse.Scalar]() []sparse.Op {
	if isComplex[T]() {
		return []sparse.Op{sparse.NoTrans, sparse.Trans, sparse.ConjTrans}
	}
	return []sparse.Op{sparse.NoTrans, sparse.Trans}
}

// unsupported skips t where the real cuSPARSE says it does not do a
// combination (its documented CUSPARSE_STATUS_NOT_SUPPORTED): that is the
// library's choice, not the package's failure. The fake supports every
// combination, so there it fails.
func unsupported(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, cusparse.CUSPARSE_STATUS_NOT_SUPPORTED) && !fakecusparse.Active() {
		t.Skipf("this cuSPARSE does not support the combination: %v", err)
	}
}

// scalars are the alpha and beta of a type's tests.
func scalars[T sparse.Scalar]() (alpha, beta T) {
	if isComplex[T]() {
		return toT[T](complex(1.5, -0.5)), toT[T](complex(-0.75, 0.25))
	}
	return toT[T](1.5), toT[T](-0.75)
}

func TestSpMVMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { spmvCases[float32, int32](t, s, h, 23, 17) })
	t.Run("float64/int64", func(t *testing.T) { spmvCases[float64, int64](t, s, h, 17, 23) })
	t.Run("complex64/int32", func(t *testing.T) { spmvCases[complex64, int32](t, s, h, 20, 20) })
	t.Run("complex128/int64", func(t *testing.T) { spmvCases[complex128, int64](t, s, h, 19, 11) })
	t.Run("float32/int32/large", func(t *testing.T) { spmvCases[float32, int32](t, s, h, 700, 500) })
}

// spmvCases runs SpMV on a rows×cols matrix of every format, pattern and
// operation, with beta nonzero and with beta 0 on a y of NaNs (which
// must not be read).
func spmvCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle, rows, cols int) {
	rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
	cx := isComplex[T]()
	alpha, beta := scalars[T]()
	for _, f := range formats {
		for _, p := range patterns {
			a := rounded[T](randomHost(rng, p, rows, cols, cx))
			A := upload[T, I](t, s, a, f)
			for _, op := range opsOf[T]() {
				t.Run(name(f, p.name, op), func(t *testing.T) {
					m, k := rows, cols
					if op != sparse.NoTrans {
						m, k = cols, rows
					}
					xv := fromTs(toTs[T](randomDense(rng, k, 1, cx).v))
					y0 := fromTs(toTs[T](randomDense(rng, m, 1, cx).v))
					dx, dy := alloc(t, s, toTs[T](xv)), alloc(t, s, toTs[T](y0))
					err := sparse.SpMV(h, op, alpha, A, dx, beta, dy)
					unsupported(t, err)
					if err != nil {
						t.Fatal(err)
					}
					want, scale := refSpMM(op, fromT(alpha), a, dense{k, 1, xv}, fromT(beta), dense{m, 1, y0})
					compare(t, "y", fromTs(download(t, s, dy)), want.v, scale.v, tolerance[T]())

					nan := make([]T, m)
					for i := range nan {
						nan[i] = toT[T](complex(math.NaN(), 0))
					}
					dz := alloc(t, s, nan)
					if err := sparse.SpMV(h, op, alpha, A, dx, 0, dz); err != nil {
						t.Fatal(err)
					}
					want, scale = refSpMM(op, fromT(alpha), a, dense{k, 1, xv}, 0, dense{m, 1, nil})
					compare(t, "y with beta 0", fromTs(download(t, s, dz)), want.v, scale.v, tolerance[T]())
				})
			}
		}
	}
}

func TestSpMMMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { spmmCases[float32, int32](t, s, h) })
	t.Run("float64/int64", func(t *testing.T) { spmmCases[float64, int64](t, s, h) })
	t.Run("complex64/int64", func(t *testing.T) { spmmCases[complex64, int64](t, s, h) })
	t.Run("complex128/int32", func(t *testing.T) { spmmCases[complex128, int32](t, s, h) })
}

// spmmCases runs SpMM on a 21×13 matrix of every format and three
// patterns, NoTrans and Trans, with B and C in either order, packed or
// with a leading dimension beyond a column's or row's length.
func spmmCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle) {
	const rows, cols, n = 21, 13, 6
	rng := rand.New(rand.NewPCG(3, 4))
	cx := isComplex[T]()
	alpha, beta := scalars[T]()
	for _, f := range formats {
		for _, p := range []pattern{patterns[0], patterns[2], patterns[4]} {
			a := rounded[T](randomHost(rng, p, rows, cols, cx))
			A := upload[T, I](t, s, a, f)
			for _, op := range []sparse.Op{sparse.NoTrans, sparse.Trans} {
				for _, order := range []sparse.Order{sparse.ColMajor, sparse.RowMajor} {
					for _, pad := range []int{0, 3} {
						t.Run(name(f, p.name, op, order, "pad", pad), func(t *testing.T) {
							m, k := rows, cols
							if op != sparse.NoTrans {
								m, k = cols, rows
							}
							b := randomDense(rng, k, n, cx)
							c := randomDense(rng, m, n, cx)
							b.v, c.v = fromTs(toTs[T](b.v)), fromTs(toTs[T](c.v))
							bld, cld := k+pad, m+pad
							if order == sparse.RowMajor {
								bld, cld = n+pad, n+pad
							}
							db := alloc(t, s, toTs[T](b.layout(order, bld)))
							dc := alloc(t, s, toTs[T](c.layout(order, cld)))
							B, err := sparse.NewDenseLD(k, n, bld, order, db)
							if err != nil {
								t.Fatal(err)
							}
							C, err := sparse.NewDenseLD(m, n, cld, order, dc)
							if err != nil {
								t.Fatal(err)
							}
							err = sparse.SpMM(h, op, alpha, A, B, beta, C)
							unsupported(t, err)
							if err != nil {
								t.Fatal(err)
							}
							want, scale := refSpMM(op, fromT(alpha), a, b, fromT(beta), c)
							got := download(t, s, dc)
							compare(t, "C", unlayout(fromTs(got), m, n, order, cld).v, want.v, scale.v, tolerance[T]())
							// The padding between columns (or rows) is not C's: it
							// keeps its NaNs.
							for i, v := range got {
								inner := i % cld
								if inner >= map[bool]int{true: m, false: n}[order == sparse.ColMajor] && !math.IsNaN(real(fromT(v))) {
									t.Fatalf("C's padding element %d was written: %v", i, v)
								}
							}
						})
					}
				}
			}
		}
	}
}
