//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Geqrf factors the m×n matrix a in place as A = Q·R (cusolverDnSgeqrf,
// cusolverDnDgeqrf): R overwrites the upper triangle, and Q is kept as
// k = min(m, n) Householder reflectors H(i) = I - tau[i]·v·vᵀ, Q =
// H(1)·…·H(k), each v (v(i) = 1) below the diagonal of column i and its
// tau in tau, which must hold k elements. Ormqr applies Q.
func Geqrf[T Float](h *Handle, a Matrix[T], tau *cuda.Slice[T]) error {
	const op = "Geqrf"
	if err := a.check(op, "A"); err != nil {
		return err
	}
	if err := checkVec(op, "tau", tau, min(a.Rows, a.Cols)); err != nil {
		return err
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	m, n, lda := int32(a.Rows), int32(a.Cols), int32(a.ld())
	pa, pt := ptr(a.Mem), ptr(tau)
	c := call[T]{op: op, fn: fnName[T]("geqrf")}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSgeqrf_bufferSize(raw, m, n, as32(pa), lda, &lw)
		} else {
			err = cusolver.DnDgeqrf_bufferSize(raw, m, n, as64(pa), lda, &lw)
		}
		return lw, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSgeqrf(raw, m, n, as32(pa), lda, as32(pt), as32(work), lwork, info)
		}
		return cusolver.DnDgeqrf(raw, m, n, as64(pa), lda, as64(pt), as64(work), lwork, info)
	}
	return c.do(h, held(held(nil, a.Mem), tau))
}

// Ormqr overwrites the matrix c with Q·C, Qᵀ·C (side Left) or C·Q, C·Qᵀ
// (Right), Q the orthogonal factor that Geqrf left in a and tau
// (cusolverDnSormqr, cusolverDnDormqr). a is the matrix Geqrf factored:
// its rows are those of Q, c.Rows for Left and c.Cols for Right, and its
// min(rows, cols) reflectors make Q.
func Ormqr[T Float](h *Handle, side Side, trans Op, a Matrix[T], tau *cuda.Slice[T], c Matrix[T]) error {
	const op = "Ormqr"
	t, err := rawOp(op, trans)
	if err != nil {
		return err
	}
	var sd cublas.CublasSideMode_t
	nq := c.Rows
	switch side {
	case Left:
		sd = cublas.CUBLAS_SIDE_LEFT
	case Right:
		sd, nq = cublas.CUBLAS_SIDE_RIGHT, c.Cols
	default:
		return fmt.Errorf("solver: %s: unknown side %v", op, side)
	}
	if err := a.check(op, "A"); err != nil {
		return err
	}
	if err := c.check(op, "C"); err != nil {
		return err
	}
	if a.Rows != nq {
		return fmt.Errorf("solver: %s: A is %v and C %v: Q is %d×%d, so A needs %d rows on the %v", op, a, c, nq, nq, nq, side)
	}
	k := min(a.Rows, a.Cols)
	if err := checkVec(op, "tau", tau, k); err != nil {
		return err
	}
	if c.empty() || k == 0 {
		return h.call("solver."+op, noWork)
	}
	m, n, kk, lda, ldc := int32(c.Rows), int32(c.Cols), int32(k), int32(a.ld()), int32(c.ld())
	pa, pt, pc := ptr(a.Mem), ptr(tau), ptr(c.Mem)
	cl := call[T]{op: op, fn: fnName[T]("ormqr")}
	cl.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSormqr_bufferSize(raw, sd, t, m, n, kk, as32(pa), lda, as32(pt), as32(pc), ldc, &lw)
		} else {
			err = cusolver.DnDormqr_bufferSize(raw, sd, t, m, n, kk, as64(pa), lda, as64(pt), as64(pc), ldc, &lw)
		}
		return lw, err
	}
	cl.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSormqr(raw, sd, t, m, n, kk, as32(pa), lda, as32(pt), as32(pc), ldc, as32(work), lwork, info)
		}
		return cusolver.DnDormqr(raw, sd, t, m, n, kk, as64(pa), lda, as64(pt), as64(pc), ldc, as64(work), lwork, info)
	}
	return cl.do(h, held(held(held(nil, a.Mem), tau), c.Mem))
}
