//go:build linux && (amd64 || arm64)

package libgputest

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// The GEMMs' shape: C (m×n) = alpha·op(A) (m×k) · op(B) (k×n) + beta·C,
// column-major, with C's leading dimension larger than m to catch an ldc
// that is not passed through.
const (
	gemmM, gemmN, gemmK = 64, 48, 32
	gemmLDC             = gemmM + 3
	gemmAlpha           = 1.5
	gemmBeta            = -0.5
)

// newCublas creates a cuBLAS handle whose work goes to g's stream.
func newCublas(t *testing.T, g *gpu) cublas.CublasHandle_t {
	t.Helper()
	needLibrary(t, "cuBLAS", cublas.Load, cublas.ErrNoLibrary, cublas.LibraryPath)
	var h cublas.CublasHandle_t
	check(t, "cublasCreate", cublas.Create(&h))
	t.Cleanup(func() {
		if err := cublas.Destroy(h); err != nil {
			t.Errorf("cublasDestroy: %v", err)
		}
	})
	check(t, "cublasSetStream", cublas.SetStream(h, g.stream))
	var v int32
	check(t, "cublasGetVersion", cublas.GetVersion(h, &v))
	t.Logf("cuBLAS version %d", v)
	return h
}

// gemmOperands is A (m×k, or k×m when transA), B (k×n, or n×k when
// transB) and C (ldc×n), random, with their leading dimensions.
func gemmOperands(transA, transB bool) (a, b, c []float64, lda, ldb int) {
	r := rng()
	lda, ldb = gemmM, gemmK
	if transA {
		lda = gemmK
	}
	if transB {
		ldb = gemmN
	}
	a = to64(uniform32(r, gemmM*gemmK))
	b = to64(uniform32(r, gemmK*gemmN))
	c = to64(uniform32(r, gemmLDC*gemmN))
	return a, b, c, lda, ldb
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// TestCublasSgemmOnStreamMatchesCPU runs cublasSgemm (A·B, no transposes)
// on a handle bound to a stream and compares it with a float64 GEMM on the
// CPU: each element within 1e-5 of the sum of the magnitudes of its terms.
func TestCublasSgemmOnStreamMatchesCPU(t *testing.T) {
	g := newGPU(t)
	h := newCublas(t, g)
	a, b, c, lda, ldb := gemmOperands(false, false)
	// float32 data, so that the reference sees exactly the GPU's inputs.
	a32, b32, c32 := to32(a), to32(b), to32(c)
	da, db, dc := upload(t, a32), upload(t, b32), upload(t, c32)
	alpha, beta := float32(gemmAlpha), float32(gemmBeta)
	check(t, "cublasSgemm", cublas.Sgemm(h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, gemmM, gemmN, gemmK,
		&alpha, devPtr[float32](da), int32(lda), devPtr[float32](db), int32(ldb), &beta, devPtr[float32](dc), gemmLDC))
	g.wait(t)
	got := download[float32](t, dc, len(c32))
	want, scale := gemmCPU(false, false, gemmM, gemmN, gemmK, gemmAlpha, to64(a32), lda, to64(b32), ldb, gemmBeta, to64(c32), gemmLDC)
	checkGEMM(t, "cublasSgemm", got, want, scale, 1e-5)
}

// TestCublasDgemmTransposedAMatchesCPU runs cublasDgemm with A transposed
// (CUBLAS_OP_T) against the CPU, within 1e-13 of each element's scale.
func TestCublasDgemmTransposedAMatchesCPU(t *testing.T) {
	g := newGPU(t)
	h := newCublas(t, g)
	a, b, c, lda, ldb := gemmOperands(true, false)
	da, db, dc := upload(t, a), upload(t, b), upload(t, c)
	alpha, beta := float64(gemmAlpha), float64(gemmBeta)
	check(t, "cublasDgemm", cublas.Dgemm(h, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, gemmM, gemmN, gemmK,
		&alpha, devPtr[float64](da), int32(lda), devPtr[float64](db), int32(ldb), &beta, devPtr[float64](dc), gemmLDC))
	g.wait(t)
	got := download[float64](t, dc, len(c))
	want, scale := gemmCPU(true, false, gemmM, gemmN, gemmK, gemmAlpha, a, lda, b, ldb, gemmBeta, c, gemmLDC)
	checkGEMM(t, "cublasDgemm(OP_T, OP_N)", got, want, scale, 1e-13)
}

// TestCublasGemmExR32FTransposedBMatchesCPU runs cublasGemmEx with
// libtypes.CUDA_R_32F operands, CUBLAS_COMPUTE_32F and B transposed, so
// that a value of package libtypes passes through a cuBLAS binding.
func TestCublasGemmExR32FTransposedBMatchesCPU(t *testing.T) {
	g := newGPU(t)
	h := newCublas(t, g)
	a, b, c, lda, ldb := gemmOperands(false, true)
	a32, b32, c32 := to32(a), to32(b), to32(c)
	da, db, dc := upload(t, a32), upload(t, b32), upload(t, c32)
	alpha, beta := float32(gemmAlpha), float32(gemmBeta)
	r32 := libtypes.CUDA_R_32F
	check(t, "cublasGemmEx", cublas.GemmEx(h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T, gemmM, gemmN, gemmK,
		unsafe.Pointer(&alpha), devUnsafe(da), r32, int32(lda), devUnsafe(db), r32, int32(ldb),
		unsafe.Pointer(&beta), devUnsafe(dc), r32, gemmLDC, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT))
	g.wait(t)
	got := download[float32](t, dc, len(c32))
	want, scale := gemmCPU(false, true, gemmM, gemmN, gemmK, gemmAlpha, to64(a32), lda, to64(b32), ldb, gemmBeta, to64(c32), gemmLDC)
	checkGEMM(t, "cublasGemmEx(CUDA_R_32F, OP_N, OP_T)", got, want, scale, 1e-5)
}

// checkGEMM fails the test if an element of got is further than tol·scale
// from want. The rows of C past m (ldc > m) must be untouched: want holds
// C's input there.
func checkGEMM[T float32 | float64](t *testing.T, what string, got []T, want, scale []float64, tol float64) {
	t.Helper()
	for j := range gemmN {
		for i := gemmM; i < gemmLDC; i++ {
			if k := i + j*gemmLDC; float64(got[k]) != want[k] {
				t.Fatalf("%s wrote C[%d] (row %d ≥ m=%d of column %d): %v, was %v", what, k, i, gemmM, j, got[k], want[k])
			}
		}
	}
	worst, at := maxRelErr(got, want, scale, 1e-30)
	if worst > tol {
		t.Fatalf("%s: C[%d] = %v, want %v (error %.3g of its scale %.3g, tolerance %g)", what, at, got[at], want[at], worst, scale[at], tol)
	}
	t.Logf("%s %dx%dx%d, alpha=%g beta=%g, ldc=%d: matches the CPU, largest error %.3g of the element's scale (tolerance %g); C[0]=%v C[last]=%v",
		what, gemmM, gemmN, gemmK, gemmAlpha, gemmBeta, gemmLDC, worst, tol, got[0], got[gemmM-1+(gemmN-1)*gemmLDC])
}
