package cuda

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

func checkFloats(t *testing.T, what string, got []float32, want func(i int) float32) {
	t.Helper()
	for i, v := range got {
		if v != want(i) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, v, want(i))
		}
	}
}

// A graph built node by node: a fill and a copy from the host feed a
// kernel, whose result goes back to the host, with a host node and an
// event record after the kernel. Then the executable graph's kernel and
// copy take new parameters, and a graph of the same shape updates it.
func TestGraphBuild(t *testing.T) {
	_, ctx := needGPU(t)
	_, vadd := vectorAdd(t, ctx)
	const n = 1000
	before := LiveObjects()
	a, err := AllocSlice[float32](ctx, n)
	must(t, err)
	defer a.Close()
	b, err := AllocSlice[float32](ctx, n)
	must(t, err)
	defer b.Close()
	c, err := AllocSlice[float32](ctx, n)
	must(t, err)
	defer c.Close()
	in, err := AllocHost[float32](ctx, n)
	must(t, err)
	defer in.Close()
	out, err := AllocHost[float32](ctx, n)
	must(t, err)
	defer out.Close()
	out2, err := AllocHost[float32](ctx, n)
	must(t, err)
	defer out2.Close()
	for i := range in.Slice() {
		in.Slice()[i] = float32(i)
	}
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()

	g, err := NewGraph(ctx)
	must(t, err)
	if got := LiveObjects().Graphs; got != before.Graphs+1 {
		t.Errorf("live graphs %d, want %d", got, before.Graphs+1)
	}
	var ran atomic.Int32
	build := func(g *Graph, fillValue float32) (kernel, copyOut GraphNode) {
		t.Helper()
		fill, err := AddFill(g, nil, a, fillValue)
		must(t, err)
		up, err := g.AddCopy(nil, b, in)
		must(t, err)
		kernel, err = g.AddKernel([]GraphNode{fill, up}, vadd, Linear(n, 128), a, b, c, uint32(n))
		must(t, err)
		_, err = g.AddHost([]GraphNode{kernel}, func() { ran.Add(1) })
		must(t, err)
		_, err = g.AddEventRecord([]GraphNode{kernel}, ev)
		must(t, err)
		copyOut, err = g.AddCopy([]GraphNode{kernel}, out, c)
		must(t, err)
		return kernel, copyOut
	}
	kernel, copyOut := build(g, 1.5)
	nodes, edges, in1, _ := degrees(t, g)
	if len(nodes) != 6 || len(edges) != 5 {
		t.Fatalf("%d nodes and %d edges, want 6 and 5", len(nodes), len(edges))
	}
	if in1[kernel.Raw()] != 2 {
		t.Errorf("the kernel node has %d dependencies, want 2", in1[kernel.Raw()])
	}

	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	for range 2 {
		must(t, exec.Launch(s))
	}
	must(t, s.Synchronize())
	checkFloats(t, "out", out.Slice(), func(i int) float32 { return 1.5 + float32(i) })
	if got := ran.Load(); got != 2 {
		t.Errorf("the host node ran %d times, want 2", got)
	}
	if done, err := ev.Query(); err != nil || !done {
		t.Errorf("the event recorded by the graph: done %v, %v", done, err)
	}

	// New kernel arguments: c = b + b; and the copy to the other buffer.
	must(t, exec.SetKernel(kernel, vadd, Linear(n, 128), b, b, c, uint32(n)))
	must(t, exec.SetCopy(copyOut, out2, c))
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	checkFloats(t, "out2", out2.Slice(), func(i int) float32 { return 2 * float32(i) })
	checkFloats(t, "out (no longer copied to)", out.Slice(), func(i int) float32 { return 1.5 + float32(i) })

	// A graph of the same shape with another fill value updates it, and
	// brings back its own kernel and copy parameters.
	g2, err := NewGraph(ctx)
	must(t, err)
	build(g2, -4)
	must(t, exec.Update(g2))
	must(t, g2.Close())
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	checkFloats(t, "out after Update", out.Slice(), func(i int) float32 { return -4 + float32(i) })

	// The executable graph keeps what its graphs' nodes use, host
	// functions included, after the graphs are gone.
	must(t, g.Close())
	runtime.GC()
	ran.Store(0)
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	if got := ran.Load(); got != 1 {
		t.Errorf("after the graphs' Close the host node ran %d times, want 1", got)
	}
	must(t, exec.Close())
	if got := LiveObjects(); got.Graphs != before.Graphs || got.GraphExecs != before.GraphExecs {
		t.Errorf("live graphs %d and executable graphs %d, want %d and %d", got.Graphs, got.GraphExecs, before.Graphs, before.GraphExecs)
	}
	n0 := 0
	graphHostFns.Range(func(any, any) bool { n0++; return true })
	if n0 != 0 {
		t.Errorf("%d host functions kept after every graph is gone", n0)
	}
}

