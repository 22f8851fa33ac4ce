//go:build linux && (amd64 || arm64)

package sparse

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// Scalar is the value types of matrices and vectors.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// Index is the index types of sparse matrices.
type Index interface{ int32 | int64 }

// Op is what a product or solve does to a matrix before using it.
type Op int

const (
	// NoTrans uses the matrix as it is (CUSPARSE_OPERATION_NON_TRANSPOSE).
	NoTrans Op = iota
	// Trans uses its transpose (CUSPARSE_OPERATION_TRANSPOSE).
	Trans
	// ConjTrans uses its conjugate transpose
	// (CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE); for real types it is
	// Trans.
	ConjTrans
)

var opNames = [...]string{NoTrans: "NoTrans", Trans: "Trans", ConjTrans: "ConjTrans"}

func (o Op) String() string {
	if o.valid() {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

func (o Op) valid() bool { return o >= 0 && int(o) < len(opNames) }

func (o Op) raw() cusparse.CusparseOperation_t {
	switch o {
	case Trans:
		return cusparse.CUSPARSE_OPERATION_TRANSPOSE
	case ConjTrans:
		return cusparse.CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE
	}
	return cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
}

// shape is the shape of op applied to a rows×cols matrix.
func (o Op) shape(rows, cols int) (int, int) {
	if o == NoTrans {
		return rows, cols
	}
	return cols, rows
}

// Format is the storage of a sparse matrix.
type Format int

const (
	// CSR is compressed sparse rows: rows+1 row offsets, then the column
	// index and value of each entry, row after row.
	CSR Format = iota
	// CSC is compressed sparse columns: cols+1 column offsets, then the
	// row index and value of each entry, column after column.
	CSC
	// COO is coordinates: the row index, column index and value of each
	// entry.
	COO
	// BSR is blocked compressed sparse rows: CSR of dense blocks, each
	// stored whole in row-major or column-major order.
	BSR
)

var formatNames = [...]string{CSR: "CSR", CSC: "CSC", COO: "COO", BSR: "BSR"}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Order is the layout of a dense matrix.
type Order int

const (
	// ColMajor stores each column's elements one after the other
	// (CUSPARSE_ORDER_COL): element (i, j) at i + j*ld.
	ColMajor Order = iota
	// RowMajor stores each row's elements one after the other
	// (CUSPARSE_ORDER_ROW): element (i, j) at i*ld + j.
	RowMajor
)

func (o Order) String() string {
	switch o {
	case ColMajor:
		return "ColMajor"
	case RowMajor:
		return "RowMajor"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

func (o Order) raw() cusparse.CusparseOrder_t {
	if o == RowMajor {
		return cusparse.CUSPARSE_ORDER_ROW
	}
	return cusparse.CUSPARSE_ORDER_COL
}

// Fill says which triangle of a matrix a triangular solve reads.
type Fill int

const (
	// Lower reads the diagonal and below (CUSPARSE_FILL_MODE_LOWER).
	Lower Fill = iota
	// Upper reads the diagonal and above (CUSPARSE_FILL_MODE_UPPER).
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

// Diag says whether a triangular solve reads the stored diagonal.
type Diag int

const (
	// NonUnit divides by the stored diagonal (CUSPARSE_DIAG_TYPE_NON_UNIT).
	NonUnit Diag = iota
	// Unit takes every diagonal element as 1, whatever is stored
	// (CUSPARSE_DIAG_TYPE_UNIT).
	Unit
)

func (d Diag) String() string {
	switch d {
	case NonUnit:
		return "NonUnit"
	case Unit:
		return "Unit"
	}
	return fmt.Sprintf("Diag(%d)", int(d))
}

// dataType is cuSPARSE's name of T, which is also the compute type: the
// package computes in the type of its operands.
func dataType[T Scalar]() libtypes.CudaDataType {
	var z T
	switch any(z).(type) {
	case float32:
		return libtypes.CUDA_R_32F
	case float64:
		return libtypes.CUDA_R_64F
	case complex64:
		return libtypes.CUDA_C_32F
	}
	return libtypes.CUDA_C_64F
}

func indexType[I Index]() cusparse.CusparseIndexType_t {
	var z I
	if unsafe.Sizeof(z) == 4 {
		return cusparse.CUSPARSE_INDEX_32I
	}
	return cusparse.CUSPARSE_INDEX_64I
}

func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}
