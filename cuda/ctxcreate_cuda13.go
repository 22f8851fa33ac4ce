//go:build cuda13000

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// createContext: CUDA 13 replaces cuCtxCreate_v2 with cuCtxCreate_v4, which
// takes a parameters struct; nil asks for none (no affinity, no CIG).
func createContext(dev cu.CUdevice) (cu.CUcontext, error) {
	var raw cu.CUcontext
	if err := cu.CtxCreate(&raw, nil, uint32(cu.CU_CTX_SCHED_AUTO), dev); err != nil {
		return 0, newError("NewContext", "cuCtxCreate", err)
	}
	return raw, nil
}
