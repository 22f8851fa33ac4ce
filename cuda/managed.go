package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// ManagedMemory is a shared handle to one allocation of managed (unified)
// memory (cuMemAllocManaged): one address, valid on the host and on every
// device with managed memory, whose pages the driver migrates to where
// they are used. Prefetch moves them ahead of use, in stream order; Advise
// tells the driver how they will be used; ManagedSlice and AccessManaged
// give the host a typed view. Clone, Close, the Context reference and the
// cleanup of unreachable handles work as for DeviceMemory: the last Close
// frees the memory (cuMemFree), without waiting for work still using it.
//
// DeviceMemory returns a *DeviceMemory handle to the same allocation, for
// everything that takes device memory: the copies (CopyToDevice,
// CopyFromDevice, the asynchronous and device-to-device ones), the
// memsets and kernel arguments (Kernel.Launch, Args). Raw, a
// cu.CUdeviceptr, is a kernel argument too.
//
// Host access is the caller's to synchronize: see ManagedSlice.
//
// All methods are safe for concurrent use.
type ManagedMemory struct {
	h handle[memState]
}

func (m *ManagedMemory) handle() *handle[memState] {
	if m == nil {
		return nil
	}
	return &m.h
}

// ManagedAttach is how managed memory is attached when it is allocated
// (cuMemAllocManaged's flags).
type ManagedAttach uint32

const (
	// AttachGlobal makes the memory accessible from any stream on any
	// device (CU_MEM_ATTACH_GLOBAL): the usual choice.
	AttachGlobal = ManagedAttach(cu.CU_MEM_ATTACH_GLOBAL)
	// AttachHost makes the memory the host's at first
	// (CU_MEM_ATTACH_HOST): devices without concurrent managed access
	// (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS 0) may use it only once
	// it is attached to a stream (cu.StreamAttachMemAsync). Devices with it
	// (Pascal and later on Linux; the H100 and H200) use it like
	// AttachGlobal memory.
	AttachHost = ManagedAttach(cu.CU_MEM_ATTACH_HOST)
)

// ErrExceedsFreeMemory is matched by the error of AllocManaged and
// AllocManagedOf when the size asked for is more than the device has free.
// The error matches cu.CUDA_ERROR_OUT_OF_MEMORY too.
var ErrExceedsFreeMemory = errors.New("more than the device's free memory")

// managedBytes is the managed memory this package holds, per device (the
// device of the context it was allocated in), for AllocManaged's check;
// managedMu makes the check and the allocation one step for this process.
var (
	managedMu    sync.Mutex
	managedBytes = map[cu.CUdevice]uint64{}
)

// AllocManaged allocates bytes of managed memory in ctx
// (cuMemAllocManaged with attach). The memory is not initialized.
//
// It never asks for more than the context's device has free: a size above
// the free memory cuMemGetInfo reports, less the managed memory this
// package has already allocated on the device and not freed, is an error
// matching ErrExceedsFreeMemory and cu.CUDA_ERROR_OUT_OF_MEMORY, before the
// driver is asked. (The driver can oversubscribe the device with managed
// memory, evicting pages to the host; this package does not let it.
// Managed memory counts as used in cuMemGetInfo only while it is resident
// on the device, so the memory this package allocated is subtracted whole:
// the check may refuse a little early, never late. Other processes, and
// allocations racing this one outside this package, can still take the
// memory between the check and the allocation.)
//
// A size that is not positive, or an attach flag other than AttachGlobal
// or AttachHost, is an error matching cu.CUDA_ERROR_INVALID_VALUE, before
// the driver is asked.
func AllocManaged(ctx *Context, bytes int, attach ManagedAttach) (*ManagedMemory, error) {
	const op = "AllocManaged"
	if _, ok := ctx.handle().peek(); !ok {
		return nil, ctx.closedError(op)
	}
	if bytes <= 0 {
		return nil, invalidArg(op, "size %d is not positive", bytes)
	}
	return allocManaged(op, ctx, bytes, attach)
}

