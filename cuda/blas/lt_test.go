//go:build linux && (amd64 || arm64)

package blas_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cublas"
)

func needLt(t *testing.T) (*cuda.Context, *cuda.Stream, *blas.LtHandle) {
	t.Helper()
	ctx := libtest.Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	lt, err := blas.NewLt(s)
	if errors.Is(err, cublas.ErrNoLibrary) && !libtest.Required() {
		t.Skipf("no cuBLASLt library: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Close() })
	return ctx, s, lt
}

// e4m3 encodes a small integer (|v| ≤ 15) exactly as FP8 E4M3.
func e4m3(v float32) uint8 {
	if v == 0 {
		return 0
	}
	bits := math.Float32bits(v)
	sign := uint8(bits>>31) << 7
	exp := int(bits>>23&0xff) - 127 + 7
	man := uint8(bits >> 20 & 7)
	return sign | uint8(exp)<<3 | man
}

func upload[T cuda.Element](t *testing.T, ctx *cuda.Context, v []T) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.AllocFrom(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func smallInts(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(7) - 3)
	}
	return v
}

// cpuProduct is A·B (+bias, ReLU) for row-major A (M×K) and B given as
// the row-major N×K matrix w (B = wᵀ) or as row-major K×N.
func cpuProduct(a, b []float32, m, k, n int, bTransposed bool, bias []float32, relu bool) []float32 {
	c := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float32
			for p := range k {
				bv := b[p*n+j]
				if bTransposed {
					bv = b[j*k+p]
				}
				s += a[i*k+p] * bv
			}
			if bias != nil {
				s += bias[j]
			}
			if relu {
				s = max(s, 0)
			}
			c[i*n+j] = s
		}
	}
	return c
}

// e5m2 encodes a small integer (|v| ≤ 7) exactly as FP8 E5M2: the high
// byte of its float16, whose exponent E5M2 shares.
func e5m2(v float32) uint8 { return uint8(cuda.ToFloat16(v).Bits() >> 8) }

// gelu is the tanh approximation of GELU, cuBLASLt's.
func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// activated is f(alpha·p + bias[j]) for each element of the row-major M×N
// product p (bias nil: none).
func activated(p []float32, n int, alpha float32, bias []float32, f func(float64) float64) []float32 {
	out := make([]float32, len(p))
	for i, x := range p {
		v := float64(alpha * x)
		if bias != nil {
			v += float64(bias[i%n])
		}
		out[i] = float32(f(v))
	}
	return out
}

