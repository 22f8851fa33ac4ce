//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
)

// TestLevel1And2 checks AXPY (with a negative increment), SCAL, DOT (its
// result in host and in device memory), NRM2 and GEMV (transposed)
// against the CPU.
func TestLevel1And2(t *testing.T) {
	e := setup(t)
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	y := []float32{10, 20, 30, 40}
	px, py := upload(t, x), upload(t, y)
	alpha := float32(2)
	// y[3-i] += 2·x[2i]: incy -1 walks y from its end.
	if err := cublas.Saxpy(e.h, 4, &alpha, dev[float32](px), 2, dev[float32](py), -1); err != nil {
		t.Fatal(err)
	}
	wantY := []float32{10 + 2*7, 20 + 2*5, 30 + 2*3, 40 + 2*1}
	for i, g := range download[float32](e, py, 4) {
		if g != wantY[i] {
			t.Fatalf("axpy: y[%d] = %v, want %v", i, g, wantY[i])
		}
	}
	half := float32(0.5)
	if err := cublas.Sscal(e.h, 4, &half, dev[float32](py), 1); err != nil {
		t.Fatal(err)
	}
	for i := range wantY {
		wantY[i] *= 0.5
	}
	var dot float32
	if err := cublas.Sdot(e.h, 4, dev[float32](px), 1, dev[float32](py), 1, &dot); err != nil {
		t.Fatal(err)
	}
	if want := 1*wantY[0] + 2*wantY[1] + 3*wantY[2] + 4*wantY[3]; dot != want {
		t.Errorf("dot into host memory = %v, want %v", dot, want)
	}
	var nrm float32
	three4 := upload(t, []float32{3, 4})
	if err := cublas.Snrm2(e.h, 2, dev[float32](three4), 1, &nrm); err != nil {
		t.Fatal(err)
	}
	if nrm != 5 {
		t.Errorf("nrm2 of (3, 4) = %v, want 5", nrm)
	}

	if err := cublas.SetPointerMode(e.h, cublas.CUBLAS_POINTER_MODE_DEVICE); err != nil {
		t.Fatal(err)
	}
	dx, dy := upload(t, []float64{1, -2, 3}), upload(t, []float64{4, 5, 6})
	res := upload(t, []float64{math.NaN()})
	if err := cublas.Ddot(e.h, 3, dev[float64](dx), 1, dev[float64](dy), 1, dev[float64](res)); err != nil {
		t.Fatal(err)
	}
	if got := download[float64](e, res, 1)[0]; got != 4-10+18 {
		t.Errorf("dot into device memory = %v, want 12", got)
	}
	if err := cublas.SetPointerMode(e.h, cublas.CUBLAS_POINTER_MODE_HOST); err != nil {
		t.Fatal(err)
	}
	// y = 2·Aᵀx - y, A 3×2 column-major with lda 4.
	a := small(3, 2, 4, 7)
	pa := upload(t, a.v)
	gx, gy := upload(t, []float64{1, 2, 3}), upload(t, []float64{1, 1})
	two, minus := 2.0, -1.0
	if err := cublas.Dgemv(e.h, cublas.CUBLAS_OP_T, 3, 2, &two, dev[float64](pa), 4, dev[float64](gx), 1, &minus, dev[float64](gy), 1); err != nil {
		t.Fatal(err)
	}
	for j, g := range download[float64](e, gy, 2) {
		want := 2*(a.at(0, j)*1+a.at(1, j)*2+a.at(2, j)*3) - 1
		if g != want {
			t.Errorf("gemv: y[%d] = %v, want %v", j, g, want)
		}
	}
}
