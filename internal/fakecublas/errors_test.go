//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestBadArgumentsGetCuBLASStatuses: what cuBLAS refuses, the fake refuses
// with the status cuBLAS documents, before anything is queued.
func TestBadArgumentsGetCuBLASStatuses(t *testing.T) {
	e := setup(t)
	p := upload(t, make([]float32, 64))
	one := float32(1)
	sgemm := func(h cublas.CublasHandle_t, m, n, k, lda int32, b cu.CUdeviceptr) error {
		return cublas.Sgemm(h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, m, n, k, &one, dev[float32](p), lda, dev[float32](b), k, &one, dev[float32](p+128), m)
	}
	var dead cublas.CublasHandle_t
	if err := cublas.Create(&dead); err != nil {
		t.Fatal(err)
	}
	if err := cublas.Destroy(dead); err != nil {
		t.Fatal(err)
	}
	ex := func(compute cublas.CublasComputeType_t, bt libtypes.CudaDataType) error {
		return cublas.GemmEx(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 2, 2, 2, unsafe.Pointer(&one), raw(p), libtypes.CUDA_R_32F, 2, raw(p), bt, 2,
			unsafe.Pointer(&one), raw(p+128), libtypes.CUDA_R_32F, 2, compute, cublas.CUBLAS_GEMM_DEFAULT)
	}
	// The message of a refusal names the call (the thread is locked).
	if err := ex(cublas.CUBLAS_COMPUTE_32I, libtypes.CUDA_R_32F); !errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) ||
		!strings.Contains(fakecublas.LastError(), "cublasGemmEx") {
		t.Errorf("an integer GemmEx: %v, message %q; want CUBLAS_STATUS_NOT_SUPPORTED naming cublasGemmEx", err, fakecublas.LastError())
	}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"nil handle", sgemm(0, 2, 2, 2, 2, p), cublas.CUBLAS_STATUS_NOT_INITIALIZED},
		{"destroyed handle", sgemm(dead, 2, 2, 2, 2, p), cublas.CUBLAS_STATUS_NOT_INITIALIZED},
		{"destroy twice", cublas.Destroy(dead), cublas.CUBLAS_STATUS_NOT_INITIALIZED},
		{"negative m", sgemm(e.h, -1, 2, 2, 2, p), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"negative k", sgemm(e.h, 2, 2, -3, 2, p), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"lda below m", sgemm(e.h, 4, 2, 2, 3, p), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"B past its allocation", sgemm(e.h, 2, 2, 2, 2, p+250), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"B in no allocation", sgemm(e.h, 2, 2, 2, 2, 8), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"integer compute", ex(cublas.CUBLAS_COMPUTE_32I, libtypes.CUDA_R_32F), cublas.CUBLAS_STATUS_NOT_SUPPORTED},
		{"mixed A and B", ex(cublas.CUBLAS_COMPUTE_32F, libtypes.CUDA_R_16F), cublas.CUBLAS_STATUS_NOT_SUPPORTED},
		{"unknown math mode", cublas.SetMathMode(e.h, 99), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"unknown pointer mode", cublas.SetPointerMode(e.h, 7), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"gemv incx 0", cublas.Sgemv(e.h, cublas.CUBLAS_OP_N, 2, 2, &one, dev[float32](p), 2, dev[float32](p), 0, &one, dev[float32](p+64), 1), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"unmodeled function", cublas.Strsm(e.h, 0, 0, 0, 0, 1, 1, &one, dev[float32](p), 1, dev[float32](p), 1), cublas.ErrMissingFunction},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
}

func TestLtBadArgumentsGetCuBLASStatuses(t *testing.T) {
	e := setup(t)
	var h cublaslt.CublasLtHandle_t
	if err := cublaslt.Create(&h); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.Destroy(h)
	// Sizes whose bytes overflow 64 bits, on real memory: refused, not run.
	var huge, col cublaslt.CublasLtMatrixLayout_t
	if err := errors.Join(cublaslt.MatrixLayoutCreate(&huge, libtypes.CUDA_R_32F, 1<<40, 1<<40, 1<<40),
		cublaslt.MatrixLayoutCreate(&col, libtypes.CUDA_R_32F, 1<<40, 1, 1<<40)); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.MatrixLayoutDestroy(huge)
	defer cublaslt.MatrixLayoutDestroy(col)
	mem := upload(t, make([]float32, 1024))
	one := float32(1)
	var desc cublaslt.CublasLtMatmulDesc_t
	if err := cublaslt.MatmulDescCreate(&desc, cublas.CUBLAS_COMPUTE_32F, libtypes.CUDA_R_32F); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.MatmulDescDestroy(desc)
	ptr := uint64(0)
	i32 := int32(0)
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"unmodeled attribute", cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, unsafe.Pointer(&ptr), 8), cublas.CUBLAS_STATUS_NOT_SUPPORTED},
		{"wrong size", cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_TRANSA, unsafe.Pointer(&ptr), 8), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"nil descriptor", cublaslt.MatmulDescSetAttribute(nil, cublaslt.CUBLASLT_MATMUL_DESC_TRANSA, unsafe.Pointer(&i32), 4), cublas.CUBLAS_STATUS_INVALID_VALUE},
		{"nil handle", cublaslt.Destroy(0), cublas.CUBLAS_STATUS_NOT_INITIALIZED},
		{"overflowing sizes", cublaslt.Matmul(h, desc, unsafe.Pointer(&one), raw(mem), huge, raw(mem), col, unsafe.Pointer(&one), raw(mem), col, raw(mem), col,
			nil, nil, 0, e.s), cublas.CUBLAS_STATUS_INVALID_VALUE},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
}

// TestNothingLeaks: the fake counts what it made; every create of a test
// here has its destroy.
func TestNothingLeaks(t *testing.T) {
	before, err := fakecublas.Live()
	if err != nil {
		t.Fatal(err)
	}
	var h cublaslt.CublasLtHandle_t
	if err := cublaslt.Create(&h); err != nil {
		t.Fatal(err)
	}
	var l cublaslt.CublasLtMatrixLayout_t
	if err := cublaslt.MatrixLayoutCreate(&l, libtypes.CUDA_R_32F, 2, 2, 2); err != nil {
		t.Fatal(err)
	}
	during, err := fakecublas.Live()
	if err != nil {
		t.Fatal(err)
	}
	if during.LtHandles != before.LtHandles+1 || during.Layouts != before.Layouts+1 {
		t.Errorf("live %+v after a create of each, %+v before", during, before)
	}
	if err := errors.Join(cublaslt.MatrixLayoutDestroy(l), cublaslt.Destroy(h)); err != nil {
		t.Fatal(err)
	}
	if after, err := fakecublas.Live(); err != nil || after != before {
		t.Errorf("live %+v, %v after the destroys, %+v before", after, err, before)
	}
}
