//go:build cuda11080

package cuda

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
)

// CUDA 11.8's bindings have no conditional nodes (CUDA 12.3): under
// cuda11080 their methods return an error matching ErrMissingFunction.
// Build with a CUDA 12 or 13 tag to use them.

// GraphCondition is the condition of conditional nodes, which the bindings
// of CUDA 11.8 cannot make.
type GraphCondition struct{}

// Handle returns 0: no condition is made under cuda11080.
func (c GraphCondition) Handle() uint64 { return 0 }

func noConditional(op string, g *Graph) error {
	if _, ok := g.handle().peek(); !ok {
		return g.handle().closedError(op)
	}
	return &Error{Op: op, Func: "cuGraphConditionalHandleCreate", Err: fmt.Errorf(
		"the bindings of CUDA 11.8 have no conditional graph nodes (CUDA 12.3): %w", cu.ErrMissingFunction)}
}

// NewCondition returns an error matching ErrMissingFunction.
func (g *Graph) NewCondition(initial uint32, reset bool) (GraphCondition, error) {
	return GraphCondition{}, noConditional("Graph.NewCondition", g)
}

// AddIf returns an error matching ErrMissingFunction.
func (g *Graph) AddIf(deps []GraphNode, c GraphCondition) (GraphNode, *Graph, error) {
	return GraphNode{}, nil, noConditional("Graph.AddIf", g)
}

// AddWhile returns an error matching ErrMissingFunction.
func (g *Graph) AddWhile(deps []GraphNode, c GraphCondition) (GraphNode, *Graph, error) {
	return GraphNode{}, nil, noConditional("Graph.AddWhile", g)
}

// AddSwitch returns an error matching ErrMissingFunction.
func (g *Graph) AddSwitch(deps []GraphNode, c GraphCondition, n int) (GraphNode, []*Graph, error) {
	return GraphNode{}, nil, noConditional("Graph.AddSwitch", g)
}
