//go:build !cuda11080

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// CUDA 12 binds cuGraphInstantiate to cuGraphInstantiateWithFlags and
// cuGraphExecUpdate to cuGraphExecUpdate_v2, which reports through a
// CUgraphExecUpdateResultInfo; 11.8 differs (graph_cuda11.go).

const graphInstantiateName = "cuGraphInstantiate"

func graphInstantiate(exec *cu.CUgraphExec, g cu.CUgraph) error {
	return cu.GraphInstantiate(exec, g, 0)
}

func graphExecUpdate(op string, exec cu.CUgraphExec, g cu.CUgraph) error {
	var info cu.CUgraphExecUpdateResultInfo
	if err := cu.GraphExecUpdate(exec, g, &info); err != nil {
		return updateError(op, info.Result, err)
	}
	return nil
}
