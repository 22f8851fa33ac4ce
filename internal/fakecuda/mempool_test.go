package fakecuda_test

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// poolUsage is what a pool's attributes report.
type poolUsage struct{ reserved, reservedHigh, used, usedHigh uint64 }

func usage(t *testing.T, p cu.CUmemoryPool) poolUsage {
	t.Helper()
	var u poolUsage
	for _, a := range []struct {
		attr cu.CUmemPool_attribute
		v    *uint64
	}{
		{cu.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &u.reserved},
		{cu.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &u.reservedHigh},
		{cu.CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u.used},
		{cu.CU_MEMPOOL_ATTR_USED_MEM_HIGH, &u.usedHigh},
	} {
		must(t, cu.MemPoolGetAttribute(p, a.attr, unsafe.Pointer(a.v)))
	}
	return u
}

func freeMem(t *testing.T) uint64 {
	t.Helper()
	var free, total uint64
	must(t, cu.MemGetInfo(&free, &total))
	return free
}

func setU64(p cu.CUmemoryPool, attr cu.CUmemPool_attribute, v uint64) error {
	return cu.MemPoolSetAttribute(p, attr, unsafe.Pointer(&v))
}

func devicePoolProps() cu.CUmemPoolProps {
	var props cu.CUmemPoolProps
	props.AllocType = cu.CU_MEM_ALLOCATION_TYPE_PINNED
	props.Location.Type = cu.CU_MEM_LOCATION_TYPE_DEVICE
	return props
}

// TestDefaultMemPool: cuMemAllocAsync takes from the device's default
// pool, whose reserve counts against the device's free memory and, under
// the default release threshold of 0, goes back once the free has run.
func TestDefaultMemPool(t *testing.T) {
	primary(t)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	var def, cur cu.CUmemoryPool
	must(t, cu.DeviceGetDefaultMemPool(&def, 0))
	must(t, cu.DeviceGetMemPool(&cur, 0))
	if def == 0 || cur != def {
		t.Fatalf("default pool %#x, current pool %#x: want the same pool", def, cur)
	}
	is(t, "cuDeviceGetDefaultMemPool of device 5", cu.DeviceGetDefaultMemPool(&cur, 5), cu.CUDA_ERROR_INVALID_DEVICE)
	is(t, "cuDeviceGetDefaultMemPool without a result", cu.DeviceGetDefaultMemPool(nil, 0), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "cuMemPoolDestroy of the default pool", cu.MemPoolDestroy(def), cu.CUDA_ERROR_INVALID_VALUE)

	const size = 3 << 20
	u0, free0 := usage(t, def), freeMem(t)
	var p cu.CUdeviceptr
	must(t, cu.MemAllocAsync(&p, size, s))
	u1 := usage(t, def)
	if u1.used != u0.used+size || u1.reserved != u0.reserved+size || u1.usedHigh < u1.used || u1.reservedHigh < u1.reserved {
		t.Fatalf("default pool %+v, then %+v after cuMemAllocAsync of %d bytes", u0, u1, size)
	}
	if f := freeMem(t); f != free0-size {
		t.Fatalf("free memory %d, then %d with %d bytes reserved: want it counted", free0, f, size)
	}
	must(t, cu.MemFreeAsync(p, s))
	must(t, cu.StreamSynchronize(s))
	if u := usage(t, def); u.used != u0.used || u.reserved != u0.reserved || u.usedHigh != u1.usedHigh {
		t.Fatalf("default pool %+v after the free, want the use and reserve of %+v and the high watermark kept", u, u0)
	}
	if f := freeMem(t); f != free0 {
		t.Fatalf("free memory %d after the free, want %d back", f, free0)
	}
}

