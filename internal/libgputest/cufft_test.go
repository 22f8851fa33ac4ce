//go:build linux && (amd64 || arm64)

package libgputest

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/gocuda/gocuda/generated/cufft"
)

const fftN = 1024

// newFFTPlan makes a 1-D plan of fftN points on g's stream.
func newFFTPlan(t *testing.T, g *gpu, typ cufft.CufftType, batch int32) cufft.CufftHandle {
	t.Helper()
	needLibrary(t, "cuFFT", cufft.Load, cufft.ErrNoLibrary, cufft.LibraryPath)
	var plan cufft.CufftHandle
	check(t, "cufftPlan1d", cufft.Plan1d(&plan, fftN, typ, batch))
	t.Cleanup(func() {
		if err := cufft.Destroy(plan); err != nil {
			t.Errorf("cufftDestroy: %v", err)
		}
	})
	check(t, "cufftSetStream", cufft.SetStream(plan, g.stream))
	return plan
}

// dft is the discrete Fourier transform of x (e^{-2πi jk/n}), in float64
// on the CPU, the reference for cuFFT's forward transforms.
func dft(x []complex128) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range n {
		var s complex128
		for j, v := range x {
			s += v * cmplx.Rect(1, -2*math.Pi*float64(j*k%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

// maxAbsDiff is max_i |got_i - want_i| and where it is.
func maxAbsDiff(got []complex64, want []complex128) (worst float64, at int) {
	for i := range want {
		if e := cmplx.Abs(complex128(got[i]) - want[i]); e > worst || math.IsNaN(e) {
			worst, at = e, i
		}
	}
	return worst, at
}

// TestCufftC2CForwardMatchesDFTAndInverseOverNRestoresInput transforms a
// random complex64 signal of fftN points with cufftExecC2C forward (out of
// place), compares it with a float64 DFT on the CPU, transforms it back
// (CUFFT_INVERSE, in place) and checks that the result divided by N is the
// input.
func TestCufftC2CForwardMatchesDFTAndInverseOverNRestoresInput(t *testing.T) {
	g := newGPU(t)
	plan := newFFTPlan(t, g, cufft.CUFFT_C2C, 1)
	var v int32
	check(t, "cufftGetVersion", cufft.GetVersion(&v))
	t.Logf("cuFFT version %d", v)

	r := rng()
	x := make([]complex64, fftN)
	x64 := make([]complex128, fftN)
	for i := range x {
		x[i] = complex(float32(2*r.Float64()-1), float32(2*r.Float64()-1))
		x64[i] = complex128(x[i])
	}
	// cufftComplex is bound as cufft.Float2 (float2, 8 bytes), the layout
	// of complex64.
	din, dout := upload(t, x), alloc[complex64](t, fftN)
	check(t, "cufftExecC2C(CUFFT_FORWARD)", cufft.ExecC2C(plan, devPtr[cufft.CufftComplex](din), devPtr[cufft.CufftComplex](dout), cufft.CUFFT_FORWARD))
	g.wait(t)
	spectrum := download[complex64](t, dout, fftN)
	want := dft(x64)
	// Rounding of a float32 FFT: about eps·log2(N)·‖x‖₂; ‖x‖₂ ≈ 26 here.
	const tolFwd = 1e-3
	if worst, at := maxAbsDiff(spectrum, want); worst > tolFwd {
		t.Fatalf("cufftExecC2C forward: X[%d] = %v, the DFT gives %v (|difference| %.3g > %g)", at, spectrum[at], want[at], worst, tolFwd)
	} else {
		t.Logf("cufftExecC2C forward, %d points: matches the CPU DFT within %.3g (tolerance %g); X[0] = %v, X[1] = %v", fftN, worst, tolFwd, spectrum[0], spectrum[1])
	}

	check(t, "cufftExecC2C(CUFFT_INVERSE)", cufft.ExecC2C(plan, devPtr[cufft.CufftComplex](dout), devPtr[cufft.CufftComplex](dout), cufft.CUFFT_INVERSE))
	g.wait(t)
	back := download[complex64](t, dout, fftN)
	for i := range back {
		back[i] /= fftN
	}
	const tolInv = 1e-5
	if worst, at := maxAbsDiff(back, x64); worst > tolInv {
		t.Fatalf("cufftExecC2C inverse/N: x[%d] = %v, want %v (|difference| %.3g > %g)", at, back[at], x[at], worst, tolInv)
	} else {
		t.Logf("cufftExecC2C inverse (in place) / %d restores the input within %.3g (tolerance %g); x[0] = %v, was %v", fftN, worst, tolInv, back[0], x[0])
	}
}

// TestCufftR2CMatchesDFTOfRealSignal transforms a batch of two random real
// signals with cufftExecR2C and compares the N/2+1 coefficients of each
// with a float64 DFT on the CPU.
func TestCufftR2CMatchesDFTOfRealSignal(t *testing.T) {
	g := newGPU(t)
	const batch = 2
	plan := newFFTPlan(t, g, cufft.CUFFT_R2C, batch)
	r := rng()
	x := uniform32(r, fftN*batch)
	const nc = fftN/2 + 1
	din, dout := upload(t, x), alloc[complex64](t, nc*batch)
	check(t, "cufftExecR2C", cufft.ExecR2C(plan, devPtr[cufft.CufftReal](din), devPtr[cufft.CufftComplex](dout)))
	g.wait(t)
	got := download[complex64](t, dout, nc*batch)
	const tol = 1e-3
	for b := range batch {
		x64 := make([]complex128, fftN)
		for i := range x64 {
			x64[i] = complex(float64(x[b*fftN+i]), 0)
		}
		want := dft(x64)[:nc]
		worst, at := maxAbsDiff(got[b*nc:(b+1)*nc], want)
		if worst > tol {
			t.Fatalf("cufftExecR2C, signal %d: X[%d] = %v, the DFT gives %v (|difference| %.3g > %g)", b, at, got[b*nc+at], want[at], worst, tol)
		}
		t.Logf("cufftExecR2C, signal %d of %d, %d points: %d coefficients match the CPU DFT within %.3g (tolerance %g); X[0] = %v, X[N/2] = %v",
			b+1, batch, fftN, nc, worst, tol, got[b*nc], got[b*nc+nc-1])
	}
}
