//go:build linux && (amd64 || arm64)

package blas

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
)

// fakeContext returns a context on the first device, which on a machine
// without a GPU is the fake driver's (see TestMain).
func fakeContext(t *testing.T) (*cuda.Context, *cuda.Stream) {
	t.Helper()
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		t.Skipf("no driver or device: %v", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ctx, s
}

func memOf(t *testing.T, ctx *cuda.Context, n int) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.Alloc(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// standInLt is an LtHandle whose cuBLASLt handle is a stand-in (no
// library is called to make or destroy it), counting its destroys.
func standInLt(t *testing.T, s *cuda.Stream, destroyed *int) *LtHandle {
	t.Helper()
	o, err := cuda.NewLibraryObject(s, func() (ltState, error) {
		return ltState{h: 1, cache: &ltCache{}}, nil
	}, func(ltState) error {
		*destroyed++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &LtHandle{o: o}
}

func bf16Matmul(t *testing.T, ctx *cuda.Context, m, k, n int) Matmul {
	return Matmul{
		A:     Matrix{Mem: memOf(t, ctx, m*k*2), Rows: m, Cols: k},
		B:     Matrix{Mem: memOf(t, ctx, n*k*2), Rows: n, Cols: k}.T(),
		C:     Matrix{Mem: memOf(t, ctx, m*n*2), Rows: m, Cols: n},
		AType: BFloat16, BType: BFloat16, CType: BFloat16,
	}
}

// TestLtPlanHandleDiscipline: a nil plan, a plan on a nil or closed
// LtHandle and a closed plan return ErrClosed without reaching cuBLASLt;
// a Matmul that is not the plan's is refused naming both; Close is
// idempotent; closing the plan does not close its handle, nor the handle
// the plan.
func TestLtPlanHandleDiscipline(t *testing.T) {
	ctx, s := fakeContext(t)
	mm := bf16Matmul(t, ctx, 4, 8, 6)

	var nilPlan *LtPlan
	if err := nilPlan.Run(mm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run on a nil plan = %v", err)
	}
	if err := nilPlan.Close(); err != nil || nilPlan.Algo() != (Algo{}) || nilPlan.Formulation() != ColumnOrder {
		t.Errorf("nil plan: Close %v, Algo %v", err, nilPlan.Algo())
	}
	if _, err := (*LtHandle)(nil).Prepare(mm, nil); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Prepare on a nil handle = %v", err)
	}
	// Prepare checks the Matmul and the plan before the handle.
	bad := mm
	bad.C.Rows = 5
	if _, err := (*LtHandle)(nil).Prepare(bad, nil); err == nil || errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Prepare of a wrong shape = %v", err)
	}
	if _, err := (*LtHandle)(nil).Prepare(mm, &Plan{Key: "other"}); err == nil || !strings.Contains(err.Error(), "the plan is for other") {
		t.Errorf("Prepare with another Matmul's plan = %v", err)
	}
	if _, err := (*LtHandle)(nil).Prepare(mm, &Plan{Key: PlanKey(mm), Formulation: 9}); err == nil || !strings.Contains(err.Error(), "unknown formulation") {
		t.Errorf("Prepare with an unknown formulation = %v", err)
	}

	destroyed := 0
	lt := standInLt(t, s, &destroyed)
	lp := &LtPlan{lt: lt, p: &prepared{key: keyOf(&mm), d: &descs{}, algo: Algo{Data: [8]uint64{7}}}}
	if lp.Algo().Data[0] != 7 {
		t.Fatalf("Algo = %v", lp.Algo())
	}
	other := bf16Matmul(t, ctx, 4, 8, 7)
	if err := lp.Run(other, 1, 0); err == nil || !strings.Contains(err.Error(), "the plan is for") || !strings.Contains(err.Error(), PlanKey(other)) || !strings.Contains(err.Error(), PlanKey(mm)) {
		t.Errorf("Run with another shape = %v", err)
	}
	small := mm
	small.A.Mem = memOf(t, ctx, 8)
	if err := lp.Run(small, 1, 0); err == nil || !strings.Contains(err.Error(), "but its memory has 8") {
		t.Errorf("Run with short memory = %v", err)
	}
	closedMem := memOf(t, ctx, 4*8*2)
	closedMem.Close()
	cm := mm
	cm.A.Mem = closedMem
	if err := lp.Run(cm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run with closed memory = %v", err)
	}
	// The handle closed (its last handle: destroyed), the plan refuses.
	clone, err := lt.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := lt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lp.Run(mm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run on a plan whose handle is closed = %v", err)
	}
	if destroyed != 0 {
		t.Fatal("a clone is open, yet the handle was destroyed")
	}
	if err := clone.Close(); err != nil || destroyed != 1 {
		t.Fatalf("last Close: %v, destroyed %d", err, destroyed)
	}
	if err := lp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lp.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := lp.Run(mm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run on a closed plan = %v", err)
	}
	if lp.Algo() != (Algo{}) {
		t.Errorf("Algo of a closed plan = %v", lp.Algo())
	}
}

// TestLtPlanConcurrentRunAndClose runs a plan from many goroutines while
// it is closed under them, and its handle after (for -race): each Run
// returns nil or ErrClosed. The product is empty, so that Run returns
// before cuBLASLt, which the stand-in handle must not reach.
func TestLtPlanConcurrentRunAndClose(t *testing.T) {
	ctx, s := fakeContext(t)
	mm := bf16Matmul(t, ctx, 4, 8, 6)
	mm.A.Rows, mm.C.Rows = 0, 0
	destroyed := 0
	lt := standInLt(t, s, &destroyed)
	lp := &LtPlan{lt: lt, p: &prepared{key: keyOf(&mm), d: &descs{}}}
	if err := lp.Run(mm, 1, 0); err != nil {
		t.Fatalf("Run of an empty product = %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 256)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 16 {
				if err := lp.Run(mm, 1, 0); err != nil && !errors.Is(err, cuda.ErrClosed) {
					errs <- err
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = lp.Close()
	}()
	go func() {
		defer wg.Done()
		_ = lt.Close()
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := lp.Run(mm, 1, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Run after Close = %v", err)
	}
	if destroyed != 1 {
		t.Errorf("handle destroyed %d times", destroyed)
	}
}

// standInBlas swaps the library calls of the handle's life cycle for
// stand-ins that record them, for the test's length.
type blasCall struct {
	fn   string
	ws   unsafe.Pointer
	size uint64
}

func standInBlas(t *testing.T) *[]blasCall {
	t.Helper()
	saved := api
	t.Cleanup(func() { api = saved })
	var mu sync.Mutex
	calls := &[]blasCall{}
	rec := func(c blasCall) {
		mu.Lock()
		*calls = append(*calls, c)
		mu.Unlock()
	}
	api.create = func(h *cublas.CublasHandle_t) error { *h = 42; rec(blasCall{fn: "create"}); return nil }
	api.destroy = func(cublas.CublasHandle_t) error { rec(blasCall{fn: "destroy"}); return nil }
	api.setStream = func(cublas.CublasHandle_t, cu.CUstream) error { rec(blasCall{fn: "setStream"}); return nil }
	api.setWorkspace = func(_ cublas.CublasHandle_t, p unsafe.Pointer, n uint64) error {
		rec(blasCall{fn: "setWorkspace", ws: p, size: n})
		return nil
	}
	return calls
}

// TestHandleWorkspaceLifecycle: New binds a workspace of Workspace bytes
// after the stream; SetStream binds it again after cublasSetStream (which
// drops it); SetWorkspace replaces and frees it, 0 unbinds it; the last
// Close destroys the handle and then frees the workspace.
func TestHandleWorkspaceLifecycle(t *testing.T) {
	ctx, s := fakeContext(t)
	calls := standInBlas(t)
	mem0 := cuda.LiveObjects().DeviceMemory
	h, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := cuda.LiveObjects().DeviceMemory - mem0; got != 1 {
		t.Fatalf("%d allocations after New, want 1 (the workspace)", got)
	}
	fns := func() string {
		var out []string
		for _, c := range *calls {
			out = append(out, c.fn)
		}
		return strings.Join(out, ",")
	}
	last := func() blasCall { return (*calls)[len(*calls)-1] }
	if fns() != "create,setStream,setWorkspace" || last().size != Workspace || last().ws == nil {
		t.Fatalf("New called %s (workspace %v, %d bytes)", fns(), last().ws, last().size)
	}
	ws := last().ws
	if n, err := h.WorkspaceSize(); err != nil || n != Workspace {
		t.Fatalf("WorkspaceSize = %d, %v", n, err)
	}

	s2, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	*calls = nil
	if err := h.SetStream(s2); err != nil {
		t.Fatal(err)
	}
	if fns() != "setStream,setWorkspace" || last().ws != ws || last().size != Workspace {
		t.Fatalf("SetStream called %s (workspace %v, %d bytes; had %v)", fns(), last().ws, last().size, ws)
	}

	*calls = nil
	if err := h.SetWorkspace(1 << 20); err != nil {
		t.Fatal(err)
	}
	if fns() != "setWorkspace" || last().size != 1<<20 || last().ws == nil {
		t.Fatalf("SetWorkspace called %s (%d bytes)", fns(), last().size)
	}
	if got := cuda.LiveObjects().DeviceMemory - mem0; got != 1 {
		t.Fatalf("%d allocations after SetWorkspace, want 1: the old workspace is freed", got)
	}
	if n, _ := h.WorkspaceSize(); n != 1<<20 {
		t.Fatalf("WorkspaceSize = %d after SetWorkspace(1 MiB)", n)
	}
	// A clone shares the workspace: setting it through one sets both.
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	*calls = nil
	if err := c.SetWorkspace(0); err != nil {
		t.Fatal(err)
	}
	if fns() != "setWorkspace" || last().ws != nil || last().size != 0 {
		t.Fatalf("SetWorkspace(0) called %s (%v, %d bytes)", fns(), last().ws, last().size)
	}
	if n, _ := h.WorkspaceSize(); n != 0 || cuda.LiveObjects().DeviceMemory != mem0 {
		t.Fatalf("after SetWorkspace(0): size %d, %d allocations", n, cuda.LiveObjects().DeviceMemory-mem0)
	}
	if err := h.SetWorkspace(-1); err == nil {
		t.Error("SetWorkspace(-1) succeeded")
	}
	if err := h.SetWorkspace(4096); err != nil {
		t.Fatal(err)
	}
	*calls = nil
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if len(*calls) != 0 || cuda.LiveObjects().DeviceMemory-mem0 != 1 {
		t.Fatalf("closing one of two handles called %s and left %d allocations", fns(), cuda.LiveObjects().DeviceMemory-mem0)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if fns() != "destroy" || cuda.LiveObjects().DeviceMemory != mem0 {
		t.Fatalf("the last Close called %s and left %d allocations", fns(), cuda.LiveObjects().DeviceMemory-mem0)
	}
	for _, f := range []func() error{
		func() error { return h.SetWorkspace(1) },
		func() error { _, err := h.WorkspaceSize(); return err },
		func() error { return (*Handle)(nil).SetWorkspace(1) },
		func() error { _, err := (*Handle)(nil).WorkspaceSize(); return err },
	} {
		if err := f(); !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("on a closed or nil handle: %v", err)
		}
	}
}

// TestHandleWorkspaceFreedWhenNewFails: a cuBLAS that fails to start
// leaves no workspace behind.
func TestHandleWorkspaceFreedWhenNewFails(t *testing.T) {
	_, s := fakeContext(t)
	standInBlas(t)
	for _, fail := range []string{"create", "setStream", "setWorkspace"} {
		saved := api
		boom := cublas.CUBLAS_STATUS_ALLOC_FAILED
		switch fail {
		case "create":
			api.create = func(*cublas.CublasHandle_t) error { return boom }
		case "setStream":
			api.setStream = func(cublas.CublasHandle_t, cu.CUstream) error { return boom }
		case "setWorkspace":
			api.setWorkspace = func(cublas.CublasHandle_t, unsafe.Pointer, uint64) error { return boom }
		}
		mem0 := cuda.LiveObjects().DeviceMemory
		h, err := New(s)
		if h != nil || !errors.Is(err, boom) {
			t.Errorf("New with %s failing = %v, %v", fail, h, err)
		}
		if got := cuda.LiveObjects().DeviceMemory; got != mem0 {
			t.Errorf("New with %s failing left %d allocations", fail, got-mem0)
		}
		api = saved
	}
}

func TestPlansRoundTripAndVersions(t *testing.T) {
	in := []Plan{
		{Key: "k1", Formulation: RowOrder, Algo: Algo{Data: [8]uint64{1, 2, 3}, Workspace: 64, Waves: 0.5},
			Config: AlgoConfig{ID: 66, Tile: 20, Stages: 8, SplitK: 4, Reduction: 2, Swizzle: 1, Custom: 3, Cluster: 2},
			Median: 5, Default: 7, Candidates: 300, Searched: 250, Graph: true},
		{Key: "k2"},
	}
	var buf bytes.Buffer
	if err := SavePlans(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"Version": 2`) {
		t.Fatalf("saved without a version:\n%s", buf.String())
	}
	out, err := LoadPlans(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out["k1"] != in[0] || out["k2"] != in[1] {
		t.Fatalf("loaded %+v, saved %+v", out, in)
	}
	// Version 1, a bare array: column order.
	v1 := `[{"Key":"old","Algo":{"Data":[9,0,0,0,0,0,0,0],"Workspace":0,"Waves":1},"Median":10,"Default":12,"Candidates":8}]`
	out, err = LoadPlans(strings.NewReader(v1))
	if err != nil || out["old"].Formulation != ColumnOrder || out["old"].Algo.Data[0] != 9 || out["old"].Default != 12 {
		t.Fatalf("version 1: %+v, %v", out, err)
	}
	for name, bad := range map[string]string{
		"no key":              `{"Version":2,"Plans":[{"Algo":{}}]}`,
		"future version":      `{"Version":3,"Plans":[]}`,
		"no version":          `{"Plans":[]}`,
		"unknown formulation": `{"Version":2,"Plans":[{"Key":"k","Formulation":4}]}`,
		"v1 row order":        `[{"Key":"k","Formulation":1}]`,
		"not JSON":            `plans`,
	} {
		if _, err := LoadPlans(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	// An empty list saves and loads.
	buf.Reset()
	if err := SavePlans(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := LoadPlans(&buf); err != nil || len(out) != 0 {
		t.Fatalf("empty: %v, %v", out, err)
	}
}

func TestChoose(t *testing.T) {
	us := func(v ...float64) []float64 { return v }
	mk := func(rows ...[]float64) [][]time.Duration {
		out := make([][]time.Duration, len(rows))
		for i, r := range rows {
			for _, x := range r {
				out[i] = append(out[i], time.Duration(x*1000))
			}
		}
		return out
	}
	def := us(10, 10, 10, 10, 10, 10, 10, 10)
	for _, c := range []struct {
		name string
		rows [][]float64
		want int
	}{
		{"only the default", [][]float64{def}, 0},
		{"clearly faster", [][]float64{def, us(9, 9, 9, 9, 9, 9, 9, 9)}, 1},
		{"within the margin", [][]float64{def, us(9.9, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9)}, 0},
		{"faster in the median, slower in a quarter", [][]float64{def, us(9, 9, 9, 9, 9, 11, 11, 11)}, 0},
		{"the fastest of two", [][]float64{def, us(9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5, 9.5), us(9, 9, 9, 9, 9, 9, 9, 9)}, 2},
		// Paired by round: the default's drift is the candidate's too.
		{"paired", [][]float64{us(10, 20, 10, 20, 10, 20, 10, 20), us(9, 18, 9, 18, 9, 18, 9, 18)}, 1},
		// Faster in 7 rounds of 8 (the paired median and upper quartile
		// say so), but its median time above the default's.
		{"faster paired, slower in its median", [][]float64{us(10, 10, 10, 10, 10, 100, 100, 100), us(9, 9, 9, 9, 200, 90, 90, 90)}, 0},
	} {
		if got := choose(mk(c.rows...), TuneMargin); got != c.want {
			t.Errorf("%s: choose = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestVariants(t *testing.T) {
	base := AlgoConfig{ID: 5, Tile: 3, SplitK: 1}
	// Split-K with two reduction schemes (mask 0b11), swizzling up to 1,
	// custom options up to 2.
	vs := variants(base, true, 3, 1, 2)
	seen := map[variant]bool{}
	splits := map[uint32]bool{}
	clusters := map[uint16]bool{}
	b := variant{base.SplitK, base.Reduction, base.Swizzle, base.Custom, base.Cluster}
	for _, v := range vs {
		if v == b {
			t.Fatalf("the base is among its variants: %+v", v)
		}
		if v.splitK > 1 && v.reduction != 1 && v.reduction != 2 {
			t.Fatalf("split-K %d with reduction %d outside the mask", v.splitK, v.reduction)
		}
		seen[v] = true
		splits[v.splitK] = true
		clusters[v.cluster] = true
	}
	for _, k := range neighborSplits {
		if !splits[k] {
			t.Errorf("split-K %d not tried", k)
		}
	}
	for _, cl := range neighborClusters {
		if !clusters[cl] {
			t.Errorf("cluster shape %d not tried", cl)
		}
	}
	if !seen[variant{splitK: 1, swizzle: 1}] || !seen[variant{splitK: 1, custom: 2}] || seen[variant{splitK: 1, custom: 3}] {
		t.Errorf("swizzle and custom variants: %v", vs)
	}
	// No split-K support: no split-K variant.
	for _, v := range variants(base, false, 3, 0, 0) {
		if v.splitK != 1 {
			t.Fatalf("split-K %d without split-K support", v.splitK)
		}
	}
}
