//go:build linux && (amd64 || arm64)

package libgputest

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// TestCusolverDnSgetrfSgetrsSolvesForKnownX factors a 16×16 float32 matrix
// with cusolverDnSgetrf (partial pivoting, forced by A[0,0] = 0) using the
// workspace cusolverDnSgetrf_bufferSize asks for, solves A·X = B for two
// right-hand sides with cusolverDnSgetrs, all on g's stream, and checks X
// against the known solution the CPU made B from.
func TestCusolverDnSgetrfSgetrsSolvesForKnownX(t *testing.T) {
	g := newGPU(t)
	needLibrary(t, "cuSOLVER", cusolver.Load, cusolver.ErrNoLibrary, cusolver.LibraryPath)
	var v int32
	check(t, "cusolverGetVersion", cusolver.GetVersion(&v))
	t.Logf("cuSOLVER version %d", v)
	var h cusolver.CusolverDnHandle_t
	check(t, "cusolverDnCreate", cusolver.DnCreate(&h))
	t.Cleanup(func() {
		if err := cusolver.DnDestroy(h); err != nil {
			t.Errorf("cusolverDnDestroy: %v", err)
		}
	})
	check(t, "cusolverDnSetStream", cusolver.DnSetStream(h, g.stream))

	const n, nrhs = 16, 2
	r := rng()
	a := uniform32(r, n*n) // column-major, lda = n
	for i := range n {
		a[i+i*n] += 4
	}
	a[0] = 0 // no LU without a row exchange
	x := uniform32(r, n*nrhs)
	b := make([]float32, n*nrhs)
	for c := range nrhs {
		for i := range n {
			var s float64
			for j := range n {
				s += float64(a[i+j*n]) * float64(x[j+c*n])
			}
			b[i+c*n] = float32(s)
		}
	}

	dA, dB := upload(t, a), upload(t, b)
	dIpiv, dInfo := alloc[int32](t, n), alloc[int32](t, 1)
	var lwork int32
	check(t, "cusolverDnSgetrf_bufferSize", cusolver.DnSgetrf_bufferSize(h, n, n, devPtr[float32](dA), n, &lwork))
	work := alloc[float32](t, int(lwork))
	check(t, "cusolverDnSgetrf", cusolver.DnSgetrf(h, n, n, devPtr[float32](dA), n, devPtr[float32](work), devPtr[int32](dIpiv), devPtr[int32](dInfo)))
	g.wait(t)
	if info := download[int32](t, dInfo, 1)[0]; info != 0 {
		t.Fatalf("cusolverDnSgetrf: devInfo = %d, want 0", info)
	}
	ipiv := download[int32](t, dIpiv, n)
	for i, p := range ipiv {
		if p < int32(i+1) || p > n {
			t.Fatalf("cusolverDnSgetrf: ipiv[%d] = %d, want a row in [%d, %d] (1-based)", i, p, i+1, n)
		}
	}
	if ipiv[0] == 1 {
		t.Fatal("cusolverDnSgetrf: ipiv[0] = 1, but A[0,0] = 0 needs a row exchange")
	}
	check(t, "cusolverDnSgetrs", cusolver.DnSgetrs(h, cublas.CUBLAS_OP_N, n, nrhs, devPtr[float32](dA), n, devPtr[int32](dIpiv), devPtr[float32](dB), n, devPtr[int32](dInfo)))
	g.wait(t)
	if info := download[int32](t, dInfo, 1)[0]; info != 0 {
		t.Fatalf("cusolverDnSgetrs: devInfo = %d, want 0", info)
	}
	got := download[float32](t, dB, n*nrhs)
	var worst float64
	for i := range got {
		e := math.Abs(float64(got[i]) - float64(x[i]))
		if e > 1e-4 {
			t.Fatalf("cusolverDnSgetrs: x[%d] (column %d) = %v, want %v (|difference| %.3g > 1e-4)", i%n, i/n, got[i], x[i], e)
		}
		worst = max(worst, e)
	}
	t.Logf("cusolverDnSgetrf+Sgetrs %dx%d, %d right-hand sides, %d floats of workspace, ipiv[:4] = %v: X matches the known solution within %.3g (tolerance 1e-4); x[0] = %v, want %v",
		n, n, nrhs, lwork, ipiv[:4], worst, got[0], x[0])
}
