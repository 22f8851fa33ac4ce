package cuda

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// roundTrip copies data to the device and back and compares.
func roundTrip[T Element](t *testing.T, ctx *Context, data []T) {
	t.Helper()
	m, err := AllocFrom(ctx, data)
	must(t, err)
	defer m.Close()
	if m.Size() != len(data)*sizeOf[T]() {
		t.Fatalf("Size = %d, want %d", m.Size(), len(data)*sizeOf[T]())
	}
	got := make([]T, len(data))
	must(t, CopyFromDevice(got, m))
	if !slices.Equal(got, data) {
		t.Fatalf("%T round trip: got %v, want %v", data, got[:min(8, len(got))], data[:min(8, len(data))])
	}
}

func TestCopyRoundTrip(t *testing.T) {
	_, ctx := needGPU(t)
	const n = 10007 // not a multiple of anything the driver might favour
	i8 := make([]int8, n)
	u16 := make([]uint16, n)
	i32 := make([]int32, n)
	u64 := make([]uint64, n)
	f32 := make([]float32, n)
	f64 := make([]float64, n)
	type celsius float32 // a named type satisfies ~float32
	named := make([]celsius, n)
	for i := range n {
		i8[i] = int8(i*7 - 100)
		u16[i] = uint16(i * 31)
		i32[i] = int32(-i * 100003)
		u64[i] = uint64(i) << 40
		f32[i] = float32(i) / 3
		f64[i] = math.Sqrt(float64(i))
		named[i] = celsius(-i)
	}
	roundTrip(t, ctx, i8)
	roundTrip(t, ctx, u16)
	roundTrip(t, ctx, i32)
	roundTrip(t, ctx, u64)
	roundTrip(t, ctx, f32)
	roundTrip(t, ctx, f64)
	roundTrip(t, ctx, named)

	// A partial copy reads the start of the memory; an empty one does nothing.
	m, err := AllocFrom(ctx, []uint32{10, 20, 30, 40})
	must(t, err)
	defer m.Close()
	two := make([]uint32, 2)
	must(t, CopyFromDevice(two, m))
	if two[0] != 10 || two[1] != 20 {
		t.Errorf("partial copy gave %v", two)
	}
	must(t, CopyToDevice(m, []uint32{}))
}

func TestCopyBounds(t *testing.T) {
	_, ctx := needGPU(t)
	m, err := Alloc(ctx, 16)
	must(t, err)
	defer m.Close()
	for name, err := range map[string]error{
		"CopyToDevice":   CopyToDevice(m, make([]uint32, 5)),
		"CopyFromDevice": CopyFromDevice(make([]float64, 3), m),
	} {
		var e *Error
		if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "" {
			t.Errorf("%s past the end = %v, want CUDA_ERROR_INVALID_VALUE found before the driver", name, err)
		}
	}
	big, err := Alloc(ctx, 32)
	must(t, err)
	defer big.Close()
	if err := CopyDevice(m, big); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyDevice into a smaller buffer = %v", err)
	}
	for _, n := range []int{-1} {
		if _, err := Alloc(ctx, n); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("Alloc(%d) = %v, want CUDA_ERROR_INVALID_VALUE", n, err)
		}
	}
	if _, err := AllocHost[float32](ctx, -1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("AllocHost(-1) = %v", err)
	}
}

func TestCopyAsyncPinned(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 1 << 20
	src, err := AllocHost[float32](ctx, n)
	must(t, err)
	defer src.Close()
	dst, err := AllocHost[float32](ctx, n)
	must(t, err)
	defer dst.Close()
	if src.Len() != n || len(src.Slice()) != n || src.Ptr() == nil {
		t.Fatalf("HostBuffer of %d: Len %d, Slice %d", n, src.Len(), len(src.Slice()))
	}
	in := src.Slice()
	for i := range in {
		in[i] = float32(i) * 0.5
	}
	a, err := Alloc(ctx, 4*n)
	must(t, err)
	defer a.Close()
	b, err := Alloc(ctx, 4*n)
	must(t, err)
	defer b.Close()

	// Host → a → b → host, all in one stream's order.
	must(t, CopyToDeviceAsync(s, a, src))
	must(t, CopyDeviceAsync(s, b, a))
	must(t, CopyFromDeviceAsync(s, dst, b))
	must(t, s.Synchronize())
	if !slices.Equal(dst.Slice(), in) {
		t.Fatal("async round trip through pinned buffers differs")
	}

	small, err := Alloc(ctx, 4)
	must(t, err)
	defer small.Close()
	if err := CopyToDeviceAsync(s, small, src); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("async copy past the end = %v", err)
	}
	if err := CopyFromDeviceAsync(s, dst, small); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("async copy from too small memory = %v", err)
	}
}

