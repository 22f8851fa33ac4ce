//go:build !cuda13000

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// Before CUDA 13, cuGraphGetEdges has no edge data; 13.0 binds
// cuGraphGetEdges_v2, which has (graphedges_cuda13.go).

const graphGetEdgesName = "cuGraphGetEdges"

func graphGetEdges(g cu.CUgraph, from, to *cu.CUgraphNode, n *uint64) error {
	return cu.GraphGetEdges(g, from, to, n)
}
