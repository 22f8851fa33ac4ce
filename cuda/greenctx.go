//go:build !cuda11080

package cuda

import (
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
)

// SMResource is a set of a device's streaming multiprocessors (SMs), to
// make a green context that runs its work on those SMs alone (CUDA 12.4;
// an older driver's refusal matches ErrMissingFunction).
type SMResource struct {
	raw cu.CUdevResource
	dev Device
}

// SMCount returns the number of SMs in r.
func (r SMResource) SMCount() int { return int(r.raw.Anon2.Sm().SmCount) }

// Device returns the device whose SMs r holds.
func (r SMResource) Device() Device { return r.dev }

// DeviceSMs returns all the SMs of dev (cuDeviceGetDevResource), to split
// into groups for green contexts.
func DeviceSMs(dev Device) (SMResource, error) {
	const op = "DeviceSMs"
	if err := initDriver(); err != nil {
		return SMResource{}, err
	}
	r := SMResource{dev: dev}
	if err := cu.DeviceGetDevResource(dev.raw, &r.raw, cu.CU_DEV_RESOURCE_TYPE_SM); err != nil {
		return SMResource{}, newError(op, "cuDeviceGetDevResource", err)
	}
	return r, nil
}

// SplitByCount splits r into at most groups groups of at least minCount
// SMs each (cuDevSmResourceSplitByCount), as many as r holds, each of the
// same size: the driver rounds minCount up to the SMs' granularity on the
// device (2 on Hopper, say). It returns the groups and the SMs left over.
func (r SMResource) SplitByCount(groups, minCount int) (parts []SMResource, rest SMResource, err error) {
	const op = "SMResource.SplitByCount"
	if groups < 1 || minCount < 1 {
		return nil, SMResource{}, invalidArg(op, "%d groups of %d SMs", groups, minCount)
	}
	out := make([]cu.CUdevResource, groups)
	n := uint32(groups)
	rest.dev = r.dev
	in := r.raw
	if err := cu.DevSmResourceSplitByCount(&out[0], &n, &in, &rest.raw, 0, uint32(minCount)); err != nil {
		return nil, SMResource{}, newError(op, "cuDevSmResourceSplitByCount", err)
	}
	for _, raw := range out[:min(int(n), groups)] {
		parts = append(parts, SMResource{raw: raw, dev: r.dev})
	}
	return parts, rest, nil
}

// NewGreenContext creates a green context on the SMs of r
// (cuDevResourceGenerateDesc, cuGreenCtxCreate) and returns it as a
// Context, whose last Close destroys it (cuGreenCtxDestroy): streams made
// in it with NewStream run their work on r's SMs alone; memory, modules
// and events work as in any context. The green context holds its device's
// primary context while it lives.
//
// The driver lets a green context be current on one thread at a time:
// the calls of this package that bind a context (NewStream, Alloc,
// LoadModule, Synchronize, ...) must not run on the same green context
// from several goroutines at once. Launches and copies on its streams
// bind nothing.
func NewGreenContext(r SMResource) (*Context, error) {
	const op = "NewGreenContext"
	if err := initDriver(); err != nil {
		return nil, err
	}
	if r.SMCount() == 0 {
		return nil, invalidArg(op, "an SMResource of no SMs")
	}
	res := r.raw
	var desc cu.CUdevResourceDesc
	if err := cu.DevResourceGenerateDesc(&desc, &res, 1); err != nil {
		return nil, newError(op, "cuDevResourceGenerateDesc", err)
	}
	var green cu.CUgreenCtx
	if err := cu.GreenCtxCreate(&green, desc, r.dev.raw, uint32(cu.CU_GREEN_CTX_DEFAULT_STREAM)); err != nil {
		return nil, newError(op, "cuGreenCtxCreate", err)
	}
	var raw cu.CUcontext
	if err := cu.CtxFromGreenCtx(&raw, green); err != nil {
		_ = cu.GreenCtxDestroy(green)
		return nil, newError(op, "cuCtxFromGreenCtx", err)
	}
	core := newContextCore(raw, r.dev, false)
	// A context's core counts as a context: this one is a green context.
	liveContexts.Add(-1)
	core.kind = &greenContextKind
	liveGreenContexts.Add(1)
	greenOf.Store(&core.val, green)
	return newContextHandle(core), nil
}

// IsGreen reports whether c is a green context (NewGreenContext).
func (c *Context) IsGreen() bool {
	st, ok := c.handle().peek()
	if !ok {
		return false
	}
	_, green := greenOf.Load(st)
	return green
}

// greenOf maps the state of each green context's core to its green
// context handle, for its destroy.
var greenOf sync.Map // *ctxState → cu.CUgreenCtx

func destroyGreenContext(st *ctxState) error {
	const op = "Context.Close"
	if st.staging.made > 0 {
		if err := bind(op, st.raw, st.staging.free); err != nil {
			return err
		}
	}
	g, ok := greenOf.Load(st)
	if !ok {
		return nil
	}
	if err := cu.GreenCtxDestroy(g.(cu.CUgreenCtx)); err != nil {
		return newError(op, "cuGreenCtxDestroy", err)
	}
	greenOf.Delete(st)
	return nil
}

var greenContextKind = objectKind[ctxState]{destroy: destroyGreenContext, live: &liveGreenContexts, name: "green context"}
