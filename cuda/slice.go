package cuda

import (
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Slice is a typed view of device memory: Len elements of T starting at an
// element offset of one allocation. It is a handle of its own on that
// allocation: the memory stays allocated while any Slice or DeviceMemory
// handle on it is open, and Sub returns views of a part of it that keep it
// alive too. Lengths and offsets are in elements, never bytes.
//
// A *Slice[T] is a kernel argument (Kernel.Launch, Kernel.NewArgs,
// Args.Set): the device address of its first element.
//
// As with DeviceMemory, the last Close frees the memory without waiting
// for the device. All methods are safe for concurrent use.
type Slice[T Element] struct {
	h handle[memState]
	// off and n are the view's first element and length, fixed before the
	// handle is shared.
	off, n int
}

func (s *Slice[T]) handle() *handle[memState] {
	if s == nil {
		return nil
	}
	return &s.h
}

// A *Slice is a Holder, so that the library packages hold the slices they
// pass to a library for the length of the call.
func (s *Slice[T]) gate() gate { return s.handle() }

func newSliceHandle[T Element](core *shared[memState], off, n int) *Slice[T] {
	s := &Slice[T]{off: off, n: n}
	attach(s, &s.h, core)
	return s
}

// SliceOf returns a typed view of the whole of m, as a handle of its own:
// close both. m's size must be a whole number of elements of T.
func SliceOf[T Element](m *DeviceMemory) (*Slice[T], error) {
	const op = "SliceOf"
	st, ok := m.handle().peek()
	if !ok {
		return nil, m.handle().closedError(op)
	}
	size := sizeOf[T]()
	if st.size%size != 0 {
		return nil, invalidArg(op, "device memory of %d bytes is not a whole number of %d-byte elements", st.size, size)
	}
	core, ok := m.handle().clone()
	if !ok {
		return nil, closedError(op)
	}
	return newSliceHandle[T](core, 0, st.size/size), nil
}

// Allocator is where AllocSlice and AllocSliceFrom make memory: a *Stream
// or a *Context.
//
// On a stream, the memory comes from the default memory pool of the
// stream's device in stream order (cuMemAllocAsync): work queued on the
// stream after the call may use it, the synchronous copies and fills wait
// for that stream's work (and only that stream's), and the last Close
// frees it on the stream (cuMemFreeAsync), after the work queued there
// before that Close. This is the memory for a program's streams.
//
// In a context, it is plain device memory (cuMemAlloc): the synchronous
// copies and fills wait for all the work of the context, and the last
// Close frees it at once, so work on any stream that still uses it must be
// finished first.
type Allocator interface {
	// allocate makes bytes of device memory here.
	allocate(op string, bytes int) (*DeviceMemory, error)
}

func (s *Stream) allocate(op string, bytes int) (*DeviceMemory, error) {
	return allocOn(op, s, bytes)
}

func (c *Context) allocate(op string, bytes int) (*DeviceMemory, error) {
	return alloc(op, c, bytes)
}

// AllocSlice allocates device memory for n elements of T on a stream or in
// a context (see Allocator). The memory is not initialized: Fill it, or
// use AllocSliceFrom. A length of 0 is an empty slice, made without a
// driver call.
func AllocSlice[T Element](on Allocator, n int) (*Slice[T], error) {
	const op = "AllocSlice"
	return allocSlice[T](op, on, n)
}

func allocSlice[T Element](op string, on Allocator, n int) (*Slice[T], error) {
	if on == nil {
		return nil, invalidArg(op, "no stream or context to allocate on")
	}
	size := sizeOf[T]()
	if n < 0 || n > math.MaxInt/size {
		return nil, invalidArg(op, "length %d of %d-byte elements is negative or overflows", n, size)
	}
	m, err := on.allocate(op, n*size)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return SliceOf[T](m)
}

// AllocSliceFrom allocates device memory on a stream or in a context (see
// Allocator) and copies src into it. On a stream the copy is in stream
// order (CopyFromHost) and src may be reused as soon as AllocSliceFrom
// returns; in a context it is synchronous (CopyFrom).
func AllocSliceFrom[T Element](on Allocator, src []T) (*Slice[T], error) {
	const op = "AllocSliceFrom"
	s, err := allocSlice[T](op, on, len(src))
	if err != nil {
		return nil, err
	}
	if st, ok := on.(*Stream); ok {
		err = s.CopyFromHost(st, src)
	} else {
		err = s.CopyFrom(src)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Len returns the number of elements, or 0 once this handle is closed.
func (s *Slice[T]) Len() int {
	if _, ok := s.handle().peek(); !ok {
		return 0
	}
	return s.n
}

// Size returns the view's size in bytes (Len times the element's size),
// or 0 once this handle is closed.
func (s *Slice[T]) Size() int { return s.Len() * sizeOf[T]() }

// Ptr returns the device address of the first element, or 0 once this
// handle is closed. It stays owned by the handles: do not free it.
func (s *Slice[T]) Ptr() cu.CUdeviceptr {
	st, ok := s.handle().peek()
	if !ok {
		return 0
	}
	return st.ptr + cu.CUdeviceptr(s.off*sizeOf[T]())
}

// Context returns the memory's context, owned by the memory; once this
// handle is closed, a closed handle naming the memory (see
// Stream.Context).
func (s *Slice[T]) Context() *Context {
	return contextOf(s.handle(), func(st *memState) *ctxRef { return &st.ctx })
}

// kernelArg is the address a Slice passes to a kernel (encodeArg).
func (s *Slice[T]) kernelArg() (uint64, bool) {
	st, ok := s.handle().peek()
	if !ok {
		return 0, false
	}
	return uint64(st.ptr) + uint64(s.off*sizeOf[T]()), true
}

// Sub returns the view of elements i to j-1 of s (0 <= i <= j <= s.Len()),
// as a new handle on the same allocation that keeps it alive: close it on
// its own. Element 0 of the result is element i of s.
func (s *Slice[T]) Sub(i, j int) (*Slice[T], error) {
	const op = "Slice.Sub"
	if _, ok := s.handle().peek(); !ok {
		return nil, s.handle().closedError(op)
	}
	if i < 0 || j < i || j > s.n {
		return nil, invalidArg(op, "range [%d:%d] of a slice of length %d", i, j, s.n)
	}
	core, ok := s.h.clone()
	if !ok {
		return nil, closedError(op)
	}
	return newSliceHandle[T](core, s.off+i, j-i), nil
}

// Clone returns another handle to the same view, to be closed on its own.
func (s *Slice[T]) Clone() (*Slice[T], error) {
	const op = "Slice.Clone"
	core, ok := s.handle().clone()
	if !ok {
		return nil, s.handle().closedError(op)
	}
	return newSliceHandle[T](core, s.off, s.n), nil
}

// Close releases this handle, after the calls in flight on it have
// returned. Closing again returns nil. The last handle on the allocation,
// Slice or DeviceMemory, frees it.
func (s *Slice[T]) Close() error { return s.handle().close("Slice.Close") }

// addr is the address of element i of the view, for a caller holding s.
func (s *Slice[T]) addr(st *memState, i int) cu.CUdeviceptr {
	return st.ptr + cu.CUdeviceptr((s.off+i)*sizeOf[T]())
}

// CopyFrom copies src to the start of s (cuMemcpyHtoD) and returns when
// the data is in device memory; len(src) must be at most s.Len(). It first
// waits for the work queued before it that may use s: on the slice's
// stream, or the whole context for memory made without one (see
// Allocator).
func (s *Slice[T]) CopyFrom(src []T) error {
	return copySync("Slice.CopyFrom", s.handle(), true, unsafe.Pointer(unsafe.SliceData(src)), len(src)*sizeOf[T](), func(st *memState) (cu.CUdeviceptr, error) {
		if len(src) > s.n {
			return 0, invalidArg("Slice.CopyFrom", "copy of %d elements into a slice of %d", len(src), s.n)
		}
		return s.addr(st, 0), nil
	})
}

// CopyTo fills dst from the start of s (cuMemcpyDtoH) and returns when dst
// holds the data; len(dst) must be at most s.Len(). Like CopyFrom it first
// waits for the work queued before it.
func (s *Slice[T]) CopyTo(dst []T) error {
	return copySync("Slice.CopyTo", s.handle(), false, unsafe.Pointer(unsafe.SliceData(dst)), len(dst)*sizeOf[T](), func(st *memState) (cu.CUdeviceptr, error) {
		if len(dst) > s.n {
			return 0, invalidArg("Slice.CopyTo", "copy of %d elements from a slice of %d", len(dst), s.n)
		}
		return s.addr(st, 0), nil
	})
}

// CopyFromHost enqueues on st a copy of src to the start of s, and returns
// once src has been read: the caller may change or drop src at once, and
// work queued on st after the call sees the data. len(src) must be at most
// s.Len(); st must be a stream of s's context.
//
// Go memory cannot be copied by the device asynchronously, so src goes
// through page-locked buffers of the context's own, in chunks of a few
// MiB (cuMemcpyHtoDAsync from them): a large copy waits for the chunks
// before it to leave those buffers, and the memory the buffers take is
// given back when the context is destroyed.
func (s *Slice[T]) CopyFromHost(st *Stream, src []T) error {
	const op = "Slice.CopyFromHost"
	n := len(src) * sizeOf[T]()
	return copyGoSlice(op, st, s.handle(), n, func() error {
		if len(src) > s.n {
			return invalidArg(op, "copy of %d elements into a slice of %d", len(src), s.n)
		}
		return nil
	}, func(m *memState, pool *stagingPool, raw cu.CUstream) error {
		return pool.copyIn(op, raw, s.addr(m, 0), unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), n))
	})
}

// CopyToHost enqueues on st a copy filling dst from the start of s, and
// returns once dst holds it: after the work queued on st before the call.
// len(dst) must be at most s.Len(); st must be a stream of s's context.
// The data comes through the page-locked buffers of CopyFromHost, or, for
// copies of 8 MiB or more, straight into dst (pinned meanwhile) by the
// driver's copy of pageable memory, which is faster there.
func (s *Slice[T]) CopyToHost(st *Stream, dst []T) error {
	const op = "Slice.CopyToHost"
	n := len(dst) * sizeOf[T]()
	return copyGoSlice(op, st, s.handle(), n, func() error {
		if len(dst) > s.n {
			return invalidArg(op, "copy of %d elements from a slice of %d", len(dst), s.n)
		}
		return nil
	}, func(m *memState, pool *stagingPool, raw cu.CUstream) error {
		return pool.copyOut(op, raw, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), n), s.addr(m, 0))
	})
}

