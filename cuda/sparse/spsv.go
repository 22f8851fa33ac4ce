//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// TriangularSolver solves op(A)*y = alpha*x (Solve, cuSPARSE's SpSV) and
// op(A)*C = alpha*B (SolveDense, cuSPARSE's SpSM) for a triangular sparse
// matrix A: the analysis of A runs once, on the first solve of each kind,
// and the solves after it reuse it. A is CSR or COO, square; Fill says
// which triangle is read (the other is ignored), Diag whether the stored
// diagonal is (Unit takes it as ones).
//
// The solver holds its own clone of the handle, the cuSPARSE descriptors
// of the analyses and their buffers, allocated on the handle's stream,
// until Close. An analysis is of A's arrays as they are when the first
// solve runs on the stream: a solver for other values of A is a new
// solver. The methods may be called from any goroutine; calls take turns.
type TriangularSolver[T Scalar, I Index] struct {
	h    *Handle
	a    *Matrix[T, I]
	op   Op
	fill Fill
	diag Diag

	mu     sync.Mutex
	closed bool
	// Made by the first solve, destroyed by Close: A's descriptor, with
	// the fill mode and diagonal type set, and each kind's analysis.
	spmat cusparse.CusparseSpMatDescr_t
	sv    *svAnalysis
	sm    *smAnalysis
}

type svAnalysis struct {
	descr  cusparse.CusparseSpSVDescr_t
	buffer *cuda.DeviceMemory
}

// smAnalysis is SpSM's analysis, of B and C of cols columns in order.
type smAnalysis struct {
	descr  cusparse.CusparseSpSMDescr_t
	buffer *cuda.DeviceMemory
	cols   int
	order  Order
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
	if err := open(name, mems...); err != nil {
		return nil, err
	}
	if a.format != CSR && a.format != COO {
		return nil, invalid(name, "A is %v: cuSPARSE's triangular solves take CSR and COO matrices", a.format)
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
	mems = append(mems, namedMemory{"x", "", x}, namedMemory{"y", "", y})
	if err := open(name, mems...); err != nil {
		return err
	}
	n := t.a.rows
	if x.Len() != n || y.Len() != n {
		return invalid(name, "A is %d×%d: x has %d elements and y %d, want %d", n, n, x.Len(), y.Len(), n)
	}
	if overlap(x.Ptr(), x.Size(), y.Ptr(), y.Size()) {
		return invalid(name, "x and y overlap")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("sparse: %s: %w", name, cuda.ErrClosed)
	}
	if err := t.h.context(name, mems...); err != nil {
		return err
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
		if err := t.matrix(name, ap); err != nil {
			return err
		}
		if t.sv == nil {
			var d cusparse.CusparseSpSVDescr_t
			if err := cusparse.SpSV_createDescr(&d); err != nil {
				return check(name, "cusparseSpSV_createDescr", err)
			}
			buf, err := analyze(name, s, "cusparseSpSV", func(size *uint64) error {
				return cusparse.SpSV_bufferSize(raw, t.op.raw(), pa, constSpMat(t.spmat), constDnVec(X), Y, dataType[T](), alg, d, size)
			}, func(buf unsafe.Pointer) error {
				return cusparse.SpSV_analysis(raw, t.op.raw(), pa, constSpMat(t.spmat), constDnVec(X), Y, dataType[T](), alg, d, buf)
			})
			if err != nil {
				_ = cusparse.SpSV_destroyDescr(d)
				return err
			}
			t.sv = &svAnalysis{d, buf}
		}
		return check(name, "cusparseSpSV_solve", cusparse.SpSV_solve(raw, t.op.raw(), pa, constSpMat(t.spmat), constDnVec(X), Y, dataType[T](), alg, t.sv.descr))
	}, append(t.a.holders(), x, y)...)
}

