package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Element is the constraint of Slice and the typed copies: the fixed-size
// numeric types (Float16, BFloat16, Float8E4M3 and Float8E5M2 among them,
// and complex64 and complex128, whose layout is CUDA's cuComplex and
// cuDoubleComplex), whose Go layout is their C layout and which hold no Go
// pointers, so their memory may be handed to the driver as bytes. int,
// uint and uintptr are left out on purpose: their size is the platform's,
// not the kernel's.
type Element interface {
	~int8 | ~int16 | ~int32 | ~int64 |
		~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | ~complex64 | ~complex128 |
		Float16 | BFloat16 | Float8E4M3 | Float8E5M2
}

// Memory is device memory as the library packages (cuda/blas, cuda/rand,
// cuda/fft, cuda/nccl) take it: a *Slice[T] of any element type, or a
// *DeviceMemory. A nil one is a closed one.
type Memory interface {
	Holder
	// Ptr is the device address of the first byte; 0 once closed.
	Ptr() cu.CUdeviceptr
	// Size is the size in bytes; 0 once closed.
	Size() int
	// Context is the memory's context; a closed handle once closed.
	Context() *Context
	// Close releases this handle.
	Close() error
}

var (
	_ Memory = (*DeviceMemory)(nil)
	_ Memory = (*Slice[float32])(nil)
)

func sizeOf[T Element]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// ErrNoMemoryPools is matched by the error of AllocAsync on a device
// without stream-ordered allocation (its
// CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0).
var ErrNoMemoryPools = errors.New("device does not support memory pools (stream-ordered allocation)")

// DeviceMemory is a shared handle to one allocation of device memory: Alloc
// (cuMemAlloc) or the stream-ordered AllocAsync (cuMemAllocAsync), or
// managed memory (ManagedMemory.DeviceMemory). Clone
// returns another handle; the memory is freed when the last handle is
// closed, or by a cleanup once every handle is unreachable. It holds a
// reference on its Context (and, made by AllocAsync, on its Stream) until
// then.
//
// Freeing does not wait for the device: as with cuMemFree, work still
// using the memory must be finished (or, for AllocAsync memory, ordered
// before the free on its stream) before the last Close.
//
// All methods are safe for concurrent use.
type DeviceMemory struct {
	h handle[memState]
}

type memState struct {
	ptr  cu.CUdeviceptr // first: see shared.val
	size int
	ctx  ctxRef
	// stream is the stream of an AllocAsync allocation, on which the last
	// Close frees it (cuMemFreeAsync); nil for Alloc.
	stream *shared[streamState]
	pool   *shared[poolState] // AllocFromPool's pool; nil otherwise
	// owner is what the memory of a view belongs to (RangeSlice's
	// *shared[rangeState]), released by its kind's drop; nil otherwise.
	owner any
}

func (m *DeviceMemory) handle() *handle[memState] {
	if m == nil {
		return nil
	}
	return &m.h
}

// invalidArg is the error of arguments refused before calling the driver.
func invalidArg(op, format string, args ...any) error {
	return &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_VALUE,
		Err: fmt.Errorf(format+": %w", append(args, cu.CUDA_ERROR_INVALID_VALUE)...)}
}

// Alloc allocates bytes of device memory in ctx (cuMemAlloc). The memory
// is not initialized. Zero bytes is empty memory, made without a driver
// call. A request the device cannot meet is an error naming the size asked
// and the device's free memory.
func Alloc(ctx *Context, bytes int) (*DeviceMemory, error) {
	return alloc("Alloc", ctx, bytes)
}

