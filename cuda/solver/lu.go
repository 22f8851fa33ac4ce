//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Getrf factors the m×n matrix a in place as P·A = L·U with partial
// pivoting (cusolverDnSgetrf, cusolverDnDgetrf): L unit lower triangular
// below the diagonal, U upper triangular on and above it, and in ipiv,
// which must hold min(m, n) elements, the 1-based pivots: row i was
// swapped with row ipiv[i]. An exactly zero pivot U(i,i) returns an
// *InfoError matching ErrSingular with Index i; the factors are complete
// all the same.
func Getrf[T Float](h *Handle, a Matrix[T], ipiv *cuda.Slice[int32]) error {
	const op = "Getrf"
	if err := a.check(op, "A"); err != nil {
		return err
	}
	k := min(a.Rows, a.Cols)
	if err := checkVec(op, "ipiv", ipiv, k); err != nil {
		return err
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	m, n, lda := int32(a.Rows), int32(a.Cols), int32(a.ld())
	pa, pp := ptr(a.Mem), ptr(ipiv)
	c := call[T]{op: op, fn: fnName[T]("getrf"), positive: ErrSingular}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSgetrf_bufferSize(raw, m, n, as32(pa), lda, &lw)
		} else {
			err = cusolver.DnDgetrf_bufferSize(raw, m, n, as64(pa), lda, &lw)
		}
		return lw, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, _ int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSgetrf(raw, m, n, as32(pa), lda, as32(work), pp, info)
		}
		return cusolver.DnDgetrf(raw, m, n, as64(pa), lda, as64(work), pp, info)
	}
	return c.do(h, held(held(nil, a.Mem), ipiv))
}

// Getrs solves op(A)·X = B for X, overwriting the n×nrhs matrix b, with
// the factors of the n×n matrix a and the pivots ipiv (n elements) that
// Getrf left (cusolverDnSgetrs, cusolverDnDgetrs).
func Getrs[T Float](h *Handle, trans Op, a Matrix[T], ipiv *cuda.Slice[int32], b Matrix[T]) error {
	const op = "Getrs"
	t, err := rawOp(op, trans)
	if err != nil {
		return err
	}
	if err := checkSquare(op, a, b); err != nil {
		return err
	}
	if err := checkVec(op, "ipiv", ipiv, a.Rows); err != nil {
		return err
	}
	if a.empty() || b.empty() {
		return h.call("solver."+op, noWork)
	}
	n, nrhs, lda, ldb := int32(a.Rows), int32(b.Cols), int32(a.ld()), int32(b.ld())
	pa, pp, pb := ptr(a.Mem), ptr(ipiv), ptr(b.Mem)
	c := call[T]{op: op, fn: fnName[T]("getrs")}
	c.run = func(raw cusolver.CusolverDnHandle_t, _ *T, _ int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSgetrs(raw, t, n, nrhs, as32(pa), lda, pp, as32(pb), ldb, info)
		}
		return cusolver.DnDgetrs(raw, t, n, nrhs, as64(pa), lda, pp, as64(pb), ldb, info)
	}
	return c.do(h, held(held(held(nil, a.Mem), ipiv), b.Mem))
}

// checkSquare checks a square matrix a and a right-hand side b with as
// many rows.
func checkSquare[T Float](op string, a, b Matrix[T]) error {
	if err := a.check(op, "A"); err != nil {
		return err
	}
	if err := b.check(op, "B"); err != nil {
		return err
	}
	if a.Rows != a.Cols {
		return fmt.Errorf("solver: %s: A is %v: not square", op, a)
	}
	if b.Rows != a.Rows {
		return fmt.Errorf("solver: %s: A is %v and B %v: B needs %d rows", op, a, b, a.Rows)
	}
	return nil
}

func rawOp(op string, o Op) (cublas.CublasOperation_t, error) {
	switch o {
	case NoTrans:
		return cublas.CUBLAS_OP_N, nil
	case Trans:
		return cublas.CUBLAS_OP_T, nil
	}
	return 0, fmt.Errorf("solver: %s: unknown operation %v", op, o)
}

func rawFill(op string, f Fill) (cublas.CublasFillMode_t, error) {
	switch f {
	case Lower:
		return cublas.CUBLAS_FILL_MODE_LOWER, nil
	case Upper:
		return cublas.CUBLAS_FILL_MODE_UPPER, nil
	}
	return 0, fmt.Errorf("solver: %s: unknown triangle %v", op, f)
}

// noWork is the call of an empty problem: it checks only that the handle
// is open.
func noWork(cusolver.CusolverDnHandle_t, cu.CUstream) error { return nil }