// SolveDense writes C = op(A)⁻¹*alpha*B (cusparseSpSM_solve, after
// cusparseSpSM_bufferSize and cusparseSpSM_analysis on the first call,
// and on a call whose B and C have other columns or another order than
// the last analysis's): B and C are n×k for A n×n, in one order, and may
// not overlap. It returns when the work is queued on the handle's stream.
func (t *TriangularSolver[T, I]) SolveDense(alpha T, b, c *Dense[T]) error {
	const name = "TriangularSolver.SolveDense"
	if t == nil {
		return fmt.Errorf("sparse: %s: nil solver: %w", name, cuda.ErrClosed)
	}
	if b == nil || c == nil {
		return fmt.Errorf("sparse: %s: nil dense matrix: %w", name, cuda.ErrClosed)
	}
	mems, _ := t.a.memory(name, "A")
	mems = append(mems, namedMemory{"B", "", b.data}, namedMemory{"C", "", c.data})
	if err := open(name, mems...); err != nil {
		return err
	}
	n := t.a.rows
	if b.rows != n || c.rows != n || b.cols != c.cols {
		return invalid(name, "A is %d×%d, B %d×%d and C %d×%d: want B and C of %d rows and one shape", n, n, b.rows, b.cols, c.rows, c.cols, n)
	}
	if b.order != c.order {
		return invalid(name, "B is %v and C %v: cuSPARSE takes them in one order", b.order, c.order)
	}
	bp, cp := b.data.Ptr(), c.data.Ptr()
	if overlap(bp, b.span(), cp, c.span()) {
		return invalid(name, "B and C overlap")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("sparse: %s: %w", name, cuda.ErrClosed)
	}
	if err := t.h.context(name, mems...); err != nil {
		return err
	}
	ap := t.a.ptrs()
	return t.h.call("sparse."+name, func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error {
		if n == 0 || c.cols == 0 {
			return nil // nothing to solve
		}
		B, err := b.descr(name, bp)
		if err != nil {
			return err
		}
		defer destroyDnMat(B)
		C, err := c.descr(name, cp)
		if err != nil {
			return err
		}
		defer destroyDnMat(C)
		pa := unsafe.Pointer(&alpha)
		alg := cusparse.CUSPARSE_SPSM_ALG_DEFAULT
		non := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
		if err := t.matrix(name, ap); err != nil {
			return err
		}
		if t.sm != nil && (t.sm.cols != c.cols || t.sm.order != c.order) {
			if err := notCapturing(name, s, "B and C of %d columns %v need a new analysis (the last was of %d %v)", c.cols, c.order, t.sm.cols, t.sm.order); err != nil {
				return err
			}
			if err := t.sm.destroy(s); err != nil {
				return err
			}
			t.sm = nil
		}
		if t.sm == nil {
			var d cusparse.CusparseSpSMDescr_t
			if err := cusparse.SpSM_createDescr(&d); err != nil {
				return check(name, "cusparseSpSM_createDescr", err)
			}
			buf, err := analyze(name, s, "cusparseSpSM", func(size *uint64) error {
				return cusparse.SpSM_bufferSize(raw, t.op.raw(), non, pa, constSpMat(t.spmat), constDnMat(B), C, dataType[T](), alg, d, size)
			}, func(buf unsafe.Pointer) error {
				return cusparse.SpSM_analysis(raw, t.op.raw(), non, pa, constSpMat(t.spmat), constDnMat(B), C, dataType[T](), alg, d, buf)
			})
			if err != nil {
				_ = cusparse.SpSM_destroyDescr(d)
				return err
			}
			t.sm = &smAnalysis{d, buf, c.cols, c.order}
		}
		return check(name, "cusparseSpSM_solve", cusparse.SpSM_solve(raw, t.op.raw(), non, pa, constSpMat(t.spmat), constDnMat(B), C, dataType[T](), alg, t.sm.descr))
	}, append(t.a.holders(), b.data, c.data)...)
}

