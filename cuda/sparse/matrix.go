//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// Matrix is a sparse matrix of T with indices of I, in one of the
// formats, over three Slices of device memory: see the package comment.
// It is a description, made by NewCSR, NewCSC, NewCOO or SpGEMM: the
// cuSPARSE descriptors are the handles' (see the package comment), so one
// Matrix may be used by any number of goroutines and handles at once.
type Matrix[T Scalar, I Index] struct {
	format     Format
	rows, cols int
	nnz        int
	// p and q are the index arrays: CSR's row offsets and column indices,
	// CSC's column offsets and row indices, COO's row and column indices.
	p, q   *cuda.Slice[I]
	values *cuda.Slice[T]
	// owned: the Slices are the matrix's own (SpGEMM's result), closed
	// by Close.
	owned bool
	// BSR's blocks: bs×bs values each, in border; nnz counts blocks.
	bs     int
	border Order
}

// NewCSR describes a rows×cols matrix in compressed sparse rows:
// rowOffsets has rows+1 elements, the first 0 and the last the number of
// entries nnz; colIndices and values have nnz elements, row i's entries
// at positions rowOffsets[i] to rowOffsets[i+1]-1. Indices start at 0.
// The Slices stay the caller's (Close them after the last use); their
// lengths are checked here, their contents are not (cuSPARSE's results
// on malformed indices are undefined).
func NewCSR[T Scalar, I Index](rows, cols int, rowOffsets, colIndices *cuda.Slice[I], values *cuda.Slice[T]) (*Matrix[T, I], error) {
	return newMatrix("NewCSR", CSR, rows, cols, rowOffsets, colIndices, values)
}

// NewCSC describes a rows×cols matrix in compressed sparse columns:
// colOffsets has cols+1 elements, rowIndices and values the nnz entries,
// column j's at positions colOffsets[j] to colOffsets[j+1]-1.
func NewCSC[T Scalar, I Index](rows, cols int, colOffsets, rowIndices *cuda.Slice[I], values *cuda.Slice[T]) (*Matrix[T, I], error) {
	return newMatrix("NewCSC", CSC, rows, cols, colOffsets, rowIndices, values)
}

// NewCOO describes a rows×cols matrix in coordinates: entry k is
// values[k] at (rowIndices[k], colIndices[k]); the three have nnz
// elements. cuSPARSE wants the entries sorted by row.
func NewCOO[T Scalar, I Index](rows, cols int, rowIndices, colIndices *cuda.Slice[I], values *cuda.Slice[T]) (*Matrix[T, I], error) {
	return newMatrix("NewCOO", COO, rows, cols, rowIndices, colIndices, values)
}

