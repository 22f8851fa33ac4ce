package cuda

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Virtual memory management: an address range is reserved once
// (ReserveAddressRange), physical memory is made in multiples of the
// device's granularity (NewPhysicalMemory) and mapped into the range
// (AddressRange.Map), and the devices that may use it are given access
// (AddressRange.SetAccess). The range's addresses never move, so memory
// can grow in place (GrowableSlice), and physical memory made
// VMShareable can be passed to another process as a file descriptor.

// VMOption configures NewPhysicalMemory and NewGrowableSlice.
type VMOption func(*vmConfig)

type vmConfig struct {
	shareable bool
	access    []Device
}

// VMShareable makes physical memory that can be exported as a POSIX file
// descriptor (PhysicalMemory.ExportFD), for ImportPhysicalMemory in
// another process (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).
func VMShareable() VMOption { return func(c *vmConfig) { c.shareable = true } }

// VMAccess gives read-write access to the memory of a GrowableSlice to
// these devices as well as its own, for kernels and copies on their
// contexts (peer devices).
func VMAccess(devs ...Device) VMOption {
	return func(c *vmConfig) { c.access = append(c.access, devs...) }
}

func vmProps(dev Device, shareable bool) cu.CUmemAllocationProp {
	var p cu.CUmemAllocationProp
	p.Type = cu.CU_MEM_ALLOCATION_TYPE_PINNED
	p.Location.Type = cu.CU_MEM_LOCATION_TYPE_DEVICE
	p.Location.Id = int32(dev.ordinal)
	if shareable {
		p.RequestedHandleTypes = cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
	}
	return p
}

// AllocationGranularity returns the granularity in bytes of physical
// memory on dev (cuMemGetAllocationGranularity): the sizes of
// NewPhysicalMemory and of ReserveAddressRange, and the offsets of Map,
// are multiples of it. recommended asks for the granularity the driver
// recommends for performance instead of the minimum.
func AllocationGranularity(dev Device, recommended bool) (int, error) {
	const op = "AllocationGranularity"
	if err := initDriver(); err != nil {
		return 0, err
	}
	props := vmProps(dev, false)
	opt := cu.CU_MEM_ALLOC_GRANULARITY_MINIMUM
	if recommended {
		opt = cu.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
	}
	var g uint64
	if err := cu.MemGetAllocationGranularity(&g, &props, opt); err != nil {
		return 0, newError(op, "cuMemGetAllocationGranularity", err)
	}
	return int(g), nil
}

// checkGranular refuses a size or offset that is not a multiple of the
// device's granularity, before the driver does it with less to say.
// refSized takes a reference on ctx for an object of bytes, which must be
// a positive multiple of the granularity of ctx's device.
func refSized(op string, ctx *Context, bytes int) (*shared[ctxState], error) {
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	if err := checkGranular(op, "size", cc.val.dev, bytes, false); err != nil {
		_ = cc.release()
		return nil, err
	}
	return cc, nil
}

func checkGranular(op, what string, dev Device, n int, zeroOK bool) error {
	if n < 0 || (n == 0 && !zeroOK) {
		return invalidArg(op, "%s %d is not positive", what, n)
	}
	g, err := AllocationGranularity(dev, false)
	if err != nil {
		return err
	}
	if n%g != 0 {
		return invalidArg(op, "%s %d is not a multiple of the allocation granularity %d (AllocationGranularity)", what, n, g)
	}
	return nil
}

// PhysicalMemory is a shared handle to physical memory of a device
// (cuMemCreate), which is not addressable until it is mapped into an
// AddressRange. The driver keeps it while it is mapped: its last Close
// (cuMemRelease) may come before the ranges it is mapped in are closed.
//
// All methods are safe for concurrent use.
type PhysicalMemory struct {
	h handle[physState]
}

type physState struct {
	raw       cu.CUmemGenericAllocationHandle // first: see shared.val
	size      int
	dev       Device
	ctx       ctxRef
	shareable bool
}

func (p *PhysicalMemory) handle() *handle[physState] {
	if p == nil {
		return nil
	}
	return &p.h
}

