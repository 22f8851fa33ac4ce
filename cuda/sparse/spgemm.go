//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// SpGEMM returns C = alpha*A*B, a new CSR matrix, for CSR matrices A
// (m×k) and B (k×n) (cusparseSpGEMM_workEstimation, _compute and _copy,
// with CUSPARSE_SPGEMM_DEFAULT). C's Slices are allocated on the handle's
// stream, in stream order, and are C's own: Close C to free them. The
// buffers of the steps are allocated there too and freed in stream order
// after the last step is queued.
//
// cuSPARSE's compute step waits for the handle's stream to learn C's
// number of entries, so SpGEMM returns only when the work queued before
// it has run, and cannot be captured into a graph; the values of C are
// copied in stream order after it returns.
func SpGEMM[T Scalar, I Index](h *Handle, alpha T, a, b *Matrix[T, I]) (*Matrix[T, I], error) {
	const name = "SpGEMM"
	ma, err := a.memory(name, "A")
	if err != nil {
		return nil, err
	}
	mb, err := b.memory(name, "B")
	if err != nil {
		return nil, err
	}
	if err := open(name, append(ma, mb...)...); err != nil {
		return nil, err
	}
	if a.format != CSR || b.format != CSR {
		return nil, invalid(name, "A is %v and B %v: cuSPARSE's SpGEMM takes CSR matrices", a.format, b.format)
	}
	if a.cols != b.rows {
		return nil, invalid(name, "A %d×%d and B %d×%d do not multiply", a.rows, a.cols, b.rows, b.cols)
	}
	if err := h.context(name, append(ma, mb...)...); err != nil {
		return nil, err
	}
	ap, bp := a.ptrs(), b.ptrs()
	var out *Matrix[T, I]
	err = h.call("sparse."+name, func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error {
		var err error
		out, err = spgemm(raw, s, alpha, a, b, ap, bp)
		return err
	}, append(a.holders(), b.holders()...)...)
	return out, err
}

// spgemm is SpGEMM's dance, on the handle's thread: on an error every
// Slice it made is closed.
func spgemm[T Scalar, I Index](raw cusparse.CusparseHandle_t, s *cuda.Stream, alpha T, a, b *Matrix[T, I], ap, bp ptrs) (_ *Matrix[T, I], err error) {
	const name = "SpGEMM"
	offsets, err := cuda.AllocSlice[I](s, a.rows+1)
	if err != nil {
		return nil, err
	}
	var cols *cuda.Slice[I]
	var vals *cuda.Slice[T]
	var temps []*cuda.DeviceMemory
	defer func() {
		// The buffers are freed in stream order, after the steps that use
		// them; on an error the result goes too.
		for _, t := range temps {
			err = errors.Join(err, t.Close())
		}
		if err != nil {
			_ = offsets.Close()
			if cols != nil {
				_ = cols.Close()
			}
			if vals != nil {
				_ = vals.Close()
			}
		}
	}()
	A, err := a.descr(name, ap)
	if err != nil {
		return nil, err
	}
	defer destroySp(A)
	B, err := b.descr(name, bp)
	if err != nil {
		return nil, err
	}
	defer destroySp(B)
	var C cusparse.CusparseSpMatDescr_t
	it, vt := indexType[I](), dataType[T]()
	if err := cusparse.CreateCsr(&C, int64(a.rows), int64(b.cols), 0, devptr.Of(offsets.Ptr()), nil, nil, it, it, cusparse.CUSPARSE_INDEX_BASE_ZERO, vt); err != nil {
		return nil, check(name, "cusparseCreateCsr", err)
	}
	defer destroySp(C)
	var d cusparse.CusparseSpGEMMDescr_t
	if err := cusparse.SpGEMM_createDescr(&d); err != nil {
		return nil, check(name, "cusparseSpGEMM_createDescr", err)
	}
	defer func() { _ = cusparse.SpGEMM_destroyDescr(d) }()

	var beta T
	pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	n := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
	alg := cusparse.CUSPARSE_SPGEMM_DEFAULT
	// Each of the two steps is called first without a buffer, for its
	// size, then with one of that size. A buffer of at least a few bytes
	// keeps the second call from being read as a question again.
	step := func(fn string, call func(size *uint64, buf unsafe.Pointer) error) error {
		var size uint64
		if err := call(&size, nil); err != nil {
			return check(name, fn, err)
		}
		m, err := cuda.AllocAsync(s, max(int(size), 8))
		if err != nil {
			return err
		}
		temps = append(temps, m)
		return check(name, fn, call(&size, devptr.Of(m.Ptr())))
	}
	if err := step("cusparseSpGEMM_workEstimation", func(size *uint64, buf unsafe.Pointer) error {
		return cusparse.SpGEMM_workEstimation(raw, n, n, pa, constSpMat(A), constSpMat(B), pb, C, vt, alg, d, size, buf)
	}); err != nil {
		return nil, err
	}
	if err := step("cusparseSpGEMM_compute", func(size *uint64, buf unsafe.Pointer) error {
		return cusparse.SpGEMM_compute(raw, n, n, pa, constSpMat(A), constSpMat(B), pb, C, vt, alg, d, size, buf)
	}); err != nil {
		return nil, err
	}
	var rows, ncols, nnz int64
	if err := cusparse.SpMatGetSize(constSpMat(C), &rows, &ncols, &nnz); err != nil {
		return nil, check(name, "cusparseSpMatGetSize", err)
	}
	if cols, err = cuda.AllocSlice[I](s, int(nnz)); err != nil {
		return nil, err
	}
	if vals, err = cuda.AllocSlice[T](s, int(nnz)); err != nil {
		return nil, err
	}
	if err := cusparse.CsrSetPointers(C, devptr.Of(offsets.Ptr()), devptr.Of(cols.Ptr()), devptr.Of(vals.Ptr())); err != nil {
		return nil, check(name, "cusparseCsrSetPointers", err)
	}
	if err := cusparse.SpGEMM_copy(raw, n, n, pa, constSpMat(A), constSpMat(B), pb, C, vt, alg, d); err != nil {
		return nil, check(name, "cusparseSpGEMM_copy", err)
	}
	return &Matrix[T, I]{format: CSR, rows: a.rows, cols: b.cols, nnz: int(nnz), p: offsets, q: cols, values: vals, owned: true}, nil
}