// TestMemPoolAccounting drives a pool of its own: the release threshold
// keeps its reserve after a free, cuMemPoolTrimTo gives it back, the high
// watermarks reset, and the attribute and property errors are the
// driver's.
func TestMemPoolAccounting(t *testing.T) {
	primary(t)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	props := devicePoolProps()
	var pool cu.CUmemoryPool
	must(t, cu.MemPoolCreate(&pool, &props))
	defer func() { must(t, cu.MemPoolDestroy(pool)) }()
	must(t, setU64(pool, cu.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1<<30))
	var thr uint64
	must(t, cu.MemPoolGetAttribute(pool, cu.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, unsafe.Pointer(&thr)))
	if thr != 1<<30 {
		t.Fatalf("release threshold %d, want %d", thr, 1<<30)
	}
	var reuse int32 = 7
	must(t, cu.MemPoolGetAttribute(pool, cu.CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, unsafe.Pointer(&reuse)))
	if reuse != 1 {
		t.Errorf("REUSE_ALLOW_OPPORTUNISTIC %d, want 1 (enabled by default)", reuse)
	}

	free0 := freeMem(t)
	var a, b cu.CUdeviceptr
	must(t, cu.MemAllocFromPoolAsync(&a, 1<<20, pool, s))
	must(t, cu.MemAllocFromPoolAsync(&b, 2<<20, pool, s))
	must(t, cu.MemsetD8Async(b, 1, 2<<20, s))
	if u := usage(t, pool); u != (poolUsage{3 << 20, 3 << 20, 3 << 20, 3 << 20}) {
		t.Fatalf("pool with 3 MiB allocated: %+v", u)
	}
	must(t, cu.MemFreeAsync(a, s))
	must(t, cu.MemFreeAsync(b, s))
	must(t, cu.StreamSynchronize(s))
	if u := usage(t, pool); u != (poolUsage{3 << 20, 3 << 20, 0, 3 << 20}) {
		t.Fatalf("pool after the frees, under a 1 GiB threshold: %+v, want 3 MiB reserved and none used", u)
	}
	if f := freeMem(t); f != free0-3<<20 {
		t.Fatalf("free memory %d with 3 MiB reserved, want %d", f, free0-3<<20)
	}
	// Reuse of the reserve: no more is reserved.
	must(t, cu.MemAllocFromPoolAsync(&a, 2<<20, pool, s))
	if u := usage(t, pool); u.reserved != 3<<20 || u.used != 2<<20 {
		t.Fatalf("pool with 2 MiB allocated from 3 MiB reserved: %+v", u)
	}
	must(t, cu.MemPoolTrimTo(pool, 0)) // what is in use stays
	if u := usage(t, pool); u.reserved != 2<<20 {
		t.Fatalf("pool trimmed with 2 MiB in use: %+v", u)
	}
	must(t, cu.MemFreeAsync(a, s))
	must(t, cu.StreamSynchronize(s))
	must(t, cu.MemPoolTrimTo(pool, 4<<20)) // less reserved than that: nothing to do
	if u := usage(t, pool); u.reserved != 2<<20 {
		t.Fatalf("TrimTo(4 MiB) with 2 MiB reserved: %+v", u)
	}
	must(t, cu.MemPoolTrimTo(pool, 1<<20))
	if u := usage(t, pool); u.reserved != 1<<20 {
		t.Fatalf("TrimTo(1 MiB) with 2 MiB reserved and none used: %+v", u)
	}
	must(t, setU64(pool, cu.CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0))
	must(t, setU64(pool, cu.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0))
	if u := usage(t, pool); u != (poolUsage{1 << 20, 1 << 20, 0, 0}) {
		t.Fatalf("high watermarks reset: %+v", u)
	}
	must(t, cu.MemPoolTrimTo(pool, 0))
	if f := freeMem(t); f != free0 {
		t.Fatalf("free memory %d after TrimTo(0), want %d", f, free0)
	}

	is(t, "setting USED_MEM_HIGH to 5", setU64(pool, cu.CU_MEMPOOL_ATTR_USED_MEM_HIGH, 5), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "setting RESERVED_MEM_CURRENT", setU64(pool, cu.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, 0), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "reading attribute 99", cu.MemPoolGetAttribute(pool, 99, unsafe.Pointer(&thr)), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "reading into nil", cu.MemPoolGetAttribute(pool, cu.CU_MEMPOOL_ATTR_USED_MEM_HIGH, nil), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "allocating more than the device has", cu.MemAllocFromPoolAsync(&a, 1<<40, pool, s), cu.CUDA_ERROR_OUT_OF_MEMORY)
	is(t, "allocating 0 bytes", cu.MemAllocFromPoolAsync(&a, 0, pool, s), cu.CUDA_ERROR_INVALID_VALUE)
	if u := usage(t, pool); u != (poolUsage{0, 1 << 20, 0, 0}) {
		t.Fatalf("pool after failed allocations: %+v, want nothing reserved or used", u)
	}

	var other cu.CUmemoryPool
	bad := props
	bad.Location.Id = 7
	is(t, "cuMemPoolCreate on device 7", cu.MemPoolCreate(&other, &bad), cu.CUDA_ERROR_INVALID_VALUE)
	bad = props
	bad.AllocType = cu.CU_MEM_ALLOCATION_TYPE_INVALID
	is(t, "cuMemPoolCreate of no allocation type", cu.MemPoolCreate(&other, &bad), cu.CUDA_ERROR_INVALID_VALUE)
	bad = props
	bad.HandleTypes = cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
	is(t, "cuMemPoolCreate of an IPC pool", cu.MemPoolCreate(&other, &bad), cu.CUDA_ERROR_NOT_SUPPORTED)
	is(t, "cuMemPoolCreate without properties", cu.MemPoolCreate(&other, nil), cu.CUDA_ERROR_INVALID_VALUE)
}

