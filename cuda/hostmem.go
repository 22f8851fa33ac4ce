package cuda

import (
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// HostBuffer is a shared handle to page-locked ("pinned") host memory
// holding elements of type T: the memory asynchronous copies need
// (CopyToDeviceAsync, CopyFromDeviceAsync). AllocHost allocates it
// (cuMemAllocHost); RegisterHost page-locks memory the caller mapped
// (cuMemHostRegister). Clone, Close and the Context reference work as for
// DeviceMemory: the last Close frees (or unregisters) the memory.
//
// Slice is a Go view of the memory. The memory is not Go's: the view does
// not keep the buffer alive, so keep the HostBuffer reachable and open while
// the view is in use (a dropped HostBuffer is freed by a cleanup, and a
// view used after that, or after the last Close, reads freed memory), and
// do not change it while an asynchronous copy of it is pending.
//
// The handle's methods are safe for concurrent use; the memory is plain
// memory, to be synchronized like any other.
type HostBuffer[T Element] struct {
	h handle[hostState]
}

type hostState struct {
	ptr        unsafe.Pointer // first: see shared.val
	bytes      int
	ctx        *Context // pinned reference
	registered bool     // RegisterHost: unregister, do not free
}

// AllocHost allocates page-locked host memory for n elements of T in ctx
// (cuMemAllocHost). On systems with unified addressing (every 64-bit Linux
// system) it is page-locked for every context, and kernels can read and
// write it through its address. Page-locked memory is a scarce system
// resource: allocate it for staging buffers, not for all host data.
func AllocHost[T Element](ctx *Context, n int) (*HostBuffer[T], error) {
	const op = "AllocHost"
	if n <= 0 {
		return nil, invalidArg(op, "length %d is not positive", n)
	}
	bytes := n * sizeOf[T]()
	pc, err := ctx.pinnedClone(op)
	if err != nil {
		return nil, err
	}
	runtime.KeepAlive(ctx)
	var p unsafe.Pointer
	err = bind(op, pc.h.core.val.raw, func() error {
		if err := cu.MemAllocHost(&p, uint64(bytes)); err != nil {
			p = nil
			return newError(op, "cuMemAllocHost", err)
		}
		return nil
	})
	if err != nil {
		if p != nil { // allocated, then the context's pop failed: nobody owns it
			_ = bind(op, pc.h.core.val.raw, func() error { return cu.MemFreeHost(p) })
		}
		_ = pc.h.closeOwned()
		return nil, err
	}
	return newHostBuffer[T](hostState{ptr: p, bytes: bytes, ctx: pc}), nil
}

// RegisterHost page-locks mem, memory that Go's garbage collector does not
// manage, for asynchronous copies (cuMemHostRegister with
// CU_MEMHOSTREGISTER_PORTABLE); the last Close unregisters it
// (cuMemHostUnregister) and leaves it to the caller, who unmaps it after
// that, not before.
//
// mem must come from outside the Go heap: syscall.Mmap or
// unix.Mmap, C.malloc, a shared-memory segment. Never register Go memory
// (a make'd slice, an array, a string's bytes): the driver keeps the
// address after the call returns, which cgo's pointer rules forbid, and the
// garbage collector knows nothing of it. This cannot be checked here.
func RegisterHost[T Element](ctx *Context, mem []T) (*HostBuffer[T], error) {
	const op = "RegisterHost"
	if len(mem) == 0 {
		return nil, invalidArg(op, "empty memory")
	}
	bytes := len(mem) * sizeOf[T]()
	pc, err := ctx.pinnedClone(op)
	if err != nil {
		return nil, err
	}
	runtime.KeepAlive(ctx)
	p := unsafe.Pointer(unsafe.SliceData(mem))
	registered := false
	err = bind(op, pc.h.core.val.raw, func() error {
		err := cu.MemHostRegister(p, uint64(bytes), uint32(cu.CU_MEMHOSTREGISTER_PORTABLE))
		registered = err == nil
		return check(op, "cuMemHostRegister", err)
	})
	if err != nil {
		if registered { // then the context's pop failed: undo it
			_ = bind(op, pc.h.core.val.raw, func() error { return cu.MemHostUnregister(p) })
		}
		_ = pc.h.closeOwned()
		return nil, err
	}
	return newHostBuffer[T](hostState{ptr: p, bytes: bytes, ctx: pc, registered: true}), nil
}

func newHostBuffer[T Element](st hostState) *HostBuffer[T] {
	return newHostBufferHandle[T](newShared(st, &liveHostBuffers, destroyHostBuffer))
}

func newHostBufferHandle[T Element](core *shared[hostState]) *HostBuffer[T] {
	b := &HostBuffer[T]{}
	attach(b, &b.h, core)
	return b
}

func destroyHostBuffer(st *hostState) error {
	const op = "HostBuffer.Close"
	err := bind(op, st.ctx.h.core.val.raw, func() error {
		if st.registered {
			return check(op, "cuMemHostUnregister", cu.MemHostUnregister(st.ptr))
		}
		return check(op, "cuMemFreeHost", cu.MemFreeHost(st.ptr))
	})
	if cerr := st.ctx.h.closeOwned(); err == nil {
		err = cerr
	}
	return err
}

// Clone returns another handle to the same memory, to be closed on its own.
func (b *HostBuffer[T]) Clone() (*HostBuffer[T], error) {
	core, ok := b.h.clone()
	if !ok {
		return nil, closedError("HostBuffer.Clone")
	}
	return newHostBufferHandle[T](core), nil
}

// Close releases this handle. Closing a handle again returns nil and does
// nothing. The last Close frees the memory (cuMemFreeHost) or, for
// RegisterHost, unregisters it (cuMemHostUnregister), and releases its
// context. Views from Slice must not be used after that.
func (b *HostBuffer[T]) Close() error { return b.h.close() }

// Slice returns a view of the whole buffer, or nil once this handle is
// closed. See HostBuffer for how long it may be used.
func (b *HostBuffer[T]) Slice() []T {
	st, ok := b.h.get()
	if !ok {
		return nil
	}
	return unsafe.Slice((*T)(st.ptr), st.bytes/sizeOf[T]())
}

// Len returns the number of elements, or 0 once this handle is closed.
func (b *HostBuffer[T]) Len() int {
	st, ok := b.h.get()
	if !ok {
		return 0
	}
	return st.bytes / sizeOf[T]()
}

// Ptr returns the address of the memory, for the raw bindings, or nil once
// this handle is closed.
func (b *HostBuffer[T]) Ptr() unsafe.Pointer {
	st, ok := b.h.get()
	if !ok {
		return nil
	}
	return st.ptr
}

// Context returns the buffer's context, owned by the buffer as
// Stream.Context's is by the stream; nil once this handle is closed.
func (b *HostBuffer[T]) Context() *Context {
	st, ok := b.h.get()
	if !ok {
		return nil
	}
	return st.ctx
}

func (b *HostBuffer[T]) state(op string) (*hostState, error) {
	if b == nil {
		return nil, closedError(op)
	}
	st, ok := b.h.get()
	if !ok {
		return nil, closedError(op)
	}
	return st, nil
}
