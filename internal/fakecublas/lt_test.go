//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// TestLtRowOrderGELUWithDeviceScalars runs cublasLtMatmul on row-order
// layouts, alpha and beta in device memory, D apart from C and the GELU
// epilogue: D = GELU(alpha·A·B + beta·C), against the CPU within float32
// rounding.
func TestLtRowOrderGELUWithDeviceScalars(t *testing.T) {
	e := setup(t)
	var h cublaslt.CublasLtHandle_t
	if err := cublaslt.Create(&h); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.Destroy(h)
	const m, n, k = 3, 4, 5
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(i%5) - 2
	}
	for i := range b {
		b[i] = float32(i%3) * 0.5
	}
	for i := range c {
		c[i] = float32(i) * 0.25
	}
	pa, pb, pc, pd := upload(t, a), upload(t, b), upload(t, c), upload(t, make([]float32, m*n))
	scal := upload(t, []float32{0.5, -1})
	var desc cublaslt.CublasLtMatmulDesc_t
	if err := cublaslt.MatmulDescCreate(&desc, cublas.CUBLAS_COMPUTE_32F, libtypes.CUDA_R_32F); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.MatmulDescDestroy(desc)
	epi, mode := uint32(cublaslt.CUBLASLT_EPILOGUE_GELU), int32(cublaslt.CUBLASLT_POINTER_MODE_DEVICE)
	if err := errors.Join(
		cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_EPILOGUE, unsafe.Pointer(&epi), 4),
		cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_POINTER_MODE, unsafe.Pointer(&mode), 4)); err != nil {
		t.Fatal(err)
	}
	layout := func(rows, cols uint64) cublaslt.CublasLtMatrixLayout_t {
		var l cublaslt.CublasLtMatrixLayout_t
		if err := cublaslt.MatrixLayoutCreate(&l, libtypes.CUDA_R_32F, rows, cols, int64(cols)); err != nil {
			t.Fatal(err)
		}
		order := int32(cublaslt.CUBLASLT_ORDER_ROW)
		if err := cublaslt.MatrixLayoutSetAttribute(l, cublaslt.CUBLASLT_MATRIX_LAYOUT_ORDER, unsafe.Pointer(&order), 4); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cublaslt.MatrixLayoutDestroy(l) })
		return l
	}
	la, lb, lc := layout(m, k), layout(k, n), layout(m, n)
	if err := cublaslt.Matmul(h, desc, raw(scal), raw(pa), la, raw(pb), lb, raw(scal+4), raw(pc), lc, raw(pd), lc, nil, nil, 0, e.s); err != nil {
		t.Fatal(err)
	}
	got := download[float32](e, pd, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += float64(a[i*k+l]) * float64(b[l*n+j])
			}
			x := 0.5*s - float64(c[i*n+j])
			want := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
			if !near(float64(got[i*n+j]), want, 1e-6) {
				t.Errorf("D[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
			}
		}
	}
	if after := download[float32](e, pc, m*n); after[5] != c[5] {
		t.Errorf("C changed: %v", after)
	}
}

// TestLtAlgorithmConfiguration: the one algorithm's configuration reads
// back what was set; cublasLtMatmulAlgoCheck takes a cluster shape but
// refuses split-K, which the algorithm's capabilities say it lacks.
func TestLtAlgorithmConfiguration(t *testing.T) {
	setup(t)
	var h cublaslt.CublasLtHandle_t
	if err := cublaslt.Create(&h); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.Destroy(h)
	ids := make([]int32, 4)
	var nids int32
	f32 := libtypes.CUDA_R_32F
	if err := cublaslt.MatmulAlgoGetIds(h, cublas.CUBLAS_COMPUTE_32F, f32, f32, f32, f32, f32, 4, &ids[0], &nids); err != nil || nids != 1 || ids[0] != 0 {
		t.Fatalf("algorithm ids %v, %v", ids[:nids], err)
	}
	var algo cublaslt.CublasLtMatmulAlgo_t
	if err := cublaslt.MatmulAlgoInit(h, cublas.CUBLAS_COMPUTE_32F, f32, f32, f32, f32, f32, 0, &algo); err != nil {
		t.Fatal(err)
	}
	var split uint32
	var n uint64
	if err := cublaslt.MatmulAlgoCapGetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, unsafe.Pointer(&split), 4, &n); err != nil || split != 0 || n != 4 {
		t.Fatalf("split-K support %d (%d bytes), %v", split, n, err)
	}
	if err := cublaslt.MatmulAlgoCapGetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CAP_TILE_IDS, nil, 0, &n); err != nil || n != 0 {
		t.Fatalf("tile ids: %d bytes, %v", n, err)
	}
	var desc cublaslt.CublasLtMatmulDesc_t
	if err := cublaslt.MatmulDescCreate(&desc, cublas.CUBLAS_COMPUTE_32F, f32); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.MatmulDescDestroy(desc)
	var l cublaslt.CublasLtMatrixLayout_t
	if err := cublaslt.MatrixLayoutCreate(&l, f32, 4, 4, 4); err != nil {
		t.Fatal(err)
	}
	defer cublaslt.MatrixLayoutDestroy(l)
	checkAlgo := func(a *cublaslt.CublasLtMatmulAlgo_t) error {
		var res cublaslt.CublasLtMatmulHeuristicResult_t
		return cublaslt.MatmulAlgoCheck(h, desc, l, l, l, l, a, &res)
	}
	cluster := uint16(cublaslt.CUBLASLT_CLUSTER_SHAPE_2x1x1)
	if err := cublaslt.MatmulAlgoConfigSetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, unsafe.Pointer(&cluster), 2); err != nil {
		t.Fatal(err)
	}
	if err := checkAlgo(&algo); err != nil {
		t.Errorf("a cluster shape: %v", err)
	}
	k := uint32(4)
	if err := cublaslt.MatmulAlgoConfigSetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CONFIG_SPLITK_NUM, unsafe.Pointer(&k), 4); err != nil {
		t.Fatal(err)
	}
	var got uint32
	var gc uint16
	if err := errors.Join(
		cublaslt.MatmulAlgoConfigGetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CONFIG_SPLITK_NUM, unsafe.Pointer(&got), 4, &n),
		cublaslt.MatmulAlgoConfigGetAttribute(&algo, cublaslt.CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, unsafe.Pointer(&gc), 2, &n)); err != nil || got != 4 || gc != cluster {
		t.Fatalf("split-K %d and cluster %d read back, %v", got, gc, err)
	}
	if err := checkAlgo(&algo); !errors.Is(err, cublas.CUBLAS_STATUS_INVALID_VALUE) {
		t.Errorf("split-K 4: %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
}