// CopyFromAsync enqueues on st a copy of the whole of src to the start of
// s (cuMemcpyHtoDAsync); src.Len() must be at most s.Len(). As with
// CopyToDeviceAsync, src must stay open and unchanged until the copy has
// run.
func (s *Slice[T]) CopyFromAsync(st *Stream, src *HostBuffer[T]) error {
	return copyHostAsync("Slice.CopyFromAsync", st, true, s.handle(), src.handle(), func(dm *memState, bytes int) (cu.CUdeviceptr, error) {
		if n := bytes / sizeOf[T](); n > s.n {
			return 0, invalidArg("Slice.CopyFromAsync", "copy of %d elements into a slice of %d", n, s.n)
		}
		return s.addr(dm, 0), nil
	})
}

// CopyToAsync enqueues on st a copy filling the whole of dst from the
// start of s (cuMemcpyDtoHAsync); dst.Len() must be at most s.Len(). Read
// dst after the copy has run.
func (s *Slice[T]) CopyToAsync(st *Stream, dst *HostBuffer[T]) error {
	return copyHostAsync("Slice.CopyToAsync", st, false, s.handle(), dst.handle(), func(dm *memState, bytes int) (cu.CUdeviceptr, error) {
		if n := bytes / sizeOf[T](); n > s.n {
			return 0, invalidArg("Slice.CopyToAsync", "copy of %d elements from a slice of %d", n, s.n)
		}
		return s.addr(dm, 0), nil
	})
}

