package cuda

import "github.com/gocuda/gocuda/generated/cu"

// createContext makes a context on dev and leaves it pushed on the calling
// thread. cuCtxCreate changed form in CUDA 13 (cuCtxCreate_v4 takes a
// parameters struct, where nil asks for none: no affinity, no CIG); the
// call goes through callABI so that this file builds against every
// version of the bindings, later ones included.
func createContext(dev cu.CUdevice) (cu.CUcontext, error) {
	var raw cu.CUcontext
	if err := callABI(cu.CtxCreate, &raw, uint32(cu.CU_CTX_SCHED_AUTO), dev); err != nil {
		return 0, newError("NewContext", "cuCtxCreate", err)
	}
	return raw, nil
}
