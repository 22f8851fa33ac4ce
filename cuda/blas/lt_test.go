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
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/internal/libtest"
)

func needLt(t *testing.T) (*cuda.Context, *cuda.Stream, *blas.LtHandle) {
	t.Helper()
	if cudatest.Active() {
		t.Skip("the fake driver has no cuBLASLt: this test needs a GPU")
	}
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

func TestLtMatmulTypesAndEpilogues(t *testing.T) {
	ctx, s, lt := needLt(t)
	r := rand.New(rand.NewPCG(3, 4))
	const m, k, n = 48, 64, 32
	a, w, bias := smallInts(r, m*k), smallInts(r, n*k), smallInts(r, n)
	want := cpuProduct(a, w, m, k, n, true, nil, false)
	wantBiasReLU := cpuProduct(a, w, m, k, n, true, bias, true)
	conv8 := func(v []float32) []uint8 {
		out := make([]uint8, len(v))
		for i, x := range v {
			out[i] = e4m3(x)
		}
		return out
	}
	cases := []struct {
		name       string
		in, out    blas.DataType
		a, w, bias *cuda.DeviceMemory
		epi        blas.Epilogue
		want       []float32
	}{
		{"float32", blas.Float32, blas.Float32, upload(t, ctx, a), upload(t, ctx, w), nil, blas.NoEpilogue, want},
		{"bfloat16 bias ReLU", blas.BFloat16, blas.BFloat16, upload(t, ctx, cuda.ToBFloat16s(a)), upload(t, ctx, cuda.ToBFloat16s(w)), upload(t, ctx, cuda.ToBFloat16s(bias)), blas.BiasReLU, wantBiasReLU},
		{"fp8 e4m3 to bfloat16", blas.Float8E4M3, blas.BFloat16, upload(t, ctx, conv8(a)), upload(t, ctx, conv8(w)), nil, blas.NoEpilogue, want},
		{"fp8 e4m3 to float32, bias", blas.Float8E4M3, blas.Float32, upload(t, ctx, conv8(a)), upload(t, ctx, conv8(w)), upload(t, ctx, bias), blas.Bias, cpuProduct(a, w, m, k, n, true, bias, false)},
		{"fp8 e4m3 scaled 2×0.25 to bfloat16", blas.Float8E4M3, blas.BFloat16, upload(t, ctx, conv8(a)), upload(t, ctx, conv8(w)), nil, blas.NoEpilogue, scaled(want, 0.5)},
	}
	for _, tc := range cases {
		cmem := libtest.Alloc(t, ctx, m*n*tc.out.Size())
		mm := blas.Matmul{
			A:     blas.Matrix{Mem: tc.a, Rows: m, Cols: k},
			B:     blas.Matrix{Mem: tc.w, Rows: n, Cols: k}.T(),
			C:     blas.Matrix{Mem: cmem, Rows: m, Cols: n},
			AType: tc.in, BType: tc.in, CType: tc.out,
			Epilogue: tc.epi, Bias: tc.bias,
		}
		if strings.Contains(tc.name, "scaled") {
			mm.AScale, mm.BScale = upload(t, ctx, []float32{2}), upload(t, ctx, []float32{0.25})
		}
		if err := lt.Run(mm, 1, 0, nil); err != nil {
			if tc.in.Size() == 1 && errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) {
				t.Logf("%s: not supported on this GPU: %v", tc.name, err)
				continue
			}
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, m*n)
		if tc.out == blas.Float32 {
			if err := cuda.CopyFromDevice(got, cmem); err != nil {
				t.Fatal(err)
			}
		} else {
			out := make([]cuda.BFloat16, m*n)
			if err := cuda.CopyFromDevice(out, cmem); err != nil {
				t.Fatal(err)
			}
			got = cuda.Float32s(out)
		}
		for i := range got {
			// Products of small integers are exact in every type here,
			// up to bfloat16's 8 bits of output precision.
			if d := math.Abs(float64(got[i] - tc.want[i])); d > math.Abs(float64(tc.want[i]))/128 {
				t.Fatalf("%s: C[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
		t.Logf("%s: %d×%d×%d correct", tc.name, m, k, n)
	}
}

func TestLtTuneNeverPicksSlowerThanTheDefault(t *testing.T) {
	ctx, _, lt := needLt(t)
	const m, k, n = 16, 4096, 4096
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