func TestLtMatmulTypesAndEpilogues(t *testing.T) {
	ctx, s, lt := needLt(t)
	// FP8 needs Hopper (compute capability 9.0) or later: below it
	// cuBLASLt may refuse FP8 inputs; from it on, it must take every FP8
	// case here.
	major, _, err := ctx.Device().ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	const m, k, n = 48, 64, 32
	a, w, bias := smallInts(r, m*k), smallInts(r, n*k), smallInts(r, n)
	prod := cpuProduct(a, w, m, k, n, true, nil, false)
	wantBiasReLU := cpuProduct(a, w, m, k, n, true, bias, true)
	// The GELU cases scale the product by 1/32 (an element of it has a
	// standard deviation of 32: k products of numbers of variance 4) and
	// add a quarter of the bias, both exact in every type, so that most
	// of GELU's inputs lie within a few units of 0, where it is neither
	// 0 nor the identity: there it differs from ReLU by up to 0.17, and
	// for more than 1300 of the 1536 elements by more than twice the
	// tolerance.
	const act = 1.0 / 32
	quarter := scaled(bias, 0.25)
	relu := func(x float64) float64 { return max(x, 0) }
	conv8 := func(v []float32, enc func(float32) uint8) []uint8 {
		out := make([]uint8, len(v))
		for i, x := range v {
			out[i] = enc(x)
		}
		return out
	}
	a8, w8 := conv8(a, e4m3), conv8(w, e4m3)
	a5, w5 := conv8(a, e5m2), conv8(w, e5m2)
	cases := []struct {
		name           string
		at, bt, out    blas.DataType
		a, w, bias     *cuda.DeviceMemory
		epi            blas.Epilogue
		alpha          float32
		want           []float32
		approx         bool    // GELU: see the tolerance
		aScale, bScale float32 // FP8 scales (0: none)
	}{
		{name: "float32", at: blas.Float32, bt: blas.Float32, out: blas.Float32, a: upload(t, ctx, a), w: upload(t, ctx, w), epi: blas.NoEpilogue, alpha: 1, want: prod},
		{name: "float32 ReLU", at: blas.Float32, bt: blas.Float32, out: blas.Float32, a: upload(t, ctx, a), w: upload(t, ctx, w), epi: blas.ReLU, alpha: 1, want: activated(prod, n, 1, nil, relu)},
		{name: "float32 GELU", at: blas.Float32, bt: blas.Float32, out: blas.Float32, a: upload(t, ctx, a), w: upload(t, ctx, w), epi: blas.GELU, alpha: act, want: activated(prod, n, act, nil, gelu), approx: true},
		{name: "float32 bias GELU", at: blas.Float32, bt: blas.Float32, out: blas.Float32, a: upload(t, ctx, a), w: upload(t, ctx, w), bias: upload(t, ctx, quarter), epi: blas.BiasGELU, alpha: act, want: activated(prod, n, act, quarter, gelu), approx: true},
		{name: "bfloat16 bias ReLU", at: blas.BFloat16, bt: blas.BFloat16, out: blas.BFloat16, a: upload(t, ctx, cuda.ToBFloat16s(a)), w: upload(t, ctx, cuda.ToBFloat16s(w)), bias: upload(t, ctx, cuda.ToBFloat16s(bias)), epi: blas.BiasReLU, alpha: 1, want: wantBiasReLU},
		{name: "bfloat16 ReLU", at: blas.BFloat16, bt: blas.BFloat16, out: blas.BFloat16, a: upload(t, ctx, cuda.ToBFloat16s(a)), w: upload(t, ctx, cuda.ToBFloat16s(w)), epi: blas.ReLU, alpha: 1, want: activated(prod, n, 1, nil, relu)},
		{name: "bfloat16 GELU", at: blas.BFloat16, bt: blas.BFloat16, out: blas.BFloat16, a: upload(t, ctx, cuda.ToBFloat16s(a)), w: upload(t, ctx, cuda.ToBFloat16s(w)), epi: blas.GELU, alpha: act, want: activated(prod, n, act, nil, gelu), approx: true},
		{name: "bfloat16 bias GELU", at: blas.BFloat16, bt: blas.BFloat16, out: blas.BFloat16, a: upload(t, ctx, cuda.ToBFloat16s(a)), w: upload(t, ctx, cuda.ToBFloat16s(w)), bias: upload(t, ctx, cuda.ToBFloat16s(quarter)), epi: blas.BiasGELU, alpha: act, want: activated(prod, n, act, quarter, gelu), approx: true},
		{name: "float16", at: blas.Float16, bt: blas.Float16, out: blas.Float16, a: upload(t, ctx, cuda.ToFloat16s(a)), w: upload(t, ctx, cuda.ToFloat16s(w)), epi: blas.NoEpilogue, alpha: 1, want: prod},
		{name: "float16 to float32, bias ReLU", at: blas.Float16, bt: blas.Float16, out: blas.Float32, a: upload(t, ctx, cuda.ToFloat16s(a)), w: upload(t, ctx, cuda.ToFloat16s(w)), bias: upload(t, ctx, bias), epi: blas.BiasReLU, alpha: 1, want: wantBiasReLU},
		{name: "float16 bias GELU", at: blas.Float16, bt: blas.Float16, out: blas.Float16, a: upload(t, ctx, cuda.ToFloat16s(a)), w: upload(t, ctx, cuda.ToFloat16s(w)), bias: upload(t, ctx, cuda.ToFloat16s(quarter)), epi: blas.BiasGELU, alpha: act, want: activated(prod, n, act, quarter, gelu), approx: true},
		{name: "fp8 e4m3 to bfloat16", at: blas.Float8E4M3, bt: blas.Float8E4M3, out: blas.BFloat16, a: upload(t, ctx, a8), w: upload(t, ctx, w8), epi: blas.NoEpilogue, alpha: 1, want: prod},
		// cuBLASLt's bias of an FP8 product written as float32 is
		// bfloat16 (TestLtErrorNamesTheFunctionThatFailed has the float32
		// one it refuses); written as bfloat16, bfloat16.
		{name: "fp8 e4m3 to bfloat16, bias", at: blas.Float8E4M3, bt: blas.Float8E4M3, out: blas.BFloat16, a: upload(t, ctx, a8), w: upload(t, ctx, w8), bias: upload(t, ctx, cuda.ToBFloat16s(bias)), epi: blas.Bias, alpha: 1, want: cpuProduct(a, w, m, k, n, true, bias, false)},
		{name: "fp8 e4m3 scaled 2×0.25 to bfloat16", at: blas.Float8E4M3, bt: blas.Float8E4M3, out: blas.BFloat16, a: upload(t, ctx, a8), w: upload(t, ctx, w8), epi: blas.NoEpilogue, alpha: 1, want: scaled(prod, 0.5), aScale: 2, bScale: 0.25},
		{name: "fp8 e4m3×e5m2 to bfloat16", at: blas.Float8E4M3, bt: blas.Float8E5M2, out: blas.BFloat16, a: upload(t, ctx, a8), w: upload(t, ctx, w5), epi: blas.NoEpilogue, alpha: 1, want: prod},
		{name: "fp8 e5m2×e4m3 to float16", at: blas.Float8E5M2, bt: blas.Float8E4M3, out: blas.Float16, a: upload(t, ctx, a5), w: upload(t, ctx, w8), epi: blas.NoEpilogue, alpha: 1, want: prod},
		{name: "fp8 e5m2×e4m3 to float32", at: blas.Float8E5M2, bt: blas.Float8E4M3, out: blas.Float32, a: upload(t, ctx, a5), w: upload(t, ctx, w8), epi: blas.NoEpilogue, alpha: 1, want: prod},
	}
	for _, tc := range cases {
		cmem := libtest.Alloc(t, ctx, m*n*tc.out.Size())
		mm := blas.Matmul{
			A:     blas.Matrix{Mem: tc.a, Rows: m, Cols: k},
			B:     blas.Matrix{Mem: tc.w, Rows: n, Cols: k}.T(),
			C:     blas.Matrix{Mem: cmem, Rows: m, Cols: n},
			AType: tc.at, BType: tc.bt, CType: tc.out,
			Epilogue: tc.epi, Bias: tc.bias,
		}
		if tc.aScale != 0 {
			mm.AScale, mm.BScale = upload(t, ctx, []float32{tc.aScale}), upload(t, ctx, []float32{tc.bScale})
		}
		if err := lt.Run(mm, tc.alpha, 0, nil); err != nil {
			if tc.at.Size() == 1 && major < 9 && errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) {
				t.Logf("%s: not supported on this GPU (compute capability %d.x): %v", tc.name, major, err)
				continue
			}
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, m*n)
		switch tc.out {
		case blas.Float32:
			if err := cuda.CopyFromDevice(got, cmem); err != nil {
				t.Fatal(err)
			}
		case blas.BFloat16:
			out := make([]cuda.BFloat16, m*n)
			if err := cuda.CopyFromDevice(out, cmem); err != nil {
				t.Fatal(err)
			}
			got = cuda.Float32s(out)
		case blas.Float16:
			out := make([]cuda.Float16, m*n)
			if err := cuda.CopyFromDevice(out, cmem); err != nil {
				t.Fatal(err)
			}
			got = cuda.Float32s(out)
		default:
			t.Fatalf("%s: no reading of %v", tc.name, tc.out)
		}
		for i := range got {
			// Products of small integers are exact in every type here,
			// up to bfloat16's 8 bits of output precision. GELU allows
			// 1/128 more for cuBLASLt's tanh, which may be a fast
			// approximation (and for GELU by erf, within 5e-4 of this).
			tol := math.Abs(float64(tc.want[i])) / 128
			if tc.approx {
				tol += 1.0 / 128
			}
			if d := math.Abs(float64(got[i] - tc.want[i])); !(d <= tol) {
				t.Fatalf("%s: C[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
		t.Logf("%s: %d×%d×%d correct", tc.name, m, k, n)
	}
}

// TestLtErrorNamesTheFunctionThatFailed: a multiply cuBLASLt refuses fails
// with a *cuda.LibraryError naming the package, the operation and the
// cuBLASLt function, whose cause is cuBLASLt's status. cuBLASLt takes a
// bfloat16 bias for an FP8 product written as float32, not a float32 one
// (the checks before it let that pass): on the H200 with CUDA 13 its
// heuristic answers CUBLAS_STATUS_NOT_SUPPORTED, as it does for any FP8
// multiply on a GPU without FP8.
func TestLtErrorNamesTheFunctionThatFailed(t *testing.T) {
	ctx, _, lt := needLt(t)
	// The shape of the FP8 cases of TestLtMatmulTypesAndEpilogues.
	const m, k, n = 48, 64, 32
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: upload(t, ctx, make([]uint8, m*k)), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: upload(t, ctx, make([]uint8, n*k)), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: libtest.Alloc(t, ctx, m*n*4), Rows: m, Cols: n},
		AType: blas.Float8E4M3, BType: blas.Float8E4M3, CType: blas.Float32,
		Epilogue: blas.Bias, Bias: upload(t, ctx, make([]float32, n)),
	}
	for _, c := range []struct {
		op  string
		run func() error
	}{
		{"LtHandle.Run", func() error { return lt.Run(mm, 1, 0, nil) }},
		{"LtHandle.Prepare", func() error {
			p, err := lt.Prepare(mm, nil)
			if err == nil {
				p.Close()
			}
			return err
		}},
		{"LtHandle.Algorithms", func() error { _, err := lt.Algorithms(mm, 4); return err }},
	} {
		err := c.run()
		if err == nil {
			t.Fatalf("%s: cuBLASLt took an FP8 multiply written as float32 with a float32 bias; this test needs another that it refuses", c.op)
		}
		var le *cuda.LibraryError
		if !errors.As(err, &le) {
			t.Fatalf("%s: %v (%T) is no *cuda.LibraryError", c.op, err, err)
		}
		const fn = "cublasLtMatmulAlgoGetHeuristic"
		if le.Pkg != "blas" || le.Op != c.op || le.Func != fn {
			t.Errorf("%s: error %q has Pkg %q, Op %q, Func %q; want blas, %s, %s", c.op, err, le.Pkg, le.Op, le.Func, c.op, fn)
		}
		if !errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) || !strings.Contains(err.Error(), fn) {
			t.Errorf("%s: %v, want CUBLAS_STATUS_NOT_SUPPORTED from %s", c.op, err, fn)
		}
		t.Logf("%s: %v", c.op, err)
	}
}