func TestMemset(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 4099 * 4 // bytes
	m, err := Alloc(ctx, n)
	must(t, err)
	defer m.Close()

	check8 := func(what string, want uint8) {
		t.Helper()
		got := make([]uint8, n)
		must(t, CopyFromDevice(got, m))
		if i := slices.IndexFunc(got, func(v uint8) bool { return v != want }); i >= 0 {
			t.Fatalf("%s: byte %d is %#x, want %#x", what, i, got[i], want)
		}
	}
	check16 := func(what string, want uint16) {
		t.Helper()
		got := make([]uint16, n/2)
		must(t, CopyFromDevice(got, m))
		if i := slices.IndexFunc(got, func(v uint16) bool { return v != want }); i >= 0 {
			t.Fatalf("%s: element %d is %#x, want %#x", what, i, got[i], want)
		}
	}
	check32 := func(what string, want uint32) {
		t.Helper()
		got := make([]uint32, n/4)
		must(t, CopyFromDevice(got, m))
		checkWords(t, what, got, want)
	}

	must(t, m.MemsetD8(0xab))
	check8("MemsetD8", 0xab)
	must(t, m.MemsetD16(0xbeef))
	check16("MemsetD16", 0xbeef)
	must(t, m.MemsetD32(0xdeadbeef))
	check32("MemsetD32", 0xdeadbeef)

	must(t, m.MemsetD8Async(s, 0x5a))
	must(t, s.Synchronize())
	check8("MemsetD8Async", 0x5a)
	must(t, m.MemsetD16Async(s, 0x1234))
	must(t, s.Synchronize())
	check16("MemsetD16Async", 0x1234)
	must(t, m.MemsetD32Async(s, math.Float32bits(1.5)))
	must(t, s.Synchronize())
	f := make([]float32, n/4)
	must(t, CopyFromDevice(f, m))
	if f[0] != 1.5 || f[len(f)-1] != 1.5 {
		t.Fatalf("MemsetD32Async of 1.5's bits gave %v, %v", f[0], f[len(f)-1])
	}

	odd, err := Alloc(ctx, 6)
	must(t, err)
	defer odd.Close()
	if err := odd.MemsetD32(1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("MemsetD32 of 6 bytes = %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
	must(t, odd.MemsetD16(1))
	if err := odd.MemsetD8Async(nil, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("MemsetD8Async(nil stream) = %v, want ErrClosed", err)
	}
}

func TestAllocAsync(t *testing.T) {
	dev, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	pools, err := dev.SupportsMemoryPools()
	must(t, err)
	before := LiveObjects()
	m, err := AllocAsync(s, 4<<20)
	if !pools {
		if !errors.Is(err, ErrNoMemoryPools) {
			t.Fatalf("AllocAsync on a device without memory pools = %v, want ErrNoMemoryPools", err)
		}
		t.Skip("device without memory pools: AllocAsync refused as it should")
	}
	must(t, err)
	if m.Size() != 4<<20 || m.Raw() == 0 {
		t.Fatalf("AllocAsync: size %d, address %#x", m.Size(), m.Raw())
	}
	if got := LiveObjects(); got.DeviceMemory != before.DeviceMemory+1 || got.Streams != before.Streams {
		t.Fatalf("live after AllocAsync: %+v, before %+v", got, before)
	}
	// The stream's last user handle may close first: the memory holds the
	// queue until it is freed on it.
	s2, err := s.Clone()
	must(t, err)
	must(t, s2.Close())

	host, err := AllocHost[uint32](ctx, 1<<20)
	must(t, err)
	defer host.Close()
	must(t, m.MemsetD32Async(s, 77))
	must(t, CopyFromDeviceAsync(s, host, m))
	must(t, m.Close()) // cuMemFreeAsync after the copy, in stream order
	must(t, s.Synchronize())
	checkWords(t, "stream-ordered memory", host.Slice(), 77)
	if got := LiveObjects(); got.DeviceMemory != before.DeviceMemory {
		t.Fatalf("live device memory %d after Close, want %d", got.DeviceMemory, before.DeviceMemory)
	}

	if _, err := AllocAsync(s, -1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("AllocAsync(-1) = %v", err)
	}
}

func TestRegisterHost(t *testing.T) {
	dev, ctx := needGPU(t)
	if ok, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED); err != nil || ok == 0 {
		t.Skipf("device cannot register host memory (%v)", err)
	}
	const size = 1 << 20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	must(t, err)
	defer syscall.Munmap(mem)
	for i := range mem {
		mem[i] = byte(i % 251)
	}
	h, err := RegisterHost(ctx, mem)
	must(t, skipIfMissing(t, err))
	if h.Len() != size || &h.Slice()[0] != &mem[0] {
		t.Fatal("a registered buffer is not a view of the caller's memory")
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	d, err := Alloc(ctx, size)
	must(t, err)
	defer d.Close()
	must(t, d.MemsetD8Async(s, 0))
	must(t, CopyToDeviceAsync(s, d, h))
	must(t, s.Synchronize())
	got := make([]byte, size)
	must(t, CopyFromDevice(got, d))
	if !slices.Equal(got, mem) {
		t.Fatal("copy from registered memory differs")
	}
	must(t, h.Close()) // unregisters; the mapping stays the caller's
	mem[0] = 1
	if h.Slice() != nil || h.Len() != 0 {
		t.Error("a closed HostBuffer still exposes its memory")
	}
}

func TestDeviceMemoryHandles(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	m, err := Alloc(ctx, 64)
	must(t, err)
	c, err := m.Clone()
	must(t, err)
	if c.Raw() != m.Raw() || c.Size() != 64 || c.Context().Raw() != ctx.Raw() {
		t.Fatal("a clone is not the same memory")
	}
	must(t, m.Close())
	must(t, m.Close()) // again: nil
	if m.Raw() != 0 || m.Size() != 0 || m.Context().Raw() != 0 {
		t.Error("a closed handle still exposes its memory")
	}
	if err := CopyToDevice(m, []uint32{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyToDevice(closed) = %v, want ErrClosed", err)
	}
	// The clone still works, and so does the memory.
	must(t, CopyToDevice(c, []uint32{42}))
	got := []uint32{0}
	must(t, CopyFromDevice(got, c))
	if got[0] != 42 {
		t.Errorf("clone read %d", got[0])
	}
	if LiveObjects().DeviceMemory != before.DeviceMemory+1 {
		t.Error("memory freed while a clone is open")
	}
	must(t, c.Close())
	if after := LiveObjects(); after.DeviceMemory != before.DeviceMemory || after.Contexts != before.Contexts {
		t.Errorf("live after the last Close: %+v, before %+v", after, before)
	}
}

// Unreachable buffers are freed by their cleanup and give back their
// context references.
func TestBufferCleanup(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	func() {
		m, err := Alloc(ctx, 1<<20)
		must(t, err)
		_, err = m.Clone()
		must(t, err)
		_, err = AllocHost[uint64](ctx, 1024)
		must(t, err)
	}()
	if got := LiveObjects(); got.DeviceMemory != before.DeviceMemory+1 || got.HostBuffers != before.HostBuffers+1 {
		t.Fatalf("live %+v, before %+v", got, before)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		got := LiveObjects()
		if got == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live %+v after cleanups, want %+v", got, before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClosedBufferHandles drives the buffer types' closed paths over fake
// cores: no driver is needed, and none is called.
func TestClosedBufferHandles(t *testing.T) {
	var live atomic.Int64
	nopCtx := newContextHandle(nopCore(&live, func(st *ctxState) { st.raw = 0x1000 }))
	pc, err := nopCtx.ref("test")
	must(t, err)
	mc := nopCore(&live, func(st *memState) { st.ptr, st.size, st.ctx.core = 0x10, 64, pc })
	mc.kind = testKind(mc.kind.live, mc.kind.destroy, func(st *memState) error { return st.ctx.release() })
	m := newDeviceMemoryHandle(mc)
	pc2, err := nopCtx.ref("test")
	must(t, err)
	hc := nopCore(&live, func(st *hostState) { st.bytes, st.ctx.core = 64, pc2 })
	hc.kind = testKind(hc.kind.live, hc.kind.destroy, func(st *hostState) error { return st.ctx.release() })
	h := newHostBufferHandle[float32](hc)
	s := newStreamHandle(nopCore(&live, func(st *streamState) { st.raw = 0x2000 }))
	must(t, m.Close())
	must(t, h.Close())
	must(t, s.Close())
	must(t, nopCtx.Close())
	if n := live.Load(); n != 0 {
		t.Fatalf("live = %d after every handle closed, want 0", n)
	}
	checks := map[string]error{
		"CopyToDevice":        CopyToDevice(m, []int32{1}),
		"CopyFromDevice":      CopyFromDevice([]int32{1}, m),
		"CopyToDeviceAsync":   CopyToDeviceAsync(s, m, h),
		"CopyFromDeviceAsync": CopyFromDeviceAsync(s, h, m),
		"CopyDevice":          CopyDevice(m, m),
		"CopyDeviceAsync":     CopyDeviceAsync(s, m, m),
		"MemsetD8":            m.MemsetD8(0),
		"MemsetD16":           m.MemsetD16(0),
		"MemsetD32":           m.MemsetD32(0),
		"MemsetD32Async":      m.MemsetD32Async(s, 0),
		"CopyToDevice(nil)":   CopyToDevice[int8](nil, nil),
	}
	_, checks["Alloc"] = Alloc(nopCtx, 16)
	_, checks["Alloc(nil)"] = Alloc(nil, 16)
	_, checks["AllocAsync"] = AllocAsync(s, 16)
	_, checks["AllocHost"] = AllocHost[int8](nopCtx, 16)
	_, checks["RegisterHost"] = RegisterHost(nopCtx, make([]byte, 1)) // refused before the driver
	_, checks["DeviceMemory.Clone"] = m.Clone()
	_, checks["HostBuffer.Clone"] = h.Clone()
	for op, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s = %v, want ErrClosed", op, err)
		}
	}
	if m.Raw() != 0 || h.Slice() != nil || h.Ptr() != nil || h.Context().Raw() != 0 {
		t.Error("a closed handle still exposes its object")
	}
}
