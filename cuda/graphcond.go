//go:build !cuda11080

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// GraphCondition is the condition of conditional nodes of a graph
// (cuGraphConditionalHandleCreate): a value the graph's kernels set with
// the device function cudaGraphSetConditional(handle, value), which
// decides whether an if node's body runs, whether a while node's body
// runs once more, or which body of a switch node runs.
type GraphCondition struct {
	raw cu.CUgraphConditionalHandle
	g   *shared[graphState]
}

// Handle returns the condition's handle, to pass a kernel as a uint64 (the
// device type cudaGraphConditionalHandle is an unsigned long long).
func (c GraphCondition) Handle() uint64 { return uint64(c.raw) }

// NewCondition creates a condition of g (cuGraphConditionalHandleCreate).
// With reset, the condition is set to initial at the start of each launch
// of the graph (CU_GRAPH_COND_ASSIGN_DEFAULT); without, it keeps the last
// value a kernel set, initial before the first.
//
// Conditional nodes need CUDA 12.3 (if) or 12.4 (while) and switch nodes
// CUDA 12.8: an older driver's refusal matches ErrMissingFunction.
func (g *Graph) NewCondition(initial uint32, reset bool) (GraphCondition, error) {
	const op = "Graph.NewCondition"
	h := g.handle()
	st, ok := h.enter()
	if !ok {
		return GraphCondition{}, h.closedError(op)
	}
	defer h.exit()
	var flags uint32
	if reset {
		flags = cu.CU_GRAPH_COND_ASSIGN_DEFAULT
	}
	var c cu.CUgraphConditionalHandle
	err := bind(op, st.ctx.raw(), func() error {
		return check(op, "cuGraphConditionalHandleCreate", cu.GraphConditionalHandleCreate(&c, st.raw, st.ctx.raw(), initial, flags))
	})
	if err != nil {
		return GraphCondition{}, err
	}
	return GraphCondition{raw: c, g: h.core}, nil
}

// The kinds of conditional node. Switch is 2 in every header that has it
// (12.8 on), and the older bindings lack its name.
const (
	condIf     = cu.CU_GRAPH_COND_TYPE_IF
	condWhile  = cu.CU_GRAPH_COND_TYPE_WHILE
	condSwitch = cu.CUgraphConditionalNodeType(2)
)

// AddIf adds a node that runs its body once when c is not zero, and
// returns the node and the body: an empty graph to build, owned by g. The
// body's handle holds g; close it when the body is built.
func (g *Graph) AddIf(deps []GraphNode, c GraphCondition) (GraphNode, *Graph, error) {
	n, bodies, err := g.addConditional("Graph.AddIf", deps, c, condIf, 1, 12030)
	if err != nil {
		return GraphNode{}, nil, err
	}
	return n, bodies[0], nil
}

// AddWhile adds a node that runs its body while c is not zero, testing c
// before each run: a kernel of the body sets it to 0 to end the loop. It
// returns the node and the body, as AddIf.
func (g *Graph) AddWhile(deps []GraphNode, c GraphCondition) (GraphNode, *Graph, error) {
	n, bodies, err := g.addConditional("Graph.AddWhile", deps, c, condWhile, 1, 12040)
	if err != nil {
		return GraphNode{}, nil, err
	}
	return n, bodies[0], nil
}

// AddSwitch adds a node with n bodies that runs body i when c is i, and
// none when c is n or more. It returns the node and the bodies, each as
// AddIf's.
func (g *Graph) AddSwitch(deps []GraphNode, c GraphCondition, n int) (GraphNode, []*Graph, error) {
	if _, ok := g.handle().peek(); !ok {
		return GraphNode{}, nil, g.handle().closedError("Graph.AddSwitch")
	}
	if n < 1 {
		return GraphNode{}, nil, invalidArg("Graph.AddSwitch", "%d bodies", n)
	}
	return g.addConditional("Graph.AddSwitch", deps, c, condSwitch, n, 12080)
}

func (g *Graph) addConditional(op string, deps []GraphNode, c GraphCondition, kind cu.CUgraphConditionalNodeType, size, since int) (GraphNode, []*Graph, error) {
	if _, ok := g.handle().peek(); !ok {
		return GraphNode{}, nil, g.handle().closedError(op)
	}
	if c.raw == 0 && c.g == nil {
		return GraphNode{}, nil, invalidArg(op, "the zero GraphCondition")
	}
	if v, err := DriverVersion(); err == nil && v < since {
		return GraphNode{}, nil, &Error{Op: op, Func: "cuGraphAddNode", Err: fmt.Errorf(
			"this node needs a driver for CUDA %d.%d, the driver is for CUDA %d.%d: %w",
			since/1000, since%1000/10, v/1000, v%1000/10, cu.ErrMissingFunction)}
	}
	b, err := g.build(op, deps)
	if err != nil {
		return GraphNode{}, nil, err
	}
	if c.g != b.h.core {
		b.h.exit()
		return GraphNode{}, nil, invalidArg(op, "the condition is of another graph")
	}
	var p cu.CUgraphNodeParams
	p.Type = cu.CU_GRAPH_NODE_TYPE_CONDITIONAL
	cp := p.Anon2.Conditional()
	cp.Handle = c.raw
	cp.Type = kind
	cp.Size = uint32(size)
	cp.Ctx = b.st.ctx.raw()
	st, core := b.st, b.h.core
	n, err := b.add(op, "cuGraphAddNode", func(n *cu.CUgraphNode) error {
		return callABI(cu.GraphAddNode, n, st.raw, b.depsPtr(), uint64(len(b.deps)), &p)
	})
	if err != nil {
		return GraphNode{}, nil, err
	}
	// The driver fills phGraph_out with its own array of the bodies.
	raws := unsafe.Slice(cp.PhGraph_out, size)
	bodies := make([]*Graph, size)
	for i, raw := range raws {
		// g is held by the caller's handle until this returns, and each
		// body takes a reference of its own.
		core.acquire()
		st.ctx.core.acquire()
		bc := newShared(&graphBodyKind)
		bc.val.raw = raw
		bc.val.ctx.core = st.ctx.core
		bc.val.keep = st.keep.acquire()
		bc.val.parent = core
		bodies[i] = newGraphHandle(bc)
	}
	return n, bodies, nil
}

// graphBodyKind is the kind of the bodies of conditional nodes, which
// their parent graph owns: the last handle gives back the references it
// holds, and destroys nothing.
var graphBodyKind = objectKind[graphState]{destroy: func(*graphState) error { return nil }, drop: dropGraph, live: &liveGraphViews, name: "conditional body"}