// NewPhysicalMemory makes bytes of physical memory on ctx's device
// (cuMemCreate); bytes must be a multiple of AllocationGranularity.
// VMShareable makes it exportable.
func NewPhysicalMemory(ctx *Context, bytes int, opts ...VMOption) (*PhysicalMemory, error) {
	const op = "NewPhysicalMemory"
	var cfg vmConfig
	for _, o := range opts {
		o(&cfg)
	}
	cc, err := refSized(op, ctx, bytes)
	if err != nil {
		return nil, err
	}
	dev := cc.val.dev
	props := vmProps(dev, cfg.shareable)
	var raw cu.CUmemGenericAllocationHandle
	err = bind(op, cc.val.raw, func() error {
		return check(op, "cuMemCreate", cu.MemCreate(&raw, uint64(bytes), &props, 0))
	})
	if err != nil {
		_ = cc.release()
		return nil, outOfMemory(op, cc.val.raw, bytes, err)
	}
	return newPhysicalMemory(raw, bytes, dev, cc, cfg.shareable), nil
}

func newPhysicalMemory(raw cu.CUmemGenericAllocationHandle, bytes int, dev Device, cc *shared[ctxState], shareable bool) *PhysicalMemory {
	core := newShared(&physicalMemoryKind)
	core.val = physState{raw: raw, size: bytes, dev: dev, shareable: shareable}
	core.val.ctx.core = cc
	return newPhysicalMemoryHandle(core)
}

func newPhysicalMemoryHandle(core *shared[physState]) *PhysicalMemory {
	p := &PhysicalMemory{}
	attach(p, &p.h, core)
	return p
}

func destroyPhysicalMemory(st *physState) error {
	const op = "PhysicalMemory.Close"
	return bind(op, st.ctx.raw(), func() error { return check(op, "cuMemRelease", cu.MemRelease(st.raw)) })
}

func dropPhysicalMemory(st *physState) error { return st.ctx.release() }

// Clone returns another handle to the same memory, to be closed on its own.
func (p *PhysicalMemory) Clone() (*PhysicalMemory, error) {
	return cloneAs(p.handle(), "PhysicalMemory.Clone", newPhysicalMemoryHandle)
}

// Close releases this handle. The last Close releases the memory
// (cuMemRelease); the driver frees it once it is mapped nowhere.
func (p *PhysicalMemory) Close() error { return p.handle().close("PhysicalMemory.Close") }

// Size returns the size in bytes, or 0 once this handle is closed.
func (p *PhysicalMemory) Size() int {
	st, ok := p.handle().peek()
	if !ok {
		return 0
	}
	return st.size
}