func alloc(op string, ctx *Context, bytes int) (*DeviceMemory, error) {
	if bytes < 0 {
		return nil, invalidArg(op, "size %d is negative", bytes)
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	if bytes == 0 {
		return emptyMemory(cc, nil), nil
	}
	f, err := procs(op, "cuMemAlloc")
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	p, err := boundMemAlloc(op, f, cc.val.raw, bytes)
	if err != nil {
		if p != 0 { // allocated, then the context's pop failed: nobody owns it
			_ = boundMemFree(op, f, cc.val.raw, cu.CUdeviceptr(p))
		}
		err = outOfMemory(op, cc.val.raw, bytes, err)
		_ = cc.release()
		return nil, err
	}
	core := newShared(&deviceMemoryKind)
	core.val.ptr, core.val.size = cu.CUdeviceptr(p), bytes
	core.val.ctx.core = cc
	return newDeviceMemoryHandle(core), nil
}

// emptyMemory is an allocation of zero bytes: no driver memory, but the
// references (context, stream) of any other, so that its Context and its
// stream's order work as for the rest.
func emptyMemory(cc *shared[ctxState], stream *shared[streamState]) *DeviceMemory {
	core := newShared(&deviceMemoryKind)
	core.val.ctx.core, core.val.stream = cc, stream
	return newDeviceMemoryHandle(core)
}

// outOfMemory adds to an allocation's CUDA_ERROR_OUT_OF_MEMORY the size
// asked and what the device has free (cuMemGetInfo), which is what the
// reader needs to act on it; any other error is returned as it is.
func outOfMemory(op string, ctx cu.CUcontext, bytes int, err error) error {
	if !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) {
		return err
	}
	var free, total uint64
	if bind(op, ctx, func() error { return cu.MemGetInfo(&free, &total) }) != nil {
		return err
	}
	detail := fmt.Sprintf("%s asked, %s free of the device's %s", byteSize(uint64(bytes)), byteSize(free), byteSize(total))
	var ce *Error
	if errors.As(err, &ce) {
		return &Error{Op: ce.Op, Func: ce.Func, Result: ce.Result, Err: fmt.Errorf("%s: %w", detail, ce.Err)}
	}
	return &Error{Op: op, Result: cu.CUDA_ERROR_OUT_OF_MEMORY, Err: fmt.Errorf("%s: %w", detail, err)}
}

// byteSize writes a size in bytes for a reader: exact, with its binary
// multiple when it has one above a KiB.
func byteSize(n uint64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), ""
	for _, name := range units {
		if v < 1024 {
			break
		}
		v, u = v/1024, name
	}
	if u == "" {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", n, v, u)
}

