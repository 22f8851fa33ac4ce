//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// TestLibraryErrorsMatchTheirStatus: an error from cuSPARSE is a
// cuda.LibraryError naming the package, operation and function, and
// errors.Is matches its status.
func TestLibraryErrorsMatchTheirStatus(t *testing.T) {
	err := check("sparse.SpMV", "cusparseSpMV", cusparse.CUSPARSE_STATUS_INVALID_VALUE)
	var lerr *cuda.LibraryError
	if !errors.As(err, &lerr) || lerr.Pkg != "sparse" || lerr.Op != "SpMV" || lerr.Func != "cusparseSpMV" {
		t.Fatalf("check = %#v", err)
	}
	if !errors.Is(err, cusparse.CUSPARSE_STATUS_INVALID_VALUE) || errors.Is(err, cusparse.CUSPARSE_STATUS_NOT_SUPPORTED) {
		t.Fatalf("%v does not match its status alone", err)
	}
	if check("x", "y", nil) != nil {
		t.Fatal("check of no error is an error")
	}
}

func TestTypesHaveTheirCuSPARSENames(t *testing.T) {
	for got, want := range map[libtypes.CudaDataType]libtypes.CudaDataType{
		dataType[float32]():    libtypes.CUDA_R_32F,
		dataType[float64]():    libtypes.CUDA_R_64F,
		dataType[complex64]():  libtypes.CUDA_C_32F,
		dataType[complex128](): libtypes.CUDA_C_64F,
	} {
		if got != want {
			t.Errorf("%v, want %v", got, want)
		}
	}
	if indexType[int32]() != cusparse.CUSPARSE_INDEX_32I || indexType[int64]() != cusparse.CUSPARSE_INDEX_64I {
		t.Error("index types")
	}
	for op, want := range map[Op]cusparse.CusparseOperation_t{
		NoTrans:   cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE,
		Trans:     cusparse.CUSPARSE_OPERATION_TRANSPOSE,
		ConjTrans: cusparse.CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE,
	} {
		if op.raw() != want {
			t.Errorf("%v is %v, want %v", op, op.raw(), want)
		}
	}
	if RowMajor.raw() != cusparse.CUSPARSE_ORDER_ROW || ColMajor.raw() != cusparse.CUSPARSE_ORDER_COL {
		t.Error("orders")
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		p, n, q, m int
		want       bool
	}{
		{0, 8, 8, 8, false},
		{0, 9, 8, 8, true},
		{8, 8, 0, 9, true},
		{0, 0, 0, 8, false},
		{4, 2, 0, 16, true},
	} {
		if got := overlap(cuPtr(tc.p), tc.n, cuPtr(tc.q), tc.m); got != tc.want {
			t.Errorf("overlap(%d+%d, %d+%d) = %v", tc.p, tc.n, tc.q, tc.m, got)
		}
	}
}

func cuPtr(p int) cu.CUdeviceptr { return cu.CUdeviceptr(0x1000 + p) }