// AllocManagedOf is AllocManaged for n elements of T: n must be positive
// and n elements must fit the address space, or the error matches
// cu.CUDA_ERROR_INVALID_VALUE, before the driver is asked.
func AllocManagedOf[T Element](ctx *Context, n int, attach ManagedAttach) (*ManagedMemory, error) {
	const op = "AllocManagedOf"
	if _, ok := ctx.handle().peek(); !ok {
		return nil, ctx.closedError(op)
	}
	size := sizeOf[T]()
	if n <= 0 {
		return nil, invalidArg(op, "length %d is not positive", n)
	}
	if n > math.MaxInt/size {
		return nil, invalidArg(op, "%d elements of %d bytes overflow the address space", n, size)
	}
	return allocManaged(op, ctx, n*size, attach)
}

func allocManaged(op string, ctx *Context, bytes int, attach ManagedAttach) (*ManagedMemory, error) {
	if attach != AttachGlobal && attach != AttachHost {
		return nil, invalidArg(op, "attach flag %#x: want AttachGlobal or AttachHost", uint32(attach))
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	dev := cc.val.dev
	var p cu.CUdeviceptr
	managedMu.Lock()
	err = bind(op, cc.val.raw, func() error {
		var free, total uint64
		if err := cu.MemGetInfo(&free, &total); err != nil {
			return newError(op, "cuMemGetInfo", err)
		}
		held := managedBytes[dev.raw]
		if avail := free - min(free, held); uint64(bytes) > avail {
			return &Error{Op: op, Result: cu.CUDA_ERROR_OUT_OF_MEMORY, Err: fmt.Errorf(
				"%w: %d bytes of managed memory asked for, %d available on %v (cuMemGetInfo: %d free of %d, less %d of managed memory allocated there already): %w",
				ErrExceedsFreeMemory, bytes, avail, dev, free, total, held, cu.CUDA_ERROR_OUT_OF_MEMORY)}
		}
		if err := cu.MemAllocManaged(&p, uint64(bytes), uint32(attach)); err != nil {
			p = 0
			return newError(op, "cuMemAllocManaged", err)
		}
		return nil
	})
	if err != nil {
		if p != 0 { // allocated, then the context's pop failed: nobody owns it
			_ = bind(op, cc.val.raw, func() error { return cu.MemFree(p) })
		}
		managedMu.Unlock()
		_ = cc.release()
		return nil, err
	}
	managedBytes[dev.raw] += uint64(bytes)
	managedMu.Unlock()
	core := newShared(&managedKind)
	core.val.ptr, core.val.size = p, bytes
	core.val.ctx.core = cc
	return newManagedMemoryHandle(core), nil
}

func newManagedMemoryHandle(core *shared[memState]) *ManagedMemory {
	m := &ManagedMemory{}
	attach(m, &m.h, core)
	return m
}

func destroyManagedMemory(st *memState) error {
	const op, fn = "ManagedMemory.Close", "cuMemFree"
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return boundMemFree(op, f, st.ctx.raw(), st.ptr)
}

// dropManagedMemory gives the freed bytes back to AllocManaged's count,
// then releases the context.
func dropManagedMemory(st *memState) error {
	dev := st.ctx.core.val.dev.raw
	managedMu.Lock()
	if managedBytes[dev] -= uint64(st.size); managedBytes[dev] == 0 {
		delete(managedBytes, dev)
	}
	managedMu.Unlock()
	return st.ctx.release()
}

// Clone returns another handle to the same memory, to be closed on its own.
func (m *ManagedMemory) Clone() (*ManagedMemory, error) {
	return cloneAs(m.handle(), "ManagedMemory.Clone", newManagedMemoryHandle)
}

// Close releases this handle, after the calls in flight on it (an
// AccessManaged function among them) have returned. Closing a handle again
// returns nil and does nothing. The last Close of the allocation's handles,
// ManagedMemory and DeviceMemory alike, frees the memory (cuMemFree) and
// releases its context: every slice ManagedSlice returned is invalid from
// then on.
func (m *ManagedMemory) Close() error { return m.handle().close("ManagedMemory.Close") }

// Raw returns the memory's address, the same on the host and the devices,
// or 0 once this handle is closed. It stays owned by the handles: do not
// free it.
func (m *ManagedMemory) Raw() cu.CUdeviceptr { return memRaw(m.handle()) }

// Size returns the size in bytes, or 0 once this handle is closed.
func (m *ManagedMemory) Size() int { return memSize(m.handle()) }

// Context returns the memory's context, owned by the memory as
// Stream.Context's is by the stream; a closed handle naming the object
// once this handle is closed (see Stream.Context).
func (m *ManagedMemory) Context() *Context {
	return contextOf(m.handle(), func(st *memState) *ctxRef { return &st.ctx })
}

// DeviceMemory returns a new DeviceMemory handle to the same allocation,
// to be closed on its own, for the functions that take device memory:
// CopyToDevice and CopyFromDevice (and the asynchronous and
// device-to-device copies), the Memset methods, kernel arguments. The
// allocation is freed by the last Close of all its handles, of either
// type; LiveObjects counts it under ManagedMemory.
func (m *ManagedMemory) DeviceMemory() (*DeviceMemory, error) {
	return cloneAs(m.handle(), "ManagedMemory.DeviceMemory", newDeviceMemoryHandle)
}

// checkRange checks the byte range [offset, offset+bytes) of memory of
// size bytes: not empty, inside it, without overflow.
func checkRange(op string, size, offset, bytes int) error {
	switch {
	case offset < 0 || bytes <= 0:
		return invalidArg(op, "range of %d bytes at offset %d: want a positive size at an offset of 0 or more", bytes, offset)
	case offset > size || bytes > size-offset:
		return invalidArg(op, "range of %d bytes at offset %d is outside memory of %d bytes", bytes, offset, size)
	}
	return nil
}

// Location is where managed memory is prefetched to or advised for: a
// device (DeviceLocation) or the host (HostLocation). The zero Location is
// no location, which PreferredLocation and LastPrefetchLocation report
// when there is none.
type Location struct {
	kind locationKind
	dev  Device
}

type locationKind uint8

const (
	locNone locationKind = iota
	locDevice
	locHost
)

// DeviceLocation is the location of dev's memory.
func DeviceLocation(dev Device) Location { return Location{kind: locDevice, dev: dev} }

// HostLocation is the location of the host's memory.
func HostLocation() Location { return Location{kind: locHost} }

// IsHost reports whether l is the host.
func (l Location) IsHost() bool { return l.kind == locHost }

// Device returns the device of l, and false when l is not a device.
func (l Location) Device() (Device, bool) { return l.dev, l.kind == locDevice }

// IsZero reports whether l is no location.
func (l Location) IsZero() bool { return l.kind == locNone }

// String returns "host", the device as Device.String gives it ("cuda
// device 0"), or "no location" for the zero Location.
func (l Location) String() string {
	switch l.kind {
	case locDevice:
		return l.dev.String()
	case locHost:
		return "host"
	}
	return "no location"
}

// cuDevice is l as the CUdevice of the CUDA 12 and earlier calls:
// CU_DEVICE_CPU for the host.
func (l Location) cuDevice() cu.CUdevice {
	switch l.kind {
	case locDevice:
		return l.dev.raw
	case locHost:
		return cu.CUdevice(cu.CU_DEVICE_CPU)
	}
	return cu.CUdevice(cu.CU_DEVICE_INVALID)
}

// locationTypeHost is CU_MEM_LOCATION_TYPE_HOST, which 11.8's header
// lacks (the location ABIs came with 12.2).
const locationTypeHost = cu.CUmemLocationType(2)

// cuLocation is l as the CUmemLocation of the CUDA 13 calls.
func (l Location) cuLocation() cu.CUmemLocation {
	switch l.kind {
	case locDevice:
		return cu.CUmemLocation{Type: cu.CU_MEM_LOCATION_TYPE_DEVICE, Id: int32(l.dev.ordinal)}
	case locHost:
		return cu.CUmemLocation{Type: locationTypeHost}
	}
	return cu.CUmemLocation{Type: cu.CU_MEM_LOCATION_TYPE_INVALID}
}

// locationOf is the Location of a CUdevice a range attribute reports:
// CU_DEVICE_CPU for the host, CU_DEVICE_INVALID (or anything else
// negative) for none. The driver's CUdevice values are the ordinals.
func locationOf(d int32) Location {
	switch {
	case d >= 0:
		return DeviceLocation(Device{raw: cu.CUdevice(d), ordinal: int(d)})
	case d == cu.CU_DEVICE_CPU:
		return HostLocation()
	}
	return Location{}
}

// The version differences. CUDA 13.0's header binds cuMemPrefetchAsync and
// cuMemAdvise to the ABIs that 12.2 added as cuMemPrefetchAsync_v2 and
// cuMemAdvise_v2, which take a CUmemLocation (and, to prefetch, flags)
// instead of a CUdevice; the headers up to 12.x bind the older ones. The
// constraints below name both signatures, and each call passes the
// binding itself: the instantiation picks the ABI of the header the
// bindings follow, with no build tag, so every version of the matrix
// builds, and so does a later one that keeps either ABI; one that changes
// the signature again fails to build here instead of calling wrongly.

type prefetchABI interface {
	func(cu.CUdeviceptr, uint64, cu.CUdevice, cu.CUstream) error |
		func(cu.CUdeviceptr, uint64, cu.CUmemLocation, uint32, cu.CUstream) error
}

func prefetchWith[F prefetchABI](f F, p cu.CUdeviceptr, n uint64, to Location, s cu.CUstream) error {
	switch f := any(f).(type) {
	case func(cu.CUdeviceptr, uint64, cu.CUdevice, cu.CUstream) error:
		return f(p, n, to.cuDevice(), s)
	case func(cu.CUdeviceptr, uint64, cu.CUmemLocation, uint32, cu.CUstream) error:
		return f(p, n, to.cuLocation(), 0, s)
	}
	panic("cuda: prefetchABI has a signature prefetchWith does not call")
}

type adviseABI interface {
	func(cu.CUdeviceptr, uint64, cu.CUmem_advise, cu.CUdevice) error |
		func(cu.CUdeviceptr, uint64, cu.CUmem_advise, cu.CUmemLocation) error
}

func adviseWith[F adviseABI](f F, p cu.CUdeviceptr, n uint64, a cu.CUmem_advise, loc Location) error {
	switch f := any(f).(type) {
	case func(cu.CUdeviceptr, uint64, cu.CUmem_advise, cu.CUdevice) error:
		return f(p, n, a, loc.cuDevice())
	case func(cu.CUdeviceptr, uint64, cu.CUmem_advise, cu.CUmemLocation) error:
		return f(p, n, a, loc.cuLocation())
	}
	panic("cuda: adviseABI has a signature adviseWith does not call")
}

// Prefetch enqueues on s a migration of the whole of m to the memory of to
// (cuMemPrefetchAsync): work enqueued on s after it finds the pages there.
// It returns at once. The device must have concurrent managed access
// (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS), or the driver refuses.
func (m *ManagedMemory) Prefetch(s *Stream, to Location) error {
	return m.prefetch("ManagedMemory.Prefetch", s, to, true, 0, 0)
}

// PrefetchRange is Prefetch of bytes of m from offset. A range that is
// empty, negative or outside m is an error matching
// cu.CUDA_ERROR_INVALID_VALUE, before the driver is asked.
func (m *ManagedMemory) PrefetchRange(s *Stream, to Location, offset, bytes int) error {
	return m.prefetch("ManagedMemory.PrefetchRange", s, to, false, offset, bytes)
}

// prefetch is Prefetch (whole) and PrefetchRange.
func (m *ManagedMemory) prefetch(op string, s *Stream, to Location, whole bool, offset, bytes int) error {
	var hs holds
	defer hs.release()
	mh, sh := m.handle(), s.handle()
	if err := hs.all(op, arg{"memory", mh}, arg{"stream", sh}); err != nil {
		return err
	}
	st, ss := &mh.core.val, &sh.core.val
	if whole {
		bytes = st.size
	} else if err := checkRange(op, st.size, offset, bytes); err != nil {
		return err
	}
	if to.IsZero() {
		return invalidArg(op, "no location to prefetch to")
	}
	p := st.ptr + cu.CUdeviceptr(offset)
	return bind(op, ss.ctx.raw(), func() error {
		return check(op, "cuMemPrefetchAsync", prefetchWith(cu.MemPrefetchAsync, p, uint64(bytes), to, ss.raw))
	})
}

// Advice is what Advise tells the driver about how managed memory will be
// used (cuMemAdvise's CUmem_advise).
type Advice int32

const (
	// AdviseReadMostly: the memory is mostly read; devices that read it
	// get copies of their own, and a write invalidates them all. The
	// location is ignored.
	AdviseReadMostly = Advice(cu.CU_MEM_ADVISE_SET_READ_MOSTLY)
	// AdviseUnsetReadMostly undoes AdviseReadMostly. The location is
	// ignored.
	AdviseUnsetReadMostly = Advice(cu.CU_MEM_ADVISE_UNSET_READ_MOSTLY)
	// AdvisePreferredLocation: keep the pages at the location; others
	// access them there rather than migrate them, where they can.
	AdvisePreferredLocation = Advice(cu.CU_MEM_ADVISE_SET_PREFERRED_LOCATION)
	// AdviseUnsetPreferredLocation undoes AdvisePreferredLocation. The
	// location is ignored.
	AdviseUnsetPreferredLocation = Advice(cu.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION)
	// AdviseAccessedBy: the location accesses the memory; keep it mapped
	// there, wherever the pages are, so that access does not fault.
	AdviseAccessedBy = Advice(cu.CU_MEM_ADVISE_SET_ACCESSED_BY)
	// AdviseUnsetAccessedBy undoes AdviseAccessedBy for the location.
	AdviseUnsetAccessedBy = Advice(cu.CU_MEM_ADVISE_UNSET_ACCESSED_BY)
)

// String returns the name of the constant a is ("AdviseReadMostly"), or
// "Advice(n)" for a value that is none of them, which Advise refuses.
func (a Advice) String() string {
	switch a {
	case AdviseReadMostly:
		return "AdviseReadMostly"
	case AdviseUnsetReadMostly:
		return "AdviseUnsetReadMostly"
	case AdvisePreferredLocation:
		return "AdvisePreferredLocation"
	case AdviseUnsetPreferredLocation:
		return "AdviseUnsetPreferredLocation"
	case AdviseAccessedBy:
		return "AdviseAccessedBy"
	case AdviseUnsetAccessedBy:
		return "AdviseUnsetAccessedBy"
	}
	return fmt.Sprintf("Advice(%d)", int32(a))
}

// needsLocation reports whether the driver uses the location of a.
func (a Advice) needsLocation() bool {
	return a == AdvisePreferredLocation || a == AdviseAccessedBy || a == AdviseUnsetAccessedBy
}

// Advise gives the driver advice a about the whole of m for loc
// (cuMemAdvise). It takes effect at once, not in stream order. An unknown
// advice, or no location for an advice that needs one, is an error
// matching cu.CUDA_ERROR_INVALID_VALUE, before the driver is asked.
func (m *ManagedMemory) Advise(a Advice, loc Location) error {
	return m.advise("ManagedMemory.Advise", a, loc, true, 0, 0)
}

// AdviseRange is Advise for bytes of m from offset, checked as
// PrefetchRange checks its range.
func (m *ManagedMemory) AdviseRange(a Advice, loc Location, offset, bytes int) error {
	return m.advise("ManagedMemory.AdviseRange", a, loc, false, offset, bytes)
}

func (m *ManagedMemory) advise(op string, a Advice, loc Location, whole bool, offset, bytes int) error {
	h := m.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	if whole {
		bytes = st.size
	} else if err := checkRange(op, st.size, offset, bytes); err != nil {
		return err
	}
	if a < AdviseReadMostly || a > AdviseUnsetAccessedBy {
		return invalidArg(op, "unknown advice %v", a)
	}
	if a.needsLocation() && loc.IsZero() {
		return invalidArg(op, "%v needs a location", a)
	}
	if loc.IsZero() {
		// Read-mostly ignores the location, but CUDA 13's cuMemAdvise
		// refuses an invalid one: give it the memory's device.
		loc = DeviceLocation(st.ctx.core.val.dev)
	}
	p := st.ptr + cu.CUdeviceptr(offset)
	return bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemAdvise", adviseWith(cu.MemAdvise, p, uint64(bytes), cu.CUmem_advise(a), loc))
	})
}