// AllocFrom allocates device memory in ctx for src and copies src into it
// (cuMemAlloc, cuMemcpyHtoD).
func AllocFrom[T Element](ctx *Context, src []T) (*DeviceMemory, error) {
	m, err := Alloc(ctx, len(src)*sizeOf[T]())
	if err != nil {
		return nil, err
	}
	if err := CopyToDevice(m, src); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// AllocAsync allocates bytes of device memory in stream order
// (cuMemAllocAsync), from the default memory pool of the stream's device:
// work enqueued on s after this call may use it, and it is freed on s
// (cuMemFreeAsync) by the last Close, after the work enqueued on s before
// that Close. Work on other streams that uses it must be ordered by events
// with both. During a stream capture the allocation (and a free) become
// memory nodes of the graph, under the driver's rules for graph-allocated
// memory.
//
// A device without memory pools gives an error matching ErrNoMemoryPools.
func AllocAsync(s *Stream, bytes int) (*DeviceMemory, error) {
	const op = "AllocAsync"
	return allocOn(op, s, bytes)
}

// allocOn is AllocAsync: stream-ordered memory of s's device's default
// pool, of which s is the stream.
func allocOn(op string, s *Stream, bytes int) (*DeviceMemory, error) {
	if bytes < 0 {
		if _, ok := s.handle().peek(); !ok {
			return nil, s.handle().closedError(op)
		}
		return nil, invalidArg(op, "size %d is negative", bytes)
	}
	return allocAsync(op, "cuMemAllocAsync", s, bytes, nil, func(p *cu.CUdeviceptr, st cu.CUstream) error {
		return cu.MemAllocAsync(p, uint64(bytes), st)
	})
}

// allocAsync is AllocAsync and AllocFromPool: alloc makes the allocation
// on the stream, with the stream's context current. The memory holds a
// reference on the stream, its context and, if not nil, pool (given to it:
// released here on failure).
func allocAsync(op, fn string, s *Stream, bytes int, pool *shared[poolState], alloc func(*cu.CUdeviceptr, cu.CUstream) error) (*DeviceMemory, error) {
	sc, ok := s.handle().clone()
	if !ok {
		if pool != nil {
			_ = pool.release()
		}
		return nil, s.handle().closedError(op)
	}
	sst := &sc.val
	// The stream's own reference keeps its context alive: this one cannot
	// fail.
	cc := sst.ctx.core
	cc.acquire()
	if bytes == 0 {
		if pool != nil {
			_ = pool.release()
		}
		return emptyMemory(cc, sc), nil
	}
	var p cu.CUdeviceptr
	err := bind(op, cc.val.raw, func() error {
		err := alloc(&p, sst.raw)
		if err == nil {
			return nil
		}
		p = 0
		if pools, aerr := cc.val.dev.SupportsMemoryPools(); aerr == nil && !pools {
			return newError(op, fn, fmt.Errorf("%w: %w", ErrNoMemoryPools, err))
		}
		return newError(op, fn, err)
	})
	err = outOfMemory(op, cc.val.raw, bytes, err)
	if err != nil {
		if p != 0 { // allocated, then the context's pop failed: nobody owns it
			_ = bind(op, cc.val.raw, func() error { return cu.MemFreeAsync(p, sst.raw) })
		}
		_ = cc.release()
		_ = sc.release()
		if pool != nil {
			_ = pool.release()
		}
		return nil, err
	}
	core := newShared(&deviceMemoryKind)
	core.val.ptr, core.val.size, core.val.stream, core.val.pool = p, bytes, sc, pool
	core.val.ctx.core = cc
	return newDeviceMemoryHandle(core), nil
}

func newDeviceMemoryHandle(core *shared[memState]) *DeviceMemory {
	m := &DeviceMemory{}
	attach(m, &m.h, core)
	return m
}

func destroyDeviceMemory(st *memState) error {
	const op = "DeviceMemory.Close"
	if st.ptr == 0 { // empty: nothing was allocated
		return nil
	}
	if st.stream != nil {
		sraw := st.stream.val.raw
		return bind(op, st.ctx.raw(), func() error {
			return check(op, "cuMemFreeAsync", cu.MemFreeAsync(st.ptr, sraw))
		})
	}
	f, err := procs(op, "cuMemFree")
	if err != nil {
		return err
	}
	return boundMemFree(op, f, st.ctx.raw(), st.ptr)
}

// dropDeviceMemory releases the stream, then the context: both outlive the
// memory.
func dropDeviceMemory(st *memState) error {
	var err error
	if st.stream != nil {
		err = st.stream.release()
	}
	if st.pool != nil {
		if perr := st.pool.release(); err == nil {
			err = perr
		}
	}
	if cerr := st.ctx.release(); err == nil {
		err = cerr
	}
	return err
}

// Clone returns another handle to the same memory, to be closed on its own.
func (m *DeviceMemory) Clone() (*DeviceMemory, error) {
	return cloneAs(m.handle(), "DeviceMemory.Clone", newDeviceMemoryHandle)
}

// Close releases this handle, after the calls in flight on it (a copy, a
// memset) have returned. Closing a handle again returns nil and does
// nothing. The last Close frees the memory (cuMemFree, or cuMemFreeAsync on
// its stream for AllocAsync memory) and releases its context.
func (m *DeviceMemory) Close() error { return m.handle().close("DeviceMemory.Close") }

// Raw returns the device address, or 0 once this handle is closed. It stays
// owned by the handles: do not free it.
func (m *DeviceMemory) Raw() cu.CUdeviceptr { return memRaw(m.handle()) }

// Ptr is Raw, for Memory.
func (m *DeviceMemory) Ptr() cu.CUdeviceptr { return memRaw(m.handle()) }

// memRaw and memSize are Raw and Size of any handle to an allocation
// (DeviceMemory, ManagedMemory): 0 once closed.
func memRaw(h *handle[memState]) cu.CUdeviceptr {
	st, ok := h.peek()
	if !ok {
		return 0
	}
	return st.ptr
}

func memSize(h *handle[memState]) int {
	st, ok := h.peek()
	if !ok {
		return 0
	}
	return st.size
}

// Size returns the size in bytes, or 0 once this handle is closed.
func (m *DeviceMemory) Size() int { return memSize(m.handle()) }

// Context returns the memory's context, owned by the memory as
// Stream.Context's is by the stream; a closed handle naming the object
// once this handle is closed (see Stream.Context).
func (m *DeviceMemory) Context() *Context {
	return contextOf(m.handle(), func(st *memState) *ctxRef { return &st.ctx })
}

// CopyToDevice copies src to the start of dst (cuMemcpyHtoD) and returns
// when the data is in device memory, for work on any stream to use. dst
// must be at least as large as src.
//
// Synchronous copies and memsets first wait for the work queued before
// them that may use the memory: that of the memory's stream (AllocAsync,
// AllocFromPool), or, for memory made without one (Alloc), all the work of
// its context (cuCtxSynchronize). They never read or overwrite data a
// kernel queued earlier is still using; on memory without a stream, they
// also wait for unrelated work of the context.
func CopyToDevice[T Element](dst *DeviceMemory, src []T) error {
	n := len(src) * sizeOf[T]()
	return copySync("CopyToDevice", dst.handle(), true, unsafe.Pointer(unsafe.SliceData(src)), n, func(st *memState) (cu.CUdeviceptr, error) {
		if n > st.size {
			return 0, invalidArg("CopyToDevice", "copy of %d bytes into device memory of %d bytes", n, st.size)
		}
		return st.ptr, nil
	})
}

// CopyFromDevice fills dst from the start of src (cuMemcpyDtoH) and returns
// when dst holds the data. src must be at least as large as dst. Like
// CopyToDevice it first waits for the work queued before it.
func CopyFromDevice[T Element](dst []T, src *DeviceMemory) error {
	n := len(dst) * sizeOf[T]()
	return copySync("CopyFromDevice", src.handle(), false, unsafe.Pointer(unsafe.SliceData(dst)), n, func(st *memState) (cu.CUdeviceptr, error) {
		if n > st.size {
			return 0, invalidArg("CopyFromDevice", "copy of %d bytes from device memory of %d bytes", n, st.size)
		}
		return st.ptr, nil
	})
}

// CopyToDeviceAsync enqueues on s a copy of the whole of src to the start
// of dst (cuMemcpyHtoDAsync). It returns at once: src must not be changed
// or closed until the copy has run (Stream.Synchronize, an Event).
//
// The source is a page-locked HostBuffer, never a Go slice: the driver
// reads the memory after the call returns, which cgo forbids for Go memory
// that is not pinned, and only page-locked memory is copied asynchronously.
func CopyToDeviceAsync[T Element](s *Stream, dst *DeviceMemory, src *HostBuffer[T]) error {
	return copyHostAsync("CopyToDeviceAsync", s, true, dst.handle(), src.handle(), func(dm *memState, n int) (cu.CUdeviceptr, error) {
		if n > dm.size {
			return 0, invalidArg("CopyToDeviceAsync", "copy of %d bytes into device memory of %d bytes", n, dm.size)
		}
		return dm.ptr, nil
	})
}

// CopyFromDeviceAsync enqueues on s a copy filling the whole of dst from
// the start of src (cuMemcpyDtoHAsync). It returns at once: read dst after
// the copy has run (Stream.Synchronize, an Event). See CopyToDeviceAsync
// for why dst is a HostBuffer.
func CopyFromDeviceAsync[T Element](s *Stream, dst *HostBuffer[T], src *DeviceMemory) error {
	return copyHostAsync("CopyFromDeviceAsync", s, false, src.handle(), dst.handle(), func(dm *memState, n int) (cu.CUdeviceptr, error) {
		if n > dm.size {
			return 0, invalidArg("CopyFromDeviceAsync", "copy of %d bytes from device memory of %d bytes", n, dm.size)
		}
		return dm.ptr, nil
	})
}

// CopyDevice copies the whole of src to the start of dst (cuMemcpyDtoD)
// and returns when the copy is done. dst must be at least as large as src.
// Like CopyToDevice it first waits for the work queued before it: on the
// memories' stream when both have the same one, on the context otherwise.
func CopyDevice(dst, src *DeviceMemory) error {
	const op = "CopyDevice"
	var hs holds
	defer hs.release()
	dh, sh := dst.handle(), src.handle()
	if err := hs.all(op, arg{"destination", dh}, arg{"source", sh}); err != nil {
		return err
	}
	d, s := &dh.core.val, &sh.core.val
	if s.size > d.size {
		return invalidArg(op, "copy of %d bytes into device memory of %d bytes", s.size, d.size)
	}
	if s.size == 0 {
		return nil
	}
	f, err := procs(op, "cuMemcpyDtoD")
	if err != nil {
		return err
	}
	if err := waitWriters(op, d, s); err != nil {
		return err
	}
	return boundDtoD(op, d.ctx.raw(), f, d.ptr, s.ptr, s.size)
}

// CopyDeviceAsync enqueues on st a copy of the whole of src to the start
// of dst (cuMemcpyDtoDAsync).
func CopyDeviceAsync(st *Stream, dst, src *DeviceMemory) error {
	return copyDeviceAsync("CopyDeviceAsync", st, dst.handle(), src.handle(), func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
		if s.size > d.size {
			return 0, 0, 0, invalidArg("CopyDeviceAsync", "copy of %d bytes into device memory of %d bytes", s.size, d.size)
		}
		return d.ptr, s.ptr, s.size, nil
	})
}

