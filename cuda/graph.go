package cuda

import (
	"fmt"
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
)

// Capture modes of BeginCapture: which CUDA calls that are unsafe during a
// capture (synchronous allocation and copies, say) the driver refuses, and
// where. See NVIDIA's documentation of cuStreamBeginCapture.
const (
	// CaptureGlobal refuses unsafe calls on every thread while the capture
	// lasts (unless that thread is itself capturing in relaxed mode).
	CaptureGlobal = cu.CU_STREAM_CAPTURE_MODE_GLOBAL
	// CaptureThreadLocal refuses unsafe calls on the capturing thread only.
	CaptureThreadLocal = cu.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	// CaptureRelaxed refuses nothing.
	CaptureRelaxed = cu.CU_STREAM_CAPTURE_MODE_RELAXED
)

// BeginCapture starts capturing the work enqueued on s into a graph instead
// of running it (cuStreamBeginCapture), until EndCapture returns the graph.
// Work enqueued through any handle of the queue (clones included) is
// captured, and so is work on other streams that wait, through an event,
// on work captured here: they join the capture and must be joined back
// into s before EndCapture.
//
// The driver requires EndCapture on the OS thread that called BeginCapture
// (in the global and thread-local modes), and what the mode refuses it
// refuses per thread: so BeginCapture locks the calling goroutine to its
// thread, and EndCapture, called from the same goroutine, unlocks it.
// Capture does both around a function.
//
// Work enqueued during a capture does not run: data the captured work
// reads must be in device memory when the graph is launched, not when it
// is captured.
//
// Prefer CaptureThreadLocal. A Go program runs on many OS threads, and in
// CaptureGlobal mode the driver refuses the unsafe calls of all of them
// while the capture lasts: a synchronous copy or allocation by another
// goroutine fails, and so does a free by the cleanup of an unreachable
// handle (the memory then leaks).
func (s *Stream) BeginCapture(mode cu.CUstreamCaptureMode) error {
	const op = "Stream.BeginCapture"
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	runtime.LockOSThread()
	captureBegin.RLock()
	err := cu.StreamBeginCapture(st.raw, mode)
	captureBegin.RUnlock()
	if err != nil {
		runtime.UnlockOSThread()
		return newError(op, "cuStreamBeginCapture", err)
	}
	return nil
}