// Raw returns the driver's allocation handle, or 0 once this handle is
// closed.
func (p *PhysicalMemory) Raw() cu.CUmemGenericAllocationHandle {
	st, ok := p.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// ExportFD returns a file descriptor of the memory
// (cuMemExportToShareableHandle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
// for ImportPhysicalMemory in another process: send it with SendHandle.
// The memory must have been made VMShareable. Close the file once sent.
func (p *PhysicalMemory) ExportFD() (*os.File, error) {
	const op = "PhysicalMemory.ExportFD"
	h := p.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	if !st.shareable {
		return nil, invalidArg(op, "physical memory made without VMShareable cannot be exported")
	}
	var fd int32 = -1
	err := bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemExportToShareableHandle",
			cu.MemExportToShareableHandle(unsafe.Pointer(&fd), st.raw, cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "cuda-physical-memory"), nil
}

// ImportPhysicalMemory imports physical memory of bytes bytes exported by
// another process's PhysicalMemory.ExportFD (cuMemImportFromShareableHandle)
// into ctx's device, for mapping into an AddressRange here. bytes is the
// exporter's Size: the file descriptor does not carry it. f stays the
// caller's to close.
//
// The memory lives while either process maps it; the exporter may close
// its handle at once.
func ImportPhysicalMemory(ctx *Context, f *os.File, bytes int) (*PhysicalMemory, error) {
	const op = "ImportPhysicalMemory"
	if f == nil {
		return nil, invalidArg(op, "no file")
	}
	cc, err := refSized(op, ctx, bytes)
	if err != nil {
		return nil, err
	}
	dev := cc.val.dev
	var raw cu.CUmemGenericAllocationHandle
	err = importFD(op, cc.val.raw, f, false, unsafe.Pointer(&raw))
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	return newPhysicalMemory(raw, bytes, dev, cc, true), nil
}

// AddressRange is a shared handle to a reserved range of device addresses
// (cuMemAddressReserve), into which physical memory is mapped. Its last
// Close unmaps what is still mapped and frees the range
// (cuMemUnmap, cuMemAddressFree); the Slices of RangeSlice keep it open.
//
// All methods are safe for concurrent use.
type AddressRange struct {
	h handle[rangeState]
}

type rangeState struct {
	ptr  cu.CUdeviceptr // first: see shared.val
	size int
	dev  Device
	ctx  ctxRef
	mu   sync.Mutex
	maps []vmMapping // by offset, not overlapping
	// views counts the open views of RangeSlice: Unmap is refused while
	// one is open, as it would pull the memory from under it.
	views atomic.Int64
}

type vmMapping struct {
	off, size int
	phys      *shared[physState]
}

func (r *AddressRange) handle() *handle[rangeState] {
	if r == nil {
		return nil
	}
	return &r.h
}

// ReserveAddressRange reserves bytes of device addresses for ctx's device
// (cuMemAddressReserve), aligned to alignment (0: the granularity). bytes
// must be a multiple of AllocationGranularity. Reserving takes no memory:
// reserve generously.
func ReserveAddressRange(ctx *Context, bytes, alignment int) (*AddressRange, error) {
	const op = "ReserveAddressRange"
	if alignment < 0 || alignment&(alignment-1) != 0 {
		return nil, invalidArg(op, "alignment %d is not zero or a power of two", alignment)
	}
	cc, err := refSized(op, ctx, bytes)
	if err != nil {
		return nil, err
	}
	dev := cc.val.dev
	var p cu.CUdeviceptr
	err = bind(op, cc.val.raw, func() error {
		return check(op, "cuMemAddressReserve", cu.MemAddressReserve(&p, uint64(bytes), uint64(alignment), 0, 0))
	})
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	core := newShared(&addressRangeKind)
	core.val.ptr, core.val.size, core.val.dev = p, bytes, dev
	core.val.ctx.core = cc
	return newAddressRangeHandle(core), nil
}

func newAddressRangeHandle(core *shared[rangeState]) *AddressRange {
	r := &AddressRange{}
	attach(r, &r.h, core)
	return r
}

// destroyAddressRange unmaps what is mapped, then frees the range. A
// mapping the driver refuses to take away stays, and so does the range,
// for a retry.
func destroyAddressRange(st *rangeState) error {
	const op = "AddressRange.Close"
	st.mu.Lock()
	defer st.mu.Unlock()
	return bind(op, st.ctx.raw(), func() error {
		for len(st.maps) > 0 {
			m := st.maps[len(st.maps)-1]
			if err := cu.MemUnmap(st.ptr+cu.CUdeviceptr(m.off), uint64(m.size)); err != nil {
				return newError(op, "cuMemUnmap", err)
			}
			st.maps = st.maps[:len(st.maps)-1]
			_ = m.phys.release()
		}
		return check(op, "cuMemAddressFree", cu.MemAddressFree(st.ptr, uint64(st.size)))
	})
}

func dropAddressRange(st *rangeState) error { return st.ctx.release() }

// Clone returns another handle to the same range, to be closed on its own.
func (r *AddressRange) Clone() (*AddressRange, error) {
	return cloneAs(r.handle(), "AddressRange.Clone", newAddressRangeHandle)
}

// Close releases this handle. The last Close, once the Slices of
// RangeSlice are closed too, unmaps what is mapped and frees the range.
func (r *AddressRange) Close() error { return r.handle().close("AddressRange.Close") }

// Ptr returns the first address of the range, or 0 once this handle is
// closed.
func (r *AddressRange) Ptr() cu.CUdeviceptr {
	st, ok := r.handle().peek()
	if !ok {
		return 0
	}
	return st.ptr
}

// Size returns the size of the range in bytes, or 0 once this handle is
// closed.
func (r *AddressRange) Size() int {
	st, ok := r.handle().peek()
	if !ok {
		return 0
	}
	return st.size
}

// Map maps size bytes of p, from its byte physOff, at byte off of the
// range (cuMemMap). The range holds a reference on p until the mapping is
// undone. Nothing is accessible before SetAccess.
func (r *AddressRange) Map(off int, p *PhysicalMemory, physOff, size int) error {
	const op = "AddressRange.Map"
	rh := r.handle()
	st, ok := rh.enter()
	if !ok {
		return rh.closedError(op)
	}
	defer rh.exit()
	pc, ok := p.handle().clone()
	if !ok {
		return p.handle().closedError(op + " (physical memory)")
	}
	if err := st.mapPhys(op, off, pc, physOff, size); err != nil {
		_ = pc.release()
		return err
	}
	return nil
}

// mapPhys is Map, given the reference on the physical memory it keeps on
// success.
func (st *rangeState) mapPhys(op string, off int, pc *shared[physState], physOff, size int) error {
	if off < 0 || size <= 0 || off > st.size || size > st.size-off {
		return invalidArg(op, "mapping of %d bytes at %d in a range of %d", size, off, st.size)
	}
	if physOff < 0 || physOff > pc.val.size || size > pc.val.size-physOff {
		return invalidArg(op, "%d bytes from %d of physical memory of %d", size, physOff, pc.val.size)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	i := 0
	for ; i < len(st.maps); i++ {
		m := st.maps[i]
		if off < m.off+m.size && m.off < off+size {
			return invalidArg(op, "bytes [%d, %d) are mapped already", max(off, m.off), min(off+size, m.off+m.size))
		}
		if m.off > off {
			break
		}
	}
	err := bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemMap", cu.MemMap(st.ptr+cu.CUdeviceptr(off), uint64(size), uint64(physOff), pc.val.raw, 0))
	})
	if err != nil {
		return err
	}
	st.maps = append(st.maps, vmMapping{})
	copy(st.maps[i+1:], st.maps[i:])
	st.maps[i] = vmMapping{off: off, size: size, phys: pc}
	return nil
}

