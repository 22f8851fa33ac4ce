package cuda

import "github.com/gocuda/gocuda/generated/cu"

// graphGetEdges calls cuGraphGetEdges, which CUDA 13 binds to
// cuGraphGetEdges_v2 with an edge data array. Passing none is allowed
// while every edge has default data (ports and type 0), which is what
// capture makes; otherwise the driver refuses with CUDA_ERROR_LOSSY_QUERY.
func graphGetEdges(g cu.CUgraph, from, to *cu.CUgraphNode, n *uint64) error {
	return callABI(cu.GraphGetEdges, g, from, to, n)
}

const graphGetEdgesName = "cuGraphGetEdges"