func TestLtTuneNeverPicksSlowerThanTheDefault(t *testing.T) {
	ctx, _, lt := needLt(t)
	const m = 16
	k, n := decodeShape()
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: libtest.Alloc(t, ctx, m*k*2), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: libtest.Alloc(t, ctx, k*n*2), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: libtest.Alloc(t, ctx, m*n*2), Rows: m, Cols: n},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
	}
	plan, err := lt.Tune(mm, 1, 0, blas.TuneOptions{Runs: 20, Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Candidates < 1 || plan.Key != blas.PlanKey(mm) || plan.Median <= 0 {
		t.Fatalf("plan %+v", plan)
	}
	if plan.Median > plan.Default {
		t.Fatalf("tuned median %v is slower than the default's %v", plan.Median, plan.Default)
	}
	if err := lt.Run(mm, 1, 0, &plan.Algo); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d candidates; tuned %v, default %v (%.1f%% faster)", plan.Key, plan.Candidates, plan.Median, plan.Default,
		100*(1-float64(plan.Median)/float64(plan.Default)))
}

func TestPlansSaveAndLoad(t *testing.T) {
	in := []blas.Plan{{Key: "k1", Algo: blas.Algo{Data: [8]uint64{1, 2, 3}, Workspace: 64}, Median: 5, Default: 7, Candidates: 3}, {Key: "k2"}}
	var buf bytes.Buffer
	if err := blas.SavePlans(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := blas.LoadPlans(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out["k1"] != in[0] || out["k2"] != in[1] {
		t.Fatalf("loaded %+v, saved %+v", out, in)
	}
	if _, err := blas.LoadPlans(strings.NewReader(`[{"Algo":{}}]`)); err == nil {
		t.Fatal("a plan without a key was loaded")
	}
}

func TestMatmulRejectsWhatCuBLASLtCannotDo(t *testing.T) {
	ctx := libtest.Context(t)
	a := blas.Matrix{Mem: libtest.Alloc(t, ctx, 6*4), Rows: 2, Cols: 3}
	b := blas.Matrix{Mem: libtest.Alloc(t, ctx, 12*4), Rows: 3, Cols: 4}
	c := blas.Matrix{Mem: libtest.Alloc(t, ctx, 8*4), Rows: 2, Cols: 4}
	for name, tc := range map[string]struct {
		mm   blas.Matmul
		want string
	}{
		"fp8 with float32":   {blas.Matmul{A: a, B: b, C: c, AType: blas.Float8E4M3, BType: blas.Float32}, "FP8 multiplies FP8 by FP8"},
		"fp8 e5m2 by e5m2":   {blas.Matmul{A: a, B: b, C: c, AType: blas.Float8E5M2, BType: blas.Float8E5M2, CType: blas.BFloat16}, "A and B are both float8-e5m2: cuBLASLt multiplies FP8 as E4M3×E4M3, E4M3×E5M2 or E5M2×E4M3, not E5M2×E5M2"},
		"fp8 layouts":        {blas.Matmul{A: a, B: b, C: c, AType: blas.Float8E4M3, BType: blas.Float8E4M3, CType: blas.BFloat16}, "FP8 needs A row-major and B column-major"},
		"bias without bias":  {blas.Matmul{A: a, B: b, C: c, Epilogue: blas.Bias}, "no Bias"},
		"bias without epi":   {blas.Matmul{A: a, B: b, C: c, Bias: a.Mem}, "does not add one"},
		"short bias":         {blas.Matmul{A: a, B: b, C: c, Epilogue: blas.Bias, Bias: libtest.Alloc(t, ctx, 12)}, "needs 4 elements"},
		"unknown type":       {blas.Matmul{A: a, B: b, C: c, CType: 9}, "unknown element type"},
		"shapes":             {blas.Matmul{A: a, B: a, C: c}, "A is 2×3 and B is 2×3"},
		"scale of bfloat16":  {blas.Matmul{A: a, B: b, C: c, AType: blas.BFloat16, BType: blas.BFloat16, AScale: libtest.Alloc(t, ctx, 4)}, "AScale is for FP8 inputs"},
		"memory of the type": {blas.Matmul{A: blas.Matrix{Mem: libtest.Alloc(t, ctx, 6), Rows: 2, Cols: 3}, B: b, C: c, AType: blas.BFloat16}, "12 bytes of 2-byte elements, but its memory has 6"},
	} {
		err := (*blas.LtHandle)(nil).Run(tc.mm, 1, 0, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Run = %v, want an error containing %q", name, err, tc.want)
		}
	}
	if err := (*blas.LtHandle)(nil).Run(blas.Matmul{A: a, B: b, C: c}, 1, 0, nil); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run on a nil handle = %v, want ErrClosed", err)
	}
}

func scaled(v []float32, f float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

func TestMatmulClosedOptionalMemoryIsErrClosed(t *testing.T) {
	ctx := libtest.Context(t)
	closed := func() *cuda.DeviceMemory {
		m := libtest.Alloc(t, ctx, 64)
		m.Close()
		return m
	}
	a := blas.Matrix{Mem: libtest.Alloc(t, ctx, 6*4), Rows: 2, Cols: 3}
	b := blas.Matrix{Mem: libtest.Alloc(t, ctx, 12*4), Rows: 3, Cols: 4}
	c := blas.Matrix{Mem: libtest.Alloc(t, ctx, 8*4), Rows: 2, Cols: 4}
	// FP8 takes A row-major and B column-major for a row-major C.
	b8 := blas.Matrix{Mem: libtest.Alloc(t, ctx, 12), Rows: 3, Cols: 4, Layout: blas.ColMajor}
	scale := libtest.Alloc(t, ctx, 4)
	fp8 := blas.Matmul{A: blas.Matrix{Mem: libtest.Alloc(t, ctx, 6), Rows: 2, Cols: 3}, B: b8, C: c,
		AType: blas.Float8E4M3, BType: blas.Float8E4M3, CType: blas.BFloat16, AScale: scale, BScale: scale}
	withA, withB := fp8, fp8
	withA.AScale, withB.BScale = closed(), closed()
	for name, mm := range map[string]blas.Matmul{
		"Bias":   {A: a, B: b, C: c, Epilogue: blas.Bias, Bias: closed()},
		"AScale": withA,
		"BScale": withB,
	} {
		err := (*blas.LtHandle)(nil).Run(mm, 1, 0, nil)
		if !errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), name) {
			t.Errorf("Run with a closed %s = %v, want ErrClosed naming %s", name, err, name)
		}
	}
}