// CopySlice copies the whole of src to the start of dst (cuMemcpyDtoD) and
// returns when the copy is done; src.Len() must be at most dst.Len(). The
// two may be views of one allocation, but must not overlap. Like CopyFrom
// it first waits for the work queued before it: on the slices' stream
// when both have the same one, on the context otherwise.
func CopySlice[T Element](dst, src *Slice[T]) error {
	const op = "CopySlice"
	var hs holds
	defer hs.release()
	dh, sh := dst.handle(), src.handle()
	if err := hs.all(op, arg{"destination", dh}, arg{"source", sh}); err != nil {
		return err
	}
	d, s := &dh.core.val, &sh.core.val
	if err := checkSliceCopy(op, dst, src); err != nil || src.n == 0 {
		return err
	}
	f, err := procs(op, "cuMemcpyDtoD")
	if err != nil {
		return err
	}
	if err := waitWriters(op, d, s); err != nil {
		return err
	}
	return boundDtoD(op, d.ctx.raw(), f, dst.addr(d, 0), src.addr(s, 0), src.n*sizeOf[T]())
}

// CopySliceAsync enqueues on st a copy of the whole of src to the start of
// dst (cuMemcpyDtoDAsync), under CopySlice's rules.
func CopySliceAsync[T Element](st *Stream, dst, src *Slice[T]) error {
	const op = "CopySliceAsync"
	return copyDeviceAsync(op, st, dst.handle(), src.handle(), func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
		if err := checkSliceCopy(op, dst, src); err != nil {
			return 0, 0, 0, err
		}
		return dst.addr(d, 0), src.addr(s, 0), src.n * sizeOf[T](), nil
	})
}