// matrix makes A's descriptor, with the solver's fill mode and diagonal
// type, unless it is made; on an error nothing is left made.
func (t *TriangularSolver[T, I]) matrix(name string, ap ptrs) error {
	if t.spmat != 0 {
		return nil
	}
	A, err := t.a.descr(name, ap)
	if err != nil {
		return err
	}
	fill := cusparse.CUSPARSE_FILL_MODE_LOWER
	if t.fill == Upper {
		fill = cusparse.CUSPARSE_FILL_MODE_UPPER
	}
	diag := cusparse.CUSPARSE_DIAG_TYPE_NON_UNIT
	if t.diag == Unit {
		diag = cusparse.CUSPARSE_DIAG_TYPE_UNIT
	}
	if err := cusparse.SpMatSetAttribute(A, cusparse.CUSPARSE_SPMAT_FILL_MODE, unsafe.Pointer(&fill), uint64(unsafe.Sizeof(fill))); err != nil {
		destroySp(A)
		return check(name, "cusparseSpMatSetAttribute", err)
	}
	if err := cusparse.SpMatSetAttribute(A, cusparse.CUSPARSE_SPMAT_DIAG_TYPE, unsafe.Pointer(&diag), uint64(unsafe.Sizeof(diag))); err != nil {
		destroySp(A)
		return check(name, "cusparseSpMatSetAttribute", err)
	}
	t.spmat = A
	return nil
}

// analyze asks the size of an analysis's buffer, allocates it on s in
// stream order and runs the analysis in it; on an error the buffer is
// freed.
func analyze(name string, s *cuda.Stream, fn string, size func(*uint64) error, run func(unsafe.Pointer) error) (*cuda.DeviceMemory, error) {
	var n uint64
	if err := size(&n); err != nil {
		return nil, check(name, fn+"_bufferSize", err)
	}
	if err := notCapturing(name, s, "the first solve of a kind allocates the buffer of its analysis"); err != nil {
		return nil, err
	}
	// At least a few bytes: cuSPARSE reads a NULL buffer as none given.
	buf, err := cuda.AllocAsync(s, max(int(n), 8))
	if err != nil {
		return nil, err
	}
	if err := run(devptr.Of(buf.Ptr())); err != nil {
		_ = buf.Close()
		return nil, check(name, fn+"_analysis", err)
	}
	return buf, nil
}

// destroy waits for s, where solves may still read the analysis, then
// destroys it.
func (a *smAnalysis) destroy(s *cuda.Stream) error {
	serr := s.Synchronize()
	derr := check("TriangularSolver", "cusparseSpSM_destroyDescr", cusparse.SpSM_destroyDescr(a.descr))
	return errors.Join(serr, derr, a.buffer.Close())
}

// Close waits for the handle's stream (a solve in flight still reads what
// the analyses made), destroys the solver's descriptors, frees its
// buffers and releases its handle. A second Close does nothing.
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
	if t.spmat != 0 {
		const name = "TriangularSolver.Close"
		err = t.h.call("sparse."+name, func(_ cusparse.CusparseHandle_t, s *cuda.Stream) error {
			errs := []error{s.Synchronize()}
			if t.sv != nil {
				errs = append(errs, check(name, "cusparseSpSV_destroyDescr", cusparse.SpSV_destroyDescr(t.sv.descr)), t.sv.buffer.Close())
			}
			if t.sm != nil {
				errs = append(errs, t.sm.destroy(s))
			}
			destroySp(t.spmat)
			return errors.Join(errs...)
		})
		t.spmat, t.sv, t.sm = 0, nil, nil
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

// SpSM solves op(A)*C = alpha*B once: NewTriangularSolver, SolveDense and
// Close. Use a TriangularSolver to solve with one A again.
func SpSM[T Scalar, I Index](h *Handle, op Op, alpha T, a *Matrix[T, I], fill Fill, diag Diag, b, c *Dense[T]) error {
	t, err := NewTriangularSolver(h, op, a, fill, diag)
	if err != nil {
		return err
	}
	return errors.Join(t.SolveDense(alpha, b, c), t.Close())
}