// The graph holds the memory of its copy and fill nodes: closing the
// caller's handles does not free it under the graph.
func TestGraphBuildHoldsMemory(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := LiveObjects()
	d, err := AllocSlice[uint32](ctx, 64)
	must(t, err)
	h, err := AllocHost[uint32](ctx, 64)
	must(t, err)
	g, err := NewGraph(ctx)
	must(t, err)
	fill, err := AddFill(g, nil, d, 7)
	must(t, err)
	_, err = g.AddCopy([]GraphNode{fill}, h, d)
	must(t, err)
	exec, err := g.Instantiate()
	must(t, err)
	must(t, g.Close())
	view := h.Slice()
	must(t, d.Close())
	must(t, h.Close())
	if got := LiveObjects(); got.DeviceMemory != before.DeviceMemory+1 || got.HostBuffers != before.HostBuffers+1 {
		t.Errorf("device memory %d and host buffers %d live, want %d and %d: the executable graph holds them",
			got.DeviceMemory, got.HostBuffers, before.DeviceMemory+1, before.HostBuffers+1)
	}
	must(t, exec.Launch(s))
	must(t, s.Synchronize())
	for i, v := range view {
		if v != 7 {
			t.Fatalf("host[%d] = %d, want 7", i, v)
		}
	}
	must(t, exec.Close())
	if got := LiveObjects(); got.DeviceMemory != before.DeviceMemory || got.HostBuffers != before.HostBuffers {
		t.Errorf("device memory %d and host buffers %d live after the executable graph's Close, want %d and %d",
			got.DeviceMemory, got.HostBuffers, before.DeviceMemory, before.HostBuffers)
	}
}

// An event wait node orders a graph after work on another stream, and an
// empty node joins branches.
func TestGraphBuildEventWaitAndEmpty(t *testing.T) {
	_, ctx := needGPU(t)
	s1, err := NewStream(ctx)
	must(t, err)
	defer s1.Close()
	s2, err := NewStream(ctx)
	must(t, err)
	defer s2.Close()
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	src, err := AllocSlice[uint32](ctx, 256)
	must(t, err)
	defer src.Close()
	dst, err := AllocHost[uint32](ctx, 256)
	must(t, err)
	defer dst.Close()
	g, err := NewGraph(ctx)
	must(t, err)
	defer g.Close()
	wait, err := g.AddEventWait(nil, ev)
	must(t, err)
	other, err := g.AddEmpty(nil)
	must(t, err)
	join, err := g.AddEmpty([]GraphNode{wait, other})
	must(t, err)
	_, err = g.AddCopy([]GraphNode{join}, dst, src)
	must(t, err)
	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	must(t, src.FillAsync(s2, 42))
	must(t, ev.Record(s2))
	must(t, exec.Launch(s1))
	must(t, s1.Synchronize())
	for i, v := range dst.Slice() {
		if v != 42 {
			t.Fatalf("dst[%d] = %d, want 42 (the copy ran before the wait?)", i, v)
		}
	}
}

