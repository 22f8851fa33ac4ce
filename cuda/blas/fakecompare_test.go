//go:build linux && (amd64 || arm64)

package blas_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cublas"
)

// fakeChildEnv names, in the child process of TestFakeMatchesRealLibrary,
// the file it writes its results to; TestMain sets the fake driver and
// the fake cuBLAS up there.
const fakeChildEnv = "GOCUDA_BLAS_FAKE_CHILD"

// comparison is one computation of TestFakeMatchesRealLibrary: its
// result, and the largest difference allowed, relative to the largest
// magnitude of the real library's result.
type comparison struct {
	Out []float64
	Tol float64
}

// TestFakeMatchesRealLibrary runs the same computations, on the same
// inputs, with the real cuBLAS on a GPU and, in a child process of this
// test binary, with the fake driver and the fake cuBLAS, and compares the
// results: GEMMs of float32 and float64 with every layout (transposes),
// a batch, cuBLASLt multiplies of bfloat16 with a bias and GELU, of
// float16 with a bias and ReLU and of float32 in TF32, and AXPY and DOT.
// The tolerances allow for the GPU's float32 accumulation in its own
// order (the fake sums in double) and for TF32's tensor-core arithmetic.
// Without a GPU it skips: there the other tests check the fake against
// the CPU.
func TestFakeMatchesRealLibrary(t *testing.T) {
	if out := os.Getenv(fakeChildEnv); out != "" {
		data, err := json.Marshal(fakeComparisons(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if cudatest.Active() {
		t.Skip("compares the fake cuBLAS with the real one on a GPU; without one, the other tests check the fake against the CPU")
	}
	if err := cublas.Load(); err != nil {
		libtest.Unavailable(t, "no cuBLAS library: %v", err)
	}
	// The child builds the fakes with the C compiler, unless
	// GOCUDA_TEST_FAKE_TMPDIR names a directory that holds them built
	// (the TMPDIR of a process that built them: cbuild reuses a build).
	prebuilt := os.Getenv("GOCUDA_TEST_FAKE_TMPDIR")
	if cc := strings.Fields(os.Getenv("CC") + " gcc"); prebuilt == "" {
		if _, err := exec.LookPath(cc[0]); err != nil {
			libtest.Unavailable(t, "no C compiler (%s) to build the fake driver and cuBLAS, and no GOCUDA_TEST_FAKE_TMPDIR: %v", cc[0], err)
		}
	}
	real := fakeComparisons(t)
	out := filepath.Join(t.TempDir(), "fake.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeMatchesRealLibrary$", "-test.v")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOCUDA_LIBCUDA", cublas.LibraryEnv, "GOCUDA_LIBCUBLASLT", "LD_PRELOAD":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, fakeChildEnv+"="+out)
	if prebuilt != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+prebuilt)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child on the fake driver: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var fake map[string]comparison
	if err := json.Unmarshal(data, &fake); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(real))
	for name := range real {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r, f := real[name], fake[name]
		if len(f.Out) != len(r.Out) {
			t.Errorf("%s: the fake gave %d elements, the real library %d", name, len(f.Out), len(r.Out))
			continue
		}
		scale := 0.0
		for _, v := range r.Out {
			scale = math.Max(scale, math.Abs(v))
		}
		worst := 0.0
		for i := range r.Out {
			d := math.Abs(f.Out[i] - r.Out[i])
			if math.IsNaN(d) {
				d = math.Inf(1)
			}
			worst = math.Max(worst, d)
		}
		if worst > r.Tol*math.Max(scale, 1) {
			t.Errorf("%s: the fake differs from the real library by up to %g (largest magnitude %g, tolerance %g of it)", name, worst, scale, r.Tol)
		}
		t.Logf("%s: %d elements, largest difference %g of magnitude %g", name, len(r.Out), worst, scale)
	}
}

// fakeComparisons computes every case of TestFakeMatchesRealLibrary on
// this process's driver and cuBLAS, from inputs that depend only on a seed.
func fakeComparisons(t *testing.T) map[string]comparison {
	ctx := libtest.Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := blas.New(s)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lt, err := blas.NewLt(s)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	r := rand.New(rand.NewPCG(42, 7))
	normals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	res := map[string]comparison{}
	read32 := func(m *cuda.DeviceMemory, n int) []float64 {
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		v := make([]float32, n)
		if err := cuda.CopyFromDevice(v, m); err != nil {
			t.Fatal(err)
		}
		out := make([]float64, n)
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}

	const m, k, n = 37, 29, 23
	for _, c := range []struct {
		name             string
		aT, bT, cColumns bool
	}{{"NN", false, false, false}, {"TN", true, false, false}, {"NT", false, true, false}, {"TT", true, true, true}} {
		a := blas.Matrix{Rows: m, Cols: k}
		if c.aT {
			a = blas.Matrix{Rows: k, Cols: m}
		}
		b := blas.Matrix{Rows: k, Cols: n}
		if c.bT {
			b = blas.Matrix{Rows: n, Cols: k}
		}
		a.Mem, b.Mem = upload(t, ctx, normals(m*k)), upload(t, ctx, normals(k*n))
		if c.aT {
			a = a.T()
		}
		if c.bT {
			b = b.T()
		}
		cm := upload(t, ctx, normals(m*n))
		out := blas.Matrix{Mem: cm, Rows: m, Cols: n}
		if c.cColumns {
			out.Layout = blas.ColMajor
		}
		if err := blas.Gemm[float32](h, 1.5, a, b, 0.5, out); err != nil {
			t.Fatal(err)
		}
		res["sgemm "+c.name] = comparison{read32(cm, m*n), 1e-5}
	}

	// float64, A transposed, C column-major.
	a64, b64, c64 := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
	for _, v := range [][]float64{a64, b64, c64} {
		for i := range v {
			v[i] = r.NormFloat64()
		}
	}
	da, db, dc := upload(t, ctx, a64), upload(t, ctx, b64), upload(t, ctx, c64)
	if err := blas.Gemm[float64](h, -0.75, blas.Matrix{Mem: da, Rows: k, Cols: m}.T(), blas.Matrix{Mem: db, Rows: k, Cols: n},
		2, blas.Matrix{Mem: dc, Rows: m, Cols: n, Layout: blas.ColMajor}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got64 := make([]float64, m*n)
	if err := cuda.CopyFromDevice(got64, dc); err != nil {
		t.Fatal(err)
	}
	res["dgemm TN column-major C"] = comparison{got64, 1e-12}

	// A batch of 4 with one shared B.
	const batch = 4
	ba, bb, bc := upload(t, ctx, normals(batch*m*k)), upload(t, ctx, normals(k*n)), upload(t, ctx, make([]float32, batch*m*n))
	if err := blas.Gemm[float32](h, 1, blas.Matrix{Mem: ba, Rows: m, Cols: k, Batch: blas.Batch{Count: batch}}, blas.Matrix{Mem: bb, Rows: k, Cols: n},
		0, blas.Matrix{Mem: bc, Rows: m, Cols: n, Batch: blas.Batch{Count: batch}}); err != nil {
		t.Fatal(err)
	}
	res["sgemm strided batch"] = comparison{read32(bc, batch*m*n), 1e-5}

	// cuBLASLt: a Linear layer's layout (B = wᵀ), with epilogues.
	lin := func(name string, in, out blas.DataType, epi blas.Epilogue, tf32 bool, tol float64) {
		a, w, bias := normals(m*k), normals(n*k), normals(n)
		conv := func(v []float32, typ blas.DataType) *cuda.DeviceMemory {
			switch typ {
			case blas.BFloat16:
				return upload(t, ctx, cuda.ToBFloat16s(v))
			case blas.Float16:
				return upload(t, ctx, cuda.ToFloat16s(v))
			}
			return upload(t, ctx, v)
		}
		cm := libtest.Alloc(t, ctx, m*n*out.Size())
		mm := blas.Matmul{
			A: blas.Matrix{Mem: conv(a, in), Rows: m, Cols: k}, B: blas.Matrix{Mem: conv(w, in), Rows: n, Cols: k}.T(),
			C:     blas.Matrix{Mem: cm, Rows: m, Cols: n},
			AType: in, BType: in, CType: out, Epilogue: epi, TF32: tf32,
		}
		if epi == blas.BiasGELU || epi == blas.BiasReLU || epi == blas.Bias {
			mm.Bias = conv(bias, out)
		}
		if err := lt.Run(mm, 0.5, 0, nil); err != nil {
			t.Fatal(err)
		}
		var got []float64
		switch out {
		case blas.BFloat16:
			for _, v := range readBF16(t, s, cm, m*n) {
				got = append(got, float64(v))
			}
		case blas.Float16:
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			v := make([]cuda.Float16, m*n)
			if err := cuda.CopyFromDevice(v, cm); err != nil {
				t.Fatal(err)
			}
			for _, x := range cuda.Float32s(v) {
				got = append(got, float64(x))
			}
		default:
			got = read32(cm, m*n)
		}
		res[name] = comparison{got, tol}
	}
	// bfloat16 and float16 results may round a last bit apart (2⁻⁸ and
	// 2⁻¹¹ of the value); TF32's inputs keep 10 bits of mantissa, rounded
	// by the tensor cores their own way.
	lin("lt bfloat16 bias GELU", blas.BFloat16, blas.BFloat16, blas.BiasGELU, false, 1.0/128)
	lin("lt float16 bias ReLU", blas.Float16, blas.Float16, blas.BiasReLU, false, 2.0/1024)
	lin("lt float32 TF32", blas.Float32, blas.Float32, blas.NoEpilogue, true, 1e-2)

	// Level 1 through the raw bindings: y = 2x + y, then x·y.
	x, y := normals(1000), normals(1000)
	dx, dy := upload(t, ctx, x), upload(t, ctx, y)
	var dot float32
	if err := ctx.Do(func() error {
		var hh cublas.CublasHandle_t
		if err := cublas.Create(&hh); err != nil {
			return err
		}
		defer cublas.Destroy(hh)
		if err := cublas.SetStream(hh, s.Raw()); err != nil {
			return err
		}
		two := float32(2)
		px, py := dx.Ptr(), dy.Ptr()
		fx := (*float32)(*(*unsafe.Pointer)(unsafe.Pointer(&px)))
		fy := (*float32)(*(*unsafe.Pointer)(unsafe.Pointer(&py)))
		if err := cublas.Saxpy(hh, 1000, &two, fx, 1, fy, 1); err != nil {
			return err
		}
		return cublas.Sdot(hh, 1000, fx, 1, fy, 1, &dot)
	}); err != nil {
		t.Fatal(err)
	}
	res["saxpy"] = comparison{read32(dy, 1000), 1e-6}
	res["sdot"] = comparison{[]float64{float64(dot)}, 5e-5}
	return res
}
