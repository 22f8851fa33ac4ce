package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/generated/cu"
)

// Context is a shared handle to a CUDA context: the primary context of a
// device (PrimaryContext) or one created for this process (NewContext).
// Clone returns another handle; the driver's reference (primary context) or
// the context itself (created context) goes away when the last handle is
// closed and every object made in it is closed too.
//
// All methods are safe for concurrent use.
type Context struct {
	h handle[ctxState]
	// of is set in a view: the reference of the object whose view it is.
	// It keeps that object's core reachable while the view is, which a
	// boxed object (attachBoxed) needs: its dropped first handle's cleanup
	// cannot reach the view to close it, so the view must not outlive it.
	of *ctxRef
	// orphanOf names the kind of a closed object whose Context was asked
	// for: the handle is closed, and its errors say whose context it was.
	orphanOf string
}

type ctxState struct {
	raw     cu.CUcontext
	dev     Device
	primary bool
	// prio is computed on first use: it needs a driver call with the
	// context bound, which most users of a context never need.
	prio func() (priorityRange, error)
	// staging holds the page-locked buffers of the stream-ordered copies
	// of Go slices, made on first use.
	staging *stagingPool
}

type priorityRange struct{ least, greatest int }

func (c *Context) handle() *handle[ctxState] {
	if c == nil {
		return nil
	}
	return &c.h
}

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
	return newContextHandle(newContextCore(raw, dev, true)), nil
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
	raw, err := createContext(dev.raw) // pushes raw onto this thread's stack
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	var popped cu.CUcontext
	if err := cu.CtxPopCurrent(&popped); err != nil {
		// raw stays pushed on this thread, which therefore stays locked
		// (see bind).
		_ = cu.CtxDestroy(raw)
		return nil, newError("NewContext", "cuCtxPopCurrent", err)
	}
	runtime.UnlockOSThread()
	return newContextHandle(newContextCore(raw, dev, false)), nil
}

func newContextCore(raw cu.CUcontext, dev Device, primary bool) *shared[ctxState] {
	c := newShared(&contextKind)
	c.val = ctxState{raw: raw, dev: dev, primary: primary, staging: newStagingPool()}
	c.val.prio = sync.OnceValues(func() (priorityRange, error) {
		var least, greatest int32
		err := bind("Context.StreamPriorityRange", raw, func() error {
			return check("Context.StreamPriorityRange", "cuCtxGetStreamPriorityRange",
				cu.CtxGetStreamPriorityRange(&least, &greatest))
		})
		return priorityRange{int(least), int(greatest)}, err
	})
	return c
}