// rangeAttribute reads a range attribute of the whole of m into out
// (cuMemRangeGetAttribute).
func (m *ManagedMemory) rangeAttribute(op string, attr cu.CUmem_range_attribute, out []int32) error {
	h := m.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	return bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemRangeGetAttribute", cu.MemRangeGetAttribute(
			unsafe.Pointer(&out[0]), uint64(4*len(out)), attr, st.ptr, uint64(st.size)))
	})
}

// ReadMostly reports whether all of m is advised read-mostly
// (CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY).
func (m *ManagedMemory) ReadMostly() (bool, error) {
	var v [1]int32
	err := m.rangeAttribute("ManagedMemory.ReadMostly", cu.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, v[:])
	return err == nil && v[0] != 0, err
}

// PreferredLocation returns the preferred location advised for all of m
// (CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION): the zero Location when none
// is, or when parts of m differ.
func (m *ManagedMemory) PreferredLocation() (Location, error) {
	var v [1]int32
	if err := m.rangeAttribute("ManagedMemory.PreferredLocation", cu.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, v[:]); err != nil {
		return Location{}, err
	}
	return locationOf(v[0]), nil
}

// LastPrefetchLocation returns where all of m was last prefetched to
// (CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION): the zero Location when
// it never was, or when parts of m differ. It says what was asked for,
// not whether the prefetch has run.
func (m *ManagedMemory) LastPrefetchLocation() (Location, error) {
	var v [1]int32
	if err := m.rangeAttribute("ManagedMemory.LastPrefetchLocation", cu.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, v[:]); err != nil {
		return Location{}, err
	}
	return locationOf(v[0]), nil
}