// memset is every synchronous Memset: the whole of m, as elements of
// width bytes, on the legacy default stream after the work queued before
// it, waited for.
func (m *DeviceMemory) memset(op string, width int, v uint32) error {
	h := m.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	if st.size%width != 0 {
		return invalidArg(op, "device memory of %d bytes is not a whole number of %d-byte elements", st.size, width)
	}
	if st.size == 0 {
		return nil
	}
	if err := waitWriters(op, st); err != nil {
		return err
	}
	return memsetSync(op, st.ctx.raw(), st.ptr, width, v, st.size/width)
}

// memsetOn is every Memset*Async: the whole of m, as elements of width
// bytes, enqueued on s.
func (m *DeviceMemory) memsetOn(op string, s *Stream, width int, v uint32) error {
	var hs holds
	defer hs.release()
	mh, sh := m.handle(), s.handle()
	if err := hs.all(op, arg{"memory", mh}, arg{"stream", sh}); err != nil {
		return err
	}
	st, ss := &mh.core.val, &sh.core.val
	if st.size%width != 0 {
		return invalidArg(op, "device memory of %d bytes is not a whole number of %d-byte elements", st.size, width)
	}
	if st.size == 0 {
		return nil
	}
	return memsetAsync(op, st.ctx.raw(), st.ptr, width, v, st.size/width, ss.raw)
}

