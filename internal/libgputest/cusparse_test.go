//go:build linux && (amd64 || arm64)

package libgputest

import (
	"math"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// TestCusparseCsrSpMVMatchesCPU runs the generic API's cusparseSpMV,
// y = alpha·A·x + beta·y with A a random 50×40 CSR matrix (32-bit indices,
// zero-based, float32, one row empty), on g's stream with the buffer
// cusparseSpMV_bufferSize asks for, and compares y with the CPU.
func TestCusparseCsrSpMVMatchesCPU(t *testing.T) {
	g := newGPU(t)
	needLibrary(t, "cuSPARSE", cusparse.Load, cusparse.ErrNoLibrary, cusparse.LibraryPath)
	var h cusparse.CusparseHandle_t
	check(t, "cusparseCreate", cusparse.Create(&h))
	t.Cleanup(func() {
		if err := cusparse.Destroy(h); err != nil {
			t.Errorf("cusparseDestroy: %v", err)
		}
	})
	check(t, "cusparseSetStream", cusparse.SetStream(h, g.stream))
	var v int32
	check(t, "cusparseGetVersion", cusparse.GetVersion(h, &v))
	t.Logf("cuSPARSE version %d", v)

	const rows, cols, emptyRow = 50, 40, 7
	r := rng()
	rowPtr := []int32{0}
	var colInd []int32
	var vals []float32
	for i := range rows {
		for j := range cols {
			if i != emptyRow && r.Float64() < 0.2 {
				colInd = append(colInd, int32(j))
				vals = append(vals, float32(2*r.Float64()-1))
			}
		}
		rowPtr = append(rowPtr, int32(len(colInd)))
	}
	nnz := len(vals)
	x, y0 := uniform32(r, cols), uniform32(r, rows)
	const alpha, beta = float32(2), float32(0.5)

	dRow, dCol, dVal := upload(t, rowPtr), upload(t, colInd), upload(t, vals)
	dx, dy := upload(t, x), upload(t, y0)
	var mat cusparse.CusparseSpMatDescr_t
	check(t, "cusparseCreateCsr", cusparse.CreateCsr(&mat, rows, cols, int64(nnz), devUnsafe(dRow), devUnsafe(dCol), devUnsafe(dVal),
		cusparse.CUSPARSE_INDEX_32I, cusparse.CUSPARSE_INDEX_32I, cusparse.CUSPARSE_INDEX_BASE_ZERO, libtypes.CUDA_R_32F))
	t.Cleanup(func() {
		if err := cusparse.DestroySpMat(constSpMat(mat)); err != nil {
			t.Errorf("cusparseDestroySpMat: %v", err)
		}
	})
	var vx, vy cusparse.CusparseDnVecDescr_t
	check(t, "cusparseCreateDnVec(x)", cusparse.CreateDnVec(&vx, cols, devUnsafe(dx), libtypes.CUDA_R_32F))
	check(t, "cusparseCreateDnVec(y)", cusparse.CreateDnVec(&vy, rows, devUnsafe(dy), libtypes.CUDA_R_32F))
	t.Cleanup(func() {
		for _, vec := range []cusparse.CusparseDnVecDescr_t{vx, vy} {
			if err := cusparse.DestroyDnVec(constDnVec(vec)); err != nil {
				t.Errorf("cusparseDestroyDnVec: %v", err)
			}
		}
	})

	a, b := alpha, beta
	var size uint64
	check(t, "cusparseSpMV_bufferSize", cusparse.SpMV_bufferSize(h, cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE, unsafe.Pointer(&a), constSpMat(mat), constDnVec(vx),
		unsafe.Pointer(&b), vy, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPMV_ALG_DEFAULT, &size))
	buf := alloc[byte](t, int(size))
	check(t, "cusparseSpMV", cusparse.SpMV(h, cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE, unsafe.Pointer(&a), constSpMat(mat), constDnVec(vx),
		unsafe.Pointer(&b), vy, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPMV_ALG_DEFAULT, devUnsafe(buf)))
	g.wait(t)
	got := download[float32](t, dy, rows)

	var worst float64
	for i := range rows {
		var s, scale float64
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			term := float64(vals[p]) * float64(x[colInd[p]])
			s += term
			scale += math.Abs(term)
		}
		want := float64(alpha)*s + float64(beta)*float64(y0[i])
		scale = float64(alpha)*scale + math.Abs(float64(beta)*float64(y0[i]))
		e := math.Abs(float64(got[i])-want) / max(scale, 1e-30)
		if e > 1e-5 {
			t.Fatalf("cusparseSpMV: y[%d] = %v, want %v (error %.3g of its scale %.3g, tolerance 1e-5)", i, got[i], want, e, scale)
		}
		worst = max(worst, e)
	}
	if want := beta * y0[emptyRow]; got[emptyRow] != want {
		t.Fatalf("cusparseSpMV: y[%d] (an empty row) = %v, want beta·y = %v", emptyRow, got[emptyRow], want)
	}
	t.Logf("cusparseSpMV CSR %dx%d, %d nonzeros, alpha=%g beta=%g, %d bytes of buffer: y matches the CPU, largest error %.3g of the element's scale (tolerance 1e-5); y[0]=%v, y[%d]=%v (empty row)",
		rows, cols, nnz, alpha, beta, size, worst, got[0], emptyRow, got[emptyRow])
}
