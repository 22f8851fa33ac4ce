package cuda

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
)

// DriverVersion returns the CUDA version of the installed driver
// (cuDriverGetVersion) as 1000*major + 10*minor: 13000 for CUDA 13.0. The
// driver runs code built against its version or older ones; compare with
// cu.HeaderVersion, the version these bindings follow.
func DriverVersion() (int, error) {
	var v int32
	if err := cu.DriverGetVersion(&v); err != nil {
		return 0, newError("DriverVersion", "cuDriverGetVersion", err)
	}
	return int(v), nil
}

// UUID is a device's 16-byte identifier, stable across processes and
// reboots (unlike ordinals, which CUDA_VISIBLE_DEVICES renumbers).
type UUID [16]byte

// String formats u as nvidia-smi does: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func (u UUID) String() string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// UUID returns the device's UUID (cuDeviceGetUuid).
func (d Device) UUID() (UUID, error) {
	var u cu.CUuuid
	if err := cu.DeviceGetUuid(&u, d.raw); err != nil {
		return UUID{}, newError("Device.UUID", "cuDeviceGetUuid", err)
	}
	return UUID(u.Bytes), nil
}

// TotalMemory returns the device's memory in bytes (cuDeviceTotalMem).
func (d Device) TotalMemory() (uint64, error) {
	var n uint64
	if err := cu.DeviceTotalMem(&n, d.raw); err != nil {
		return 0, newError("Device.TotalMemory", "cuDeviceTotalMem", err)
	}
	return n, nil
}

// Attribute returns one attribute of the device (cuDeviceGetAttribute), any
// of the cu.CU_DEVICE_ATTRIBUTE_* values of the bindings' CUDA version. The
// typed getters below cover the common ones.
func (d Device) Attribute(attr cu.CUdevice_attribute) (int, error) {
	var v int32
	if err := cu.DeviceGetAttribute(&v, attr, d.raw); err != nil {
		return 0, newError("Device.Attribute", "cuDeviceGetAttribute", fmt.Errorf("%v: %w", attr, err))
	}
	return int(v), nil
}

// ComputeCapability returns the device's compute capability: 9, 0 for an
// H100 or H200 (sm_90).
func (d Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR); err != nil {
		return 0, 0, err
	}
	if minor, err = d.Attribute(cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// MultiprocessorCount returns the number of streaming multiprocessors.
func (d Device) MultiprocessorCount() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
}

// MaxThreadsPerBlock returns the largest number of threads in one block.
func (d Device) MaxThreadsPerBlock() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
}

// MaxThreadsPerMultiprocessor returns how many threads one multiprocessor
// can have resident.
func (d Device) MaxThreadsPerMultiprocessor() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
}

// MaxBlockDim returns the largest block dimensions.
func (d Device) MaxBlockDim() (Dim3, error) {
	return d.dim3(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
		cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
}

// MaxGridDim returns the largest grid dimensions.
func (d Device) MaxGridDim() (Dim3, error) {
	return d.dim3(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
		cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
}

func (d Device) dim3(x, y, z cu.CUdevice_attribute) (Dim3, error) {
	var v [3]int
	for i, a := range [3]cu.CUdevice_attribute{x, y, z} {
		n, err := d.Attribute(a)
		if err != nil {
			return Dim3{}, err
		}
		v[i] = n
	}
	return Dim3{uint32(v[0]), uint32(v[1]), uint32(v[2])}, nil
}

// WarpSize returns the number of threads in a warp (32 on every NVIDIA GPU
// so far).
func (d Device) WarpSize() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_WARP_SIZE)
}

// ClockRate returns the peak clock of the multiprocessors in kHz.
func (d Device) ClockRate() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
}

// MemoryClockRate returns the peak memory clock in kHz.
func (d Device) MemoryClockRate() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
}

// MemoryBusWidth returns the width of the global memory bus in bits.
func (d Device) MemoryBusWidth() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
}

// L2CacheSize returns the size of the L2 cache in bytes.
func (d Device) L2CacheSize() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
}