func TestGraphBuildErrors(t *testing.T) {
	_, ctx := needGPU(t)
	_, vadd := vectorAdd(t, ctx)
	d, err := AllocSlice[float32](ctx, 16)
	must(t, err)
	defer d.Close()
	g, err := NewGraph(ctx)
	must(t, err)
	defer g.Close()
	other, err := NewGraph(ctx)
	must(t, err)
	defer other.Close()
	foreign, err := other.AddEmpty(nil)
	must(t, err)
	if _, err := g.AddEmpty([]GraphNode{foreign}); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a dependency of another graph: %v", err)
	}
	if _, err := g.AddEmpty([]GraphNode{{}}); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("the zero GraphNode as a dependency: %v", err)
	}
	if _, err := g.AddHost(nil, nil); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a nil host function: %v", err)
	}
	d64, err := AllocSlice[float64](ctx, 4)
	must(t, err)
	defer d64.Close()
	if _, err := AddFill(g, nil, d64, 1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a fill of 8-byte elements: %v", err)
	}
	if _, err := g.AddCopy(nil, d64, d); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a copy of 64 bytes into 32: %v", err)
	}
	// The arguments are checked where the driver tells the kernel's
	// parameters (not with the bindings of CUDA 11.8).
	if _, err := g.AddKernel(nil, vadd, Linear(16, 16), d, d, d); vadd.paramsKnown && !errors.Is(err, ErrKernelArgs) {
		t.Errorf("a kernel node with 3 of 4 arguments: %v", err)
	}
	if _, err := g.AddKernel(nil, vadd, LaunchConfig{}, d, d, d, uint32(16)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a kernel node of 0 blocks: %v", err)
	}
	if _, err := AddMemFree(g, nil, d); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a free node of memory no graph allocated: %v", err)
	}
	if n, err := g.NodeCount(); vadd.paramsKnown && (err != nil || n != 0) {
		t.Errorf("after refused nodes the graph has %d nodes (%v), want 0", n, err)
	}

	g, err = NewGraph(ctx)
	must(t, err)
	defer g.Close()
	k, err := g.AddKernel(nil, vadd, Linear(16, 16), d, d, d, uint32(16))
	must(t, err)
	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	if err := exec.SetKernel(foreign, vadd, Linear(16, 16), d, d, d, uint32(16)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("SetKernel of another graph's node: %v", err)
	}
	if err := exec.SetKernel(k, vadd, Linear(16, 16), d, d); vadd.paramsKnown && !errors.Is(err, ErrKernelArgs) {
		t.Errorf("SetKernel with 2 of 4 arguments: %v", err)
	}

	// Captured graphs take no nodes.
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	captured, err := s.Capture(CaptureThreadLocal, func() error { return d.FillAsync(s, 0) })
	must(t, err)
	if _, err := captured.AddEmpty(nil); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a node added to a captured graph: %v", err)
	}
	must(t, captured.Close())

	// Closed and nil handles.
	must(t, other.Close())
	if _, err := other.AddEmpty(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("AddEmpty on a closed graph: %v", err)
	}
	var nilGraph *Graph
	if _, err := nilGraph.AddEmpty(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("AddEmpty on a nil graph: %v", err)
	}
	if _, err := g.AddCopy(nil, d, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a copy from nil: %v", err)
	}
	closedSlice, err := d.Clone()
	must(t, err)
	must(t, closedSlice.Close())
	if _, err := AddFill(g, nil, closedSlice, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("a fill of a closed slice: %v", err)
	}
	if _, err := NewGraph(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewGraph(nil): %v", err)
	}
}

// Memory nodes and child graphs: the fake driver models neither.
func TestGraphBuildMemoryAndChild(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 4096
	out, err := AllocHost[uint32](ctx, n)
	must(t, err)
	defer out.Close()
	child, err := NewGraph(ctx)
	must(t, err)
	defer child.Close()
	g, err := NewGraph(ctx)
	must(t, err)
	defer g.Close()
	mem, alloc, err := AddMemAlloc[uint32](g, nil, n)
	if errors.Is(err, ErrMissingFunction) || errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		t.Skipf("the driver has no graph memory nodes: %v", err)
	}
	must(t, err)
	defer mem.Close()
	if mem.Len() != n || mem.Ptr() == 0 {
		t.Fatalf("graph memory of %d elements at %#x", mem.Len(), mem.Ptr())
	}
	_, err = AddFill(child, nil, mem, 0xabcd)
	must(t, err)
	sub, err := g.AddChild([]GraphNode{alloc}, child)
	if errors.Is(err, ErrMissingFunction) || errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		t.Skipf("the driver has no child graph nodes: %v", err)
	}
	must(t, err)
	down, err := g.AddCopy([]GraphNode{sub}, out, mem)
	must(t, err)
	_, err = AddMemFree(g, []GraphNode{down}, mem)
	must(t, err)
	if _, err := g.AddChild(nil, g); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("a graph as its own child: %v", err)
	}
	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	for range 3 {
		must(t, exec.Launch(s))
	}
	must(t, s.Synchronize())
	for i, v := range out.Slice() {
		if v != 0xabcd {
			t.Fatalf("out[%d] = %#x, want 0xabcd", i, v)
		}
	}
}
