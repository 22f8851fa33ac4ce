package cuda

import (
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Memory and events shared between processes on one machine.
//
// Memory of Alloc (cuMemAlloc) is exported by ExportIPC as an IPCMemHandle,
// 64 bytes to send any way (SendHandle does it over a Unix socket), and
// opened in another process by ImportIPC. Memory of a pool made
// WithShareableHandles is shared by the pool's file descriptor
// (MemPool.ExportFD, ImportMemPool) and a handle per allocation
// (ExportPoolPointer, ImportPoolPointer); virtual memory by its physical
// memory's file descriptor (PhysicalMemory.ExportFD). Events made
// WithInterprocess are shared by an IPCEventHandle.
//
// The exporter's memory must outlive every import of it: an importer
// closes what it imported before the exporter frees it. No process can see
// another's imports, so this package cannot enforce it across processes:
// the exporter learns that an importer is done from the importer, as
// WaitReleased does with ReleaseHandle, or from the importer's exit, which
// closes its imports. Within one process it refuses to import its own
// exports, which the driver does not allow either.

// IPCMemHandle names memory of another process (cuIpcGetMemHandle). Its
// bytes are the driver's and may be sent as they are (MarshalBinary) or as
// hexadecimal text (MarshalText, String).
type IPCMemHandle [64]byte

// IPCEventHandle names an event of another process (cuIpcGetEventHandle),
// with the encodings of IPCMemHandle.
type IPCEventHandle [64]byte

// PoolPointer names an allocation of a pool shared with another process
// (cuMemPoolExportPointer), with the encodings of IPCMemHandle.
type PoolPointer [64]byte

func (h IPCMemHandle) String() string                 { return hex.EncodeToString(h[:]) }
func (h IPCMemHandle) MarshalBinary() ([]byte, error) { return h[:], nil }
func (h IPCMemHandle) MarshalText() ([]byte, error)   { return []byte(h.String()), nil }
func (h *IPCMemHandle) UnmarshalBinary(b []byte) error {
	return unmarshalHandle("IPCMemHandle", h[:], b, false)
}
func (h *IPCMemHandle) UnmarshalText(b []byte) error {
	return unmarshalHandle("IPCMemHandle", h[:], b, true)
}

func (h IPCEventHandle) String() string                 { return hex.EncodeToString(h[:]) }
func (h IPCEventHandle) MarshalBinary() ([]byte, error) { return h[:], nil }
func (h IPCEventHandle) MarshalText() ([]byte, error)   { return []byte(h.String()), nil }
func (h *IPCEventHandle) UnmarshalBinary(b []byte) error {
	return unmarshalHandle("IPCEventHandle", h[:], b, false)
}
func (h *IPCEventHandle) UnmarshalText(b []byte) error {
	return unmarshalHandle("IPCEventHandle", h[:], b, true)
}

func (h PoolPointer) String() string                 { return hex.EncodeToString(h[:]) }
func (h PoolPointer) MarshalBinary() ([]byte, error) { return h[:], nil }
func (h PoolPointer) MarshalText() ([]byte, error)   { return []byte(h.String()), nil }
func (h *PoolPointer) UnmarshalBinary(b []byte) error {
	return unmarshalHandle("PoolPointer", h[:], b, false)
}
func (h *PoolPointer) UnmarshalText(b []byte) error {
	return unmarshalHandle("PoolPointer", h[:], b, true)
}

func unmarshalHandle(what string, dst, b []byte, text bool) error {
	if text {
		if len(b) != 2*len(dst) {
			return fmt.Errorf("cuda: %s: %d hexadecimal digits, want %d", what, len(b), 2*len(dst))
		}
		if _, err := hex.Decode(dst, b); err != nil {
			return fmt.Errorf("cuda: %s: %w", what, err)
		}
		return nil
	}
	if len(b) != len(dst) {
		return fmt.Errorf("cuda: %s: %d bytes, want %d", what, len(b), len(dst))
	}
	copy(dst, b)
	return nil
}

// exported holds the IPCMemHandles this process made, so that an import
// of one of them is refused with a reason rather than the driver's code.
var exported sync.Map // IPCMemHandle → struct{}

// memHandle is what a Memory is inside this package.
type memHandle interface{ handle() *handle[memState] }

// heldMemory enters m for op and returns its state; release with h.exit.
func heldMemory(op string, m Memory) (*handle[memState], *memState, error) {
	mh, ok := m.(memHandle)
	if !ok || m == nil {
		return nil, nil, invalidArg(op, "memory of type %T has no allocation of this package", m)
	}
	h := mh.handle()
	st, ok := h.enter()
	if !ok {
		return nil, nil, h.closedError(op)
	}
	return h, st, nil
}

// ExportIPC returns the handle under which another process opens the
// allocation of m (cuIpcGetMemHandle), which must be memory of Alloc,
// AllocSlice in a Context or SliceOf such memory, the whole of it. The
// handle stays valid until the memory is freed: close it only once every
// importer has closed its import (see WaitReleased).
//
// Stream-ordered memory (AllocAsync, AllocSlice on a Stream,
// AllocFromPool) cannot be exported this way: allocate it from a MemPool
// made WithShareableHandles and use ExportPoolPointer.
func ExportIPC(m Memory) (IPCMemHandle, error) {
	const op = "ExportIPC"
	var out IPCMemHandle
	h, st, err := heldMemory(op, m)
	if err != nil {
		return out, err
	}
	defer h.exit()
	switch {
	case h.core.kind == &ipcMemoryKind:
		return out, invalidArg(op, "memory imported from another process cannot be exported again")
	case h.core.kind == &managedKind:
		return out, invalidArg(op, "managed memory cannot be exported (cuIpcGetMemHandle takes memory of cuMemAlloc)")
	case h.core.kind == &rangeViewKind:
		return out, invalidArg(op, "virtual memory is exported through its physical memory: PhysicalMemory.ExportFD")
	case st.stream != nil || st.pool != nil:
		return out, invalidArg(op, "stream-ordered memory (AllocAsync, AllocFromPool) cannot be exported with cuIpcGetMemHandle: "+
			"allocate it from a MemPool made WithShareableHandles and export it with ExportPoolPointer")
	case h.core.kind != &deviceMemoryKind:
		return out, invalidArg(op, "memory of this kind cannot be exported")
	case st.ptr == 0:
		return out, invalidArg(op, "empty memory cannot be exported")
	case m.Ptr() != st.ptr || m.Size() != st.size:
		return out, invalidArg(op, "a handle names a whole allocation: export the Slice or DeviceMemory of all of it, not a part")
	}
	var raw cu.CUipcMemHandle
	err = bind(op, st.ctx.raw(), func() error { return check(op, "cuIpcGetMemHandle", cu.IpcGetMemHandle(&raw, st.ptr)) })
	if err != nil {
		return out, err
	}
	out = IPCMemHandle(raw.Reserved)
	exported.Store(out, struct{}{})
	return out, nil
}

// ImportIPC opens memory another process exported with ExportIPC
// (cuIpcOpenMemHandle, with CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) in ctx.
// Its size is the whole allocation's (cuMemGetAddressRange). The last
// Close closes the import (cuIpcCloseMemHandle), never frees the memory,
// which stays the exporter's: close it before the exporter frees it, and
// then tell the exporter (ReleaseHandle).
func ImportIPC(ctx *Context, h IPCMemHandle) (*DeviceMemory, error) {
	return importIPC("ImportIPC", ctx, h)
}

// ImportIPCSlice is ImportIPC as a Slice of T; the allocation's size must
// be a whole number of elements.
func ImportIPCSlice[T Element](ctx *Context, h IPCMemHandle) (*Slice[T], error) {
	m, err := importIPC("ImportIPCSlice", ctx, h)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return SliceOf[T](m)
}

func importIPC(op string, ctx *Context, h IPCMemHandle) (*DeviceMemory, error) {
	if _, mine := exported.Load(h); mine {
		return nil, invalidArg(op, "the handle was exported by this process, which uses the memory directly: only another process can import it")
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	var p, base cu.CUdeviceptr
	var size uint64
	err = bind(op, cc.val.raw, func() error {
		raw := cu.CUipcMemHandle{Reserved: h}
		if err := cu.IpcOpenMemHandle(&p, raw, uint32(cu.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)); err != nil {
			p = 0
			return newError(op, "cuIpcOpenMemHandle", err)
		}
		if err := cu.MemGetAddressRange(&base, &size, p); err != nil {
			_ = cu.IpcCloseMemHandle(p)
			p = 0
			return newError(op, "cuMemGetAddressRange", err)
		}
		return nil
	})
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	core := newShared(&ipcMemoryKind)
	core.val.ptr, core.val.size = p, int(size-uint64(p-base))
	core.val.ctx.core = cc
	return newDeviceMemoryHandle(core), nil
}

func destroyIPCMemory(st *memState) error {
	const op = "DeviceMemory.Close"
	return bind(op, st.ctx.raw(), func() error { return check(op, "cuIpcCloseMemHandle", cu.IpcCloseMemHandle(st.ptr)) })
}

// ExportIPC returns the handle under which another process opens the event
// (cuIpcGetEventHandle), which must have been made WithInterprocess.
// Records here are then waited for there (Stream.WaitEvent, Synchronize).
func (e *Event) ExportIPC() (IPCEventHandle, error) {
	const op = "Event.ExportIPC"
	var out IPCEventHandle
	h := e.handle()
	st, ok := h.enter()
	if !ok {
		return out, h.closedError(op)
	}
	defer h.exit()
	if st.flags&uint32(cu.CU_EVENT_INTERPROCESS) == 0 {
		return out, invalidArg(op, "the event was made without WithInterprocess")
	}
	var raw cu.CUipcEventHandle
	err := bind(op, st.ctx.raw(), func() error {
		return check(op, "cuIpcGetEventHandle", cu.IpcGetEventHandle(&raw, st.raw))
	})
	if err != nil {
		return out, err
	}
	return IPCEventHandle(raw.Reserved), nil
}

// ImportIPCEvent opens in ctx an event another process exported with
// Event.ExportIPC (cuIpcOpenEventHandle). The returned Event is
// interprocess and without timing; its last Close destroys this process's
// handle of it (cuEventDestroy).
func ImportIPCEvent(ctx *Context, h IPCEventHandle) (*Event, error) {
	const op = "ImportIPCEvent"
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	var raw cu.CUevent
	err = bind(op, cc.val.raw, func() error {
		return check(op, "cuIpcOpenEventHandle", cu.IpcOpenEventHandle(&raw, cu.CUipcEventHandle{Reserved: h}))
	})
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	b := &eventBox{}
	b.core.init(&eventKind)
	b.core.val.raw = raw
	b.core.val.flags = uint32(cu.CU_EVENT_INTERPROCESS | cu.CU_EVENT_DISABLE_TIMING)
	b.core.val.ctx.core = cc
	attachBoxed(b, &b.e.h, &b.core)
	return &b.e, nil
}

// ExportFD returns a file descriptor of the pool
// (cuMemPoolExportToShareableHandle), for ImportMemPool in another
// process: send it with SendHandle and close it. The pool must have been
// made WithShareableHandles.
func (p *MemPool) ExportFD() (*os.File, error) {
	const op = "MemPool.ExportFD"
	h := p.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	if st.handles&cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
		return nil, invalidArg(op, "the pool was made without WithShareableHandles")
	}
	var fd int32 = -1
	if err := cu.MemPoolExportToShareableHandle(unsafe.Pointer(&fd), st.raw, cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0); err != nil {
		return nil, newError(op, "cuMemPoolExportToShareableHandle", err)
	}
	return os.NewFile(uintptr(fd), "cuda-memory-pool"), nil
}

// ImportMemPool imports a pool another process exported with
// MemPool.ExportFD (cuMemPoolImportFromShareableHandle), for
// ImportPoolPointer; ctx's device is the one the pool's memory is on. f
// stays the caller's to close. The last Close destroys this process's
// handle of the pool.
func ImportMemPool(ctx *Context, f *os.File) (*MemPool, error) {
	const op = "ImportMemPool"
	if f == nil {
		return nil, invalidArg(op, "no file")
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	defer cc.release()
	var raw cu.CUmemoryPool
	if err := importFD(op, cc.val.raw, f, true, unsafe.Pointer(&raw)); err != nil {
		return nil, err
	}
	mp := newMemPool(raw, cc.val.dev, true)
	mp.h.core.val.handles = cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
	return mp, nil
}

// ExportPoolPointer returns the handle under which another process that
// imported m's pool (ImportMemPool) opens m (cuMemPoolExportPointer): m is
// memory of AllocFromPool from a pool made WithShareableHandles, the whole
// of it. Order the allocation's work before the importer uses it (an
// interprocess event), and free it only once the importer has closed it.
func ExportPoolPointer(m Memory) (PoolPointer, error) {
	const op = "ExportPoolPointer"
	var out PoolPointer
	h, st, err := heldMemory(op, m)
	if err != nil {
		return out, err
	}
	defer h.exit()
	switch {
	case st.pool == nil && st.stream != nil:
		return out, invalidArg(op, "memory of the device's default pool cannot be exported: allocate it from a MemPool made WithShareableHandles (AllocFromPool)")
	case st.pool == nil:
		return out, invalidArg(op, "the memory is not from a pool (AllocFromPool)")
	case st.pool.val.handles&cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0:
		return out, invalidArg(op, "the memory's pool was made without WithShareableHandles")
	case st.ptr == 0:
		return out, invalidArg(op, "empty memory cannot be exported")
	case m.Ptr() != st.ptr || m.Size() != st.size:
		return out, invalidArg(op, "a handle names a whole allocation: export the Slice or DeviceMemory of all of it, not a part")
	}
	var raw cu.CUmemPoolPtrExportData
	err = bind(op, st.ctx.raw(), func() error {
		return check(op, "cuMemPoolExportPointer", cu.MemPoolExportPointer(&raw, st.ptr))
	})
	if err != nil {
		return out, err
	}
	return PoolPointer(raw.Reserved), nil
}

// ImportPoolPointer opens in ctx the allocation ptr of pool, a pool
// imported with ImportMemPool (cuMemPoolImportPointer). The memory holds a
// reference on the pool; its last Close frees this process's mapping
// (cuMemFree), which must come before the exporter frees the allocation.
func ImportPoolPointer(ctx *Context, pool *MemPool, ptr PoolPointer) (*DeviceMemory, error) {
	const op = "ImportPoolPointer"
	pc, ok := pool.handle().clone()
	if !ok {
		return nil, pool.handle().closedError(op + " (pool)")
	}
	cc, err := ctx.ref(op)
	if err != nil {
		_ = pc.release()
		return nil, err
	}
	var p, base cu.CUdeviceptr
	var size uint64
	err = bind(op, cc.val.raw, func() error {
		data := cu.CUmemPoolPtrExportData{Reserved: ptr}
		if err := cu.MemPoolImportPointer(&p, pc.val.raw, &data); err != nil {
			p = 0
			return newError(op, "cuMemPoolImportPointer", err)
		}
		if err := cu.MemGetAddressRange(&base, &size, p); err != nil {
			_ = cu.MemFree(p)
			p = 0
			return newError(op, "cuMemGetAddressRange", err)
		}
		return nil
	})
	if err != nil {
		_ = cc.release()
		_ = pc.release()
		return nil, err
	}
	core := newShared(&deviceMemoryKind)
	core.val.ptr, core.val.size, core.val.pool = p, int(size-uint64(p-base)), pc
	core.val.ctx.core = cc
	return newDeviceMemoryHandle(core), nil
}

var ipcMemoryKind = objectKind[memState]{destroy: destroyIPCMemory, drop: dropDeviceMemory, live: &liveIPCImports, name: "imported memory"}
