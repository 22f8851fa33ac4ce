package cuda

/*
#include <stdint.h>
#include <stdlib.h>

extern void gocudaGraphHostNode(uintptr_t id);

// gocuda_graph_host_fn is the host function of every host node a Graph
// builds: its argument is the id of the Go function to run, which
// gocudaGraphHostNode looks up, so that no Go pointer is handed to the
// driver and a node that runs after its function was dropped finds
// nothing rather than freed memory.
static void gocuda_graph_host_fn(void *arg) { gocudaGraphHostNode((uintptr_t)arg); }

// gocuda_host_node_params fills a CUDA_HOST_NODE_PARAMS (a function
// pointer and its argument) in C memory.
static void gocuda_host_node_params(void *p, uintptr_t id) {
	((void **)p)[0] = (void *)gocuda_graph_host_fn;
	((void **)p)[1] = (void *)id;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// GraphNode is a node of a Graph built with its Add methods, to name as a
// dependency of later nodes and in the GraphExec methods that change a
// node's parameters. The zero GraphNode is no node.
type GraphNode struct {
	raw cu.CUgraphNode
	g   *shared[graphState] // the graph the node belongs to
}

// Raw returns the driver's node handle (0 for the zero GraphNode). It is
// valid while the graph is.
func (n GraphNode) Raw() cu.CUgraphNode { return n.raw }

// NewGraph creates an empty graph in ctx (cuGraphCreate), to be built node
// by node with the Add methods and the generic AddFill, AddMemAlloc and
// AddMemFree, then instantiated.
//
// A graph built this way holds what its nodes use until it and every
// executable graph made from it are destroyed: the kernels' modules, the
// memory of its copy and fill nodes, its events, the Go functions of its
// host nodes. Memory a kernel node's arguments point to is not held: as
// for Launch, it must stay allocated while the graph can run.
func NewGraph(ctx *Context) (*Graph, error) {
	const op = "NewGraph"
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	var raw cu.CUgraph
	if err := cu.GraphCreate(&raw, 0); err != nil {
		_ = cc.release()
		return nil, newError(op, "cuGraphCreate", err)
	}
	core := newShared(&graphKind)
	core.val.raw = raw
	core.val.ctx.core = cc
	core.val.keep = newGraphKeep()
	return newGraphHandle(core), nil
}

// graphKeep is what a built graph's nodes use and the graph holds for
// them, shared by the graph and the executable graphs made from it or
// updated from it: the last of them to go gives it back.
type graphKeep struct {
	refs    atomic.Int32
	mu      sync.Mutex
	hostFns []uint64     // ids in graphHostFns
	held    []releaser   // references on the objects the nodes use
	kids    []*graphKeep // child graphs' keeps
}

func newGraphKeep() *graphKeep {
	k := &graphKeep{}
	k.refs.Store(1)
	return k
}

func (k *graphKeep) acquire() *graphKeep {
	if k != nil {
		k.refs.Add(1)
	}
	return k
}

func (k *graphKeep) release() {
	if k == nil || k.refs.Add(-1) != 0 {
		return
	}
	for _, id := range k.hostFns {
		graphHostFns.Delete(id)
	}
	for _, r := range k.held {
		// The objects' own errors have nobody to go to here: a refused
		// destroy still lands in the deferred list.
		_ = r.release()
	}
	for _, kid := range k.kids {
		kid.release()
	}
	k.hostFns, k.held, k.kids = nil, nil, nil
}

func (k *graphKeep) hold(r releaser) {
	k.mu.Lock()
	k.held = append(k.held, r)
	k.mu.Unlock()
}

// execKeep is what an executable graph holds: the keeps of the graphs it
// was made and updated from, and its own for the parameters set on it.
type execKeep struct {
	mu    sync.Mutex
	keeps []*graphKeep
	src   *shared[graphState] // the graph it was instantiated from, for its nodes
}

func (x *execKeep) add(k *graphKeep) {
	if x == nil || k == nil {
		return
	}
	x.mu.Lock()
	x.keeps = append(x.keeps, k.acquire())
	x.mu.Unlock()
}

func (x *execKeep) release() {
	if x == nil {
		return
	}
	x.mu.Lock()
	ks := x.keeps
	x.keeps = nil
	x.mu.Unlock()
	for _, k := range ks {
		k.release()
	}
}

// The Go functions of host nodes, by the id their node passes.
var (
	graphHostFns  sync.Map // uint64 → func()
	graphHostNext atomic.Uint64
)

//export gocudaGraphHostNode
func gocudaGraphHostNode(id C.uintptr_t) {
	if fn, ok := graphHostFns.Load(uint64(id)); ok {
		fn.(func())()
	}
}

// building is what an Add method holds: the graph, entered for the call.
type building struct {
	h    *handle[graphState]
	st   *graphState
	deps []cu.CUgraphNode
}

// build enters g and checks deps, nodes of g.
func (g *Graph) build(op string, deps []GraphNode) (building, error) {
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return building{}, h.closedError(op)
	}
	b := building{h: h, st: st}
	if st.keep == nil {
		h.exit()
		return building{}, invalidArg(op, "the graph was captured from a stream: add nodes to a graph made by NewGraph")
	}
	for i, d := range deps {
		if d.raw == 0 || d.g != h.core {
			h.exit()
			if d.raw == 0 {
				return building{}, invalidArg(op, "dependency %d is the zero GraphNode", i)
			}
			return building{}, invalidArg(op, "dependency %d is a node of another graph", i)
		}
		b.deps = append(b.deps, d.raw)
	}
	return b, nil
}

func (b *building) depsPtr() *cu.CUgraphNode {
	if len(b.deps) == 0 {
		return nil
	}
	return &b.deps[0]
}

// add runs fn, the driver call that adds a node, with the graph's context
// bound, and returns the node.
func (b *building) add(op, fn string, call func(*cu.CUgraphNode) error) (GraphNode, error) {
	defer b.h.exit()
	var n cu.CUgraphNode
	err := bind(op, b.st.ctx.raw(), func() error { return check(op, fn, call(&n)) })
	if err != nil {
		return GraphNode{}, err
	}
	return GraphNode{raw: n, g: b.h.core}, nil
}

// AddEmpty adds a node that does nothing (cuGraphAddEmptyNode): a point
// that depends on deps, for later nodes to depend on all of them at once.
func (g *Graph) AddEmpty(deps []GraphNode) (GraphNode, error) {
	const op = "Graph.AddEmpty"
	b, err := g.build(op, deps)
	if err != nil {
		return GraphNode{}, err
	}
	return b.add(op, "cuGraphAddEmptyNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddEmptyNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)))
	})
}

// kernelParams fills p with a launch of k with cfg and args, the
// arguments encoded as Launch encodes them into C memory that the caller
// frees once the driver has copied them. It holds nothing.
func (k *Kernel) kernelParams(op string, cfg LaunchConfig, args []any, p *cu.CUDA_KERNEL_NODE_PARAMS) (*Args, error) {
	if _, ok := k.module().peek(); !ok {
		return nil, k.module().closedError(op)
	}
	if err := checkConfig(op, cfg); err != nil {
		return nil, err
	}
	if l := k.limits.Load(); l == nil || !l.fits(&cfg) {
		if err := k.checkShape(op, &cfg); err != nil {
			return nil, err
		}
	}
	a, err := k.newArgs(op, args, false)
	if err != nil {
		return nil, err
	}
	gd, bd := cfg.Grid.norm(), cfg.Block.norm()
	p.Func = k.raw
	p.GridDimX, p.GridDimY, p.GridDimZ = gd.X, gd.Y, gd.Z
	p.BlockDimX, p.BlockDimY, p.BlockDimZ = bd.X, bd.Y, bd.Z
	p.SharedMemBytes = cfg.SharedMemBytes
	if len(args) > 0 {
		p.KernelParams = (*unsafe.Pointer)(a.mem)
	}
	return a, nil
}

// AddKernel adds a launch of k with cfg and args, as Launch takes them
// (cuGraphAddKernelNode): the arguments are copied into the node, and the
// graph holds k's module. The memory the arguments point to must stay
// allocated while the graph can run.
func (g *Graph) AddKernel(deps []GraphNode, k *Kernel, cfg LaunchConfig, args ...any) (GraphNode, error) {
	const op = "Graph.AddKernel"
	var p cu.CUDA_KERNEL_NODE_PARAMS
	a, err := k.kernelParams(op, cfg, args, &p)
	if err != nil {
		return GraphNode{}, err
	}
	defer freeC(a.mem)
	mod, ok := k.module().clone()
	if !ok {
		return GraphNode{}, k.module().closedError(op)
	}
	b, err := g.build(op, deps)
	if err != nil {
		_ = mod.release()
		return GraphNode{}, err
	}
	keep := b.st.keep
	n, err := b.add(op, "cuGraphAddKernelNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddKernelNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), &p)
	})
	if err != nil {
		_ = mod.release()
		return GraphNode{}, err
	}
	keep.hold(mod)
	return n, nil
}

// CopyEnd is one side of a copy node: a *Slice[T] (device memory) or a
// *HostBuffer[T] (page-locked host memory), of any element type.
type CopyEnd interface {
	copyEnd() (copySide, bool)
}

// copySide is a CopyEnd as a copy sees it.
type copySide struct {
	dev   cu.CUdeviceptr
	host  unsafe.Pointer
	bytes int
	clone func() (releaser, bool) // a reference for the node to hold

}

func (s *Slice[T]) copyEnd() (copySide, bool) {
	st, ok := s.handle().peek()
	if !ok {
		return copySide{}, false
	}
	return copySide{dev: s.addr(st, 0), bytes: s.n * sizeOf[T](), clone: func() (releaser, bool) {
		c, ok := s.handle().clone()
		return c, ok
	}}, true
}

func (b *HostBuffer[T]) copyEnd() (copySide, bool) {
	st, ok := b.handle().peek()
	if !ok {
		return copySide{}, false
	}
	return copySide{host: st.ptr, bytes: st.bytes, clone: func() (releaser, bool) {
		c, ok := b.handle().clone()
		return c, ok
	}}, true
}

// copySides resolves and takes a reference on dst and src, and fills a
// 1D copy of src's bytes into dst in C memory, for the caller to free.
func copySides(op string, dst, src CopyEnd) (p *cu.CUDA_MEMCPY3D, held []releaser, err error) {
	var sides [2]copySide
	for i, e := range [2]CopyEnd{dst, src} {
		what := [2]string{"destination", "source"}[i]
		if e == nil {
			return nil, nil, nilError(op + " (" + what + ")")
		}
		s, ok := e.copyEnd()
		if !ok {
			return nil, nil, closedError(op + " (" + what + ")")
		}
		sides[i] = s
	}
	d, s := sides[0], sides[1]
	if d.host != nil && s.host != nil {
		return nil, nil, invalidArg(op, "a copy between two host buffers is no device work")
	}
	if s.bytes > d.bytes {
		return nil, nil, invalidArg(op, "source of %d bytes, destination of %d", s.bytes, d.bytes)
	}
	if s.bytes == 0 {
		return nil, nil, invalidArg(op, "empty source")
	}
	for i, side := range sides {
		c, ok := side.clone()
		if !ok {
			for _, r := range held {
				_ = r.release()
			}
			return nil, nil, closedError(op + " (" + [2]string{"destination", "source"}[i] + ")")
		}
		held = append(held, c)
	}
	p = (*cu.CUDA_MEMCPY3D)(C.calloc(1, C.size_t(unsafe.Sizeof(cu.CUDA_MEMCPY3D{}))))
	if d.host != nil {
		p.DstMemoryType, p.DstHost = cu.CU_MEMORYTYPE_HOST, d.host
	} else {
		p.DstMemoryType, p.DstDevice = cu.CU_MEMORYTYPE_DEVICE, d.dev
	}
	if s.host != nil {
		p.SrcMemoryType, p.SrcHost = cu.CU_MEMORYTYPE_HOST, s.host
	} else {
		p.SrcMemoryType, p.SrcDevice = cu.CU_MEMORYTYPE_DEVICE, s.dev
	}
	p.WidthInBytes, p.Height, p.Depth = uint64(s.bytes), 1, 1
	return p, held, nil
}

// AddCopy adds a copy of src into the start of dst (cuGraphAddMemcpyNode):
// from a Slice or a HostBuffer to a Slice, or from a Slice to a
// HostBuffer; dst must be at least as large as src, in bytes. The graph
// holds both.
func (g *Graph) AddCopy(deps []GraphNode, dst, src CopyEnd) (GraphNode, error) {
	const op = "Graph.AddCopy"
	p, held, err := copySides(op, dst, src)
	if err != nil {
		return GraphNode{}, err
	}
	defer C.free(unsafe.Pointer(p))
	b, err := g.build(op, deps)
	if err == nil {
		keep := b.st.keep
		var n GraphNode
		n, err = b.add(op, "cuGraphAddMemcpyNode", func(n *cu.CUgraphNode) error {
			return cu.GraphAddMemcpyNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), p, b.st.ctx.raw())
		})
		if err == nil {
			for _, r := range held {
				keep.hold(r)
			}
			return n, nil
		}
	}
	for _, r := range held {
		_ = r.release()
	}
	return GraphNode{}, err
}

// AddFill adds a node that sets every element of dst to v
// (cuGraphAddMemsetNode), for elements of 1, 2 or 4 bytes. The graph holds
// dst.
func AddFill[T Element](g *Graph, deps []GraphNode, dst *Slice[T], v T) (GraphNode, error) {
	const op = "AddFill"
	if _, ok := g.handle().peek(); !ok {
		return GraphNode{}, g.handle().closedError(op)
	}
	size := sizeOf[T]()
	var bits uint32
	switch size {
	case 1:
		bits = uint32(*(*uint8)(unsafe.Pointer(&v)))
	case 2:
		bits = uint32(*(*uint16)(unsafe.Pointer(&v)))
	case 4:
		bits = *(*uint32)(unsafe.Pointer(&v))
	default:
		return GraphNode{}, invalidArg(op, "elements of %d bytes: a fill node sets elements of 1, 2 or 4 bytes", size)
	}
	st, ok := dst.handle().peek()
	if !ok {
		return GraphNode{}, dst.handle().closedError(op)
	}
	if dst.n == 0 {
		return GraphNode{}, invalidArg(op, "empty slice")
	}
	p := cu.CUDA_MEMSET_NODE_PARAMS{Dst: dst.addr(st, 0), Value: bits, ElementSize: uint32(size), Width: uint64(dst.n), Height: 1}
	core, ok := dst.handle().clone()
	if !ok {
		return GraphNode{}, closedError(op)
	}
	b, err := g.build(op, deps)
	if err != nil {
		_ = core.release()
		return GraphNode{}, err
	}
	keep := b.st.keep
	n, err := b.add(op, "cuGraphAddMemsetNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddMemsetNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), &p, b.st.ctx.raw())
	})
	if err != nil {
		_ = core.release()
		return GraphNode{}, err
	}
	keep.hold(core)
	return n, nil
}

// AddHost adds a node that calls fn on a thread of the driver
// (cuGraphAddHostNode), each time the graph runs, once deps have run; the
// nodes that depend on it wait for it to return. fn must not call CUDA
// (the driver forbids it in a host function) and should return soon: it
// holds up the graph. A panic in fn ends the program, as in any
// goroutine. The graph, and every executable graph made from it, keeps fn
// until they are destroyed.
func (g *Graph) AddHost(deps []GraphNode, fn func()) (GraphNode, error) {
	const op = "Graph.AddHost"
	if _, ok := g.handle().peek(); !ok {
		return GraphNode{}, g.handle().closedError(op)
	}
	if fn == nil {
		return GraphNode{}, invalidArg(op, "nil function")
	}
	b, err := g.build(op, deps)
	if err != nil {
		return GraphNode{}, err
	}
	id := graphHostNext.Add(1)
	graphHostFns.Store(id, fn)
	p := C.calloc(1, C.size_t(unsafe.Sizeof(cu.CUDA_HOST_NODE_PARAMS{})))
	defer C.free(p)
	C.gocuda_host_node_params(p, C.uintptr_t(id))
	keep := b.st.keep
	n, err := b.add(op, "cuGraphAddHostNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddHostNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), (*cu.CUDA_HOST_NODE_PARAMS)(p))
	})
	if err != nil {
		graphHostFns.Delete(id)
		return GraphNode{}, err
	}
	keep.mu.Lock()
	keep.hostFns = append(keep.hostFns, id)
	keep.mu.Unlock()
	return n, nil
}

// eventNode adds an event record or wait node; the graph holds e.
func (g *Graph) eventNode(op, fn string, deps []GraphNode, e *Event, add func(*cu.CUgraphNode, cu.CUgraph, *cu.CUgraphNode, uint64, cu.CUevent) error) (GraphNode, error) {
	est, ok := e.handle().peek()
	if !ok {
		return GraphNode{}, e.handle().closedError(op + " (event)")
	}
	core, ok := e.handle().clone()
	if !ok {
		return GraphNode{}, closedError(op + " (event)")
	}
	b, err := g.build(op, deps)
	if err != nil {
		_ = core.release()
		return GraphNode{}, err
	}
	keep := b.st.keep
	n, err := b.add(op, fn, func(n *cu.CUgraphNode) error {
		return add(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), est.raw)
	})
	if err != nil {
		_ = core.release()
		return GraphNode{}, err
	}
	keep.hold(core)
	return n, nil
}

// AddEventRecord adds a node that records e (cuGraphAddEventRecordNode),
// as Event.Record does on a stream, once deps have run.
func (g *Graph) AddEventRecord(deps []GraphNode, e *Event) (GraphNode, error) {
	return g.eventNode("Graph.AddEventRecord", "cuGraphAddEventRecordNode", deps, e, cu.GraphAddEventRecordNode)
}

// AddEventWait adds a node that waits for e's last record before the
// launch reached it (cuGraphAddEventWaitNode), as Stream.WaitEvent does.
func (g *Graph) AddEventWait(deps []GraphNode, e *Event) (GraphNode, error) {
	return g.eventNode("Graph.AddEventWait", "cuGraphAddEventWaitNode", deps, e, cu.GraphAddEventWaitNode)
}

// AddChild adds a node that runs a copy of child (cuGraphAddChildGraphNode):
// later changes to child do not affect it. The graph holds what child
// holds.
func (g *Graph) AddChild(deps []GraphNode, child *Graph) (GraphNode, error) {
	const op = "Graph.AddChild"
	ch := child.handle()
	cst, ok := ch.enter()
	if !ok {
		return GraphNode{}, ch.closedError(op + " (child)")
	}
	defer ch.exit()
	if ch.core == g.handle().core {
		return GraphNode{}, invalidArg(op, "a graph cannot be its own child")
	}
	b, err := g.build(op, deps)
	if err != nil {
		return GraphNode{}, err
	}
	keep := b.st.keep
	n, err := b.add(op, "cuGraphAddChildGraphNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddChildGraphNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), cst.raw)
	})
	if err != nil {
		return GraphNode{}, err
	}
	if cst.keep != nil {
		keep.mu.Lock()
		keep.kids = append(keep.kids, cst.keep.acquire())
		keep.mu.Unlock()
	}
	return n, nil
}

// graphMemKind is the kind of the Slices of memory a graph allocates: the
// graph's alloc and free nodes own the memory, the Slice only names it.
var graphMemKind = objectKind[memState]{destroy: func(*memState) error { return nil }, drop: dropGraphMem, live: &liveGraphViews, name: "graph memory"}

// liveGraphViews counts the open views of what a graph owns (its memory,
// its conditional nodes' bodies), which are no driver objects of their own.
var liveGraphViews atomic.Int64

func dropGraphMem(st *memState) error { return st.ctx.release() }

// AddMemAlloc adds a node that allocates n elements of T on the graph's
// device (cuGraphAddMemAllocNode) and returns a Slice of that memory: its
// address is fixed when the node is added, and the memory is usable by
// the nodes that depend on the allocation, until a node of AddMemFree
// frees it or, without one, until the memory is freed after the graph ran
// (cuMemFreeAsync, cuMemFree). The Slice holds nothing: closing it does
// not free the memory, and it must not be used where the memory is not
// allocated.
func AddMemAlloc[T Element](g *Graph, deps []GraphNode, n int) (*Slice[T], GraphNode, error) {
	const op = "AddMemAlloc"
	if _, ok := g.handle().peek(); !ok {
		return nil, GraphNode{}, g.handle().closedError(op)
	}
	size := sizeOf[T]()
	if n <= 0 || n > (1<<62)/size {
		return nil, GraphNode{}, invalidArg(op, "length %d of %d-byte elements", n, size)
	}
	b, err := g.build(op, deps)
	if err != nil {
		return nil, GraphNode{}, err
	}
	cc := b.st.ctx.core // held by the graph, which b holds
	var p cu.CUDA_MEM_ALLOC_NODE_PARAMS
	p.PoolProps.AllocType = cu.CU_MEM_ALLOCATION_TYPE_PINNED
	p.PoolProps.Location.Type = cu.CU_MEM_LOCATION_TYPE_DEVICE
	p.PoolProps.Location.Id = int32(cc.val.dev.raw)
	p.Bytesize = uint64(n * size)
	node, err := b.add(op, "cuGraphAddMemAllocNode", func(nd *cu.CUgraphNode) error {
		return cu.GraphAddMemAllocNode(nd, b.st.raw, b.depsPtr(), uint64(len(b.deps)), &p)
	})
	if err != nil {
		return nil, GraphNode{}, err
	}
	cc.acquire()
	core := newShared(&graphMemKind)
	core.val = memState{ptr: p.Dptr, size: n * size}
	core.val.ctx.core = cc
	return newSliceHandle[T](core, 0, n), node, nil
}

// AddMemFree adds a node that frees s, memory that a node of AddMemAlloc
// allocates, in this graph or another (cuGraphAddMemFreeNode).
func AddMemFree[T Element](g *Graph, deps []GraphNode, s *Slice[T]) (GraphNode, error) {
	const op = "AddMemFree"
	if _, ok := g.handle().peek(); !ok {
		return GraphNode{}, g.handle().closedError(op)
	}
	st, ok := s.handle().peek()
	if !ok {
		return GraphNode{}, s.handle().closedError(op)
	}
	if s.h.core.kind != &graphMemKind || s.off != 0 {
		return GraphNode{}, invalidArg(op, "the slice is not memory a graph allocates (AddMemAlloc), from its start")
	}
	b, err := g.build(op, deps)
	if err != nil {
		return GraphNode{}, err
	}
	return b.add(op, "cuGraphAddMemFreeNode", func(n *cu.CUgraphNode) error {
		return cu.GraphAddMemFreeNode(n, b.st.raw, b.depsPtr(), uint64(len(b.deps)), st.ptr)
	})
}

// execNode enters e and checks that node is of the graph e was
// instantiated from.
func (e *GraphExec) execNode(op string, node GraphNode) (*graphExecState, error) {
	h := e.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	if node.raw == 0 || st.keep == nil || node.g != st.keep.src {
		h.exit()
		if node.raw == 0 {
			return nil, invalidArg(op, "the zero GraphNode")
		}
		return nil, invalidArg(op, "the node is not of the graph this executable graph was instantiated from")
	}
	return st, nil
}

// SetKernel gives a kernel node of e new arguments and shape
// (cuGraphExecKernelNodeSetParams), without a new Instantiate: launches
// from then on use them, those enqueued before do not. k must be the
// node's kernel, or one of the same module; it is held by e.
func (e *GraphExec) SetKernel(node GraphNode, k *Kernel, cfg LaunchConfig, args ...any) error {
	const op = "GraphExec.SetKernel"
	var p cu.CUDA_KERNEL_NODE_PARAMS
	a, err := k.kernelParams(op, cfg, args, &p)
	if err != nil {
		return err
	}
	defer freeC(a.mem)
	mod, ok := k.module().clone()
	if !ok {
		return k.module().closedError(op)
	}
	st, err := e.execNode(op, node)
	if err != nil {
		_ = mod.release()
		return err
	}
	defer e.h.exit()
	err = bind(op, st.ctx.raw(), func() error {
		return check(op, "cuGraphExecKernelNodeSetParams", cu.GraphExecKernelNodeSetParams(st.raw, node.raw, &p))
	})
	if err != nil {
		_ = mod.release()
		return err
	}
	st.keep.holdOwn(mod)
	return nil
}

// SetCopy gives a copy node of e new memory (cuGraphExecMemcpyNodeSetParams),
// without a new Instantiate. The driver requires the copy's direction
// (device or host, each side), and the memory's context, to stay as they
// were; e holds dst and src.
func (e *GraphExec) SetCopy(node GraphNode, dst, src CopyEnd) error {
	const op = "GraphExec.SetCopy"
	p, held, err := copySides(op, dst, src)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(p))
	st, err := e.execNode(op, node)
	if err == nil {
		defer e.h.exit()
		err = bind(op, st.ctx.raw(), func() error {
			return check(op, "cuGraphExecMemcpyNodeSetParams", cu.GraphExecMemcpyNodeSetParams(st.raw, node.raw, p, st.ctx.raw()))
		})
	}
	if err != nil {
		for _, r := range held {
			_ = r.release()
		}
		return err
	}
	for _, r := range held {
		st.keep.holdOwn(r)
	}
	return nil
}

// holdOwn holds r for the executable graph alone, until it is destroyed.
func (x *execKeep) holdOwn(r releaser) {
	k := newGraphKeep()
	k.held = []releaser{r}
	x.mu.Lock()
	x.keeps = append(x.keeps, k)
	x.mu.Unlock()
}

// String names the node's driver handle.
func (n GraphNode) String() string { return fmt.Sprintf("GraphNode(%#x)", uintptr(n.raw)) }
