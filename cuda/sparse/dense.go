//go:build linux && (amd64 || arm64)

package sparse

import (
	"fmt"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// Dense is a dense matrix of T over a Slice: rows×cols elements in
// column-major or row-major order, with a leading dimension ld (the
// distance between columns, or rows, in elements). Like Matrix it is a
// description: the Slice stays the caller's.
type Dense[T Scalar] struct {
	rows, cols, ld int
	order          Order
	data           *cuda.Slice[T]
}

// NewDense describes a rows×cols matrix packed in data in the given order
// (ld is rows for ColMajor, cols for RowMajor); data must have at least
// rows*cols elements.
func NewDense[T Scalar](rows, cols int, order Order, data *cuda.Slice[T]) (*Dense[T], error) {
	ld := rows
	if order == RowMajor {
		ld = cols
	}
	return newDense("NewDense", rows, cols, max(ld, 1), order, data)
}

// NewDenseLD is NewDense with a leading dimension of ld: element (i, j)
// at i + j*ld (ColMajor) or i*ld + j (RowMajor). ld is at least the
// length of a column (ColMajor) or row (RowMajor), and at least 1; data
// must reach the last element.
func NewDenseLD[T Scalar](rows, cols, ld int, order Order, data *cuda.Slice[T]) (*Dense[T], error) {
	return newDense("NewDenseLD", rows, cols, ld, order, data)
}

func newDense[T Scalar](op string, rows, cols, ld int, order Order, data *cuda.Slice[T]) (*Dense[T], error) {
	if data == nil || data.Context().Raw() == 0 {
		return nil, fmt.Errorf("sparse: %s: data: %w", op, cuda.ErrClosed)
	}
	if order != ColMajor && order != RowMajor {
		return nil, invalid(op, "unknown order %v", order)
	}
	if rows < 0 || cols < 0 {
		return nil, invalid(op, "a %d×%d matrix", rows, cols)
	}
	inner, outer := rows, cols
	if order == RowMajor {
		inner, outer = cols, rows
	}
	if ld < max(inner, 1) {
		return nil, invalid(op, "leading dimension %d of a %d×%d %v matrix: want at least %d", ld, rows, cols, order, max(inner, 1))
	}
	need := 0
	if rows > 0 && cols > 0 {
		need = (outer-1)*ld + inner
	}
	if data.Len() < need {
		return nil, invalid(op, "a %d×%d %v matrix with leading dimension %d needs %d elements, the Slice has %d", rows, cols, order, ld, need, data.Len())
	}
	return &Dense[T]{rows: rows, cols: cols, ld: ld, order: order, data: data}, nil
}

// Rows returns the number of rows.
func (d *Dense[T]) Rows() int { return d.rows }

// Cols returns the number of columns.
func (d *Dense[T]) Cols() int { return d.cols }

// LD returns the leading dimension.
func (d *Dense[T]) LD() int { return d.ld }

// Order returns the layout.
func (d *Dense[T]) Order() Order { return d.order }

// Data returns the Slice the matrix lies in.
func (d *Dense[T]) Data() *cuda.Slice[T] { return d.data }

// span is the byte range the matrix's elements cover from its first.
func (d *Dense[T]) span() int {
	if d.rows == 0 || d.cols == 0 {
		return 0
	}
	inner, outer := d.rows, d.cols
	if d.order == RowMajor {
		inner, outer = d.cols, d.rows
	}
	return ((outer-1)*d.ld + inner) * sizeOf[T]()
}

func (d *Dense[T]) descr(op string, p cu.CUdeviceptr) (cusparse.CusparseDnMatDescr_t, error) {
	var m cusparse.CusparseDnMatDescr_t
	err := cusparse.CreateDnMat(&m, int64(d.rows), int64(d.cols), int64(d.ld), devptr.Of(p), dataType[T](), d.order.raw())
	return m, check(op, "cusparseCreateDnMat", err)
}

// key is what d's descriptor at p holds, for descrCache.
func (d *Dense[T]) key(p cu.CUdeviceptr) dnKey {
	return dnKey{d.rows, d.cols, d.ld, d.order, p, dataType[T]()}
}

// vecKey is the key of a dense vector of n elements at p.
func vecKey[T Scalar](n int, p cu.CUdeviceptr) dnKey {
	return dnKey{n, 1, n, ColMajor, p, dataType[T]()}
}

func destroyDnMat(m cusparse.CusparseDnMatDescr_t) { _ = cusparse.DestroyDnMat(constDnMat(m)) }

func dnVec[T Scalar](op string, n int, p cu.CUdeviceptr) (cusparse.CusparseDnVecDescr_t, error) {
	var v cusparse.CusparseDnVecDescr_t
	err := cusparse.CreateDnVec(&v, int64(n), devptr.Of(p), dataType[T]())
	return v, check(op, "cusparseCreateDnVec", err)
}

func destroyDnVec(v cusparse.CusparseDnVecDescr_t) { _ = cusparse.DestroyDnVec(constDnVec(v)) }
