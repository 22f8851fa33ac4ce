//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// TriangularSolver solves op(A)*y = alpha*x for a triangular sparse
// matrix A (cuSPARSE's SpSV): the analysis of A runs once, on the first
// Solve, and each Solve after it reuses it. A is CSR or COO, square; Fill
// says which triangle is read (the other is ignored), Diag whether the
// stored diagonal is (Unit takes it as ones).
//
// The solver holds its own clone of the handle, the cuSPARSE descriptors
// of the analysis and its buffer, allocated on the handle's stream, until
// Close. The analysis is of A's arrays as they are when the first Solve
// runs on the stream: a solver for other values of A is a new solver.
// Solve may be called from any goroutine; calls take turns.
type TriangularSolver[T Scalar, I Index] struct {
	h    *Handle
	a    *Matrix[T, I]
	op   Op
	fill Fill
	diag Diag

	mu     sync.Mutex
	closed bool
	// Made by the first Solve, destroyed by Close.
	made   bool
	spmat  cusparse.CusparseSpMatDescr_t
	descr  cusparse.CusparseSpSVDescr_t
	buffer *cuda.DeviceMemory
}

// NewTriangularSolver makes a solver of op(A)*y = alpha*x on h's stream.
func NewTriangularSolver[T Scalar, I Index](h *Handle, op Op, a *Matrix[T, I], fill Fill, diag Diag) (*TriangularSolver[T, I], error) {
	const name = "NewTriangularSolver"
	if !op.valid() {
		return nil, invalid(name, "unknown operation %v", op)
	}
	if fill != Lower && fill != Upper {
		return nil, invalid(name, "unknown fill mode %v", fill)
	}
	if diag != NonUnit && diag != Unit {
		return nil, invalid(name, "unknown diagonal type %v", diag)
	}
	mems, err := a.memory(name, "A")
	if err != nil {
		return nil, err
	}
	if a.format != CSR && a.format != COO {
		return nil, invalid(name, "A is %v: cuSPARSE's SpSV takes CSR and COO matrices", a.format)
	}
	if a.rows != a.cols {
		return nil, invalid(name, "A is %d×%d: a triangular solve needs a square matrix", a.rows, a.cols)
	}
	if err := h.context(name, mems...); err != nil {
		return nil, err
	}
	own, err := h.Clone()
	if err != nil {
		return nil, err
	}
	return &TriangularSolver[T, I]{h: own, a: a, op: op, fill: fill, diag: diag}, nil
}

// Solve writes y = op(A)⁻¹*alpha*x (cusparseSpSV_solve; the first Solve
// runs cusparseSpSV_bufferSize and cusparseSpSV_analysis before it): x
// and y have A's order as their length and may not overlap. It returns
// when the work is queued on the handle's stream. A zero on a NonUnit
// diagonal is not reported: the result is then not finite.
func (t *TriangularSolver[T, I]) Solve(alpha T, x, y *cuda.Slice[T]) error {
	const name = "TriangularSolver.Solve"
	if t == nil {
		return fmt.Errorf("sparse: %s: nil solver: %w", name, cuda.ErrClosed)
	}
	if x == nil || y == nil {
		return fmt.Errorf("sparse: %s: nil vector: %w", name, cuda.ErrClosed)
	}
	mems, _ := t.a.memory(name, "A")
	mems = append(mems, namedMemory{"x", x}, namedMemory{"y", y})
	if err := open(name, mems...); err != nil {
		return err
	}
	n := t.a.rows
	if x.Len() != n || y.Len() != n {
		return invalid(name, "A is %d×%d: x has %d elements and y %d, want %d", n, n, x.Len(), y.Len(), n)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("sparse: %s: %w", name, cuda.ErrClosed)
	}
	if err := t.h.context(name, mems...); err != nil {
		return err
	}
	if overlap(x.Ptr(), x.Size(), y.Ptr(), y.Size()) {
		return invalid(name, "x and y overlap")
	}
	ap, xp, yp := t.a.ptrs(), x.Ptr(), y.Ptr()
	return t.h.call("sparse."+name, func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error {
		if n == 0 {
			return nil // nothing to solve
		}
		X, err := dnVec[T](name, n, xp)
		if err != nil {
			return err
		}
		defer destroyDnVec(X)
		Y, err := dnVec[T](name, n, yp)
		if err != nil {
			return err
		}
		defer destroyDnVec(Y)
		pa := unsafe.Pointer(&alpha)
		alg := cusparse.CUSPARSE_SPSV_ALG_DEFAULT
		if !t.made {
			if err := t.analyze(raw, s, ap, pa, X, Y); err != nil {
				return err
			}
		}
		return check(name, "cusparseSpSV_solve", cusparse.SpSV_solve(raw, t.op.raw(), pa, constSpMat(t.spmat), constDnVec(X), Y, dataType[T](), alg, t.descr))
	}, append(t.a.holders(), x, y)...)
}