// EndCapture ends the capture BeginCapture started on s
// (cuStreamEndCapture) and returns the captured graph. A capture that broke
// a rule of stream capture (an unsafe call in the mode, a stream not joined
// back) returns the driver's error, and the capture is over all the same;
// so is one that failed for another reason (EndCapture then ends it once
// more, returning the first error).
// EndCapture unlocks the thread that BeginCapture locked, unless this
// handle is closed or the driver says that s was not capturing or that
// this is the wrong thread.
func (s *Stream) EndCapture() (*Graph, error) {
	const op = "Stream.EndCapture"
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	var raw cu.CUgraph
	err := cu.StreamEndCapture(st.raw, &raw)
	notOurs := err == error(cu.CUDA_ERROR_ILLEGAL_STATE) || err == error(cu.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
	if err != nil && !notOurs && stillCapturing(st.raw) {
		// A failure that did not end the capture (out of memory, say)
		// would leave the stream capturing, and in global mode every
		// unsafe call of the process refused: end it once more, keeping
		// the first error.
		var again cu.CUgraph
		if cu.StreamEndCapture(st.raw, &again) == nil && again != 0 {
			_ = cu.GraphDestroy(again)
		}
	}
	if !notOurs {
		runtime.UnlockOSThread()
		// A capture ended: destroys it refused may go through now.
		retryDeferred()
	}
	if err != nil {
		if raw != 0 {
			_ = cu.GraphDestroy(raw)
		}
		return nil, newError(op, "cuStreamEndCapture", err)
	}
	cc := st.ctx.core // held by the stream, which this call holds
	cc.acquire()
	core := newShared(&graphKind)
	core.val.raw = raw
	core.val.ctx.core = cc
	return newGraphHandle(core), nil
}

// stillCapturing reports whether raw is capturing, invalidated or not; a
// stream whose state cannot be read is taken as not capturing.
func stillCapturing(raw cu.CUstream) bool {
	var status cu.CUstreamCaptureStatus
	return cu.StreamIsCapturing(raw, &status) == nil && status != cu.CU_STREAM_CAPTURE_STATUS_NONE
}

// Capture captures into a graph the work that fn enqueues on s, and on
// streams that fn joins to s's capture (BeginCapture, fn, EndCapture on one
// locked thread). If fn returns an error or panics the capture is ended
// and its graph destroyed, and fn's error is returned.
func (s *Stream) Capture(mode cu.CUstreamCaptureMode, fn func() error) (g *Graph, err error) {
	if err := s.BeginCapture(mode); err != nil {
		return nil, err
	}
	ended := false
	defer func() {
		if !ended { // fn panicked
			if g, _ := s.EndCapture(); g != nil {
				_ = g.Close()
			}
		}
	}()
	ferr := fn()
	ended = true
	g, err = s.EndCapture()
	if ferr != nil {
		if g != nil {
			_ = g.Close()
		}
		return nil, ferr
	}
	return g, err
}

// IsCapturing reports whether s is capturing into a graph
// (cuStreamIsCapturing). A capture invalidated by a broken rule still
// counts until EndCapture.
func (s *Stream) IsCapturing() (bool, error) {
	const op = "Stream.IsCapturing"
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return false, h.closedError(op)
	}
	var status cu.CUstreamCaptureStatus
	err := cu.StreamIsCapturing(st.raw, &status)
	h.exit()
	if err != nil {
		return false, newError(op, "cuStreamIsCapturing", err)
	}
	return status != cu.CU_STREAM_CAPTURE_STATUS_NONE, nil
}

// Graph is a shared handle to a CUDA graph: work captured from streams, to
// be instantiated once and launched many times. Clone, Close and the
// Context reference work as for Stream; the last Close destroys it
// (cuGraphDestroy). Executable graphs made from it live on their own.
//
// All methods are safe for concurrent use; the driver does not allow a
// graph to be changed concurrently, and nothing here changes one.
type Graph struct {
	h handle[graphState]
}

type graphState struct {
	raw cu.CUgraph // first: see shared.val
	ctx ctxRef     // the context of the captured stream, or NewGraph's
	// keep holds what the nodes of a graph made by NewGraph use
	// (graphbuild.go); nil for a captured graph.
	keep *graphKeep
	// parent is held by the body of a conditional node (graphcond.go),
	// which its parent graph owns; nil otherwise.
	parent *shared[graphState]
}

func (g *Graph) handle() *handle[graphState] {
	if g == nil {
		return nil
	}
	return &g.h
}

func newGraphHandle(core *shared[graphState]) *Graph {
	g := &Graph{}
	attach(g, &g.h, core)
	return g
}

func destroyGraph(st *graphState) error {
	return check("Graph.Close", "cuGraphDestroy", cu.GraphDestroy(st.raw))
}

func dropGraph(st *graphState) error {
	st.keep.release()
	err := st.ctx.release()
	if st.parent != nil {
		if perr := st.parent.release(); err == nil {
			err = perr
		}
	}
	return err
}

