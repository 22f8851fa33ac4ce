//go:build linux && (amd64 || arm64)

package sparse

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// SpMV computes y = alpha*op(A)*x + beta*y (cusparseSpMV, after
// cusparseSpMV_bufferSize, with CUSPARSE_SPMV_ALG_DEFAULT): x has as many
// elements as op(A) has columns and y as many as it has rows; x and y may
// not overlap. With beta 0, y is written without being read. The work is
// queued on the handle's stream, in the handle's workspace; SpMV returns
// when it is queued.
func SpMV[T Scalar, I Index](h *Handle, op Op, alpha T, a *Matrix[T, I], x *cuda.Slice[T], beta T, y *cuda.Slice[T]) error {
	const name = "SpMV"
	if !op.valid() {
		return invalid(name, "unknown operation %v", op)
	}
	mems, err := a.memory(name, "A")
	if err != nil {
		return err
	}
	if x == nil || y == nil {
		return fmt.Errorf("sparse: %s: nil vector: %w", name, cuda.ErrClosed)
	}
	mems = append(mems, namedMemory{"x", "", x}, namedMemory{"y", "", y})
	if err := open(name, mems...); err != nil {
		return err
	}
	m, k := op.shape(a.rows, a.cols)
	if x.Len() != k || y.Len() != m {
		return invalid(name, "op(A) is %d×%d (%v of a %d×%d matrix): x has %d elements and y %d, want %d and %d", m, k, op, a.rows, a.cols, x.Len(), y.Len(), k, m)
	}
	if err := h.context(name, mems...); err != nil {
		return err
	}
	if overlap(x.Ptr(), x.Size(), y.Ptr(), y.Size()) {
		return invalid(name, "x and y overlap")
	}
	ap, xp, yp := a.ptrs(), x.Ptr(), y.Ptr()
	return h.call("sparse."+name, func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error {
		if m == 0 {
			return nil // no output: nothing for cuSPARSE to do
		}
		c := &h.sh.cache
		c.trim()
		ak := a.key(ap)
		A, err := c.spMat(ak, func() (cusparse.CusparseSpMatDescr_t, error) { return a.descr(name, ap) })
		if err != nil {
			return err
		}
		X, err := c.dnVec(vecKey[T](k, xp), func() (cusparse.CusparseDnVecDescr_t, error) { return dnVec[T](name, k, xp) })
		if err != nil {
			return err
		}
		Y, err := c.dnVec(vecKey[T](m, yp), func() (cusparse.CusparseDnVecDescr_t, error) { return dnVec[T](name, m, yp) })
		if err != nil {
			return err
		}
		pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
		alg := cusparse.CUSPARSE_SPMV_ALG_DEFAULT
		size, err := c.bufferSize(sizeKey{sp: ak, op: op}, func(size *uint64) error {
			return check(name, "cusparseSpMV_bufferSize", cusparse.SpMV_bufferSize(raw, op.raw(), pa, constSpMat(A), constDnVec(X), pb, Y, dataType[T](), alg, size))
		})
		if err != nil {
			return err
		}
		w, err := h.workspace(name, s, int(size))
		if err != nil {
			return err
		}
		return check(name, "cusparseSpMV", cusparse.SpMV(raw, op.raw(), pa, constSpMat(A), constDnVec(X), pb, Y, dataType[T](), alg, memPtr(w)))
	}, append(a.holders(), x, y)...)
}

// SpMM computes C = alpha*op(A)*B + beta*C (cusparseSpMM, after
// cusparseSpMM_bufferSize, with CUSPARSE_SPMM_ALG_DEFAULT): op(A) is m×k,
// B k×n and C m×n. B and C have one order, and may not overlap. With
// beta 0, C is written without being read. The work is queued on the
// handle's stream, in the handle's workspace; SpMM returns when it is
// queued.
func SpMM[T Scalar, I Index](h *Handle, op Op, alpha T, a *Matrix[T, I], b *Dense[T], beta T, c *Dense[T]) error {
	const name = "SpMM"
	if !op.valid() {
		return invalid(name, "unknown operation %v", op)
	}
	mems, err := a.memory(name, "A")
	if err != nil {
		return err
	}
	if b == nil || c == nil {
		return fmt.Errorf("sparse: %s: nil dense matrix: %w", name, cuda.ErrClosed)
	}
	if a.format == BSR {
		return invalid(name, "A is BSR: SpMM takes CSR, CSC and COO matrices here")
	}
	mems = append(mems, namedMemory{"B", "", b.data}, namedMemory{"C", "", c.data})
	if err := open(name, mems...); err != nil {
		return err
	}
	m, k := op.shape(a.rows, a.cols)
	if b.rows != k || c.rows != m || b.cols != c.cols {
		return invalid(name, "op(A) %d×%d (%v of a %d×%d matrix), B %d×%d and C %d×%d do not multiply", m, k, op, a.rows, a.cols, b.rows, b.cols, c.rows, c.cols)
	}
	if b.order != c.order {
		return invalid(name, "B is %v and C %v: cuSPARSE takes them in one order", b.order, c.order)
	}
	if err := h.context(name, mems...); err != nil {
		return err
	}
	bp, cp := b.data.Ptr(), c.data.Ptr()
	if overlap(bp, b.span(), cp, c.span()) {
		return invalid(name, "B and C overlap")
	}
	ap := a.ptrs()
	return h.call("sparse."+name, func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error {
		if m == 0 || c.cols == 0 {
			return nil // no output: nothing for cuSPARSE to do
		}
		cache := &h.sh.cache
		cache.trim()
		ak := a.key(ap)
		A, err := cache.spMat(ak, func() (cusparse.CusparseSpMatDescr_t, error) { return a.descr(name, ap) })
		if err != nil {
			return err
		}
		B, err := cache.dnMat(b.key(bp), func() (cusparse.CusparseDnMatDescr_t, error) { return b.descr(name, bp) })
		if err != nil {
			return err
		}
		C, err := cache.dnMat(c.key(cp), func() (cusparse.CusparseDnMatDescr_t, error) { return c.descr(name, cp) })
		if err != nil {
			return err
		}
		pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
		alg := cusparse.CUSPARSE_SPMM_ALG_DEFAULT
		n := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
		size, err := cache.bufferSize(sizeKey{spmm: true, sp: ak, op: op, cols: c.cols, order: c.order, ldB: b.ld, ldC: c.ld}, func(size *uint64) error {
			return check(name, "cusparseSpMM_bufferSize", cusparse.SpMM_bufferSize(raw, op.raw(), n, pa, constSpMat(A), constDnMat(B), pb, C, dataType[T](), alg, size))
		})
		if err != nil {
			return err
		}
		w, err := h.workspace(name, s, int(size))
		if err != nil {
			return err
		}
		return check(name, "cusparseSpMM", cusparse.SpMM(raw, op.raw(), n, pa, constSpMat(A), constDnMat(B), pb, C, dataType[T](), alg, memPtr(w)))
	}, append(a.holders(), b.data, c.data)...)
}

// overlap reports whether two byte ranges of device memory meet.
func overlap(p cu.CUdeviceptr, n int, q cu.CUdeviceptr, m int) bool {
	if n == 0 || m == 0 {
		return false
	}
	return p < q+cu.CUdeviceptr(m) && q < p+cu.CUdeviceptr(n)
}

// memPtr is m's address for cuSPARSE, NULL for none.
func memPtr(m *cuda.DeviceMemory) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return devptr.Of(m.Ptr())
}
