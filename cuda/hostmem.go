package cuda

import (
	"math"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// HostBuffer is a shared handle to page-locked ("pinned") host memory
// holding elements of type T: the memory asynchronous copies need
// (CopyToDeviceAsync, CopyFromDeviceAsync). AllocHost makes it from Go
// memory; RegisterHost page-locks memory the caller mapped. Clone, Close
// and the Context reference work as for DeviceMemory: the last Close
// unregisters the memory (cuMemHostUnregister).
//
// Slice is a Go view of the memory. For AllocHost the memory is Go's own,
// held in place by a runtime.Pinner while it is registered: a view stays
// valid Go memory for as long as it is referenced, whatever happens to the
// buffer (after the last Close it is simply no longer page-locked). Do not
// change it while an asynchronous copy of it is pending, and keep the
// buffer open until such copies have run.
//
// The handle's methods are safe for concurrent use; the memory is plain
// memory, to be synchronized like any other.
type HostBuffer[T Element] struct {
	h handle[hostState]
}

type hostState struct {
	ptr   unsafe.Pointer // first: see shared.val
	bytes int
	ctx   ctxRef
	// pin holds AllocHost's Go memory in place while the driver has it
	// registered; RegisterHost's memory is the caller's, outside the Go
	// heap, and has none.
	pin *runtime.Pinner
}

func (b *HostBuffer[T]) handle() *handle[hostState] {
	if b == nil {
		return nil
	}
	return &b.h
}

// hostRegisterFlags: PORTABLE makes the memory page-locked for every
// context, DEVICEMAP maps it into the device's address space, as
// cuMemAllocHost's memory is.
const hostRegisterFlags = uint32(cu.CU_MEMHOSTREGISTER_PORTABLE | cu.CU_MEMHOSTREGISTER_DEVICEMAP)

// physicalMemory is the machine's memory in bytes, or 0 if unknown. A
// request for more cannot succeed, and Go would end the process rather
// than return an error when it fails to allocate it.
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// hostBytes checks AllocHost's size: n elements of size bytes each, whole
// pages of them, and one page more to align the start.
func hostBytes(op string, n, size, page int) (bytes, alloc int, err error) {
	if n < 0 {
		return 0, 0, invalidArg(op, "length %d is negative", n)
	}
	if n > (math.MaxInt-2*page)/size {
		return 0, 0, invalidArg(op, "%d elements of %d bytes overflow the address space", n, size)
	}
	bytes = n * size
	alloc = (bytes+page-1)/page*page + page
	if mem := physicalMemory(); mem != 0 && uint64(alloc) > mem {
		return 0, 0, invalidArg(op, "%d elements of %d bytes (%d bytes) are more than the machine's memory (%d bytes)", n, size, bytes, mem)
	}
	return bytes, alloc, nil
}

// AllocHost allocates page-locked host memory for n elements of T in ctx:
// Go memory, page-aligned, pinned (runtime.Pinner) and page-locked for
// every context (cuMemHostRegister, portable and device-mapped). Its pages
// belong to the buffer alone. Page-locked memory is a scarce system
// resource: allocate it for staging buffers, not for all host data. A size
// that overflows or exceeds the machine's memory is an error matching
// cu.CUDA_ERROR_INVALID_VALUE, before anything is allocated.
func AllocHost[T Element](ctx *Context, n int) (*HostBuffer[T], error) {
	const op = "AllocHost"
	if n == 0 {
		return emptyHostBuffer[T](op, ctx)
	}
	page := os.Getpagesize()
	bytes, alloc, err := hostBytes(op, n, sizeOf[T](), page)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.handle().peek(); !ok {
		return nil, ctx.closedError(op)
	}
	mem := make([]byte, alloc)
	off := (page - int(uintptr(unsafe.Pointer(&mem[0]))%uintptr(page))) % page
	p := unsafe.Pointer(&mem[off])
	pin := new(runtime.Pinner)
	pin.Pin(p)
	core, err := registerHost(op, ctx, p, bytes, hostRegisterFlags)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	core.val.pin = pin
	return newHostBufferHandle[T](core), nil
}

// registerHost page-locks bytes at p in ctx (cuMemHostRegister with flags)
// and returns the core of a buffer holding a reference on ctx.
func registerHost(op string, ctx *Context, p unsafe.Pointer, bytes int, flags uint32) (*shared[hostState], error) {
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	f, err := procs(op, "cuMemHostRegister")
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	if err := boundHostRegister(op, f, cc.val.raw, p, bytes, flags); err != nil {
		_ = cc.release()
		return nil, err
	}
	core := newShared(&hostBufferKind)
	core.val.ptr, core.val.bytes = p, bytes
	core.val.ctx.core = cc
	return core, nil
}

// RegisterHost page-locks mem, memory that Go's garbage collector does not
// manage, for asynchronous copies (cuMemHostRegister with
// CU_MEMHOSTREGISTER_PORTABLE); the last Close unregisters it
// (cuMemHostUnregister) and leaves it to the caller, who unmaps it after
// that, not before.
//
// mem must come from outside the Go heap: syscall.Mmap or
// unix.Mmap, C.malloc, a shared-memory segment. For Go memory use
// AllocHost, which pins it first: the driver keeps the address after the
// call returns, which cgo's pointer rules forbid for Go memory that is not
// pinned. This cannot be checked here.
func RegisterHost[T Element](ctx *Context, mem []T) (*HostBuffer[T], error) {
	const op = "RegisterHost"
	if len(mem) == 0 {
		return emptyHostBuffer[T](op, ctx)
	}
	bytes := len(mem) * sizeOf[T]()
	core, err := registerHost(op, ctx, unsafe.Pointer(unsafe.SliceData(mem)), bytes, uint32(cu.CU_MEMHOSTREGISTER_PORTABLE))
	if err != nil {
		return nil, err
	}
	return newHostBufferHandle[T](core), nil
}

func newHostBufferHandle[T Element](core *shared[hostState]) *HostBuffer[T] {
	b := &HostBuffer[T]{}
	attach(b, &b.h, core)
	return b
}

// emptyHostBuffer is a buffer of no elements: nothing registered, but a
// reference on ctx as any other buffer holds.
func emptyHostBuffer[T Element](op string, ctx *Context) (*HostBuffer[T], error) {
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	core := newShared(&hostBufferKind)
	core.val.ctx.core = cc
	return newHostBufferHandle[T](core), nil
}

func destroyHostBuffer(st *hostState) error {
	const op, fn = "HostBuffer.Close", "cuMemHostUnregister"
	if st.ptr == nil { // empty: nothing registered
		return nil
	}
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return boundHostUnregister(op, f, st.ctx.raw(), st.ptr)
}

// dropHostBuffer unpins the Go memory once the driver has let it go; the
// views still referencing it keep it alive as ordinary Go memory.
func dropHostBuffer(st *hostState) error {
	if st.pin != nil {
		st.pin.Unpin()
	}
	return st.ctx.release()
}

// Clone returns another handle to the same memory, to be closed on its own.
func (b *HostBuffer[T]) Clone() (*HostBuffer[T], error) {
	return cloneAs(b.handle(), "HostBuffer.Clone", newHostBufferHandle[T])
}

// Close releases this handle, after the calls in flight on it have
// returned. Closing a handle again returns nil and does nothing. The last
// Close unregisters the memory (cuMemHostUnregister) and releases its
// context; AllocHost's memory then stays valid Go memory for the views
// that still reference it.
func (b *HostBuffer[T]) Close() error { return b.handle().close("HostBuffer.Close") }

// Slice returns a view of the whole buffer, or nil once this handle is
// closed. See HostBuffer for how long it may be used.
func (b *HostBuffer[T]) Slice() []T {
	st, ok := b.handle().peek()
	if !ok {
		return nil
	}
	return unsafe.Slice((*T)(st.ptr), st.bytes/sizeOf[T]())
}

// Len returns the number of elements, or 0 once this handle is closed.
func (b *HostBuffer[T]) Len() int {
	st, ok := b.handle().peek()
	if !ok {
		return 0
	}
	return st.bytes / sizeOf[T]()
}

// Ptr returns the address of the memory, for the raw bindings, or nil once
// this handle is closed.
func (b *HostBuffer[T]) Ptr() unsafe.Pointer {
	st, ok := b.handle().peek()
	if !ok {
		return nil
	}
	return st.ptr
}

// Context returns the buffer's context, owned by the buffer as
// Stream.Context's is by the stream; a closed handle naming the object
// once this handle is closed (see Stream.Context).
func (b *HostBuffer[T]) Context() *Context {
	return contextOf(b.handle(), func(st *hostState) *ctxRef { return &st.ctx })
}

var hostBufferKind = objectKind[hostState]{destroy: destroyHostBuffer, drop: dropHostBuffer, live: &liveHostBuffers, name: "host buffer"}
