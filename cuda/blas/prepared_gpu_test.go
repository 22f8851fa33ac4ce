//go:build linux && (amd64 || arm64)

package blas_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cublas"
)

// readBF16 copies a bfloat16 matrix back as float32s, after the stream.
func readBF16(t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int) []float32 {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]cuda.BFloat16, n)
	if err := cuda.CopyFromDevice(out, m); err != nil {
		t.Fatal(err)
	}
	return cuda.Float32s(out)
}

func sameProduct(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > math.Abs(float64(want[i]))/128 {
			t.Fatalf("%s: C[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestLtPlanComputesTheProduct prepares a bfloat16 multiply in each
// formulation, with the heuristic's first choice of each, and runs it on
// two sets of memory: each product must be the CPU's.
func TestLtPlanComputesTheProduct(t *testing.T) {
	ctx, s, lt := needLt(t)
	r := rand.New(rand.NewPCG(11, 12))
	const m, k, n = 16, 96, 40
	a1, a2, w := smallInts(r, m*k), smallInts(r, m*k), smallInts(r, n*k)
	wmem := upload(t, ctx, cuda.ToBFloat16s(w))
	mm := func(a *cuda.DeviceMemory, c *cuda.DeviceMemory) blas.Matmul {
		return blas.Matmul{
			A:     blas.Matrix{Mem: a, Rows: m, Cols: k},
			B:     blas.Matrix{Mem: wmem, Rows: n, Cols: k}.T(),
			C:     blas.Matrix{Mem: c, Rows: m, Cols: n},
			AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
		}
	}
	am1, am2 := upload(t, ctx, cuda.ToBFloat16s(a1)), upload(t, ctx, cuda.ToBFloat16s(a2))
	c1, c2 := libtest.Alloc(t, ctx, m*n*2), libtest.Alloc(t, ctx, m*n*2)
	for _, f := range []blas.Formulation{blas.ColumnOrder, blas.RowOrder} {
		algos, err := lt.AlgorithmsFor(mm(am1, c1), f, 1)
		if f == blas.RowOrder && errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) {
			t.Logf("%v: cuBLASLt has no algorithm: %v", f, err)
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		p, err := lt.Prepare(mm(am1, c1), &blas.Plan{Key: blas.PlanKey(mm(am1, c1)), Formulation: f, Algo: algos[0]})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if p.Formulation() != f || p.Algo() != algos[0] {
			t.Fatalf("%v: plan has %v, %v", f, p.Formulation(), p.Algo())
		}
		for i, x := range []struct {
			a, c *cuda.DeviceMemory
			want []float32
		}{{am1, c1, cpuProduct(a1, w, m, k, n, true, nil, false)}, {am2, c2, cpuProduct(a2, w, m, k, n, true, nil, false)}} {
			if err := x.c.MemsetD8(0); err != nil {
				t.Fatal(err)
			}
			if err := p.Run(mm(x.a, x.c), 1, 0); err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			sameProduct(t, f.String()+" memory "+string(rune('1'+i)), readBF16(t, s, x.c, m*n), x.want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: algorithm %v", f, algos[0].Config())
	}
	// A nil plan: the heuristic's first choice, as Run.
	p, err := lt.Prepare(mm(am1, c1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	def, err := lt.Algorithms(mm(am1, c1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Algo() != def[0] {
		t.Fatalf("Prepare(nil) has %v, the heuristic %v", p.Algo(), def[0])
	}
}

// TestLtPlanTakesEachCallsBias runs one BiasReLU plan with two biases in
// turn: the bias is the call's, not Prepare's.
func TestLtPlanTakesEachCallsBias(t *testing.T) {
	ctx, s, lt := needLt(t)
	r := rand.New(rand.NewPCG(13, 14))
	const m, k, n = 8, 64, 32
	a, w := smallInts(r, m*k), smallInts(r, n*k)
	b1, b2 := smallInts(r, n), smallInts(r, n)
	for i := range b2 {
		b2[i] += 5
	}
	cmem := libtest.Alloc(t, ctx, m*n*2)
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(a)), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(w)), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: cmem, Rows: m, Cols: n},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
		Epilogue: blas.BiasReLU, Bias: upload(t, ctx, cuda.ToBFloat16s(b1)),
	}
	p, err := lt.Prepare(mm, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	bias2 := upload(t, ctx, cuda.ToBFloat16s(b2))
	for range 2 {
		for _, b := range []struct {
			mem  cuda.Memory
			vals []float32
		}{{mm.Bias, b1}, {bias2, b2}} {
			x := mm
			x.Bias = b.mem
			if err := p.Run(x, 1, 0); err != nil {
				t.Fatal(err)
			}
			sameProduct(t, "bias", readBF16(t, s, cmem, m*n), cpuProduct(a, w, m, k, n, true, b.vals, true))
		}
	}
	// Without a bias the plan's Matmul is another.
	x := mm
	x.Bias, x.Epilogue = nil, blas.NoEpilogue
	if err := p.Run(x, 1, 0); err == nil {
		t.Fatal("a plan with a bias ran a Matmul without one")
	}
}

// TestLtPlanAfterItsHandleCloses: the plan refuses once its handle is
// closed, and closes after it.
func TestLtPlanAfterItsHandleCloses(t *testing.T) {
	ctx, s, _ := needLt(t)
	lt, err := blas.NewLt(s)
	if err != nil {
		t.Fatal(err)
	}
	const m, k, n = 4, 32, 16
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: libtest.Alloc(t, ctx, m*k*2), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: libtest.Alloc(t, ctx, n*k*2), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: libtest.Alloc(t, ctx, m*n*2), Rows: m, Cols: n},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
	}
	p, err := lt.Prepare(mm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(mm, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := lt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(mm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Run after the handle closed = %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLtRunCacheFillsUp runs more distinct shapes than Run keeps
// prepared, then the first again: every product is right.
func TestLtRunCacheFillsUp(t *testing.T) {
	ctx, s, lt := needLt(t)
	const m, k = 2, 16
	ones := make([]float32, m*k)
	for i := range ones {
		ones[i] = 1
	}
	a := upload(t, ctx, cuda.ToBFloat16s(ones))
	for i := range blas.LtRunCache + 3 {
		n := 8 + i%(blas.LtRunCache+2) // the last round repeats the first shape
		w := make([]float32, n*k)
		for j := range w {
			w[j] = 1
		}
		cmem := libtest.Alloc(t, ctx, m*n*2)
		mm := blas.Matmul{
			A:     blas.Matrix{Mem: a, Rows: m, Cols: k},
			B:     blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(w)), Rows: n, Cols: k}.T(),
			C:     blas.Matrix{Mem: cmem, Rows: m, Cols: n},
			AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
		}
		if err := lt.Run(mm, 1, 0, nil); err != nil {
			t.Fatal(err)
		}
		for j, v := range readBF16(t, s, cmem, m*n) {
			if v != k {
				t.Fatalf("shape %d: C[%d] = %v, want %d", n, j, v, k)
			}
		}
	}
}

// TestLtTuneGraphPlan tunes a decode shape with graph timing, both
// formulations and the search, then runs the plan through Prepare.
func TestLtTuneGraphPlan(t *testing.T) {
	ctx, s, lt := needLt(t)
	const m = 4
	k, n := decodeShape()
	fill := func(elems int, bits uint16) *cuda.DeviceMemory {
		mem := libtest.Alloc(t, ctx, elems*2)
		if err := mem.MemsetD16(bits); err != nil {
			t.Fatal(err)
		}
		return mem
	}
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: fill(m*k, 0x3f80), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: fill(n*k, 0x3c00), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: fill(m*n, 0), Rows: m, Cols: n},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
	}
	plan, err := lt.Tune(mm, 1, 0, blas.TuneOptions{Runs: 20, Batch: 20, Search: 64, Graph: true})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Graph || plan.Median <= 0 || plan.Default <= 0 || plan.Candidates <= plan.Searched {
		t.Fatalf("plan %+v", plan)
	}
	t.Logf("%d candidates (%d searched): %v %v, %v against %v", plan.Candidates, plan.Searched, plan.Formulation, plan.Config, plan.Median, plan.Default)
	p, err := lt.Prepare(mm, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := mm.C.Mem.(*cuda.DeviceMemory).MemsetD16(0); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(mm, 1, 0); err != nil {
		t.Fatal(err)
	}
	for i, v := range readBF16(t, s, mm.C.Mem.(*cuda.DeviceMemory), m*n) {
		if v != float32(k)/128 {
			t.Fatalf("C[%d] = %v, want %v", i, v, float32(k)/128)
		}
	}
}

// TestHandleWorkspaceOnTheGPU: Gemm is right with the handle's own
// workspace, after moving streams, with none and with a small one.
func TestHandleWorkspaceOnTheGPU(t *testing.T) {
	ctx, s, h := needHandle(t)
	if n, err := h.WorkspaceSize(); err != nil || n != blas.Workspace {
		t.Fatalf("WorkspaceSize = %d, %v", n, err)
	}
	r := rand.New(rand.NewPCG(15, 16))
	const m, k, n = 64, 128, 48
	a, b := smallInts(r, m*k), smallInts(r, k*n)
	want := cpuProduct(a, b, m, k, n, false, nil, false)
	am, bm, cm := upload(t, ctx, a), upload(t, ctx, b), libtest.Alloc(t, ctx, m*n*4)
	s2, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"new", func() error { return nil }},
		{"moved", func() error { return h.SetStream(s2) }},
		{"no workspace", func() error { return h.SetWorkspace(0) }},
		{"4 MiB", func() error { return h.SetWorkspace(4 << 20) }},
		{"moved back", func() error { return h.SetStream(s) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := blas.Gemm[float32](h, 1, blas.Matrix{Mem: am, Rows: m, Cols: k}, blas.Matrix{Mem: bm, Rows: k, Cols: n}, 0, blas.Matrix{Mem: cm, Rows: m, Cols: n}); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := h.Stream().Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, m*n)
		if err := cuda.CopyFromDevice(got, cm); err != nil {
			t.Fatal(err)
		}
		sameProduct(t, step.name, got, want)
	}
}

// TestLtRunConcurrentMisses runs shapes new to the handle from several
// goroutines at once, each shape from more than one, so that misses on
// one key race to prepare it: every product is right (and -race sees the
// cache's map only under its lock).
func TestLtRunConcurrentMisses(t *testing.T) {
	ctx, s, lt := needLt(t)
	const m, k, shapes, per = 2, 16, 4, 3
	ones := make([]float32, 64*k)
	for i := range ones {
		ones[i] = 1
	}
	a := upload(t, ctx, cuda.ToBFloat16s(ones[:m*k]))
	type job struct {
		mm   blas.Matrix
		cmem *cuda.DeviceMemory
		n    int
	}
	var jobs []job
	for i := range shapes * per {
		n := 24 + i%shapes
		jobs = append(jobs, job{
			mm:   blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(ones[:n*k])), Rows: n, Cols: k}.T(),
			cmem: libtest.Alloc(t, ctx, m*n*2),
			n:    n,
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = lt.Run(blas.Matmul{
				A:     blas.Matrix{Mem: a, Rows: m, Cols: k},
				B:     j.mm,
				C:     blas.Matrix{Mem: j.cmem, Rows: m, Cols: j.n},
				AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
			}, 1, 0, nil)
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Fatalf("run %d (n=%d): %v", i, j.n, errs[i])
		}
		for e, v := range readBF16(t, s, j.cmem, m*j.n) {
			if v != k {
				t.Fatalf("run %d (n=%d): C[%d] = %v, want %d", i, j.n, e, v, k)
			}
		}
	}
}