// SetAccess gives read-write access to bytes [off, off+size) of the range,
// which must be mapped, to devs (cuMemSetAccess); with no devs, to the
// range's own device.
func (r *AddressRange) SetAccess(off, size int, devs ...Device) error {
	const op = "AddressRange.SetAccess"
	rh := r.handle()
	st, ok := rh.enter()
	if !ok {
		return rh.closedError(op)
	}
	defer rh.exit()
	return st.setAccess(op, off, size, devs)
}

func (st *rangeState) setAccess(op string, off, size int, devs []Device) error {
	if off < 0 || size <= 0 || off > st.size || size > st.size-off {
		return invalidArg(op, "access to %d bytes at %d in a range of %d", size, off, st.size)
	}
	if len(devs) == 0 {
		devs = []Device{st.dev}
	}
	desc := make([]cu.CUmemAccessDesc, len(devs))
	for i, d := range devs {
		desc[i].Location.Type = cu.CU_MEM_LOCATION_TYPE_DEVICE
		desc[i].Location.Id = int32(d.ordinal)
		desc[i].Flags = cu.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
	}
	return bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemSetAccess", cu.MemSetAccess(st.ptr+cu.CUdeviceptr(off), uint64(size), &desc[0], uint64(len(desc))))
	})
}

// Unmap undoes the mappings that lie in bytes [off, off+size) of the range
// (cuMemUnmap), which must hold whole mappings, and releases their physical
// memory. It is refused while a Slice of RangeSlice is open: work may
// still use the memory through it.
func (r *AddressRange) Unmap(off, size int) error {
	const op = "AddressRange.Unmap"
	rh := r.handle()
	st, ok := rh.enter()
	if !ok {
		return rh.closedError(op)
	}
	defer rh.exit()
	if n := st.views.Load(); n > 0 {
		return &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_VALUE,
			Err: fmt.Errorf("%d slice(s) of the range are open: close them first: %w", n, cu.CUDA_ERROR_INVALID_VALUE)}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var keep []vmMapping
	var gone []vmMapping
	for _, m := range st.maps {
		switch {
		case m.off >= off && m.off+m.size <= off+size:
			gone = append(gone, m)
		case m.off < off+size && off < m.off+m.size:
			return invalidArg(op, "bytes [%d, %d) cut the mapping [%d, %d) in two", off, off+size, m.off, m.off+m.size)
		default:
			keep = append(keep, m)
		}
	}
	if len(gone) == 0 {
		return invalidArg(op, "nothing is mapped in bytes [%d, %d)", off, off+size)
	}
	err := bind(op, st.ctx.raw(), func() error {
		for i, m := range gone {
			if err := cu.MemUnmap(st.ptr+cu.CUdeviceptr(m.off), uint64(m.size)); err != nil {
				// What was unmapped before stays unmapped.
				keep = append(keep, gone[i:]...)
				gone = gone[:i]
				return newError(op, "cuMemUnmap", err)
			}
		}
		return nil
	})
	for _, m := range gone {
		_ = m.phys.release()
	}
	slices.SortFunc(keep, func(a, b vmMapping) int { return a.off - b.off })
	st.maps = keep
	return err
}