// AccessedBy returns the locations advised AdviseAccessedBy for all of m
// (CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY), in the driver's order; the host is
// among them where the driver reports it (as CU_DEVICE_CPU).
func (m *ManagedMemory) AccessedBy() ([]Location, error) {
	const op = "ManagedMemory.AccessedBy"
	if _, ok := m.handle().peek(); !ok {
		return nil, m.handle().closedError(op)
	}
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	v := make([]int32, n+1) // every device and the host
	if err := m.rangeAttribute(op, cu.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, v); err != nil {
		return nil, err
	}
	var locs []Location
	for _, d := range v {
		if l := locationOf(d); !l.IsZero() {
			locs = append(locs, l)
		}
	}
	return locs, nil
}

// managedView is the whole of the memory st as elements of T.
func managedView[T Element](op string, st *memState) ([]T, error) {
	size := sizeOf[T]()
	if st.size%size != 0 {
		return nil, invalidArg(op, "managed memory of %d bytes is not a whole number of %d-byte elements", st.size, size)
	}
	// The address, a CUdeviceptr (uint64), read as the host pointer it is:
	// managed memory has one address everywhere, outside the Go heap.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&st.ptr))
	return unsafe.Slice((*T)(p), st.size/size), nil
}

// ManagedSlice returns the whole of m as a Go slice of T, for the host to
// read and write in place. m's size must be a whole number of elements.
//
// The slice is not Go memory: it is a view of the driver's allocation,
// valid only while a handle of it is open. Once the last Close frees the
// memory, using the slice is a use after free that Go cannot detect (a
// crash, or a silent write into whatever the driver puts there next).
// Unlike a HostBuffer's views, which are Go memory the garbage collector
// keeps alive, nothing can keep this one valid: keep m open for as long as
// the slice is used and do not store it beyond that, or use AccessManaged,
// which holds m open for the duration of a function.
//
// Synchronizing with the device is the caller's responsibility: the host
// may read what device work wrote only once that work is complete
// (Stream.Synchronize, Event.Synchronize, Context.Synchronize), and may
// write what device work reads only before that work is enqueued or after
// it is complete. Host access while a kernel may be using the memory is a
// data race with undefined results on devices with concurrent managed
// access (the H100 and H200 on Linux), and a fault that ends the process
// on devices without it. Neither is checked, and Go's race detector does
// not see the device's accesses.
func ManagedSlice[T Element](m *ManagedMemory) ([]T, error) {
	const op = "ManagedSlice"
	st, ok := m.handle().peek()
	if !ok {
		return nil, m.handle().closedError(op)
	}
	return managedView[T](op, st)
}

// AccessManaged calls fn with the whole of m as a Go slice of T (see
// ManagedSlice), holding m for the duration: a Close of m waits until fn
// has returned, so the slice stays valid while fn runs. fn must not keep
// the slice, nor close m (its Close would wait for fn). It returns fn's
// error. Synchronizing with the device is still the caller's: call it
// after the work that wrote m is complete.
func AccessManaged[T Element](m *ManagedMemory, fn func([]T) error) error {
	const op = "AccessManaged"
	h := m.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	if fn == nil {
		return invalidArg(op, "nil function")
	}
	v, err := managedView[T](op, st)
	if err != nil {
		return err
	}
	return fn(v)
}

var managedKind = objectKind[memState]{destroy: destroyManagedMemory, drop: dropManagedMemory, live: &liveManagedMemory, name: "memory"}
