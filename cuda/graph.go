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
	st, err := s.state(op)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	if err := cu.StreamBeginCapture(st.raw, mode); err != nil {
		runtime.UnlockOSThread()
		return newError(op, "cuStreamBeginCapture", err)
	}
	runtime.KeepAlive(s)
	return nil
}

// EndCapture ends the capture BeginCapture started on s
// (cuStreamEndCapture) and returns the captured graph. A capture that broke
// a rule of stream capture (an unsafe call in the mode, a stream not joined
// back) returns the driver's error, and the capture is over all the same.
// EndCapture unlocks the thread that BeginCapture locked, unless this
// handle is closed or the driver says that s was not capturing or that
// this is the wrong thread.
func (s *Stream) EndCapture() (*Graph, error) {
	const op = "Stream.EndCapture"
	st, err := s.state(op)
	if err != nil {
		return nil, err
	}
	var raw cu.CUgraph
	err = cu.StreamEndCapture(st.raw, &raw)
	if err != error(cu.CUDA_ERROR_ILLEGAL_STATE) && err != error(cu.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) {
		runtime.UnlockOSThread()
	}
	if err != nil {
		if raw != 0 {
			_ = cu.GraphDestroy(raw)
		}
		return nil, newError(op, "cuStreamEndCapture", err)
	}
	pc, err := st.ctx.pinnedClone(op)
	if err != nil {
		_ = cu.GraphDestroy(raw)
		return nil, err
	}
	runtime.KeepAlive(s)
	return newGraphHandle(newShared(graphState{raw: raw, ctx: pc}, &liveGraphs, destroyGraph)), nil
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
	st, err := s.state(op)
	if err != nil {
		return false, err
	}
	var status cu.CUstreamCaptureStatus
	err = cu.StreamIsCapturing(st.raw, &status)
	runtime.KeepAlive(s)
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
	ctx *Context   // pinned: the context of the captured stream
}

func newGraphHandle(core *shared[graphState]) *Graph {
	g := &Graph{}
	attach(g, &g.h, core)
	return g
}

func destroyGraph(st *graphState) error {
	err := check("Graph.Close", "cuGraphDestroy", cu.GraphDestroy(st.raw))
	if cerr := st.ctx.h.closeOwned(); err == nil {
		err = cerr
	}
	return err
}

// Clone returns another handle to the same graph (not a copy of the graph:
// that is cuGraphClone), to be closed on its own.
func (g *Graph) Clone() (*Graph, error) {
	core, ok := g.h.clone()
	if !ok {
		return nil, closedError("Graph.Clone")
	}
	return newGraphHandle(core), nil
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close destroys the graph and releases its context.
func (g *Graph) Close() error { return g.h.close() }

// Raw returns the driver's graph handle, or 0 once this handle is closed.
func (g *Graph) Raw() cu.CUgraph {
	st, ok := g.h.get()
	if !ok {
		return 0
	}
	return st.raw
}

func (g *Graph) state(op string) (*graphState, error) {
	if g == nil {
		return nil, closedError(op)
	}
	st, ok := g.h.get()
	if !ok {
		return nil, closedError(op)
	}
	return st, nil
}

// Nodes returns the graph's nodes (cuGraphGetNodes), in the driver's order.
func (g *Graph) Nodes() ([]cu.CUgraphNode, error) {
	const op = "Graph.Nodes"
	st, err := g.state(op)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(g)
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
	st, err := g.state(op)
	if err != nil {
		return 0, err
	}
	var n uint64
	err = cu.GraphGetNodes(st.raw, nil, &n)
	runtime.KeepAlive(g)
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
	st, err := g.state(op)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(g)
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
	st, err := g.state(op)
	if err != nil {
		return nil, err
	}
	pc, err := st.ctx.pinnedClone(op)
	if err != nil {
		return nil, err
	}
	var exec cu.CUgraphExec
	err = bind(op, pc.h.core.val.raw, func() error {
		if err := graphInstantiate(&exec, st.raw); err != nil {
			exec = 0
			return newError(op, graphInstantiateName, err)
		}
		return nil
	})
	runtime.KeepAlive(g)
	if err != nil {
		if exec != 0 { // made, then the context's pop failed: nobody owns it
			_ = cu.GraphExecDestroy(exec)
		}
		_ = pc.h.closeOwned()
		return nil, err
	}
	return newGraphExecHandle(newShared(graphExecState{raw: exec, ctx: pc}, &liveGraphExecs, destroyGraphExec)), nil
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
	ctx *Context       // pinned reference
}

func newGraphExecHandle(core *shared[graphExecState]) *GraphExec {
	e := &GraphExec{}
	attach(e, &e.h, core)
	return e
}

func destroyGraphExec(st *graphExecState) error {
	err := check("GraphExec.Close", "cuGraphExecDestroy", cu.GraphExecDestroy(st.raw))
	if cerr := st.ctx.h.closeOwned(); err == nil {
		err = cerr
	}
	return err
}

// Clone returns another handle to the same executable graph, to be closed
// on its own.
func (e *GraphExec) Clone() (*GraphExec, error) {
	core, ok := e.h.clone()
	if !ok {
		return nil, closedError("GraphExec.Clone")
	}
	return newGraphExecHandle(core), nil
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close destroys the executable graph and releases its
// context.
func (e *GraphExec) Close() error { return e.h.close() }

// Raw returns the driver's handle, or 0 once this handle is closed.
func (e *GraphExec) Raw() cu.CUgraphExec {
	st, ok := e.h.get()
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
	const op = "GraphExec.Launch"
	st, ok := e.h.get()
	if !ok {
		return closedError(op)
	}
	ss, err := s.state(op + " (stream)")
	if err != nil {
		return err
	}
	err = cu.GraphLaunch(st.raw, ss.raw)
	runtime.KeepAlive(e)
	runtime.KeepAlive(s)
	return check(op, "cuGraphLaunch", err)
}

// Update gives e the parameters of g, a graph of the same topology, as
// cuGraphExecUpdate allows (kernel arguments, memset values, copy
// addresses, ...): cheaper than a new Instantiate. A g that differs in a
// way the driver cannot apply returns an error matching
// cu.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE that names the driver's reason
// (CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, ...), and e stays as it was.
func (e *GraphExec) Update(g *Graph) error {
	const op = "GraphExec.Update"
	st, ok := e.h.get()
	if !ok {
		return closedError(op)
	}
	gs, err := g.state(op + " (graph)")
	if err != nil {
		return err
	}
	err = bind(op, st.ctx.h.core.val.raw, func() error {
		return graphExecUpdate(op, st.raw, gs.raw)
	})
	runtime.KeepAlive(e)
	runtime.KeepAlive(g)
	return err
}

// updateError is the error of a failed cuGraphExecUpdate, naming the
// driver's reason.
func updateError(op string, res cu.CUgraphExecUpdateResult, err error) error {
	return newError(op, "cuGraphExecUpdate", fmt.Errorf("%v: %w", res, err))
}