// NewBSR describes a matrix of blockRows×blockCols blocks, each of
// blockSize×blockSize values, in blocked compressed sparse rows
// (cuSPARSE's BSR, from CUDA 12 on; cuSPARSE takes square blocks only):
// rowOffsets has blockRows+1 elements, colIndices one block column per
// stored block, and values the blockSize² values of each stored block in
// turn, each block in the given order. The matrix is
// blockRows·blockSize × blockCols·blockSize, and NNZ counts its blocks.
// SpMV takes it (cuSPARSE's other generic operations do not, and are
// refused here).
func NewBSR[T Scalar, I Index](blockRows, blockCols, blockSize int, order Order, rowOffsets, colIndices *cuda.Slice[I], values *cuda.Slice[T]) (*Matrix[T, I], error) {
	const op = "NewBSR"
	if !bsrAvailable {
		return nil, invalid(op, "cuSPARSE's generic API has BSR matrices from CUDA 12 on; these bindings are of CUDA %d", cusparse.HeaderVersion())
	}
	names := arrayNames[BSR]
	for _, a := range []struct {
		name string
		mem  cuda.Memory
		nil  bool
	}{{names[0], rowOffsets, rowOffsets == nil}, {names[1], colIndices, colIndices == nil}, {"values", values, values == nil}} {
		if a.nil || a.mem.Context().Raw() == 0 {
			return nil, fmt.Errorf("sparse: %s: %s: %w", op, a.name, cuda.ErrClosed)
		}
	}
	if order != ColMajor && order != RowMajor {
		return nil, invalid(op, "unknown block order %v", order)
	}
	bs := blockSize
	if blockRows < 0 || blockCols < 0 || bs < 1 {
		return nil, invalid(op, "%d×%d blocks of %d×%d", blockRows, blockCols, bs, bs)
	}
	if blockRows > math.MaxInt32/bs || blockCols > math.MaxInt32/bs || colIndices.Len() > math.MaxInt/(bs*bs) {
		return nil, invalid(op, "%d×%d blocks of %d×%d: too large", blockRows, blockCols, bs, bs)
	}
	nnzb := colIndices.Len()
	if rowOffsets.Len() != blockRows+1 {
		return nil, invalid(op, "%s has %d elements, want %d", names[0], rowOffsets.Len(), blockRows+1)
	}
	if values.Len() != nnzb*bs*bs {
		return nil, invalid(op, "values has %d elements, want %d: %d blocks of %d×%d", values.Len(), nnzb*bs*bs, nnzb, bs, bs)
	}
	if sizeOf[I]() == 4 && nnzb > math.MaxInt32 {
		return nil, invalid(op, "%d blocks do not fit int32 indices: use int64", nnzb)
	}
	return &Matrix[T, I]{format: BSR, rows: blockRows * bs, cols: blockCols * bs, nnz: nnzb, p: rowOffsets, q: colIndices, values: values,
		bs: bs, border: order}, nil
}

func newMatrix[T Scalar, I Index](op string, f Format, rows, cols int, p, q *cuda.Slice[I], values *cuda.Slice[T]) (*Matrix[T, I], error) {
	names := arrayNames[f]
	for _, a := range []struct {
		name string
		mem  cuda.Memory
		nil  bool
	}{{names[0], p, p == nil}, {names[1], q, q == nil}, {"values", values, values == nil}} {
		if a.nil || a.mem.Context().Raw() == 0 {
			return nil, fmt.Errorf("sparse: %s: %s: %w", op, a.name, cuda.ErrClosed)
		}
	}
	if rows < 0 || cols < 0 {
		return nil, invalid(op, "a %d×%d matrix", rows, cols)
	}
	nnz := values.Len()
	np := nnz
	switch f {
	case CSR:
		np = rows + 1
	case CSC:
		np = cols + 1
	}
	if p.Len() != np {
		return nil, invalid(op, "%s has %d elements, want %d", names[0], p.Len(), np)
	}
	if q.Len() != nnz {
		return nil, invalid(op, "%s has %d elements and values %d: want one per entry", names[1], q.Len(), nnz)
	}
	if sizeOf[I]() == 4 && (rows > math.MaxInt32-1 || cols > math.MaxInt32-1 || nnz > math.MaxInt32) {
		return nil, invalid(op, "a %d×%d matrix of %d entries does not fit int32 indices: use int64", rows, cols, nnz)
	}
	return &Matrix[T, I]{format: f, rows: rows, cols: cols, nnz: nnz, p: p, q: q, values: values}, nil
}

var arrayNames = [...][2]string{
	CSR: {"row offsets", "column indices"},
	CSC: {"column offsets", "row indices"},
	COO: {"row indices", "column indices"},
	BSR: {"block row offsets", "block column indices"},
}

// Format returns the matrix's format.
func (m *Matrix[T, I]) Format() Format { return m.format }

// Rows returns the number of rows.
func (m *Matrix[T, I]) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix[T, I]) Cols() int { return m.cols }

// NNZ returns the number of stored entries; of stored blocks for BSR.
func (m *Matrix[T, I]) NNZ() int { return m.nnz }

// BlockSize returns the rows (and columns) of a BSR matrix's square
// blocks, and their order; 1 and RowMajor for the other formats.
func (m *Matrix[T, I]) BlockSize() (size int, order Order) {
	if m.format != BSR {
		return 1, RowMajor
	}
	return m.bs, m.border
}

