//go:build linux && (amd64 || arm64)

package libgputest

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// TestCublasLtMatmulWithHeuristicAlgoMatchesCPU runs cublasLtMatmul,
// D = alpha·A·B + beta·C in float32 (CUBLAS_COMPUTE_32F) with D apart from
// C, on g's stream, with the first algorithm cublasLtMatmulAlgoGetHeuristic
// returns (through the generated CublasLtMatmulHeuristicResult_t) and the
// workspace it asks for, and compares D with the CPU; C must be unchanged.
func TestCublasLtMatmulWithHeuristicAlgoMatchesCPU(t *testing.T) {
	g := newGPU(t)
	needLibrary(t, "cuBLASLt", cublaslt.Load, cublaslt.ErrNoLibrary, cublaslt.LibraryPath)
	v, err := cublaslt.GetVersion()
	check(t, "cublasLtGetVersion", err)
	t.Logf("cuBLASLt version %d", v)

	var h cublaslt.CublasLtHandle_t
	check(t, "cublasLtCreate", cublaslt.Create(&h))
	t.Cleanup(func() {
		if err := cublaslt.Destroy(h); err != nil {
			t.Errorf("cublasLtDestroy: %v", err)
		}
	})
	var desc cublaslt.CublasLtMatmulDesc_t
	check(t, "cublasLtMatmulDescCreate", cublaslt.MatmulDescCreate(&desc, cublas.CUBLAS_COMPUTE_32F, libtypes.CUDA_R_32F))
	t.Cleanup(func() {
		if err := cublaslt.MatmulDescDestroy(desc); err != nil {
			t.Errorf("cublasLtMatmulDescDestroy: %v", err)
		}
	})
	layout := func(rows, cols, ld int) cublaslt.CublasLtMatrixLayout_t {
		var l cublaslt.CublasLtMatrixLayout_t
		check(t, "cublasLtMatrixLayoutCreate", cublaslt.MatrixLayoutCreate(&l, libtypes.CUDA_R_32F, uint64(rows), uint64(cols), int64(ld)))
		t.Cleanup(func() {
			if err := cublaslt.MatrixLayoutDestroy(l); err != nil {
				t.Errorf("cublasLtMatrixLayoutDestroy: %v", err)
			}
		})
		return l
	}
	a, b, c, lda, ldb := gemmOperands(false, false)
	la, lb, lc := layout(gemmM, gemmK, lda), layout(gemmK, gemmN, ldb), layout(gemmM, gemmN, gemmLDC)

	var pref cublaslt.CublasLtMatmulPreference_t
	check(t, "cublasLtMatmulPreferenceCreate", cublaslt.MatmulPreferenceCreate(&pref))
	t.Cleanup(func() {
		if err := cublaslt.MatmulPreferenceDestroy(pref); err != nil {
			t.Errorf("cublasLtMatmulPreferenceDestroy: %v", err)
		}
	})
	maxWorkspace := uint64(4 << 20)
	check(t, "cublasLtMatmulPreferenceSetAttribute", cublaslt.MatmulPreferenceSetAttribute(pref,
		cublaslt.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, unsafe.Pointer(&maxWorkspace), uint64(unsafe.Sizeof(maxWorkspace))))
	var results [4]cublaslt.CublasLtMatmulHeuristicResult_t
	var found int32
	check(t, "cublasLtMatmulAlgoGetHeuristic", cublaslt.MatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref,
		int32(len(results)), &results[0], &found))
	if found < 1 || int(found) > len(results) {
		t.Fatalf("cublasLtMatmulAlgoGetHeuristic: %d algorithms for %d asked", found, len(results))
	}
	best := &results[0]
	if best.State != cublas.CUBLAS_STATUS_SUCCESS || best.WorkspaceSize > maxWorkspace {
		t.Fatalf("cublasLtMatmulAlgoGetHeuristic: first result has state %v, workspace %d (at most %d asked)", best.State, best.WorkspaceSize, maxWorkspace)
	}
	t.Logf("cublasLtMatmulAlgoGetHeuristic: %d algorithms; the first needs %d bytes of workspace, waves %.3g", found, best.WorkspaceSize, best.WavesCount)
	var workspace cu.CUdeviceptr
	if best.WorkspaceSize > 0 {
		workspace = alloc[byte](t, int(best.WorkspaceSize))
	}

	a32, b32, c32 := to32(a), to32(b), to32(c)
	da, db, dc := upload(t, a32), upload(t, b32), upload(t, c32)
	dd := alloc[float32](t, len(c32))
	check(t, "cuMemsetD32", cu.MemsetD32(dd, 0x7fc00000, uint64(len(c32)))) // NaN: unwritten elements show
	alpha, beta := float32(gemmAlpha), float32(gemmBeta)
	check(t, "cublasLtMatmul", cublaslt.Matmul(h, desc, unsafe.Pointer(&alpha), devUnsafe(da), la, devUnsafe(db), lb,
		unsafe.Pointer(&beta), devUnsafe(dc), lc, devUnsafe(dd), lc, &best.Algo, devUnsafe(workspace), best.WorkspaceSize, g.stream))
	g.wait(t)
	got := download[float32](t, dd, len(c32))
	if cAfter := download[float32](t, dc, len(c32)); !slices.Equal(cAfter, c32) {
		t.Fatal("cublasLtMatmul changed C (D is a separate buffer)")
	}
	want, scale := gemmCPU(false, false, gemmM, gemmN, gemmK, gemmAlpha, to64(a32), lda, to64(b32), ldb, gemmBeta, to64(c32), gemmLDC)
	// D's rows past m are not D's elements: the test left them NaN and
	// the CPU's want has C there, so compare the m×n block only.
	for j := range gemmN {
		for i := gemmM; i < gemmLDC; i++ {
			k := i + j*gemmLDC
			got[k], want[k], scale[k] = 0, 0, 0
		}
	}
	worst, at := maxRelErr(got, want, scale, 1e-30)
	if worst > 1e-5 {
		t.Fatalf("cublasLtMatmul: D[%d] = %v, want %v (error %.3g of its scale %.3g, tolerance 1e-5)", at, got[at], want[at], worst, scale[at])
	}
	t.Logf("cublasLtMatmul %dx%dx%d float32, alpha=%g beta=%g, ld=%d: D matches the CPU, largest error %.3g of the element's scale (tolerance 1e-5); D[0]=%v", gemmM, gemmN, gemmK, gemmAlpha, gemmBeta, gemmLDC, worst, got[0])
}