func TestAlgorithmCountsAreBounded(t *testing.T) {
	ctx := libtest.Context(t)
	a := blas.Matrix{Mem: libtest.Alloc(t, ctx, 6*4), Rows: 2, Cols: 3}
	b := blas.Matrix{Mem: libtest.Alloc(t, ctx, 12*4), Rows: 3, Cols: 4}
	c := blas.Matrix{Mem: libtest.Alloc(t, ctx, 8*4), Rows: 2, Cols: 4}
	mm := blas.Matmul{A: a, B: b, C: c}
	for _, n := range []int{0, -1, blas.MaxAlgorithms + 1, 1 << 40} {
		if _, err := (*blas.LtHandle)(nil).Algorithms(mm, n); err == nil || !strings.Contains(err.Error(), "want 1 to") {
			t.Errorf("Algorithms(%d) = %v, want a bound error", n, err)
		}
		if _, err := (*blas.LtHandle)(nil).AlgorithmsFor(mm, blas.ColumnOrder, n); err == nil || !strings.Contains(err.Error(), "want 1 to") {
			t.Errorf("AlgorithmsFor(%d) = %v, want a bound error", n, err)
		}
	}
	for _, n := range []int{blas.MaxAlgorithms + 1, 1 << 40} {
		if _, err := (*blas.LtHandle)(nil).Tune(mm, 1, 0, blas.TuneOptions{Candidates: n}); err == nil || !strings.Contains(err.Error(), "Candidates") {
			t.Errorf("Tune with %d candidates = %v, want an error naming Candidates", n, err)
		}
	}
}