// Arrays returns the matrix's Slices: for CSR the row offsets, the
// column indices and the values; for CSC the column offsets, the row
// indices and the values; for COO the row indices, the column indices
// and the values; for BSR the block row offsets, the block column
// indices and the blocks' values. They are the matrix's own when SpGEMM made it: Close
// closes them then.
func (m *Matrix[T, I]) Arrays() (*cuda.Slice[I], *cuda.Slice[I], *cuda.Slice[T]) {
	return m.p, m.q, m.values
}

// Close closes the Slices the matrix owns, those of a product of SpGEMM;
// a matrix made by NewCSR, NewCSC or NewCOO owns none, and Close does
// nothing. As with device memory, the last Close frees without waiting
// for work queued on them.
func (m *Matrix[T, I]) Close() error {
	if m == nil || !m.owned {
		return nil
	}
	return errors.Join(m.p.Close(), m.q.Close(), m.values.Close())
}

// memory refuses a nil matrix, and names the matrix's memory for
// Handle.context. The slice has room for the two operands a call adds.
func (m *Matrix[T, I]) memory(op, name string) ([]namedMemory, error) {
	if m == nil {
		return nil, fmt.Errorf("sparse: %s: %s: nil matrix: %w", op, name, cuda.ErrClosed)
	}
	names := arrayNames[m.format]
	mems := make([]namedMemory, 3, 5)
	mems[0], mems[1], mems[2] = namedMemory{name, names[0], m.p}, namedMemory{name, names[1], m.q}, namedMemory{name, "values", m.values}
	return mems, nil
}

// ptrs are a matrix's device addresses, taken before a call holds it.
type ptrs struct{ p, q, v cu.CUdeviceptr }

func (m *Matrix[T, I]) ptrs() ptrs { return ptrs{m.p.Ptr(), m.q.Ptr(), m.values.Ptr()} }

// holders is the matrix's memory for a call to hold, with room for the
// two operands a call adds.
func (m *Matrix[T, I]) holders() []cuda.Holder {
	h := make([]cuda.Holder, 3, 5)
	h[0], h[1], h[2] = m.p, m.q, m.values
	return h
}

// descr makes the cuSPARSE descriptor of m at addresses a; the caller
// destroys it (destroySp).
func (m *Matrix[T, I]) descr(op string, a ptrs) (cusparse.CusparseSpMatDescr_t, error) {
	var d cusparse.CusparseSpMatDescr_t
	it, vt := indexType[I](), dataType[T]()
	base := cusparse.CUSPARSE_INDEX_BASE_ZERO
	var err error
	var fn string
	switch m.format {
	case CSR:
		fn = "cusparseCreateCsr"
		err = cusparse.CreateCsr(&d, int64(m.rows), int64(m.cols), int64(m.nnz), devptr.Of(a.p), devptr.Of(a.q), devptr.Of(a.v), it, it, base, vt)
	case CSC:
		fn = "cusparseCreateCsc"
		err = cusparse.CreateCsc(&d, int64(m.rows), int64(m.cols), int64(m.nnz), devptr.Of(a.p), devptr.Of(a.q), devptr.Of(a.v), it, it, base, vt)
	case BSR:
		fn = "cusparseCreateBsr"
		err = createBsr(&d, int64(m.rows/m.bs), int64(m.cols/m.bs), int64(m.nnz), int64(m.bs), int64(m.bs), devptr.Of(a.p), devptr.Of(a.q), devptr.Of(a.v), it, vt, m.border.raw())
	default:
		fn = "cusparseCreateCoo"
		err = cusparse.CreateCoo(&d, int64(m.rows), int64(m.cols), int64(m.nnz), devptr.Of(a.p), devptr.Of(a.q), devptr.Of(a.v), it, base, vt)
	}
	return d, check(op, fn, err)
}

// key is what m's descriptor at addresses a holds, for descrCache.
func (m *Matrix[T, I]) key(a ptrs) spKey {
	return spKey{m.format, m.rows, m.cols, m.nnz, a.p, a.q, a.v, indexType[I](), dataType[T](), m.bs, m.border}
}

func destroySp(d cusparse.CusparseSpMatDescr_t) { _ = cusparse.DestroySpMat(constSpMat(d)) }
