package cuda

import (
	"runtime"
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
)

// Context is a shared handle to a CUDA context: the primary context of a
// device (PrimaryContext) or one created for this process (NewContext).
// Clone returns another handle; the driver's reference (primary context) or
// the context itself (created context) goes away when the last handle is
// closed and every Stream and Event made in it is closed too.
//
// All methods are safe for concurrent use.
type Context struct {
	h handle[ctxState]
}

type ctxState struct {
	raw     cu.CUcontext
	dev     Device
	primary bool
	// prio is computed on first use: it needs a driver call with the
	// context bound, which most users of a context never need.
	prio func() (priorityRange, error)
}

type priorityRange struct{ least, greatest int }

// PrimaryContext retains the primary context of dev (cuDevicePrimaryCtxRetain),
// the context the CUDA runtime and most libraries share. Its last Close
// releases that retain.
func PrimaryContext(dev Device) (*Context, error) {
	if err := initDriver(); err != nil {
		return nil, err
	}
	var raw cu.CUcontext
	if err := cu.DevicePrimaryCtxRetain(&raw, dev.raw); err != nil {
		return nil, newError("PrimaryContext", "cuDevicePrimaryCtxRetain", err)
	}
	return newContextHandle(newContextCore(ctxState{raw: raw, dev: dev, primary: true})), nil
}

// NewContext creates a context of its own on dev (cuCtxCreate with the
// default scheduling flags); its last Close destroys it. The new context is
// not left current on any thread. Prefer PrimaryContext unless isolation
// from other users of the device is the point: every context costs device
// memory.
func NewContext(dev Device) (*Context, error) {
	if err := initDriver(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	raw, err := createContext(dev.raw) // pushes raw onto this thread's stack
	if err != nil {
		return nil, err
	}
	var popped cu.CUcontext
	if err := cu.CtxPopCurrent(&popped); err != nil {
		_ = cu.CtxDestroy(raw)
		return nil, newError("NewContext", "cuCtxPopCurrent", err)
	}
	return newContextHandle(newContextCore(ctxState{raw: raw, dev: dev})), nil
}

func newContextCore(st ctxState) *shared[ctxState] {
	raw := st.raw
	st.prio = sync.OnceValues(func() (priorityRange, error) {
		var least, greatest int32
		err := bind("Context.StreamPriorityRange", raw, func() error {
			return check("Context.StreamPriorityRange", "cuCtxGetStreamPriorityRange",
				cu.CtxGetStreamPriorityRange(&least, &greatest))
		})
		return priorityRange{int(least), int(greatest)}, err
	})
	return newShared(st, &liveContexts, destroyContext)
}

func destroyContext(st *ctxState) error {
	if st.primary {
		return check("Context.Close", "cuDevicePrimaryCtxRelease", cu.DevicePrimaryCtxRelease(st.dev.raw))
	}
	return check("Context.Close", "cuCtxDestroy", cu.CtxDestroy(st.raw))
}

func newContextHandle(core *shared[ctxState]) *Context {
	c := &Context{}
	attach(c, &c.h, core)
	return c
}

// Clone returns another handle to the same context, to be closed on its own.
func (c *Context) Clone() (*Context, error) {
	core, ok := c.h.clone()
	if !ok {
		return nil, closedError("Context.Clone")
	}
	return newContextHandle(core), nil
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close of the context and of everything made in it
// releases the primary context or destroys the created one, and returns the
// driver's error if that fails. Closing the handle a Stream's or Event's
// Context method returned does nothing: it belongs to that object.
func (c *Context) Close() error { return c.h.close() }

// Raw returns the driver's context handle, or 0 once this handle is closed.
// The value stays owned by the Context handles: do not destroy it.
func (c *Context) Raw() cu.CUcontext {
	st, ok := c.h.get()
	if !ok {
		return 0
	}
	return st.raw
}

// Device returns the device of the context (the zero Device once closed).
func (c *Context) Device() Device {
	st, ok := c.h.get()
	if !ok {
		return Device{}
	}
	return st.dev
}

// IsPrimary reports whether the context is its device's primary context.
func (c *Context) IsPrimary() bool {
	st, ok := c.h.get()
	return ok && st.primary
}

// Synchronize waits until all work in the context has finished
// (cuCtxSynchronize).
func (c *Context) Synchronize() error {
	st, ok := c.h.get()
	if !ok {
		return closedError("Context.Synchronize")
	}
	err := bind("Context.Synchronize", st.raw, func() error {
		return check("Context.Synchronize", "cuCtxSynchronize", cu.CtxSynchronize())
	})
	runtime.KeepAlive(c)
	return err
}

// StreamPriorityRange returns the stream priorities the context accepts
// (cuCtxGetStreamPriorityRange). Lower numbers run first: greatest is the
// highest priority and numerically the smallest, least the lowest (the
// default priority, 0). A device without priorities reports 0, 0.
func (c *Context) StreamPriorityRange() (least, greatest int, err error) {
	st, ok := c.h.get()
	if !ok {
		return 0, 0, closedError("Context.StreamPriorityRange")
	}
	r, err := st.prio()
	runtime.KeepAlive(c)
	return r.least, r.greatest, err
}

// pinnedClone returns a new reference on c for an object made in it, held
// by a pinned handle that only that object's destroy releases.
func (c *Context) pinnedClone(op string) (*Context, error) {
	if c == nil {
		return nil, closedError(op)
	}
	core, ok := c.h.clone()
	if !ok {
		return nil, closedError(op)
	}
	p := &Context{}
	pin(&p.h, core)
	return p, nil
}

// Do runs fn with the context current on a locked OS thread and then
// restores the thread's context stack, for raw calls of package cu that use
// the current context (cu.MemAlloc, cu.ModuleLoad, ...). fn must not start
// goroutines that expect the context to be current, nor leave a context
// pushed. Do returns fn's error, or the error of binding the context.
func (c *Context) Do(fn func() error) error {
	st, ok := c.h.get()
	if !ok {
		return closedError("Context.Do")
	}
	err := bind("Context.Do", st.raw, fn)
	runtime.KeepAlive(c)
	return err
}