// mapped reports whether bytes [off, off+size) are all mapped. Under mu.
func (st *rangeState) mapped(off, size int) bool {
	end := off
	for _, m := range st.maps {
		if m.off > end {
			break
		}
		end = max(end, m.off+m.size)
	}
	return end >= off+size
}

// RangeSlice returns a Slice of n elements of T from byte off of the
// range, which must be mapped: usable wherever a Slice is (kernels,
// copies). It holds a reference on the range, and Unmap is refused while
// it is open. Its synchronous copies wait for the whole context, as for
// memory of Alloc.
func RangeSlice[T Element](r *AddressRange, off, n int) (*Slice[T], error) {
	const op = "RangeSlice"
	rh := r.handle()
	st, ok := rh.enter()
	if !ok {
		return nil, rh.closedError(op)
	}
	defer rh.exit()
	size := sizeOf[T]()
	if off < 0 || n < 0 || off > st.size || n > (st.size-off)/size {
		return nil, invalidArg(op, "%d elements of %d bytes at %d in a range of %d", n, size, off, st.size)
	}
	st.mu.Lock()
	ok = n == 0 || st.mapped(off, n*size)
	st.mu.Unlock()
	if !ok {
		return nil, invalidArg(op, "bytes [%d, %d) of the range are not all mapped", off, off+n*size)
	}
	return rangeView[T](op, rh, off, n)
}

// rangeView is RangeSlice once checked: a view of its own kind, holding
// the range and its context.
func rangeView[T Element](op string, rh *handle[rangeState], off, n int) (*Slice[T], error) {
	rc, ok := rh.clone()
	if !ok {
		return nil, closedError(op)
	}
	st := &rc.val
	st.ctx.core.acquire() // the range's own reference keeps it: cannot fail
	st.views.Add(1)
	core := newShared(&rangeViewKind)
	core.val.ptr, core.val.size = st.ptr+cu.CUdeviceptr(off), n*sizeOf[T]()
	core.val.ctx.core = st.ctx.core
	core.val.owner = rc
	return newSliceHandle[T](core, 0, n), nil
}

// dropRangeView gives back the view's references; the memory is the
// range's, which its last Close unmaps.
func dropRangeView(st *memState) error {
	rc := st.owner.(*shared[rangeState])
	rc.val.views.Add(-1)
	err := st.ctx.release()
	if rerr := rc.release(); err == nil {
		err = rerr
	}
	return err
}

// GrowableSlice is a device buffer of T that grows in place: its elements
// live at a fixed address inside a reserved AddressRange, and growing maps
// more physical memory after them, without copying and without moving
// what is there. Slice returns a view of its current length.
//
// Its methods are safe for concurrent use; a view taken before a Grow
// keeps its length.
type GrowableSlice[T Element] struct {
	mu     sync.Mutex
	r      *AddressRange
	gran   int // bytes per chunk of physical memory
	n      int // elements in use
	mapped int // bytes mapped
	access []Device
	cfg    vmConfig
}

// NewGrowableSlice reserves room for up to maxLen elements of T in ctx
// (ReserveAddressRange) and maps none yet. VMAccess gives other devices
// access to what is mapped; VMShareable makes the physical memory
// exportable.
func NewGrowableSlice[T Element](ctx *Context, maxLen int, opts ...VMOption) (*GrowableSlice[T], error) {
	const op = "NewGrowableSlice"
	var cfg vmConfig
	for _, o := range opts {
		o(&cfg)
	}
	size := sizeOf[T]()
	if maxLen <= 0 || maxLen > (1<<62)/size {
		return nil, invalidArg(op, "maximum length %d is not positive or too large", maxLen)
	}
	if _, ok := ctx.handle().peek(); !ok {
		return nil, ctx.closedError(op)
	}
	dev := ctx.Device()
	g, err := AllocationGranularity(dev, true)
	if err != nil {
		return nil, err
	}
	if mg, err := AllocationGranularity(dev, false); err == nil && g%mg != 0 {
		g = mg
	}
	bytes := (maxLen*size + g - 1) / g * g
	r, err := ReserveAddressRange(ctx, bytes, 0)
	if err != nil {
		return nil, err
	}
	access := append([]Device{dev}, cfg.access...)
	return &GrowableSlice[T]{r: r, gran: g, access: access, cfg: cfg}, nil
}

