package blas

import (
	"fmt"
	"math"
	"reflect"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// Layout says how a matrix's elements lie in memory.
type Layout int

const (
	// RowMajor: each row is contiguous, rows Stride elements apart. Go's
	// [][]T flattened, and C's T[rows][cols].
	RowMajor Layout = iota
	// ColMajor: each column is contiguous, columns Stride elements apart.
	// cuBLAS's and Fortran's order.
	ColMajor
)

func (l Layout) String() string {
	switch l {
	case RowMajor:
		return "row-major"
	case ColMajor:
		return "column-major"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Matrix describes a matrix in device memory: its shape, and how its
// elements lie in Mem, from its first byte. Mem is a *cuda.Slice of the
// function's element type (Gemm[float32] reads float32 elements; a Slice
// of another type is refused), a Sub view of one, or untyped
// *cuda.DeviceMemory. A matrix with no rows or no columns needs no memory.
type Matrix struct {
	Mem        cuda.Memory
	Rows, Cols int
	// Stride is the distance, in elements, between the starts of two
	// consecutive rows (RowMajor) or columns (ColMajor): the leading
	// dimension. 0 means packed: Cols for RowMajor, Rows for ColMajor.
	Stride int
	Layout Layout
	// Batch makes the matrix the first of a batch of matrices of its
	// shape and layout in Mem, for a strided-batched multiply. The zero
	// Batch is one matrix.
	Batch Batch
}

// T returns the transpose of m as a view of the same memory: a row-major
// R×C matrix is read as a column-major C×R one.
func (m Matrix) T() Matrix {
	t := m
	t.Rows, t.Cols = m.Cols, m.Rows
	t.Stride = m.stride()
	t.Layout = RowMajor
	if m.Layout == RowMajor {
		t.Layout = ColMajor
	}
	return t
}

func (m Matrix) String() string {
	s := fmt.Sprintf("%d×%d %s (stride %d)", m.Rows, m.Cols, m.Layout, m.stride())
	if m.Batch != (Batch{}) {
		s += fmt.Sprintf(", a batch of %d every %d elements", m.Batch.Count, m.batchStride())
	}
	return s
}

// stride is the leading dimension m has in memory.
func (m Matrix) stride() int {
	if m.Stride != 0 {
		return m.Stride
	}
	if m.Layout == ColMajor {
		return max(m.Rows, 1)
	}
	return max(m.Cols, 1)
}

// checkShape validates m as argument name of op: a known layout, sizes
// cuBLAS can take, a stride that holds a row (or column).
func (m Matrix) checkShape(op, name string) error {
	switch {
	case m.Layout != RowMajor && m.Layout != ColMajor:
		return fmt.Errorf("blas: %s: %s has an unknown layout %d", op, name, int(m.Layout))
	case m.Rows < 0 || m.Cols < 0 || m.Stride < 0:
		return fmt.Errorf("blas: %s: %s is %v: negative sizes", op, name, m)
	case m.Rows > math.MaxInt32 || m.Cols > math.MaxInt32 || m.stride() > math.MaxInt32:
		return fmt.Errorf("blas: %s: %s is %v: cuBLAS takes sizes below 2³¹", op, name, m)
	}
	inner, line := m.Cols, "row"
	if m.Layout == ColMajor {
		inner, line = m.Rows, "column"
	}
	if m.stride() < inner {
		return fmt.Errorf("blas: %s: %s is %v: its stride is shorter than a %s", op, name, m, line)
	}
	return m.checkBatch(op, name)
}

// extent is how many elements m spans in memory, from its first.
func (m Matrix) extent() int64 {
	outer, inner := m.Rows, m.Cols
	if m.Layout == ColMajor {
		outer, inner = m.Cols, m.Rows
	}
	if outer == 0 || inner == 0 {
		return 0
	}
	return int64(outer-1)*int64(m.stride()) + int64(inner)
}

// checkMem checks that m's memory is open and holds every element of
// elemSize bytes.
func (m Matrix) checkMem(op, name string, elemSize int) error {
	if m.span() == 0 {
		return nil
	}
	need := m.span() * int64(elemSize)
	if !memOpen(m.Mem) {
		return fmt.Errorf("blas: %s: %s: %w", op, name, cuda.ErrClosed)
	}
	if size := m.Mem.Size(); int64(size) < need {
		if m.Mem.Ptr() == 0 {
			return fmt.Errorf("blas: %s: %s: %w", op, name, cuda.ErrClosed)
		}
		return fmt.Errorf("blas: %s: %s is %v, %d bytes of %d-byte elements, but its memory has %d", op, name, m, need, elemSize, size)
	}
	return nil
}

// memOpen reports whether m is memory open for a call: not nil, not
// closed (an empty Slice is open: its context says so).
func memOpen(m cuda.Memory) bool { return m != nil && m.Context().Raw() != 0 }

// memPtr is m's device address, 0 for nil or closed memory.
func memPtr(m cuda.Memory) cu.CUdeviceptr {
	if m == nil {
		return 0
	}
	return m.Ptr()
}

// elementsOf refuses memory that is a *cuda.Slice of another element type
// than T; untyped DeviceMemory holds any.
func elementsOf[T cuda.Element](op, name string, m cuda.Memory) error {
	switch m.(type) {
	case nil, *cuda.Slice[T], *cuda.DeviceMemory:
		return nil
	}
	var v T
	return fmt.Errorf("blas: %s: %s is a %T, not memory of %T", op, name, m, v)
}

// given reports whether an optional memory field (a Matmul's Bias, say) is
// set: a nil *cuda.DeviceMemory or *cuda.Slice stored in it is not, as it
// was not when the fields were pointers.
func given(m cuda.Memory) bool {
	if m == nil {
		return false
	}
	v := reflect.ValueOf(m)
	return v.Kind() != reflect.Pointer || !v.IsNil()
}
