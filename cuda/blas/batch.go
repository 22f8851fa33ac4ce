package blas

import (
	"fmt"
	"math"
)

// Batch describes a batch of matrices of one shape and layout in one
// allocation, each Stride elements after the one before: the operands of
// a strided-batched multiply (cublas<t>gemmStridedBatched, or cuBLASLt's
// batched layouts). Set it as a Matrix's Batch; the Matrix describes the
// first matrix of the batch.
//
// In a product, C's Count is the number of products. A or B may be a
// batch of the same Count, or one matrix (Count 0 or 1), which every
// product then uses: a weight applied to a batch, cuBLAS's stride 0.
//
//	// C[i] = A[i]·W for i < 8: A is a packed [8][m][k] array, W one k×n matrix.
//	a := blas.Matrix{Mem: da, Rows: m, Cols: k, Batch: blas.Batch{Count: 8}}
//	w := blas.Matrix{Mem: dw, Rows: k, Cols: n}
//	c := blas.Matrix{Mem: dc, Rows: m, Cols: n, Batch: blas.Batch{Count: 8}}
//	err := blas.Gemm(h, 1, a, w, 0, c)
type Batch struct {
	// Count is the number of matrices; 0, like 1, is one matrix.
	Count int
	// Stride is the distance, in elements, from the first element of one
	// matrix to that of the next. 0 means one after the other, as in a Go
	// [Count][Rows][Cols] array: Rows·Stride elements for a row-major
	// matrix, Cols·Stride for a column-major one. A larger Stride leaves
	// a gap between matrices; a smaller one interleaves them, such as the
	// heads of a row-major [seq][heads][dim] array: each head a seq×dim
	// matrix of leading dimension heads·dim, Stride dim. The matrices of a
	// batch never overlap: that is checked.
	Stride int
}

// count is the number of matrices m describes.
func (m Matrix) count() int { return max(m.Batch.Count, 1) }

// lines is the number of rows of a row-major matrix, of columns of a
// column-major one; inner the length of each.
func (m Matrix) lines() (outer, inner int) {
	if m.Layout == ColMajor {
		return m.Cols, m.Rows
	}
	return m.Rows, m.Cols
}

// batchStride is the distance between the matrices of m's batch.
func (m Matrix) batchStride() int64 {
	if m.Batch.Stride != 0 {
		return int64(m.Batch.Stride)
	}
	outer, _ := m.lines()
	return int64(outer) * int64(m.stride())
}

// span is how many elements the matrices of m span, from the first
// element of the first: what its memory must hold.
func (m Matrix) span() int64 {
	ext := m.extent()
	if ext == 0 {
		return 0
	}
	return int64(m.count()-1)*m.batchStride() + ext
}

// checkBatch validates m's Batch as argument name of op: sizes cuBLAS
// takes, and matrices that do not overlap.
func (m Matrix) checkBatch(op, name string) error {
	b := m.Batch
	switch {
	case b == Batch{}:
		return nil
	case b.Count < 0 || b.Stride < 0:
		return fmt.Errorf("blas: %s: %s is %v: negative batch sizes", op, name, m)
	case b.Count == 0:
		return fmt.Errorf("blas: %s: %s has a batch stride of %d but no batch Count", op, name, b.Stride)
	case b.Count > math.MaxInt32:
		return fmt.Errorf("blas: %s: %s is %v: cuBLAS takes batches of fewer than 2³¹", op, name, m)
	}
	ext := m.extent()
	if b.Count == 1 || ext == 0 {
		return nil
	}
	s, n := m.batchStride(), int64(b.Count-1)
	if s > (math.MaxInt64/16-ext)/n {
		return fmt.Errorf("blas: %s: %s is %v: more elements than memory can hold", op, name, m)
	}
	// Either each matrix lies past the end of the one before, or the
	// matrices interleave: line by line, each line of one matrix after the
	// same line of the one before, the batch's lines within one stride.
	_, inner := m.lines()
	if s >= ext || s >= int64(inner) && n*s+int64(inner) <= int64(m.stride()) {
		return nil
	}
	return fmt.Errorf("blas: %s: %s is %v: its matrices overlap (each spans %d elements)", op, name, m, ext)
}

// batchShapes checks that the counts of A, B and C agree: A and B are
// batches of C's count or single matrices.
func batchShapes(op string, a, b, c Matrix) error {
	n := c.count()
	for _, x := range []struct {
		name string
		m    Matrix
	}{{"A", a}, {"B", b}} {
		switch k := x.m.count(); {
		case k == 1 || k == n:
		case n == 1:
			return fmt.Errorf("blas: %s: %s is a batch of %d but C is one matrix", op, x.name, k)
		default:
			return fmt.Errorf("blas: %s: %s is a batch of %d and C of %d: %s must be a batch of C's count, or one matrix for every product", op, x.name, k, n, x.name)
		}
	}
	return nil
}

// operandStride is m's batch stride as cuBLAS takes it: 0 for one matrix
// that every product of the batch uses.
func (m Matrix) operandStride() int64 {
	if m.count() == 1 {
		return 0
	}
	return m.batchStride()
}