// MaxSharedMemoryPerBlock returns the shared memory a block gets without
// opting in, in bytes (48 KiB); kernels that opt in get up to
// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN.
func (d Device) MaxSharedMemoryPerBlock() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
}

// AsyncEngineCount returns the number of copy engines, which can run copies
// concurrently with kernels.
func (d Device) AsyncEngineCount() (int, error) {
	return d.Attribute(cu.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)
}

// PCIBusID returns the device's PCI address, domain:bus:device.function,
// as nvidia-smi prints it ("0000:1b:00.0").
func (d Device) PCIBusID() (string, error) {
	var v [3]int
	for i, a := range [3]cu.CUdevice_attribute{cu.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
		cu.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, cu.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID} {
		n, err := d.Attribute(a)
		if err != nil {
			return "", err
		}
		v[i] = n
	}
	return fmt.Sprintf("%04x:%02x:%02x.0", v[0], v[1], v[2]), nil
}

func (d Device) flag(attr cu.CUdevice_attribute) (bool, error) {
	v, err := d.Attribute(attr)
	return v != 0, err
}

// SupportsMemoryPools reports whether the device has stream-ordered
// allocation (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED), which AllocAsync
// needs.
func (d Device) SupportsMemoryPools() (bool, error) {
	return d.flag(cu.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
}

// SupportsUnifiedAddressing reports whether host and device share one
// virtual address space (true on every 64-bit Linux system).
func (d Device) SupportsUnifiedAddressing() (bool, error) {
	return d.flag(cu.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)
}

// SupportsManagedMemory reports whether the device can allocate managed
// (unified) memory.
func (d Device) SupportsManagedMemory() (bool, error) {
	return d.flag(cu.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)
}

// ECCEnabled reports whether error correction is on for the device memory.
func (d Device) ECCEnabled() (bool, error) {
	return d.flag(cu.CU_DEVICE_ATTRIBUTE_ECC_ENABLED)
}

// CanAccessPeer reports whether contexts on dev can access the memory of
// peer once EnablePeerAccess allows it (cuDeviceCanAccessPeer). A device is
// not its own peer.
func CanAccessPeer(dev, peer Device) (bool, error) {
	var ok int32
	if err := cu.DeviceCanAccessPeer(&ok, dev.raw, peer.raw); err != nil {
		return false, newError("CanAccessPeer", "cuDeviceCanAccessPeer", err)
	}
	return ok != 0, nil
}

// EnablePeerAccess lets work in ctx access memory allocated in peer, a
// context of another device (cuCtxEnablePeerAccess). Access is one-way:
// enable the other direction with the arguments swapped. Enabling it again
// returns nil.
func EnablePeerAccess(ctx, peer *Context) error {
	const op = "EnablePeerAccess"
	return withPeers(op, ctx, peer, func(peerRaw cu.CUcontext) error {
		err := cu.CtxEnablePeerAccess(peerRaw, 0)
		if err == error(cu.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
			return nil
		}
		return check(op, "cuCtxEnablePeerAccess", err)
	})
}

// DisablePeerAccess revokes what EnablePeerAccess(ctx, peer) allowed
// (cuCtxDisablePeerAccess). Disabling access that is not enabled is an
// error matching cu.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED.
func DisablePeerAccess(ctx, peer *Context) error {
	const op = "DisablePeerAccess"
	return withPeers(op, ctx, peer, func(peerRaw cu.CUcontext) error {
		return check(op, "cuCtxDisablePeerAccess", cu.CtxDisablePeerAccess(peerRaw))
	})
}

// withPeers runs fn with ctx bound, holding both contexts.
func withPeers(op string, ctx, peer *Context, fn func(peerRaw cu.CUcontext) error) error {
	var hs holds
	defer hs.release()
	ch, ph := ctx.handle(), peer.handle()
	if err := hs.all(op, arg{"context", ch}, arg{"peer", ph}); err != nil {
		return err
	}
	peerRaw := ph.core.val.raw
	return bind(op, ch.core.val.raw, func() error { return fn(peerRaw) })
}