// analyze makes the descriptors and buffer and runs the analysis; on an
// error it leaves nothing made.
func (t *TriangularSolver[T, I]) analyze(raw cusparse.CusparseHandle_t, s *cuda.Stream, ap ptrs, pa unsafe.Pointer, X, Y cusparse.CusparseDnVecDescr_t) (err error) {
	const name = "TriangularSolver.Solve"
	A, err := t.a.descr(name, ap)
	if err != nil {
		return err
	}
	var d cusparse.CusparseSpSVDescr_t
	var buf *cuda.DeviceMemory
	defer func() {
		if err != nil {
			destroySp(A)
			if d != 0 {
				_ = cusparse.SpSV_destroyDescr(d)
			}
			if buf != nil {
				_ = buf.Close()
			}
		}
	}()
	fill := cusparse.CUSPARSE_FILL_MODE_LOWER
	if t.fill == Upper {
		fill = cusparse.CUSPARSE_FILL_MODE_UPPER
	}
	diag := cusparse.CUSPARSE_DIAG_TYPE_NON_UNIT
	if t.diag == Unit {
		diag = cusparse.CUSPARSE_DIAG_TYPE_UNIT
	}
	if err := cusparse.SpMatSetAttribute(A, cusparse.CUSPARSE_SPMAT_FILL_MODE, unsafe.Pointer(&fill), uint64(unsafe.Sizeof(fill))); err != nil {
		return check(name, "cusparseSpMatSetAttribute", err)
	}
	if err := cusparse.SpMatSetAttribute(A, cusparse.CUSPARSE_SPMAT_DIAG_TYPE, unsafe.Pointer(&diag), uint64(unsafe.Sizeof(diag))); err != nil {
		return check(name, "cusparseSpMatSetAttribute", err)
	}
	if err := cusparse.SpSV_createDescr(&d); err != nil {
		return check(name, "cusparseSpSV_createDescr", err)
	}
	alg := cusparse.CUSPARSE_SPSV_ALG_DEFAULT
	var size uint64
	if err := cusparse.SpSV_bufferSize(raw, t.op.raw(), pa, constSpMat(A), constDnVec(X), Y, dataType[T](), alg, d, &size); err != nil {
		return check(name, "cusparseSpSV_bufferSize", err)
	}
	if buf, err = cuda.AllocAsync(s, max(int(size), 8)); err != nil {
		return err
	}
	if err := cusparse.SpSV_analysis(raw, t.op.raw(), pa, constSpMat(A), constDnVec(X), Y, dataType[T](), alg, d, devPtr(buf.Ptr())); err != nil {
		return check(name, "cusparseSpSV_analysis", err)
	}
	t.spmat, t.descr, t.buffer, t.made = A, d, buf, true
	return nil
}

// Close waits for the handle's stream (a Solve in flight still reads what
// the analysis made), destroys the solver's descriptors, frees its buffer
// and releases its handle. A second Close does nothing.
func (t *TriangularSolver[T, I]) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var err error
	if t.made {
		const name = "TriangularSolver.Close"
		err = t.h.call("sparse."+name, func(_ cusparse.CusparseHandle_t, s *cuda.Stream) error {
			serr := s.Synchronize()
			destroySp(t.spmat)
			derr := check(name, "cusparseSpSV_destroyDescr", cusparse.SpSV_destroyDescr(t.descr))
			return errors.Join(serr, derr, t.buffer.Close())
		})
		t.made = false
	}
	return errors.Join(err, t.h.Close())
}

// SpSV solves op(A)*y = alpha*x once: NewTriangularSolver, Solve and
// Close. Use a TriangularSolver to solve with one A again.
func SpSV[T Scalar, I Index](h *Handle, op Op, alpha T, a *Matrix[T, I], fill Fill, diag Diag, x, y *cuda.Slice[T]) error {
	t, err := NewTriangularSolver(h, op, a, fill, diag)
	if err != nil {
		return err
	}
	return errors.Join(t.Solve(alpha, x, y), t.Close())
}
