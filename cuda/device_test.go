package cuda

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

func TestDeviceInfo(t *testing.T) {
	dev, _ := needGPU(t)
	n, err := DeviceCount()
	must(t, err)
	if n < 1 {
		t.Fatalf("DeviceCount = %d with a device 0", n)
	}
	name, err := dev.Name()
	must(t, err)
	if name == "" {
		t.Error("empty device name")
	}
	uuid, err := dev.UUID()
	must(t, err)
	if uuid == (UUID{}) {
		t.Error("zero UUID")
	}
	if !regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(uuid.String()) {
		t.Errorf("UUID %q is not in nvidia-smi's format", uuid)
	}
	mem, err := dev.TotalMemory()
	must(t, err)
	if mem < 256<<20 {
		t.Errorf("TotalMemory = %d bytes", mem)
	}
	major, minor, err := dev.ComputeCapability()
	must(t, err)
	if major < 3 || minor < 0 {
		t.Errorf("compute capability %d.%d", major, minor)
	}

	// Each typed getter is its attribute, and sane.
	for _, c := range []struct {
		name    string
		get     func() (int, error)
		attr    cu.CUdevice_attribute
		atLeast int
	}{
		{"MultiprocessorCount", dev.MultiprocessorCount, cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1},
		{"MaxThreadsPerBlock", dev.MaxThreadsPerBlock, cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 256},
		{"MaxThreadsPerMultiprocessor", dev.MaxThreadsPerMultiprocessor, cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 256},
		{"WarpSize", dev.WarpSize, cu.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
		{"ClockRate", dev.ClockRate, cu.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 0},
		{"MemoryClockRate", dev.MemoryClockRate, cu.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0},
		{"MemoryBusWidth", dev.MemoryBusWidth, cu.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 32},
		{"L2CacheSize", dev.L2CacheSize, cu.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1},
		{"MaxSharedMemoryPerBlock", dev.MaxSharedMemoryPerBlock, cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 16 << 10},
		{"AsyncEngineCount", dev.AsyncEngineCount, cu.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 0},
	} {
		v, err := c.get()
		must(t, err)
		raw, err := dev.Attribute(c.attr)
		must(t, err)
		if v != raw || v < c.atLeast {
			t.Errorf("%s = %d, Attribute(%v) = %d, want equal and at least %d", c.name, v, c.attr, raw, c.atLeast)
		}
		t.Logf("%s = %d", c.name, v)
	}
	if w, _ := dev.WarpSize(); w != 32 {
		t.Errorf("warp size %d", w)
	}
	block, err := dev.MaxBlockDim()
	must(t, err)
	grid, err := dev.MaxGridDim()
	must(t, err)
	if block.X < 512 || block.Z < 1 || grid.X < 65535 || grid.Y < 65535 {
		t.Errorf("MaxBlockDim %+v, MaxGridDim %+v", block, grid)
	}
	bus, err := dev.PCIBusID()
	must(t, err)
	if !regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.0$`).MatchString(bus) {
		t.Errorf("PCIBusID = %q", bus)
	}
	ua, err := dev.SupportsUnifiedAddressing()
	must(t, err)
	if !ua {
		t.Error("no unified addressing on a 64-bit Linux system")
	}
	_, err = dev.SupportsMemoryPools()
	must(t, err)
	_, err = dev.SupportsManagedMemory()
	must(t, err)
	_, err = dev.ECCEnabled()
	must(t, err)
	t.Logf("%s (%s, %s): %d MiB, sm_%d%d", name, uuid, bus, mem>>20, major, minor)

	// An attribute the driver does not know is its error, naming it.
	_, err = dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX + 1000)
	var e *Error
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "cuDeviceGetAttribute" {
		t.Errorf("Attribute(unknown) = %v, want CUDA_ERROR_INVALID_VALUE from cuDeviceGetAttribute", err)
	}
}

func TestDriverVersion(t *testing.T) {
	needGPU(t)
	v, err := DriverVersion()
	must(t, err)
	if v < 11000 || v%10 != 0 {
		t.Errorf("DriverVersion = %d", v)
	}
	t.Logf("driver CUDA %d.%d, bindings CUDA %d", v/1000, v%1000/10, cu.HeaderVersion())
}

func TestPeerAccess(t *testing.T) {
	dev, ctx := needGPU(t)
	devs, err := Devices()
	must(t, err)
	var peer Device
	found := false
	for _, d := range devs[1:] {
		ok, err := CanAccessPeer(dev, d)
		must(t, err)
		if ok {
			peer, found = d, true
			break
		}
	}
	if !found {
		t.Skipf("no device can be a peer of device 0 (%d devices)", len(devs))
	}
	pctx, err := PrimaryContext(peer)
	must(t, err)
	defer pctx.Close()
	must(t, EnablePeerAccess(ctx, pctx))
	must(t, EnablePeerAccess(ctx, pctx)) // again: nil
	// With access enabled, a copy between the devices' memories works.
	src, err := AllocFrom(pctx, []uint32{1, 2, 3, 4})
	must(t, err)
	defer src.Close()
	dst, err := Alloc(ctx, 16)
	must(t, err)
	defer dst.Close()
	must(t, CopyDevice(dst, src))
	got := make([]uint32, 4)
	must(t, CopyFromDevice(got, dst))
	if got[0] != 1 || got[3] != 4 {
		t.Errorf("peer copy gave %v", got)
	}
	must(t, DisablePeerAccess(ctx, pctx))
	if err := DisablePeerAccess(ctx, pctx); !errors.Is(err, cu.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) {
		t.Errorf("DisablePeerAccess again = %v, want CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", err)
	}
}

const noDriverInfoEnv = "GOCUDA_TEST_NODRIVER_INFO_CHILD"

// TestNoDriverInfo checks, in a process whose driver path points nowhere,
// that the calls of this API report the missing driver.
func TestNoDriverInfo(t *testing.T) {
	if os.Getenv(noDriverInfoEnv) != "" {
		_, err := DriverVersion()
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("DriverVersion = %v, want ErrNoDriver", err)
		}
		_, err = CanAccessPeer(Device{}, Device{})
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("CanAccessPeer = %v, want ErrNoDriver", err)
		}
		_, err = Device{}.Attribute(cu.CU_DEVICE_ATTRIBUTE_WARP_SIZE)
		var e *Error
		if !errors.Is(err, ErrNoDriver) || !errors.As(err, &e) || e.Func != "cuDeviceGetAttribute" {
			t.Errorf("Device.Attribute = %v, want ErrNoDriver from cuDeviceGetAttribute", err)
		}
		_, err = Device{}.UUID()
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("Device.UUID = %v, want ErrNoDriver", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDriverInfo$", "-test.count=1")
	cmd.Env = append(os.Environ(), noDriverInfoEnv+"=1", cu.LibraryEnv+"=/nonexistent/libcuda.so.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
}
