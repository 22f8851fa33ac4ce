//go:build cuda11080

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// CUDA 11.8's header declares the older graph ABI: cuGraphInstantiate
// (cuGraphInstantiate_v2) takes an error node and a log buffer, which
// cuGraphInstantiateWithFlags does without, and cuGraphExecUpdate returns
// its result and error node through two pointers.

const graphInstantiateName = "cuGraphInstantiateWithFlags"

func graphInstantiate(exec *cu.CUgraphExec, g cu.CUgraph) error {
	return cu.GraphInstantiateWithFlags(exec, g, 0)
}

func graphExecUpdate(op string, exec cu.CUgraphExec, g cu.CUgraph) error {
	var errNode cu.CUgraphNode
	var res cu.CUgraphExecUpdateResult
	if err := cu.GraphExecUpdate(exec, g, &errNode, &res); err != nil {
		return updateError(op, res, err)
	}
	return nil
}
