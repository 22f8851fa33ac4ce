//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Syevd computes the eigenvalues of the symmetric n×n matrix a, whose
// uplo triangle holds it, into w (n elements, ascending), and with
// vectors the orthonormal eigenvectors into a's columns, column j that of
// w[j] (cusolverDnSsyevd, cusolverDnDsyevd, divide and conquer). Without
// vectors the triangle is destroyed. An iteration that does not converge
// returns an *InfoError matching ErrNoConvergence.
func Syevd[T Float](h *Handle, vectors bool, uplo Fill, a Matrix[T], w *cuda.Slice[T]) error {
	const op = "Syevd"
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
	if err := checkVec(op, "W", w, a.Rows); err != nil {
		return err
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	job := cusolver.CUSOLVER_EIG_MODE_NOVECTOR
	if vectors {
		job = cusolver.CUSOLVER_EIG_MODE_VECTOR
	}
	n, lda := int32(a.Rows), int32(a.ld())
	pa, pw := ptr(a.Mem), ptr(w)
	c := call[T]{op: op, fn: fnName[T]("syevd"), positive: ErrNoConvergence}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSsyevd_bufferSize(raw, job, fill, n, as32(pa), lda, as32(pw), &lw)
		} else {
			err = cusolver.DnDsyevd_bufferSize(raw, job, fill, n, as64(pa), lda, as64(pw), &lw)
		}
		return lw, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSsyevd(raw, job, fill, n, as32(pa), lda, as32(pw), as32(work), lwork, info)
		}
		return cusolver.DnDsyevd(raw, job, fill, n, as64(pa), lda, as64(pw), as64(work), lwork, info)
	}
	return c.do(h, held(held(nil, a.Mem), w))
}

// Gesvd computes the singular value decomposition A = U·Σ·Vᵀ of the m×n
// matrix a, m ≥ n (cusolverDnSgesvd, cusolverDnDgesvd): the singular
// values into s (n elements, descending); the left singular vectors into
// u's columns when u has any: all m of U when u is m×m, the first n when
// it is m×n; Vᵀ into vt when it is n×n. A u or vt with no rows or
// columns (the zero Matrix) asks for none. a is destroyed. cuSOLVER's
// gesvd takes no m < n: decompose Aᵀ = V·Σ·Uᵀ instead. An iteration that
// does not converge returns an *InfoError matching ErrNoConvergence.
func Gesvd[T Float](h *Handle, a Matrix[T], s *cuda.Slice[T], u, vt Matrix[T]) error {
	const op = "Gesvd"
	for _, x := range []struct {
		name string
		m    Matrix[T]
	}{{"A", a}, {"U", u}, {"VT", vt}} {
		if err := x.m.check(op, x.name); err != nil {
			return err
		}
	}
	m, n := a.Rows, a.Cols
	if m < n {
		return fmt.Errorf("solver: %s: A is %v: cuSOLVER's gesvd needs at least as many rows as columns; decompose the transpose", op, a)
	}
	jobu, jobvt := byte('N'), byte('N')
	switch {
	case u.empty():
	case u.Rows == m && u.Cols == m:
		jobu = 'A'
	case u.Rows == m && u.Cols == n:
		jobu = 'S'
	default:
		return fmt.Errorf("solver: %s: A is %v and U %v: U must be %d×%d, %d×%d or empty", op, a, u, m, m, m, n)
	}
	switch {
	case vt.empty():
	case vt.Rows == n && vt.Cols == n:
		jobvt = 'A'
	default:
		return fmt.Errorf("solver: %s: A is %v and VT %v: VT must be %d×%d or empty", op, a, vt, n, n)
	}
	if err := checkVec(op, "S", s, n); err != nil {
		return err
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	ju, jv := int8(jobu), int8(jobvt)
	mm, nn, lda, ldu, ldvt := int32(m), int32(n), int32(a.ld()), int32(u.ld()), int32(vt.ld())
	pa, ps, pu, pv := ptr(a.Mem), ptr(s), ptr(u.Mem), ptr(vt.Mem)
	if u.empty() {
		pu = nil
	}
	if vt.empty() {
		pv = nil
	}
	// rwork gets the unconverged superdiagonal where the iteration fails:
	// min(m, n)-1 elements of the workspace's end, which the size gives
	// room for.
	c := call[T]{op: op, fn: fnName[T]("gesvd"), positive: ErrNoConvergence}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSgesvd_bufferSize(raw, mm, nn, &lw)
		} else {
			err = cusolver.DnDgesvd_bufferSize(raw, mm, nn, &lw)
		}
		return lw + nn, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		lwork -= nn
		rwork := elemAt(work, int(lwork))
		if sizeOf[T]() == 4 {
			return cusolver.DnSgesvd(raw, ju, jv, mm, nn, as32(pa), lda, as32(ps), as32(pu), ldu, as32(pv), ldvt, as32(work), lwork, as32(rwork), info)
		}
		return cusolver.DnDgesvd(raw, ju, jv, mm, nn, as64(pa), lda, as64(ps), as64(pu), ldu, as64(pv), ldvt, as64(work), lwork, as64(rwork), info)
	}
	return c.do(h, held(held(held(held(nil, a.Mem), s), u.Mem), vt.Mem))
}