func destroyContext(st *ctxState) error {
	if st.staging.made > 0 {
		if err := bind("Context.Close", st.raw, st.staging.free); err != nil {
			return err
		}
	}
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

// ref returns a new reference on the context for an object made in it,
// which that object's destroy gives back.
func (c *Context) ref(op string) (*shared[ctxState], error) {
	core, ok := c.handle().clone()
	if !ok {
		return nil, c.closedError(op)
	}
	return core, nil
}

// closedError is the error of using c in op when it cannot be entered. The
// Context of an object asked after the object's Close says so, so that
// the error names what was closed rather than a context the caller never
// closed.
func (c *Context) closedError(op string) error {
	if c != nil && c.orphanOf != "" {
		return &Error{Op: op, Err: fmt.Errorf("the context of a closed %s: %w", c.orphanOf, ErrClosed)}
	}
	return c.handle().closedError(op)
}

// Clone returns another handle to the same context, to be closed on its own.
func (c *Context) Clone() (*Context, error) {
	return cloneAs(c.handle(), "Context.Clone", newContextHandle)
}

// Close releases this handle, after the calls in flight on it have
// returned. Closing a handle again returns nil and does nothing. The last
// Close of the context and of everything made in it releases the primary
// context or destroys the created one, and returns the driver's error if
// that fails. Closing the handle a Stream's or Event's Context method
// returned does nothing: it belongs to that object.
func (c *Context) Close() error { return c.handle().close("Context.Close") }

// Raw returns the driver's context handle, or 0 once this handle is closed.
// The value stays owned by the Context handles: do not destroy it.
func (c *Context) Raw() cu.CUcontext {
	st, ok := c.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// Device returns the device of the context (the zero Device once closed).
func (c *Context) Device() Device {
	st, ok := c.handle().peek()
	if !ok {
		return Device{}
	}
	return st.dev
}

// IsPrimary reports whether the context is its device's primary context.
func (c *Context) IsPrimary() bool {
	st, ok := c.handle().peek()
	return ok && st.primary
}

// Synchronize waits until all work in the context has finished
// (cuCtxSynchronize).
func (c *Context) Synchronize() error {
	const op = "Context.Synchronize"
	h := c.handle()
	st, ok := h.enter()
	if !ok {
		return c.closedError(op)
	}
	defer h.exit()
	return bind(op, st.raw, func() error {
		return check(op, "cuCtxSynchronize", cu.CtxSynchronize())
	})
}

// StreamPriorityRange returns the stream priorities the context accepts
// (cuCtxGetStreamPriorityRange). Lower numbers run first: greatest is the
// highest priority and numerically the smallest, least the lowest (the
// default priority, 0). A device without priorities reports 0, 0.
func (c *Context) StreamPriorityRange() (least, greatest int, err error) {
	h := c.handle()
	st, ok := h.enter()
	if !ok {
		return 0, 0, c.closedError("Context.StreamPriorityRange")
	}
	defer h.exit()
	r, err := st.prio()
	return r.least, r.greatest, err
}

// Do runs fn with the context current on a locked OS thread and then
// restores the thread's context stack, for raw calls of package cu that use
// the current context (cu.MemAlloc, cu.ModuleLoad, ...). fn must not start
// goroutines that expect the context to be current, nor leave a context
// pushed. Do returns fn's error, or the error of binding the context. The
// stack is restored however fn ends, by a panic or runtime.Goexit too.
//
// The context lives until fn returns even if fn closes the last handle of
// it, which is then released when Do returns.
func (c *Context) Do(fn func() error) (err error) {
	const op = "Context.Do"
	core, err := c.ref(op)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := core.release(); err == nil {
			err = rerr
		}
	}()
	if fn == nil {
		return invalidArg(op, "nil function")
	}
	return bind(op, core.val.raw, fn)
}

// contextOf is the Context method of every object made in a context: the
// object's view of it, or, once h is closed, a closed Context naming the
// object's kind (orphanContext). The object is held while
// the view is made, so that none is made after its release.
func contextOf[T any](h *handle[T], ref func(*T) *ctxRef) *Context {
	st, ok := h.enter()
	if !ok {
		return orphanContext(h)
	}
	defer h.exit()
	return ref(st).context()
}

// orphanContext is the Context of an object whose handle h is closed (or
// nil): a closed handle that names the object's kind in its errors. A nil
// h, the handle of a nil object, gives nil, whose errors say nil.
func orphanContext[T any](h *handle[T]) *Context {
	if h == nil {
		return nil
	}
	name := "object"
	if h.core != nil && h.core.kind != nil {
		name = h.core.kind.name
	}
	c := &Context{orphanOf: name}
	c.h.ops.Store(closedBit)
	return c
}

// ctxRef is an object's reference on its context: the core, and the
// Context handle its Context method returns, made on first use.
type ctxRef struct {
	core *shared[ctxState]
	view atomic.Pointer[Context]
}

func (r *ctxRef) raw() cu.CUcontext { return r.core.val.raw }

// context returns the object's Context handle: it can be used (and cloned)
// like any other while the object lives, and closing it does nothing. The
// caller holds a handle of the object (enter), so that no view is made
// after release.
func (r *ctxRef) context() *Context {
	if v := r.view.Load(); v != nil {
		return v
	}
	v := &Context{of: r}
	v.h.core = r.core
	v.h.ops.Store(viewBit)
	if r.view.CompareAndSwap(nil, v) {
		return v
	}
	return r.view.Load()
}

// release closes the view to new calls, waits for those in flight, and
// gives the reference back: the owning object's drop. Every handle of the
// object is closed by then, so no view can be made any more.
func (r *ctxRef) release() error {
	if v := r.view.Load(); v != nil {
		v.h.shut()
	}
	return r.core.release()
}

var contextKind = objectKind[ctxState]{destroy: destroyContext, live: &liveContexts, name: "context"}
