package cuda

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// degrees returns each node's in- and out-degree in g, checking that the
// edges name only g's nodes.
func degrees(t *testing.T, g *Graph) (nodes []cu.CUgraphNode, edges []GraphEdge, in, out map[cu.CUgraphNode]int) {
	t.Helper()
	nodes, err := g.Nodes()
	must(t, err)
	n, err := g.NodeCount()
	must(t, err)
	if n != len(nodes) {
		t.Fatalf("NodeCount %d, Nodes %d", n, len(nodes))
	}
	edges, err = g.Edges()
	must(t, err)
	in, out = map[cu.CUgraphNode]int{}, map[cu.CUgraphNode]int{}
	for _, nd := range nodes {
		in[nd], out[nd] = 0, 0
	}
	for _, e := range edges {
		if _, ok := in[e.From]; !ok {
			t.Fatalf("edge from unknown node %#x", e.From)
		}
		if _, ok := in[e.To]; !ok {
			t.Fatalf("edge to unknown node %#x", e.To)
		}
		out[e.From]++
		in[e.To]++
	}
	return nodes, edges, in, out
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }

func readWords(t *testing.T, m *DeviceMemory) []uint32 {
	t.Helper()
	got := make([]uint32, m.Size()/4)
	must(t, CopyFromDevice(got, m))
	return got
}