// checkSliceCopy refuses a device copy that does not fit or whose views of
// one allocation overlap (cuMemcpyDtoD's result is undefined for those).
func checkSliceCopy[T Element](op string, dst, src *Slice[T]) error {
	if src.n > dst.n {
		return invalidArg(op, "copy of %d elements into a slice of %d", src.n, dst.n)
	}
	if dst.h.core == src.h.core && src.n > 0 && dst.off < src.off+src.n && src.off < dst.off+src.n {
		return invalidArg(op, "overlapping copy of elements [%d:%d] to [%d:%d] of one allocation",
			src.off, src.off+src.n, dst.off, dst.off+src.n)
	}
	return nil
}

// fillPattern is how Fill sets n elements: count memset elements of
// width bytes (1, 2 or 4) to bits, or, with width 8 or 16, count elements
// of that many bytes whose 32-bit words are bits, hi and, for 16, more.
type fillPattern struct {
	width    int
	bits, hi uint32
	more     [2]uint32
	count    int
}

// words is the 32-bit words of a wide pattern's element.
func (f *fillPattern) words() []uint32 {
	w := []uint32{f.bits, f.hi, f.more[0], f.more[1]}
	return w[:f.width/4]
}

// fillPlan picks the memset that sets n elements to v. The driver has no
// memset wider than 4 bytes: an 8-byte v of one repeated byte, or of two
// equal halves (0, -1, and many more), is a plain memset of 8n bytes or 2n
// words, and any other is two columns of 32-bit values
// (memsetColumnsSync); a 16-byte v of two equal halves is the 8-byte
// plan of those halves for 2n elements, and any other four columns.
func fillPlan[T Element](v T, n int) fillPattern {
	switch sizeOf[T]() {
	case 1:
		return fillPattern{width: 1, bits: uint32(*(*uint8)(unsafe.Pointer(&v))), count: n}
	case 2:
		return fillPattern{width: 2, bits: uint32(*(*uint16)(unsafe.Pointer(&v))), count: n}
	case 4:
		return fillPattern{width: 4, bits: *(*uint32)(unsafe.Pointer(&v)), count: n}
	case 16:
		h := *(*[2]uint64)(unsafe.Pointer(&v))
		if h[0] == h[1] {
			return fillPlan(h[0], 2*n)
		}
		return fillPattern{width: 16, bits: uint32(h[0]), hi: uint32(h[0] >> 32),
			more: [2]uint32{uint32(h[1]), uint32(h[1] >> 32)}, count: n}
	}
	b := *(*uint64)(unsafe.Pointer(&v))
	lo, hi := uint32(b), uint32(b>>32)
	switch {
	case b == uint64(uint8(b))*0x0101010101010101:
		return fillPattern{width: 1, bits: uint32(uint8(b)), count: 8 * n}
	case lo == hi:
		return fillPattern{width: 4, bits: lo, count: 2 * n}
	}
	return fillPattern{width: 8, bits: lo, hi: hi, count: n}
}

// Fill sets every element of s to v (cuMemsetD8, D16 or D32 for 1-, 2- and
// 4-byte elements) and returns when it is done. The driver has no memset
// wider than 4 bytes: 8- and 16-byte elements take cuMemsetD8 or D32 when
// v repeats a byte or a word, and otherwise one cuMemsetD2D32 per 32-bit
// word of the element, with the element's size as the pitch. Like
// CopyFrom it first waits for the work queued before it.
func (s *Slice[T]) Fill(v T) error {
	const op = "Slice.Fill"
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	if s.n == 0 {
		return nil
	}
	if err := waitWriters(op, st); err != nil {
		return err
	}
	f := fillPlan(v, s.n)
	if f.width > 4 {
		return memsetColumnsSync(op, st.ctx.raw(), s.addr(st, 0), f.words(), f.count)
	}
	return memsetSync(op, st.ctx.raw(), s.addr(st, 0), f.width, f.bits, f.count)
}

// FillAsync enqueues on st setting every element of s to v
// (cuMemsetD8Async, D16Async, D32Async or, for wider elements, the
// cuMemsetD2D32Async columns of Fill), under Fill's rules.
func (s *Slice[T]) FillAsync(st *Stream, v T) error {
	const op = "Slice.FillAsync"
	var hs holds
	defer hs.release()
	mh, th := s.handle(), st.handle()
	if err := hs.all(op, arg{"slice", mh}, arg{"stream", th}); err != nil {
		return err
	}
	m, ss := &mh.core.val, &th.core.val
	if s.n == 0 {
		return nil
	}
	f := fillPlan(v, s.n)
	if f.width > 4 {
		return memsetColumnsAsync(op, m.ctx.raw(), s.addr(m, 0), f.words(), f.count, ss.raw)
	}
	return memsetAsync(op, m.ctx.raw(), s.addr(m, 0), f.width, f.bits, f.count, ss.raw)
}
