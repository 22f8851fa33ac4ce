//go:build cuda13000

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// CUDA 13 binds cuGraphGetEdges to cuGraphGetEdges_v2, with an edge data
// array. Passing none is allowed while every edge has default data (ports
// and type 0), which is what capture makes; otherwise the driver refuses
// with CUDA_ERROR_LOSSY_QUERY.

const graphGetEdgesName = "cuGraphGetEdges_v2"

func graphGetEdges(g cu.CUgraph, from, to *cu.CUgraphNode, n *uint64) error {
	return cu.GraphGetEdges(g, from, to, nil, n)
}