// Two subsystems that share one queue through clones enqueue in one order:
// their capture is a chain, however they interleave.
func TestCaptureSharedStreamIsLinear(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	decoder, err := s.Clone()
	must(t, err)
	defer decoder.Close()
	renderer, err := s.Clone()
	must(t, err)
	defer renderer.Close()
	const n = 1 << 16
	bufs := make([]*DeviceMemory, 5)
	for i := range bufs {
		bufs[i], err = Alloc(ctx, 4*n)
		must(t, err)
		defer bufs[i].Close()
		must(t, bufs[i].MemsetD32(0))
	}
	before := LiveObjects()
	g, err := s.Capture(CaptureThreadLocal, func() error {
		for _, step := range []func() error{
			func() error { return bufs[0].MemsetD32Async(decoder, f32bits(1)) },
			func() error { return bufs[1].MemsetD32Async(renderer, f32bits(2)) },
			func() error { return CopyDeviceAsync(decoder, bufs[2], bufs[0]) },
			func() error { return CopyDeviceAsync(renderer, bufs[3], bufs[1]) },
			func() error {
				return k.Launch(decoder, LaunchConfig{Grid: Dim3{X: Blocks(n, 256)}, Block: Dim3{X: 256}},
					bufs[2], bufs[3], bufs[4], uint32(n))
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	must(t, err)
	defer g.Close()
	if got := LiveObjects().Graphs; got != before.Graphs+1 {
		t.Errorf("live graphs %d, want %d", got, before.Graphs+1)
	}
	// Nothing ran during the capture.
	checkWords(t, "buffer 4 after capture", readWords(t, bufs[4]), 0)

	nodes, edges, in, out := degrees(t, g)
	if len(nodes) != 5 || len(edges) != 4 {
		t.Fatalf("%d nodes and %d edges, want a chain of 5 and 4", len(nodes), len(edges))
	}
	roots, leaves := 0, 0
	for _, nd := range nodes {
		if in[nd] > 1 || out[nd] > 1 {
			t.Errorf("node %#x has %d in- and %d out-edges: not a chain", nd, in[nd], out[nd])
		}
		if in[nd] == 0 {
			roots++
		}
		if out[nd] == 0 {
			leaves++
		}
	}
	if roots != 1 || leaves != 1 {
		t.Errorf("%d roots and %d leaves, want 1 and 1", roots, leaves)
	}

	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	checkWords(t, "buffer 2", readWords(t, bufs[2]), f32bits(1))
	checkWords(t, "buffer 3", readWords(t, bufs[3]), f32bits(2))
	checkWords(t, "buffer 4 (1+2)", readWords(t, bufs[4]), f32bits(3))
}

// Two streams joined by events make a fork and a join.
func TestCaptureForkJoin(t *testing.T) {
	_, ctx := needGPU(t)
	s1, err := NewStream(ctx)
	must(t, err)
	defer s1.Close()
	s2, err := NewStream(ctx)
	must(t, err)
	defer s2.Close()
	forked, err := NewEvent(ctx)
	must(t, err)
	defer forked.Close()
	joined, err := NewEvent(ctx)
	must(t, err)
	defer joined.Close()
	const n = 1 << 16
	bufs := make([]*DeviceMemory, 4)
	for i := range bufs {
		bufs[i], err = Alloc(ctx, 4*n)
		must(t, err)
		defer bufs[i].Close()
		must(t, bufs[i].MemsetD32(0))
	}
	g, err := s1.Capture(CaptureThreadLocal, func() error {
		steps := []func() error{
			func() error { return bufs[0].MemsetD32Async(s1, 10) }, // A
			func() error { return forked.Record(s1) },
			func() error { return s2.WaitEvent(forked) },                  // s2 joins the capture
			func() error { return bufs[1].MemsetD32Async(s1, 11) },        // B, after A
			func() error { return CopyDeviceAsync(s2, bufs[2], bufs[0]) }, // C, after A
			func() error { return joined.Record(s2) },
			func() error { return s1.WaitEvent(joined) },
			func() error { return CopyDeviceAsync(s1, bufs[3], bufs[2]) }, // D, after B and C
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	must(t, skipIfMissing(t, err))
	defer g.Close()
	nodes, edges, in, out := degrees(t, g)
	if len(nodes) != 4 || len(edges) != 4 {
		t.Fatalf("%d nodes and %d edges, want 4 and 4 (A→B, A→C, B→D, C→D)", len(nodes), len(edges))
	}
	forks, joins := 0, 0
	for _, nd := range nodes {
		if out[nd] == 2 && in[nd] == 0 {
			forks++
		}
		if in[nd] == 2 && out[nd] == 0 {
			joins++
		}
	}
	if forks != 1 || joins != 1 {
		t.Errorf("%d fork nodes (2 out-edges) and %d join nodes (2 in-edges), want 1 and 1; edges %v", forks, joins, edges)
	}
	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	must(t, exec.Launch(s1))
	must(t, s1.Synchronize())
	checkWords(t, "B", readWords(t, bufs[1]), 11)
	checkWords(t, "D (A through C)", readWords(t, bufs[3]), 10)
}

func TestGraphExecUpdate(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 5000
	a, b, c := vectorInputs(t, ctx, n)
	d, err := Alloc(ctx, 4*n)
	must(t, err)
	defer d.Close()
	must(t, d.MemsetD32(0xbf800000))
	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 256)}, Block: Dim3{X: 256}}
	capture := func(out *DeviceMemory, extra bool) *Graph {
		t.Helper()
		g, err := s.Capture(CaptureThreadLocal, func() error {
			if extra {
				if err := out.MemsetD32Async(s, 0); err != nil {
					return err
				}
			}
			return k.Launch(s, cfg, a, b, out, uint32(n))
		})
		must(t, err)
		t.Cleanup(func() { g.Close() })
		return g
	}
	exec, err := capture(c, false).Instantiate()
	must(t, err)
	defer exec.Close()

	// Same topology, another output: the update applies, and launches
	// write d, not c.
	must(t, exec.Update(capture(d, false)))
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	checkSum(t, "updated output", d, n)
	checkWords(t, "the old output", readWords(t, c), 0xbf800000)

	// Another topology: refused, naming the driver's reason.
	err = exec.Update(capture(c, true))
	if !errors.Is(err, cu.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) || !strings.Contains(err.Error(), "CU_GRAPH_EXEC_UPDATE_ERROR") {
		t.Errorf("Update with another topology = %v, want CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and a reason", err)
	}
	// The executable graph is as it was.
	must(t, d.MemsetD32(0))
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	checkSum(t, "after a refused update", d, n)
}

// A graph launched many times repeats its work: c += a, N times.
func TestGraphLaunchRepeatedly(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n, times = 1000, 50
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = float32(i % 7)
	}
	a, err := AllocFrom(ctx, ones)
	must(t, err)
	defer a.Close()
	c, err := Alloc(ctx, 4*n)
	must(t, err)
	defer c.Close()
	must(t, c.MemsetD32(0))
	before := LiveObjects()
	g, err := s.Capture(CaptureGlobal, func() error {
		return k.Launch(s, LaunchConfig{Grid: Dim3{X: Blocks(n, 128)}, Block: Dim3{X: 128}}, a, c, c, uint32(n))
	})
	must(t, err)
	exec, err := g.Instantiate()
	must(t, err)
	gc, err := g.Clone()
	must(t, err)
	must(t, g.Close()) // the executable graph and the clone live on
	ec, err := exec.Clone()
	must(t, err)
	must(t, exec.Close())
	for range times {
		must(t, ec.Launch(s))
	}
	must(t, s.Synchronize())
	got := make([]float32, n)
	must(t, CopyFromDevice(got, c))
	for i, v := range got {
		if want := float32(times * (i % 7)); v != want {
			t.Fatalf("c[%d] = %v after %d launches, want %v", i, v, times, want)
		}
	}
	if l := LiveObjects(); l.Graphs != before.Graphs+1 || l.GraphExecs != before.GraphExecs+1 {
		t.Errorf("live %+v, before %+v", l, before)
	}
	must(t, gc.Close())
	must(t, ec.Close())
	if l := LiveObjects(); l.Graphs != before.Graphs || l.GraphExecs != before.GraphExecs || l.Contexts != before.Contexts {
		t.Errorf("live after the last Close %+v, before %+v", l, before)
	}
}

func TestCaptureErrors(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := LiveObjects()
	_, err = s.EndCapture()
	skipIfMissing(t, err)
	if !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_STATE) {
		t.Errorf("EndCapture without BeginCapture = %v, want CUDA_ERROR_ILLEGAL_STATE", err)
	}
	errFn := errors.New("subsystem failed")
	if _, err := s.Capture(CaptureThreadLocal, func() error { return errFn }); err != errFn {
		t.Errorf("Capture = %v, want fn's error", err)
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = s.Capture(CaptureThreadLocal, func() error { panic("in fn") })
	}()
	capturing, err := s.IsCapturing()
	must(t, err)
	if capturing {
		t.Fatal("stream still capturing after a failed Capture")
	}
	if after := LiveObjects(); after != before {
		t.Errorf("failed captures left %+v, before %+v", after, before)
	}

	// A stream forked into the capture and never joined back breaks it.
	s2, err := NewStream(ctx)
	must(t, err)
	defer s2.Close()
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	m, err := Alloc(ctx, 64)
	must(t, err)
	defer m.Close()
	must(t, s.BeginCapture(CaptureThreadLocal))
	capturing, err = s.IsCapturing()
	must(t, err)
	if !capturing {
		t.Error("IsCapturing false during a capture")
	}
	must(t, ev.Record(s))
	must(t, s2.WaitEvent(ev))
	must(t, m.MemsetD32Async(s2, 1))
	if g, err := s.EndCapture(); err == nil {
		g.Close()
		t.Error("EndCapture with an unjoined stream succeeded")
	} else {
		t.Logf("EndCapture with an unjoined stream: %v", err)
	}
	for _, x := range []*Stream{s, s2} {
		if capturing, err := x.IsCapturing(); err != nil || capturing {
			t.Errorf("after the broken capture: IsCapturing = %v, %v", capturing, err)
		}
	}
	must(t, s.Synchronize())
	must(t, s2.Synchronize())
}

// TestClosedGraphHandles drives the graph types' closed paths over fake
// cores: no driver is needed, and none is called.
func TestClosedGraphHandles(t *testing.T) {
	var live atomic.Int64
	gc := newShared(testKind(&live, func(*graphState) error { return nil }, nil))
	gc.val.raw = 0x1
	g := newGraphHandle(gc)
	ec := newShared(testKind(&live, func(*graphExecState) error { return nil }, nil))
	ec.val.raw = 0x2
	e := newGraphExecHandle(ec)
	sc := newShared(testKind(&live, func(*streamState) error { return nil }, nil))
	sc.val.raw = 0x3
	s := newStreamHandle(sc)
	must(t, g.Close())
	must(t, e.Close())
	must(t, s.Close())
	if n := live.Load(); n != 0 {
		t.Fatalf("live = %d after every handle closed", n)
	}
	checks := map[string]error{
		"GraphExec.Launch":    e.Launch(s),
		"GraphExec.Update":    e.Update(g),
		"Stream.BeginCapture": s.BeginCapture(CaptureGlobal),
	}
	_, checks["Stream.EndCapture"] = s.EndCapture()
	_, checks["Stream.Capture"] = s.Capture(CaptureGlobal, func() error { return nil })
	_, checks["Stream.IsCapturing"] = s.IsCapturing()
	_, checks["Graph.Nodes"] = g.Nodes()
	_, checks["Graph.NodeCount"] = g.NodeCount()
	_, checks["Graph.Edges"] = g.Edges()
	_, checks["Graph.Instantiate"] = g.Instantiate()
	_, checks["Graph.Clone"] = g.Clone()
	_, checks["GraphExec.Clone"] = e.Clone()
	for op, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s = %v, want ErrClosed", op, err)
		}
	}
	if g.Raw() != 0 || e.Raw() != 0 {
		t.Error("a closed handle still exposes its object")
	}
}

