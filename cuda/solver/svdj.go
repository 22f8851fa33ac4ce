//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Gesvdj computes the singular value decomposition A = U·Σ·Vᵀ of the m×n
// matrix a, of any shape, by Jacobi rotations (cusolverDnSgesvdj,
// cusolverDnDgesvdj, to machine precision in at most 100 sweeps, the
// library's defaults): the k = min(m, n) singular values into s,
// descending, and with vectors U into u and V itself (not Vᵀ, as Gesvd
// gives) into v: all of them, u m×m and v n×n, or the first k columns of
// each, u m×k and v n×k. Two empty matrices ask for no vectors. a is
// destroyed. Rotations that do not converge return an *InfoError
// matching ErrNoConvergence. For small and medium matrices Jacobi is
// often faster on a GPU than Gesvd's bidiagonalization.
func Gesvdj[T Float](h *Handle, a Matrix[T], s *cuda.Slice[T], u, v Matrix[T]) error {
	const op = "Gesvdj"
	for _, x := range []struct {
		name string
		m    Matrix[T]
	}{{"A", a}, {"U", u}, {"V", v}} {
		if err := x.m.check(op, x.name); err != nil {
			return err
		}
	}
	m, n := a.Rows, a.Cols
	k := min(m, n)
	job, econ := cusolver.CUSOLVER_EIG_MODE_NOVECTOR, int32(0)
	switch {
	case u.empty() && v.empty():
	case u.Rows == m && u.Cols == m && v.Rows == n && v.Cols == n:
		job = cusolver.CUSOLVER_EIG_MODE_VECTOR
	case u.Rows == m && u.Cols == k && v.Rows == n && v.Cols == k:
		job, econ = cusolver.CUSOLVER_EIG_MODE_VECTOR, 1
	default:
		return fmt.Errorf("solver: %s: A is %v, U %v and V %v: U and V must be %d×%d and %d×%d, %d×%d and %d×%d, or both empty", op, a, u, v, m, m, n, n, m, k, n, k)
	}
	if err := checkVec(op, "S", s, k); err != nil {
		return err
	}
	if a.empty() {
		return h.call("solver."+op, noWork)
	}
	mm, nn, lda := int32(m), int32(n), int32(a.ld())
	ldu, ldv := int32(max(m, 1)), int32(max(n, 1))
	pa, ps := ptr(a.Mem), ptr(s)
	var pu, pv *T
	if job == cusolver.CUSOLVER_EIG_MODE_VECTOR {
		ldu, ldv = int32(u.ld()), int32(v.ld())
		pu, pv = ptr(u.Mem), ptr(v.Mem)
	}
	var params cusolver.GesvdjInfo_t
	if err := cusolver.DnCreateGesvdjInfo(&params); err != nil {
		return check(op, "cusolverDnCreateGesvdjInfo", err)
	}
	// do waits for the work: params outlive it.
	defer func() { _ = cusolver.DnDestroyGesvdjInfo(params) }()
	c := call[T]{op: op, fn: fnName[T]("gesvdj"), positive: ErrNoConvergence}
	if job == cusolver.CUSOLVER_EIG_MODE_NOVECTOR {
		// gesvdj writes U and V even when asked for the values alone
		// (an illegal address on the H100 with none): it gets economy-size
		// scratch for them.
		econ = 1
		c.scratch = (m + n) * k
		c.useScratch = func(p *T) { pu, pv = p, elemAt(p, m*k) }
	}
	c.size = func(raw cusolver.CusolverDnHandle_t) (lw int32, err error) {
		if sizeOf[T]() == 4 {
			err = cusolver.DnSgesvdj_bufferSize(raw, job, econ, mm, nn, as32(pa), lda, as32(ps), as32(pu), ldu, as32(pv), ldv, &lw, params)
		} else {
			err = cusolver.DnDgesvdj_bufferSize(raw, job, econ, mm, nn, as64(pa), lda, as64(ps), as64(pu), ldu, as64(pv), ldv, &lw, params)
		}
		return lw, err
	}
	c.run = func(raw cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSgesvdj(raw, job, econ, mm, nn, as32(pa), lda, as32(ps), as32(pu), ldu, as32(pv), ldv, as32(work), lwork, info, params)
		}
		return cusolver.DnDgesvdj(raw, job, econ, mm, nn, as64(pa), lda, as64(ps), as64(pu), ldu, as64(pv), ldv, as64(work), lwork, info, params)
	}
	hold := held(held(nil, a.Mem), s)
	if job == cusolver.CUSOLVER_EIG_MODE_VECTOR {
		hold = held(held(hold, u.Mem), v.Mem)
	}
	return c.do(h, hold)
}