// Clone returns another handle to the same graph (not a copy of the graph:
// that is cuGraphClone), to be closed on its own.
func (g *Graph) Clone() (*Graph, error) {
	return cloneAs(g.handle(), "Graph.Clone", newGraphHandle)
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close destroys the graph and releases its context.
func (g *Graph) Close() error { return g.handle().close("Graph.Close") }

// Raw returns the driver's graph handle, or 0 once this handle is closed.
func (g *Graph) Raw() cu.CUgraph {
	st, ok := g.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// Nodes returns the graph's nodes (cuGraphGetNodes), in the driver's order.
func (g *Graph) Nodes() ([]cu.CUgraphNode, error) {
	const op = "Graph.Nodes"
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	var n uint64
	if err := cu.GraphGetNodes(st.raw, nil, &n); err != nil {
		return nil, newError(op, "cuGraphGetNodes", err)
	}
	if n == 0 {
		return nil, nil
	}
	nodes := make([]cu.CUgraphNode, n)
	if err := cu.GraphGetNodes(st.raw, &nodes[0], &n); err != nil {
		return nil, newError(op, "cuGraphGetNodes", err)
	}
	return nodes[:min(n, uint64(len(nodes)))], nil
}

// NodeCount returns the number of nodes in the graph.
func (g *Graph) NodeCount() (int, error) {
	const op = "Graph.NodeCount"
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return 0, h.closedError(op)
	}
	var n uint64
	err := cu.GraphGetNodes(st.raw, nil, &n)
	h.exit()
	if err != nil {
		return 0, newError(op, "cuGraphGetNodes", err)
	}
	return int(n), nil
}

// GraphEdge is a dependency of a graph: To runs after From.
type GraphEdge struct{ From, To cu.CUgraphNode }

// Edges returns the graph's dependencies (cuGraphGetEdges; CUDA 13's
// cuGraphGetEdges_v2 with the bindings of 13.0).
func (g *Graph) Edges() ([]GraphEdge, error) {
	const op = "Graph.Edges"
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	var n uint64
	if err := graphGetEdges(st.raw, nil, nil, &n); err != nil {
		return nil, newError(op, graphGetEdgesName, err)
	}
	if n == 0 {
		return nil, nil
	}
	from := make([]cu.CUgraphNode, n)
	to := make([]cu.CUgraphNode, n)
	if err := graphGetEdges(st.raw, &from[0], &to[0], &n); err != nil {
		return nil, newError(op, graphGetEdgesName, err)
	}
	edges := make([]GraphEdge, min(n, uint64(len(from))))
	for i := range edges {
		edges[i] = GraphEdge{from[i], to[i]}
	}
	return edges, nil
}

// Instantiate makes an executable graph of g (cuGraphInstantiate, with no
// flags), to launch as many times as wanted. Later changes to g do not
// affect it; GraphExec.Update applies another graph's parameters to it.
func (g *Graph) Instantiate() (*GraphExec, error) {
	const op = "Graph.Instantiate"
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	cc := st.ctx.core // held by the graph, which this call holds
	cc.acquire()
	var exec cu.CUgraphExec
	err := bind(op, cc.val.raw, func() error {
		if err := graphInstantiate(&exec, st.raw); err != nil {
			exec = 0
			return newError(op, graphInstantiateName, err)
		}
		return nil
	})
	if err != nil {
		if exec != 0 { // made, then the context's pop failed: nobody owns it
			_ = cu.GraphExecDestroy(exec)
		}
		_ = cc.release()
		return nil, err
	}
	// One allocation for the first handle and the core, as for events and
	// streams: a launch then reads one allocation per handle.
	b := &graphExecBox{}
	b.core.init(&graphExecKind)
	b.core.val.raw = exec
	b.core.val.ctx.core = cc
	b.core.val.keep = &execKeep{src: h.core}
	b.core.val.keep.add(st.keep)
	attachBoxed(b, &b.e.h, &b.core)
	return &b.e, nil
}

// graphExecBox is a new executable graph's first handle and its core
// (attachBoxed).
type graphExecBox struct {
	e    GraphExec
	core shared[graphExecState]
}

var _ stateCopier[graphExecState] = (*graphExecState)(nil)

func (s *graphExecState) copyTo(d *graphExecState) {
	d.raw, d.ctx.core, d.keep = s.raw, s.ctx.core, s.keep
}

// GraphExec is a shared handle to an executable graph, made by
// Graph.Instantiate. Clone, Close and the Context reference work as for
// Stream; the last Close destroys it (cuGraphExecDestroy; launches already
// enqueued still run).
//
// All methods are safe for concurrent use, except that Update must not run
// concurrently with a Launch of the same graph.
type GraphExec struct {
	h handle[graphExecState]
}

type graphExecState struct {
	raw cu.CUgraphExec // first: see shared.val
	ctx ctxRef
	// keep holds what the graphs it was made and updated from hold for
	// their nodes, and what its own parameter changes use (graphbuild.go).
	keep *execKeep
}

func (e *GraphExec) handle() *handle[graphExecState] {
	if e == nil {
		return nil
	}
	return &e.h
}

func newGraphExecHandle(core *shared[graphExecState]) *GraphExec {
	e := &GraphExec{}
	attach(e, &e.h, core)
	return e
}

func destroyGraphExec(st *graphExecState) error {
	return check("GraphExec.Close", "cuGraphExecDestroy", cu.GraphExecDestroy(st.raw))
}

func dropGraphExec(st *graphExecState) error {
	st.keep.release()
	return st.ctx.release()
}

// Clone returns another handle to the same executable graph, to be closed
// on its own.
func (e *GraphExec) Clone() (*GraphExec, error) {
	return cloneAs(e.handle(), "GraphExec.Clone", newGraphExecHandle)
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close destroys the executable graph and releases its
// context.
func (e *GraphExec) Close() error { return e.handle().close("GraphExec.Close") }

// Raw returns the driver's handle, or 0 once this handle is closed.
func (e *GraphExec) Raw() cu.CUgraphExec {
	st, ok := e.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// Launch enqueues the whole graph on s (cuGraphLaunch): it runs after the
// work enqueued on s before, and work enqueued after waits for all of it.
// It binds no context and does not allocate. Launches of one executable
// graph run one after another, whatever streams they are on.
func (e *GraphExec) Launch(s *Stream) error {
	const op, fn = "GraphExec.Launch", "cuGraphLaunch"
	eh, sh := e.handle(), s.handle()
	ec, sc := hotReady(eh), hotReady(sh)
	switch {
	case ec == nil:
		return eh.closedError(op)
	case sc == nil:
		return sh.closedError(op + " (stream)")
	}
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return hotResult(op, fn, " (stream)", hotGraphLaunch(f.graphLaunch, eh, sh, uintptr(ec.val.raw), uintptr(sc.val.raw)))
}

// Update gives e the parameters of g, a graph of the same topology, as
// cuGraphExecUpdate allows (kernel arguments, memset values, copy
// addresses, ...): cheaper than a new Instantiate. A g that differs in a
// way the driver cannot apply returns an error matching
// cu.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE that names the driver's reason
// (CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, ...), and e stays as it was.
func (e *GraphExec) Update(g *Graph) error {
	const op = "GraphExec.Update"
	var hs holds
	defer hs.release()
	eh, gh := e.handle(), g.handle()
	if err := hs.all(op, arg{"executable graph", eh}, arg{"graph", gh}); err != nil {
		return err
	}
	st, gs := &eh.core.val, &gh.core.val
	err := bind(op, st.ctx.raw(), func() error {
		return graphExecUpdate(op, st.raw, gs.raw)
	})
	if err == nil {
		// e now runs g's nodes, and what they use must outlive it.
		st.keep.add(gs.keep)
	}
	return err
}

// updateError is the error of a failed cuGraphExecUpdate, naming the
// driver's reason.
func updateError(op string, res cu.CUgraphExecUpdateResult, err error) error {
	return newError(op, "cuGraphExecUpdate", fmt.Errorf("%v: %w", res, err))
}

var graphKind = objectKind[graphState]{destroy: destroyGraph, drop: dropGraph, live: &liveGraphs, name: "graph"}
var graphExecKind = objectKind[graphExecState]{destroy: destroyGraphExec, drop: dropGraphExec, live: &liveGraphExecs, grace: hotGrace, name: "executable graph"}