// MemsetD8 sets every byte of m to v (cuMemsetD8) and returns when it is
// done. Like CopyToDevice it first waits for the work queued before it.
func (m *DeviceMemory) MemsetD8(v uint8) error {
	return m.memset("DeviceMemory.MemsetD8", 1, uint32(v))
}

// MemsetD16 sets every 16-bit element of m to v (cuMemsetD16); m's size
// must be a multiple of 2.
func (m *DeviceMemory) MemsetD16(v uint16) error {
	return m.memset("DeviceMemory.MemsetD16", 2, uint32(v))
}

// MemsetD32 sets every 32-bit element of m to v (cuMemsetD32); m's size
// must be a multiple of 4. math.Float32bits gives the pattern of a float32.
func (m *DeviceMemory) MemsetD32(v uint32) error { return m.memset("DeviceMemory.MemsetD32", 4, v) }

// MemsetD8Async enqueues on s setting every byte of m to v (cuMemsetD8Async).
func (m *DeviceMemory) MemsetD8Async(s *Stream, v uint8) error {
	return m.memsetOn("DeviceMemory.MemsetD8Async", s, 1, uint32(v))
}

// MemsetD16Async enqueues on s setting every 16-bit element of m to v
// (cuMemsetD16Async).
func (m *DeviceMemory) MemsetD16Async(s *Stream, v uint16) error {
	return m.memsetOn("DeviceMemory.MemsetD16Async", s, 2, uint32(v))
}

// MemsetD32Async enqueues on s setting every 32-bit element of m to v
// (cuMemsetD32Async).
func (m *DeviceMemory) MemsetD32Async(s *Stream, v uint32) error {
	return m.memsetOn("DeviceMemory.MemsetD32Async", s, 4, v)
}

var deviceMemoryKind = objectKind[memState]{destroy: destroyDeviceMemory, drop: dropDeviceMemory, live: &liveDeviceMemory, name: "memory"}
