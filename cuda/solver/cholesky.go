//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cusolver"
)

// Potrf factors the symmetric positive definite n×n matrix a in place
// (cusolverDnSpotrf, cusolverDnDpotrf): with Lower, A = L·Lᵀ and L
// overwrites the lower triangle; with Upper, A = Uᵀ·U and U overwrites
// the upper one. Only that triangle is read; cuSOLVER does not promise to
// leave the other as it was (the fake does). A leading minor of order i
// that is not positive definite returns an *InfoError matching
// ErrNotPositiveDefinite with Index i.
func Potrf[T Float](h *Handle, uplo Fill, a Matrix[T]) error {
	const op = "Potrf"
	fill, err := rawFill(op, uplo)
	if err != nil {
		return err
	}
	if err := a.check(op, "A"); err != nil {
		return err
	}
	if a.Rows != a.Cols {
		return fmt.Errorf("solver: %s: A is %v: not square", op, a)
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	n, lda := int32(a.Rows), int32(a.ld())
	pa := ptr(a.Mem)
	c := call[T]{op: op, fn: fnName[T]("potrf"), positive: ErrNotPositiveDefinite}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSpotrf_bufferSize(raw, fill, n, as32(pa), lda, &lw)
		} else {
			err = cusolver.DnDpotrf_bufferSize(raw, fill, n, as64(pa), lda, &lw)
		}
		return lw, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSpotrf(raw, fill, n, as32(pa), lda, as32(work), lwork, info)
		}
		return cusolver.DnDpotrf(raw, fill, n, as64(pa), lda, as64(work), lwork, info)
	}
	return c.do(h, held(nil, a.Mem))
}

// Potrs solves A·X = B for X, overwriting the n×nrhs matrix b, with the
// Cholesky factor of the n×n matrix a that Potrf left in its uplo
// triangle (cusolverDnSpotrs, cusolverDnDpotrs).
func Potrs[T Float](h *Handle, uplo Fill, a, b Matrix[T]) error {
	const op = "Potrs"
	fill, err := rawFill(op, uplo)
	if err != nil {
		return err
	}
	if err := checkSquare(op, a, b); err != nil {
		return err
	}
	if a.empty() || b.empty() {
		return h.call("solver."+op, noWork)
	}
	n, nrhs, lda, ldb := int32(a.Rows), int32(b.Cols), int32(a.ld()), int32(b.ld())
	pa, pb := ptr(a.Mem), ptr(b.Mem)
	c := call[T]{op: op, fn: fnName[T]("potrs")}
	c.run = func(raw cusolver.CusolverDnHandle_t, _ *T, _ int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSpotrs(raw, fill, n, nrhs, as32(pa), lda, as32(pb), ldb, info)
		}
		return cusolver.DnDpotrs(raw, fill, n, nrhs, as64(pa), lda, as64(pb), ldb, info)
	}
	return c.do(h, held(held(nil, a.Mem), b.Mem))
}