// TestMemPoolCurrentAndDestroy: cuDeviceSetMemPool makes cuMemAllocAsync
// take from another pool; destroying that pool with an allocation
// outstanding succeeds, makes the default pool current again and frees
// the pool's memory once the allocation's free has run.
func TestMemPoolCurrentAndDestroy(t *testing.T) {
	primary(t)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	props := devicePoolProps()
	var def, pool, cur cu.CUmemoryPool
	must(t, cu.DeviceGetDefaultMemPool(&def, 0))
	must(t, cu.MemPoolCreate(&pool, &props))
	must(t, setU64(pool, cu.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1<<30))
	is(t, "cuDeviceSetMemPool of device 5", cu.DeviceSetMemPool(5, pool), cu.CUDA_ERROR_INVALID_DEVICE)
	is(t, "cuDeviceSetMemPool of a forged pool", cu.DeviceSetMemPool(0, cu.CUmemoryPool(0x1234)), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.DeviceSetMemPool(0, pool))
	must(t, cu.DeviceGetMemPool(&cur, 0))
	if cur != pool {
		t.Fatalf("current pool %#x after cuDeviceSetMemPool(%#x)", cur, pool)
	}

	free0, d0 := freeMem(t), usage(t, def)
	var p cu.CUdeviceptr
	must(t, cu.MemAllocAsync(&p, 1<<20, s))
	if u, d := usage(t, pool), usage(t, def); u.used != 1<<20 || d != d0 {
		t.Fatalf("cuMemAllocAsync with the pool current: pool %+v, default pool %+v (was %+v)", u, d, d0)
	}
	must(t, cu.MemPoolDestroy(pool)) // returns at once: the pool goes with its allocation
	must(t, cu.DeviceGetMemPool(&cur, 0))
	if cur != def {
		t.Fatalf("current pool %#x after destroying it, want the default %#x", cur, def)
	}
	var v uint64
	is(t, "reading a destroyed pool", cu.MemPoolGetAttribute(pool, cu.CU_MEMPOOL_ATTR_USED_MEM_CURRENT, unsafe.Pointer(&v)), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "destroying it again", cu.MemPoolDestroy(pool), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "allocating from it", cu.MemAllocFromPoolAsync(&p, 16, pool, s), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.MemsetD32Async(p, 5, 1<<18, s)) // the allocation is still good
	must(t, cu.MemFreeAsync(p, s))
	must(t, cu.StreamSynchronize(s))
	if f := freeMem(t); f != free0 {
		t.Fatalf("free memory %d once the destroyed pool's last allocation was freed, want %d", f, free0)
	}
}