// Len returns the number of elements in use.
func (g *GrowableSlice[T]) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// Cap returns the number of elements the mapped memory holds: growing up
// to it maps nothing.
func (g *GrowableSlice[T]) Cap() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mapped / sizeOf[T]()
}

// MaxLen returns the number of elements the reserved range holds.
func (g *GrowableSlice[T]) MaxLen() int { return g.r.Size() / sizeOf[T]() }

// Ptr returns the address of the first element, which never changes, or
// 0 once closed.
func (g *GrowableSlice[T]) Ptr() cu.CUdeviceptr { return g.r.Ptr() }

// Grow sets the length to n elements, mapping physical memory for them if
// they are more than Cap. Elements added are not initialized; a shorter n
// keeps the memory mapped.
func (g *GrowableSlice[T]) Grow(n int) error {
	const op = "GrowableSlice.Grow"
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.grow(op, n)
}

func (g *GrowableSlice[T]) grow(op string, n int) error {
	rh := g.r.handle()
	st, ok := rh.enter()
	if !ok {
		return rh.closedError(op)
	}
	defer rh.exit()
	size := sizeOf[T]()
	if n < 0 || n > st.size/size {
		return invalidArg(op, "length %d outside [0, %d], the reserved maximum", n, st.size/size)
	}
	need := (n*size + g.gran - 1) / g.gran * g.gran
	if need > g.mapped {
		ctx := st.ctx.context()
		p, err := NewPhysicalMemory(ctx, need-g.mapped, g.physOpts()...)
		if err != nil {
			return err
		}
		pc, _ := p.handle().clone()
		_ = p.Close()
		if err := st.mapPhys(op, g.mapped, pc, 0, need-g.mapped); err != nil {
			_ = pc.release()
			return err
		}
		if err := st.setAccess(op, g.mapped, need-g.mapped, g.access); err != nil {
			// Leave the mapping to the range's Close; it is not counted
			// as usable.
			return err
		}
		g.mapped = need
	}
	g.n = n
	return nil
}

func (g *GrowableSlice[T]) physOpts() []VMOption {
	if g.cfg.shareable {
		return []VMOption{VMShareable()}
	}
	return nil
}

// Append grows the slice by len(src) elements and copies src into them
// (cuMemcpyHtoD), returning when the data is in device memory.
func (g *GrowableSlice[T]) Append(src []T) error {
	const op = "GrowableSlice.Append"
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.n
	if err := g.grow(op, old+len(src)); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	s, err := rangeView[T](op, g.r.handle(), old*sizeOf[T](), len(src))
	if err != nil {
		g.n = old
		return err
	}
	defer s.Close()
	if err := s.CopyFrom(src); err != nil {
		g.n = old
		return err
	}
	return nil
}

// Slice returns a view of the current Len elements, as a handle of its
// own to close; it keeps the memory mapped until then, even past the
// GrowableSlice's Close.
func (g *GrowableSlice[T]) Slice() (*Slice[T], error) {
	const op = "GrowableSlice.Slice"
	g.mu.Lock()
	defer g.mu.Unlock()
	rh := g.r.handle()
	if _, ok := rh.peek(); !ok {
		return nil, rh.closedError(op)
	}
	return rangeView[T](op, rh, 0, g.n)
}

// Range returns the address range under the slice, owned by it: for
// exporting its physical memory or mapping it elsewhere. Do not close it.
func (g *GrowableSlice[T]) Range() *AddressRange { return g.r }

// Close releases the range; the memory is unmapped once the views of
// Slice are closed too.
func (g *GrowableSlice[T]) Close() error {
	if g == nil {
		return nilError("GrowableSlice.Close")
	}
	return g.r.Close()
}

var (
	physicalMemoryKind = objectKind[physState]{destroy: destroyPhysicalMemory, drop: dropPhysicalMemory, live: &livePhysicalMemory, name: "physical memory"}
	addressRangeKind   = objectKind[rangeState]{destroy: destroyAddressRange, drop: dropAddressRange, live: &liveAddressRanges, name: "address range"}
	rangeViewKind      = objectKind[memState]{destroy: func(*memState) error { return nil }, drop: dropRangeView, live: &liveRangeViews, name: "memory"}
)
