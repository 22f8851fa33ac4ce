package cuda

import (
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// MemPool is a shared handle to a memory pool of a device, from which
// stream-ordered allocations are served (AllocAsync uses the device's
// default pool, AllocFromPool a given one). DefaultMemPool returns the
// device's own pool, which its Close does not destroy; NewMemPool makes
// one, destroyed (cuMemPoolDestroy) by its last Close once no allocation
// from it is left: each allocation holds a reference on its pool.
//
// All methods are safe for concurrent use.
type MemPool struct {
	h handle[poolState]
}

type poolState struct {
	raw   cu.CUmemoryPool // first: see shared.val
	dev   Device
	owned bool // made by NewMemPool
	// handles are the shareable handle types the pool was made with
	// (WithShareableHandles): MemPool.ExportFD needs one.
	handles cu.CUmemAllocationHandleType
}

func (p *MemPool) handle() *handle[poolState] {
	if p == nil {
		return nil
	}
	return &p.h
}

// DefaultMemPool returns the default memory pool of dev
// (cuDeviceGetDefaultMemPool): the one AllocAsync allocates from.
func DefaultMemPool(dev Device) (*MemPool, error) {
	const op = "DefaultMemPool"
	if err := initDriver(); err != nil {
		return nil, err
	}
	var raw cu.CUmemoryPool
	if err := cu.DeviceGetDefaultMemPool(&raw, dev.raw); err != nil {
		return nil, newError(op, "cuDeviceGetDefaultMemPool", err)
	}
	return newMemPool(raw, dev, false), nil
}

// MemPoolOption configures NewMemPool.
type MemPoolOption func(*cu.CUmemPoolProps)

// WithShareableHandles makes a pool whose memory can be shared with other
// processes through POSIX file descriptors
// (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): MemPool.ExportFD and
// ExportPoolPointer.
func WithShareableHandles() MemPoolOption {
	return func(p *cu.CUmemPoolProps) { p.HandleTypes |= cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR }
}

// NewMemPool makes a memory pool of device memory on dev (cuMemPoolCreate,
// pinned allocations located on the device).
func NewMemPool(dev Device, opts ...MemPoolOption) (*MemPool, error) {
	const op = "NewMemPool"
	if err := initDriver(); err != nil {
		return nil, err
	}
	var props cu.CUmemPoolProps
	for _, o := range opts {
		o(&props)
	}
	props.AllocType = cu.CU_MEM_ALLOCATION_TYPE_PINNED
	props.Location.Type = cu.CU_MEM_LOCATION_TYPE_DEVICE
	props.Location.Id = int32(dev.ordinal)
	var raw cu.CUmemoryPool
	if err := cu.MemPoolCreate(&raw, &props); err != nil {
		return nil, newError(op, "cuMemPoolCreate", err)
	}
	p := newMemPool(raw, dev, true)
	p.h.core.val.handles = props.HandleTypes
	return p, nil
}

func newMemPool(raw cu.CUmemoryPool, dev Device, owned bool) *MemPool {
	core := newShared(&memPoolKind)
	core.val = poolState{raw: raw, dev: dev, owned: owned}
	return newMemPoolHandle(core)
}

func newMemPoolHandle(core *shared[poolState]) *MemPool {
	p := &MemPool{}
	attach(p, &p.h, core)
	return p
}

func destroyMemPool(st *poolState) error {
	if !st.owned {
		return nil
	}
	return check("MemPool.Close", "cuMemPoolDestroy", cu.MemPoolDestroy(st.raw))
}

// Clone returns another handle to the same pool, to be closed on its own.
func (p *MemPool) Clone() (*MemPool, error) {
	return cloneAs(p.handle(), "MemPool.Clone", newMemPoolHandle)
}

// Close releases this handle, after the calls in flight on it. The last
// Close of a pool made by NewMemPool, once its allocations are freed too,
// destroys it.
func (p *MemPool) Close() error { return p.handle().close("MemPool.Close") }

// Raw returns the driver's pool handle, or 0 once this handle is closed.
func (p *MemPool) Raw() cu.CUmemoryPool {
	st, ok := p.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// SetReleaseThreshold sets how much reserved memory the pool keeps when a
// stream synchronizes instead of giving it back to the system
// (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD): 0, the default, gives everything
// back; a larger value makes later allocations cheaper.
func (p *MemPool) SetReleaseThreshold(bytes uint64) error {
	const op = "MemPool.SetReleaseThreshold"
	h := p.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	v := bytes
	return check(op, "cuMemPoolSetAttribute", cu.MemPoolSetAttribute(st.raw, cu.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, unsafe.Pointer(&v)))
}

// Trim gives memory the pool holds and no allocation uses back to the
// system, keeping at least keepBytes reserved (cuMemPoolTrimTo).
func (p *MemPool) Trim(keepBytes uint64) error {
	const op = "MemPool.Trim"
	h := p.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	return check(op, "cuMemPoolTrimTo", cu.MemPoolTrimTo(st.raw, keepBytes))
}

// MemPoolUsage is what a pool holds: Reserved is the memory it took from
// the device, Used what its allocations use; the High values are the
// highest since the pool was made.
type MemPoolUsage struct {
	Reserved, ReservedHigh uint64
	Used, UsedHigh         uint64
}

// Usage returns the pool's usage counters (cuMemPoolGetAttribute).
func (p *MemPool) Usage() (MemPoolUsage, error) {
	const op = "MemPool.Usage"
	var u MemPoolUsage
	h := p.handle()
	st, ok := h.enter()
	if !ok {
		return u, h.closedError(op)
	}
	defer h.exit()
	for _, a := range []struct {
		attr cu.CUmemPool_attribute
		v    *uint64
	}{
		{cu.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &u.Reserved},
		{cu.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &u.ReservedHigh},
		{cu.CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u.Used},
		{cu.CU_MEMPOOL_ATTR_USED_MEM_HIGH, &u.UsedHigh},
	} {
		var v uint64
		if err := cu.MemPoolGetAttribute(st.raw, a.attr, unsafe.Pointer(&v)); err != nil {
			return MemPoolUsage{}, newError(op, "cuMemPoolGetAttribute", err)
		}
		*a.v = v
	}
	return u, nil
}

// AllocFromPool is AllocAsync from pool instead of the device's default
// pool (cuMemAllocFromPoolAsync). The allocation holds a reference on the
// pool until its last Close frees it on s.
func AllocFromPool(s *Stream, pool *MemPool, bytes int) (*DeviceMemory, error) {
	const op = "AllocFromPool"
	if _, ok := s.handle().peek(); !ok {
		return nil, s.handle().closedError(op + " (stream)")
	}
	pc, ok := pool.handle().clone()
	if !ok {
		return nil, pool.handle().closedError(op + " (pool)")
	}
	if bytes < 0 {
		_ = pc.release()
		return nil, invalidArg(op, "size %d is negative", bytes)
	}
	return allocAsync(op, "cuMemAllocFromPoolAsync", s, bytes, pc, func(p *cu.CUdeviceptr, st cu.CUstream) error {
		return cu.MemAllocFromPoolAsync(p, uint64(bytes), pc.val.raw, st)
	})
}

var memPoolKind = objectKind[poolState]{destroy: destroyMemPool, live: &liveMemPools, name: "memory pool"}
