//go:build linux && (amd64 || arm64)

package fft_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/fft"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cufft"
)

// newPlan makes a plan of 1 to 3 dimensions on s, skipping where there is
// no cuFFT (unless GOCUDA_TEST_LIBS=required).
func newPlan(t *testing.T, s *cuda.Stream, kind fft.Kind, batch int, dims ...int) *fft.Plan {
	t.Helper()
	var p *fft.Plan
	var err error
	switch len(dims) {
	case 1:
		p, err = fft.NewPlan1D(s, dims[0], kind, batch)
	case 2:
		p, err = fft.NewPlan2D(s, dims[0], dims[1], kind, batch)
	default:
		p, err = fft.NewPlan3D(s, dims[0], dims[1], dims[2], kind, batch)
	}
	if errors.Is(err, cufft.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuFFT library: %v", err)
	}
	if err != nil {
		t.Fatalf("%v plan %v batch %d: %v", kind, dims, batch, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// upload copies x to new device memory as complex64 or complex128.
func upload(t *testing.T, ctx *cuda.Context, x []complex128, double bool) *cuda.DeviceMemory {
	t.Helper()
	var m *cuda.DeviceMemory
	var err error
	if double {
		m, err = cuda.AllocFrom(ctx, unsafe.Slice((*float64)(unsafe.Pointer(&x[0])), 2*len(x)))
	} else {
		f := make([]float32, 2*len(x))
		for i, v := range x {
			f[2*i], f[2*i+1] = float32(real(v)), float32(imag(v))
		}
		m, err = cuda.AllocFrom(ctx, f)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// uploadReal copies x to new device memory as float32 or float64, in
// memory of at least bytes.
func uploadReal(t *testing.T, ctx *cuda.Context, x []float64, double bool, bytes int) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.Alloc(ctx, bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if double {
		err = cuda.CopyToDevice(m, x)
	} else {
		f := make([]float32, len(x))
		for i, v := range x {
			f[i] = float32(v)
		}
		err = cuda.CopyToDevice(m, f)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// download synchronizes s and copies n complex numbers back from m.
func download(t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int, double bool) []complex128 {
	t.Helper()
	f := downloadReal(t, s, m, 2*n, double)
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(f[2*i], f[2*i+1])
	}
	return x
}

// downloadReal synchronizes s and copies n reals back from m.
func downloadReal(t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int, double bool) []float64 {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	if double {
		if err := cuda.CopyFromDevice(out, m); err != nil {
			t.Fatal(err)
		}
		return out
	}
	f := make([]float32, n)
	if err := cuda.CopyFromDevice(f, m); err != nil {
		t.Fatal(err)
	}
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// dft is the discrete Fourier transform of each of the batch arrays of
// sizes dims (slowest first) in x, in float64 on the CPU: the 1-D
// transform along each axis in turn, with e^(sign·2πi·jk/n).
func dft(x []complex128, dims []int, sign float64) []complex128 {
	out := append([]complex128(nil), x...)
	inner := 1
	for a := len(dims) - 1; a >= 0; a-- {
		d := dims[a]
		w := make([]complex128, d)
		for k := range w {
			w[k] = cmplx.Rect(1, sign*2*math.Pi*float64(k)/float64(d))
		}
		line := make([]complex128, d)
		for start := range len(out) {
			// start is the first element of a line along axis a.
			if (start/inner)%d != 0 {
				continue
			}
			for j := range d {
				line[j] = out[start+j*inner]
			}
			for k := range d {
				var s complex128
				for j, v := range line {
					s += v * w[j*k%d]
				}
				out[start+k*inner] = s
			}
		}
		inner *= d
	}
	return out
}

// half keeps the n/2+1 coefficients of each row along the last dimension
// that a real-to-complex transform gives.
func half(x []complex128, dims []int) []complex128 {
	last := dims[len(dims)-1]
	h := last/2 + 1
	var out []complex128
	for r := 0; r < len(x); r += last {
		out = append(out, x[r:r+h]...)
	}
	return out
}

// relErr is max |got−want| over max |want|, and where.
func relErr(got, want []complex128) (float64, int) {
	var worst, scale float64
	at := 0
	for i := range want {
		scale = max(scale, cmplx.Abs(want[i]))
		if e := cmplx.Abs(got[i] - want[i]); e > worst || math.IsNaN(e) {
			worst, at = e, i
		}
	}
	return worst / max(scale, 1e-300), at
}

func randomComplex(r *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(2*r.Float64()-1, 2*r.Float64()-1)
	}
	return x
}

func toComplex(x []float64) []complex128 {
	c := make([]complex128, len(x))
	for i, v := range x {
		c[i] = complex(v, 0)
	}
	return c
}

// tolerances of a transform and of a round trip, by precision.
func tols(double bool) (fwd, back float64) {
	if double {
		return 1e-13, 1e-12
	}
	return 1e-5, 1e-5
}

var shapes = [][]int{{1000}, {1024}, {12, 10}, {6, 5, 8}}

// TestComplexForwardMatchesDFTAndInverseRestoresInput transforms random
// batches (C2C and Z2Z, 1-, 2- and 3-D) forward out of place, compares
// them with a DFT on the CPU, transforms them back in place and checks
// that the result over n is the input.
func TestComplexForwardMatchesDFTAndInverseRestoresInput(t *testing.T) {
	ctx, s := libtest.Stream(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []fft.Kind{fft.C2C, fft.Z2Z} {
		double := kind == fft.Z2Z
		tolF, tolB := tols(double)
		for _, dims := range shapes {
			const batch = 3
			p := newPlan(t, s, kind, batch, dims...)
			n := prod(dims)
			x := randomComplex(r, n*batch)
			in := upload(t, ctx, x, double)
			out, err := cuda.Alloc(ctx, p.OutBytes())
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if err := p.Exec(in, out, fft.Forward); err != nil {
				t.Fatal(err)
			}
			got := download(t, s, out, n*batch, double)
			for b := range batch {
				want := dft(x[b*n:(b+1)*n], dims, -1)
				if e, at := relErr(got[b*n:(b+1)*n], want); e > tolF {
					t.Fatalf("%v %v, transform %d: X[%d] = %v, the DFT gives %v (relative error %.3g > %g)", kind, dims, b, at, got[b*n+at], want[at], e, tolF)
				}
			}
			if err := p.Exec(out, out, fft.Inverse); err != nil {
				t.Fatal(err)
			}
			back := download(t, s, out, n*batch, double)
			for i := range back {
				back[i] /= complex(float64(n), 0)
			}
			if e, at := relErr(back, x); e > tolB {
				t.Fatalf("%v %v: inverse/n: x[%d] = %v, want %v (relative error %.3g > %g)", kind, dims, at, back[at], x[at], e, tolB)
			}
			t.Logf("%v %v batch %d (work area %d bytes): forward matches the CPU DFT, inverse in place / %d restores the input", kind, dims, batch, p.WorkBytes(), n)
		}
	}
}

// TestRealForwardMatchesDFTAndInverseRestoresInput does the same for the
// real transforms: R2C (D2Z) against the half of the CPU DFT, then C2R
// (Z2D) back, out of place and in place with padded rows.
func TestRealForwardMatchesDFTAndInverseRestoresInput(t *testing.T) {
	ctx, s := libtest.Stream(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, kinds := range [][2]fft.Kind{{fft.R2C, fft.C2R}, {fft.D2Z, fft.Z2D}} {
		double := kinds[0] == fft.D2Z
		tolF, tolB := tols(double)
		for _, dims := range shapes {
			for _, inPlace := range []bool{false, true} {
				const batch = 2
				fwd := newPlan(t, s, kinds[0], batch, dims...)
				inv := newPlan(t, s, kinds[1], batch, dims...)
				n := prod(dims)
				last := dims[len(dims)-1]
				rows, h := n/last, last/2+1
				x := make([]float64, n*batch)
				for i := range x {
					x[i] = 2*r.Float64() - 1
				}
				// In place, each row of last reals is padded to 2h.
				lay := func(v []float64) []float64 {
					if !inPlace {
						return v
					}
					p := make([]float64, rows*batch*2*h)
					for row := range rows * batch {
						copy(p[row*2*h:], v[row*last:(row+1)*last])
					}
					return p
				}
				unlay := func(p []float64) []float64 {
					if !inPlace {
						return p
					}
					v := make([]float64, n*batch)
					for row := range rows * batch {
						copy(v[row*last:(row+1)*last], p[row*2*h:])
					}
					return v
				}
				in := uploadReal(t, ctx, lay(x), double, max(fwd.InBytes(), fwd.OutBytes()))
				out := in
				if !inPlace {
					out = uploadReal(t, ctx, []float64{0}, double, fwd.OutBytes())
				}
				if err := fwd.Exec(in, out, fft.Forward); err != nil {
					t.Fatal(err)
				}
				got := download(t, s, out, rows*h*batch, double)
				for b := range batch {
					want := half(dft(toComplex(x[b*n:(b+1)*n]), dims, -1), dims)
					if e, at := relErr(got[b*rows*h:(b+1)*rows*h], want); e > tolF {
						t.Fatalf("%v %v (in place %v), transform %d: X[%d] = %v, the DFT gives %v (relative error %.3g > %g)", kinds[0], dims, inPlace, b, at, got[b*rows*h+at], want[at], e, tolF)
					}
				}
				// out → in, out of place: C2R overwrites its input.
				if err := inv.Exec(out, in, fft.Inverse); err != nil {
					t.Fatal(err)
				}
				backBuf := downloadReal(t, s, in, len(lay(x)), double)
				back := toComplex(unlay(backBuf))
				for i := range back {
					back[i] /= complex(float64(n), 0)
				}
				if e, at := relErr(back, toComplex(x)); e > tolB {
					t.Fatalf("%v %v (in place %v): inverse/n: x[%d] = %v, want %v (relative error %.3g > %g)", kinds[1], dims, inPlace, at, back[at], x[at], e, tolB)
				}
				t.Logf("%v then %v %v batch %d, in place %v: forward matches the CPU DFT's %d×%d coefficients, inverse / %d restores the input", kinds[0], kinds[1], dims, batch, inPlace, rows, h, n)
			}
		}
	}
}

// TestExecFromManyGoroutines shares one plan, and so one stream and work
// area, between goroutines, each with its own clone and memory: run it
// with -race.
func TestExecFromManyGoroutines(t *testing.T) {
	ctx, s := libtest.Stream(t)
	const n, batch = 512, 4
	p := newPlan(t, s, fft.C2C, batch, n)
	type job struct {
		x       []complex128
		in, out *cuda.DeviceMemory
	}
	const workers, rounds = 8, 10
	jobs := make([][]job, workers)
	r := rand.New(rand.NewPCG(5, 6))
	for w := range jobs {
		for range rounds {
			x := randomComplex(r, n*batch)
			out, err := cuda.Alloc(ctx, p.OutBytes())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { out.Close() })
			jobs[w] = append(jobs[w], job{x, upload(t, ctx, x, false), out})
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := p.Clone()
			if err != nil {
				t.Error(err)
				return
			}
			defer mine.Close()
			for _, j := range jobs[w] {
				if err := mine.Exec(j.in, j.out, fft.Forward); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range jobs {
		for i, j := range jobs[w] {
			got := download(t, s, j.out, n*batch, false)
			for b := range batch {
				want := dft(j.x[b*n:(b+1)*n], []int{n}, -1)
				if e, at := relErr(got[b*n:(b+1)*n], want); e > 1e-5 {
					t.Fatalf("goroutine %d, transform %d.%d: X[%d] = %v, want %v (relative error %.3g)", w, i, b, at, got[b*n+at], want[at], e)
				}
			}
		}
	}
	t.Logf("%d goroutines × %d transforms on one plan match the CPU DFT", workers, rounds)
}

func TestClosedPlan(t *testing.T) {
	ctx, s := libtest.Stream(t)
	p := newPlan(t, s, fft.Z2Z, 1, 64)
	c, err := p.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind() != fft.Z2Z || c.Batch() != 1 || fmt.Sprint(c.Sizes()) != "[64]" || c.InBytes() != 1024 || c.OutBytes() != 1024 {
		t.Fatalf("clone: %v %v batch %d, %d and %d bytes", c.Kind(), c.Sizes(), c.Batch(), c.InBytes(), c.OutBytes())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := cuda.Alloc(ctx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := c.Exec(m, m, fft.Forward); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Exec after Close = %v, want ErrClosed", err)
	}
	if c.Stream() != nil || p.Stream() == nil {
		t.Fatal("Stream of the closed and the open plan")
	}
	// The plan outlives the stream it was made on.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Exec(m, m, fft.Forward); err != nil {
		t.Fatalf("Exec after the user's stream was closed: %v", err)
	}
	if err := p.Stream().Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func TestNewPlanChecksBeforeCuFFT(t *testing.T) {
	for name, f := range map[string]func() (*fft.Plan, error){
		"kind":  func() (*fft.Plan, error) { return fft.NewPlan1D(nil, 8, 0, 1) },
		"size":  func() (*fft.Plan, error) { return fft.NewPlan2D(nil, 8, 0, fft.C2C, 1) },
		"batch": func() (*fft.Plan, error) { return fft.NewPlan3D(nil, 2, 2, 2, fft.R2C, 0) },
	} {
		if _, err := f(); err == nil || errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s: %v, want an error about the %s", name, err, name)
		}
	}
	if _, err := fft.NewPlan1D(nil, 8, fft.C2C, 1); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("NewPlan1D on a nil stream = %v, want ErrClosed", err)
	}
}

// TestNewPlanWithoutCuFFT runs in a child process with GOCUDA_LIBCUFFT
// pointing nowhere: NewPlan1D fails with an error matching
// cufft.ErrNoLibrary.
func TestNewPlanWithoutCuFFT(t *testing.T) {
	if os.Getenv("GOCUDA_FFT_CHILD") != "" {
		ctx := libtest.Context(t)
		s, err := cuda.NewStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := cuda.LiveObjects()
		_, err = fft.NewPlan1D(s, 64, fft.C2C, 1)
		if !errors.Is(err, cufft.ErrNoLibrary) || !strings.Contains(err.Error(), "/nonexistent/libcufft.so") {
			t.Fatalf("NewPlan1D = %v, want cufft.ErrNoLibrary naming the path", err)
		}
		if after := cuda.LiveObjects(); after != before {
			t.Fatalf("live objects %+v after, %+v before", after, before)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewPlanWithoutCuFFT$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_FFT_CHILD=1", cufft.LibraryEnv+"=/nonexistent/libcufft.so")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("child skipped:\n%s", out)
	}
}
