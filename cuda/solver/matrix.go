//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
)

// Float is the element types of the solvers.
type Float interface{ float32 | float64 }

// Matrix is a column-major matrix in device memory, cuSOLVER's and
// LAPACK's order: element (i, j) is Mem's element i + j·Stride. A matrix
// with no rows or no columns needs no memory.
type Matrix[T Float] struct {
	Mem        *cuda.Slice[T]
	Rows, Cols int
	// Stride is the distance, in elements, between the starts of two
	// consecutive columns: the leading dimension, at least Rows. 0 means
	// packed: Rows.
	Stride int
}

// ld is the leading dimension m has, at least 1 as cuSOLVER wants.
func (m Matrix[T]) ld() int {
	if m.Stride != 0 {
		return m.Stride
	}
	return max(m.Rows, 1)
}

func (m Matrix[T]) String() string {
	return fmt.Sprintf("%d×%d (stride %d)", m.Rows, m.Cols, m.ld())
}

func (m Matrix[T]) empty() bool { return m.Rows == 0 || m.Cols == 0 }

// extent is how many elements m spans from its first.
func (m Matrix[T]) extent() int64 {
	if m.empty() {
		return 0
	}
	return int64(m.Cols-1)*int64(m.ld()) + int64(m.Rows)
}

// check validates m as argument name of op: sizes cuSOLVER takes (32-bit),
// a stride that holds a column, and open memory that holds every element.
func (m Matrix[T]) check(op, name string) error {
	switch {
	case m.Rows < 0 || m.Cols < 0 || m.Stride < 0:
		return fmt.Errorf("solver: %s: %s is %v: negative sizes", op, name, m)
	case m.Rows > math.MaxInt32 || m.Cols > math.MaxInt32 || m.ld() > math.MaxInt32:
		return fmt.Errorf("solver: %s: %s is %v: cuSOLVER takes sizes below 2³¹", op, name, m)
	case m.Stride != 0 && m.Stride < m.Rows:
		return fmt.Errorf("solver: %s: %s is %v: its stride is shorter than a column", op, name, m)
	}
	if m.empty() {
		return nil
	}
	return checkLen(op, name, m.Mem, m.extent(), m.String())
}

// checkLen checks that s is open and holds n elements; what describes
// the argument for the message.
func checkLen[E cuda.Element](op, name string, s *cuda.Slice[E], n int64, what string) error {
	if s == nil {
		return fmt.Errorf("solver: %s: %s: nil memory: %w", op, name, cuda.ErrClosed)
	}
	if s.Context().Raw() == 0 {
		return fmt.Errorf("solver: %s: %s: %w", op, name, cuda.ErrClosed)
	}
	if int64(s.Len()) < n {
		return fmt.Errorf("solver: %s: %s is %s: %d elements, but its memory has %d", op, name, what, n, s.Len())
	}
	return nil
}

// checkVec checks a vector argument of n elements.
func checkVec[E cuda.Element](op, name string, s *cuda.Slice[E], n int) error {
	if n == 0 && s == nil {
		return nil
	}
	return checkLen(op, name, s, int64(n), fmt.Sprintf("a vector of %d", n))
}

// ptr is the device address of m's first element as the pointer type the
// bindings take (nil for an empty matrix). It points at no Go memory, so
// cgo's checks let it pass.
func ptr[E cuda.Element](s *cuda.Slice[E]) *E {
	if s == nil {
		return nil
	}
	p := s.Ptr()
	return (*E)(devptr.Of(p))
}

// held appends s to hold unless it is nil (an empty matrix's memory):
// the memory a call holds for its length.
func held[E cuda.Element](hold []cuda.Holder, s *cuda.Slice[E]) []cuda.Holder {
	if s == nil {
		return hold
	}
	return append(hold, s)
}

func sizeOf[T Float]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// Fill says which triangle of a symmetric matrix holds it.
type Fill int

const (
	// Lower: the lower triangle, diagonal included (CUBLAS_FILL_MODE_LOWER).
	Lower Fill = iota
	// Upper: the upper triangle (CUBLAS_FILL_MODE_UPPER).
	Upper
)

func (f Fill) String() string {
	switch f {
	case Lower:
		return "Lower"
	case Upper:
		return "Upper"
	}
	return fmt.Sprintf("Fill(%d)", int(f))
}

// Op says whether a factored matrix is used as it is or transposed.
type Op int

const (
	NoTrans Op = iota // op(A) = A (CUBLAS_OP_N)
	Trans             // op(A) = Aᵀ (CUBLAS_OP_T)
)

func (o Op) String() string {
	switch o {
	case NoTrans:
		return "NoTrans"
	case Trans:
		return "Trans"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Side says on which side Ormqr applies Q.
type Side int

const (
	Left  Side = iota // Q·C or Qᵀ·C (CUBLAS_SIDE_LEFT)
	Right             // C·Q or C·Qᵀ (CUBLAS_SIDE_RIGHT)
)

func (s Side) String() string {
	switch s {
	case Left:
		return "Left"
	case Right:
		return "Right"
	}
	return fmt.Sprintf("Side(%d)", int(s))
}
