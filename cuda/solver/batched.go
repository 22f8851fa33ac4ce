//go:build linux && (amd64 || arm64)

package solver

import (
	"fmt"
	"math"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Batch makes a Matrix the first of Count matrices of its shape and
// stride in its memory, each Stride elements after the one before, for
// the batched calls (PotrfBatched, PotrsBatched), which factor or solve
// them all in one call: many small matrices go faster so than one by one.
type Batch struct {
	Count int
	// Stride is the distance, in elements, between the starts of two
	// consecutive matrices; 0 means packed: the matrix's Stride·Cols.
	Stride int
}

// checkBatch validates a batch of m as argument name of op and returns
// its stride and the elements the batch spans.
func checkBatch[T Float](op, name string, m Matrix[T], b Batch) (stride int, err error) {
	if err := m.check(op, name); err != nil {
		return 0, err
	}
	stride = b.Stride
	if stride == 0 {
		stride = m.ld() * m.Cols
	}
	switch {
	case b.Count < 0 || b.Stride < 0:
		return 0, fmt.Errorf("solver: %s: a batch of %d every %d elements: negative", op, b.Count, b.Stride)
	case b.Count > math.MaxInt32:
		return 0, fmt.Errorf("solver: %s: a batch of %d: cuSOLVER takes batches below 2³¹", op, b.Count)
	case b.Count > 1 && int64(stride) < m.extent():
		return 0, fmt.Errorf("solver: %s: %s is %v, %d elements, but its batch stride is %d: the matrices overlap", op, name, m, m.extent(), stride)
	}
	if b.Count == 0 || m.empty() {
		return stride, nil
	}
	span := int64(b.Count-1)*int64(stride) + m.extent()
	return stride, checkLen(op, name, m.Mem, span, fmt.Sprintf("a batch of %d %v every %d elements", b.Count, m, stride))
}

// pointers makes the device array of the batch's matrices' addresses
// that cuSOLVER's batched calls take, in the handle's context; the copy
// is complete when it returns.
func pointers[T Float](h *Handle, op string, m Matrix[T], count, stride int) (*cuda.Slice[uint64], error) {
	s := h.Stream()
	if s == nil {
		return nil, fmt.Errorf("solver: %s: %w", op, cuda.ErrClosed)
	}
	base := uint64(m.Mem.Ptr())
	ptrs := make([]uint64, count)
	for i := range ptrs {
		ptrs[i] = base + uint64(i)*uint64(stride)*uint64(sizeOf[T]())
	}
	return cuda.AllocSliceFrom(s.Context(), ptrs)
}

// PotrfBatched factors each of a batch of symmetric positive definite
// n×n matrices in place, as Potrf does one (cusolverDnSpotrfBatched,
// cusolverDnDpotrfBatched). The matrices that are not positive definite
// give an *InfoError each, matching ErrNotPositiveDefinite, with Batch
// the matrix's place in the batch, joined (errors.Join): errors.Is and
// errors.As see them; the other matrices are factored all the same.
func PotrfBatched[T Float](h *Handle, uplo Fill, a Matrix[T], batch Batch) error {
	const op = "PotrfBatched"
	fill, err := rawFill(op, uplo)
	if err != nil {
		return err
	}
	stride, err := checkBatch(op, "A", a, batch)
	if err != nil {
		return err
	}
	if a.Rows != a.Cols {
		return fmt.Errorf("solver: %s: A is %v: not square", op, a)
	}
	if batch.Count == 0 || a.empty() {
		return h.call("solver."+op, noWork)
	}
	ptrs, err := pointers(h, op, a, batch.Count, stride)
	if err != nil {
		return err
	}
	defer ptrs.Close()
	n, lda, count := int32(a.Rows), int32(a.ld()), int32(batch.Count)
	arr := devptr.Of(ptrs.Ptr())
	c := call[T]{op: op, fn: fnName[T]("potrfBatched"), positive: ErrNotPositiveDefinite, batch: batch.Count}
	c.run = func(raw cusolver.CusolverDnHandle_t, _ *T, _ int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSpotrfBatched(raw, fill, n, (**float32)(arr), lda, info, count)
		}
		return cusolver.DnDpotrfBatched(raw, fill, n, (**float64)(arr), lda, info, count)
	}
	return c.do(h, []cuda.Holder{a.Mem, ptrs})
}

// PotrsBatched solves A·x = b for each matrix of a batch, with the
// factors PotrfBatched left in the uplo triangles of a's batch and the
// n×1 right-hand sides of b's batch, which the solutions overwrite
// (cusolverDnSpotrsBatched, cusolverDnDpotrsBatched). The two batches
// have one count; cuSOLVER takes one right-hand side per matrix.
func PotrsBatched[T Float](h *Handle, uplo Fill, a Matrix[T], aBatch Batch, b Matrix[T], bBatch Batch) error {
	const op = "PotrsBatched"
	fill, err := rawFill(op, uplo)
	if err != nil {
		return err
	}
	if err := checkSquare(op, a, b); err != nil {
		return err
	}
	if b.Cols != 1 && !b.empty() {
		return fmt.Errorf("solver: %s: B is %v: cuSOLVER's batched solve takes one right-hand side per matrix", op, b)
	}
	if aBatch.Count != bBatch.Count {
		return fmt.Errorf("solver: %s: a batch of %d matrices and one of %d right-hand sides", op, aBatch.Count, bBatch.Count)
	}
	aStride, err := checkBatch(op, "A", a, aBatch)
	if err != nil {
		return err
	}
	bStride, err := checkBatch(op, "B", b, bBatch)
	if err != nil {
		return err
	}
	if aBatch.Count == 0 || a.empty() || b.empty() {
		return h.call("solver."+op, noWork)
	}
	pa, err := pointers(h, op, a, aBatch.Count, aStride)
	if err != nil {
		return err
	}
	defer pa.Close()
	pb, err := pointers(h, op, b, bBatch.Count, bStride)
	if err != nil {
		return err
	}
	defer pb.Close()
	n, lda, ldb, count := int32(a.Rows), int32(a.ld()), int32(b.ld()), int32(aBatch.Count)
	arrA, arrB := devptr.Of(pa.Ptr()), devptr.Of(pb.Ptr())
	// The info of cusolverDn<t>potrsBatched is one word, of its
	// arguments, not one per matrix.
	c := call[T]{op: op, fn: fnName[T]("potrsBatched")}
	c.run = func(raw cusolver.CusolverDnHandle_t, _ *T, _ int32, info *int32) error {
		if sizeOf[T]() == 4 {
			return cusolver.DnSpotrsBatched(raw, fill, n, 1, (**float32)(arrA), lda, (**float32)(arrB), ldb, info, count)
		}
		return cusolver.DnDpotrsBatched(raw, fill, n, 1, (**float64)(arrA), lda, (**float64)(arrB), ldb, info, count)
	}
	return c.do(h, []cuda.Holder{a.Mem, b.Mem, pa, pb})
}