// TestCaptureEndsWhenEndCaptureFails: a cuStreamEndCapture that fails
// without ending the capture (an injected out-of-memory) must not leave
// the stream capturing: in global mode every unsafe call of the process
// would be refused from then on.
func TestCaptureEndsWhenEndCaptureFails(t *testing.T) {
	_, ctx := needGPU(t)
	if !cudatest.Active() {
		t.Skip("injects faults into the fake driver")
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	m, err := Alloc(ctx, 64)
	must(t, err)
	defer m.Close()
	before := LiveObjects()
	for _, mode := range []cu.CUstreamCaptureMode{CaptureGlobal, CaptureThreadLocal} {
		cudatest.FailCall("cuStreamEndCapture", 1, cu.CUDA_ERROR_OUT_OF_MEMORY)
		g, err := s.Capture(mode, func() error { return m.MemsetD32Async(s, 1) })
		if g != nil || !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) {
			t.Fatalf("Capture(%v) with cuStreamEndCapture failing = %v, %v; want its error", mode, g, err)
		}
		if capturing, err := s.IsCapturing(); err != nil || capturing {
			t.Fatalf("Capture(%v) failed: IsCapturing = %v, %v; want false", mode, capturing, err)
		}
		a, err := Alloc(ctx, 64)
		if err != nil {
			t.Fatalf("Alloc after the failed Capture(%v): %v", mode, err)
		}
		must(t, a.Close())
	}
	must(t, s.Synchronize())
	if after := LiveObjects(); after != before {
		t.Errorf("failed captures left %+v, before %+v", after, before)
	}
}
