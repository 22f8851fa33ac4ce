package cuda

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// needManaged is needGPU for a device with managed memory and concurrent
// managed access (prefetching needs it), or skips saying which is missing.
func needManaged(tb testing.TB) (Device, *Context) {
	tb.Helper()
	dev, ctx := needGPU(tb)
	if ok, err := dev.SupportsManagedMemory(); err != nil || !ok {
		tb.Skipf("device without managed memory (%v)", err)
	}
	if v, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS); err != nil || v == 0 {
		tb.Skipf("device without concurrent managed access, which prefetching needs (%v)", err)
	}
	return dev, ctx
}

// freeMemory is the device memory cuMemGetInfo reports free in ctx.
func freeMemory(tb testing.TB, ctx *Context) uint64 {
	tb.Helper()
	var free, total uint64
	must(tb, ctx.Do(func() error { return cu.MemGetInfo(&free, &total) }))
	return free
}

// managedCalls is the number of cuMemAllocManaged calls the fake driver
// saw, or -1 with another driver.
func managedCalls() int {
	if !cudatest.Active() {
		return -1
	}
	return cudatest.Calls("cuMemAllocManaged")
}

func isInvalid(tb testing.TB, what string, err error) {
	tb.Helper()
	var e *Error
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "" {
		tb.Errorf("%s = %v, want an error matching CUDA_ERROR_INVALID_VALUE found before the driver", what, err)
	}
}

// TestManagedMemory allocates managed memory, writes it through the typed
// view, reads it back through the DeviceMemory handle and the copies, and
// checks the accounting of the handles of both types.
func TestManagedMemory(t *testing.T) {
	_, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	before := LiveObjects()
	var fakeBefore cudatest.Counts
	if cudatest.Active() {
		fakeBefore = cudatest.Live()
	}
	const n = 4096
	m, err := AllocManagedOf[float32](ctx, n, AttachGlobal)
	must(t, skipIfMissing(t, err))
	if m.Size() != 4*n || m.Raw() == 0 || m.Context().Raw() != ctx.Raw() {
		t.Fatalf("size %d, address %#x, context %#x: want %d bytes in context %#x", m.Size(), m.Raw(), m.Context().Raw(), 4*n, ctx.Raw())
	}
	if got := LiveObjects(); got.ManagedMemory != before.ManagedMemory+1 || got.DeviceMemory != before.DeviceMemory {
		t.Fatalf("live %+v after AllocManaged, before %+v: want one more ManagedMemory and no more DeviceMemory", got, before)
	}
	if cudatest.Active() {
		if got := cudatest.Live(); got.ManagedAllocs != fakeBefore.ManagedAllocs+1 || got.DeviceAllocs != fakeBefore.DeviceAllocs+1 {
			t.Fatalf("fake driver: %v, before %v: want one more managed (and device) allocation", got, fakeBefore)
		}
	}
	x, err := ManagedSlice[float32](m)
	must(t, err)
	if len(x) != n {
		t.Fatalf("ManagedSlice has %d elements, want %d", len(x), n)
	}
	for i := range x {
		x[i] = float32(i)
	}
	d, err := m.DeviceMemory()
	must(t, err)
	if d.Raw() != m.Raw() || d.Size() != m.Size() {
		t.Fatalf("DeviceMemory handle at %#x, %d bytes; managed memory at %#x, %d bytes", d.Raw(), d.Size(), m.Raw(), m.Size())
	}
	got := make([]float32, n)
	must(t, CopyFromDevice(got, d))
	if !slices.Equal(got, x) {
		t.Fatalf("CopyFromDevice of managed memory differs from what the host wrote: %v…", got[:8])
	}
	must(t, CopyToDevice(d, []float32{-1, -2}))
	must(t, AccessManaged(m, func(v []float32) error {
		if v[0] != -1 || v[1] != -2 || v[2] != 2 {
			t.Errorf("after CopyToDevice the host reads %v", v[:3])
		}
		return nil
	}))
	must(t, d.MemsetD32(math.Float32bits(0.5)))
	if x[0] != 0.5 || x[n-1] != 0.5 {
		t.Fatalf("after MemsetD32 the host reads %v … %v", x[0], x[n-1])
	}

	// The allocation lives until its last handle of either type is closed.
	c, err := m.Clone()
	must(t, err)
	must(t, m.Close())
	must(t, m.Close()) // again: nothing
	if m.Raw() != 0 || m.Size() != 0 || m.Context().Raw() != 0 {
		t.Fatal("a closed handle still reports its memory")
	}
	if _, err := ManagedSlice[float32](m); !errors.Is(err, ErrClosed) {
		t.Fatalf("ManagedSlice of a closed handle = %v, want ErrClosed", err)
	}
	must(t, c.Close())
	if got := LiveObjects().ManagedMemory; got != before.ManagedMemory+1 {
		t.Fatalf("live managed memory %d while a DeviceMemory handle is open, want %d", got, before.ManagedMemory+1)
	}
	must(t, CopyFromDevice(got[:1], d)) // still valid
	must(t, d.Close())
	if got := LiveObjects(); got != before {
		t.Fatalf("live %+v after every handle closed, want %+v", got, before)
	}

	h, err := AllocManaged(ctx, 100, AttachHost)
	must(t, err)
	b, err := ManagedSlice[uint8](h)
	must(t, err)
	b[99] = 7
	if _, err := ManagedSlice[float64](h); err == nil {
		t.Error("ManagedSlice[float64] of 100 bytes succeeded")
	} else {
		isInvalid(t, "ManagedSlice[float64] of 100 bytes", err)
	}
	must(t, h.Close())
}

// TestManagedSizes: sizes and flags are checked before the driver.
func TestManagedSizes(t *testing.T) {
	_, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	calls := managedCalls()
	for what, f := range map[string]func() (*ManagedMemory, error){
		"size 0":             func() (*ManagedMemory, error) { return AllocManaged(ctx, 0, AttachGlobal) },
		"size -1":            func() (*ManagedMemory, error) { return AllocManaged(ctx, -1, AttachGlobal) },
		"length 0":           func() (*ManagedMemory, error) { return AllocManagedOf[int32](ctx, 0, AttachGlobal) },
		"length -5":          func() (*ManagedMemory, error) { return AllocManagedOf[int32](ctx, -5, AttachGlobal) },
		"overflowing length": func() (*ManagedMemory, error) { return AllocManagedOf[float64](ctx, math.MaxInt/8+1, AttachGlobal) },
		"attach 0":           func() (*ManagedMemory, error) { return AllocManaged(ctx, 16, 0) },
		"attach single":      func() (*ManagedMemory, error) { return AllocManaged(ctx, 16, ManagedAttach(cu.CU_MEM_ATTACH_SINGLE)) },
	} {
		m, err := f()
		if m != nil {
			t.Errorf("%s: allocated", what)
			_ = m.Close()
		}
		isInvalid(t, what, err)
	}
	if c := managedCalls(); c != calls {
		t.Fatalf("refused allocations made %d cuMemAllocManaged calls", c-calls)
	}
	if _, err := AllocManaged(nil, 16, AttachGlobal); !errors.Is(err, ErrClosed) {
		t.Fatalf("AllocManaged(nil context) = %v, want ErrClosed", err)
	}
}

// TestManagedFreeMemoryRule: never more than the device has free, before
// the driver is asked, and managed memory already allocated counts.
func TestManagedFreeMemoryRule(t *testing.T) {
	dev, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	calls := managedCalls()
	free := freeMemory(t, ctx)
	// A margin above free, so that memory another process frees meanwhile
	// cannot make the request fit on a real device.
	over := free + 1<<30
	if over > math.MaxInt {
		t.Skipf("free memory %d does not leave room for a larger int", free)
	}
	m, err := AllocManaged(ctx, int(over), AttachGlobal)
	if err == nil {
		_ = m.Close()
		t.Fatalf("AllocManaged of %d bytes with %d free succeeded", over, free)
	}
	var e *Error
	if !errors.Is(err, ErrExceedsFreeMemory) || !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) || !errors.As(err, &e) || e.Func != "" {
		t.Fatalf("AllocManaged over the free memory = %v, want ErrExceedsFreeMemory and CUDA_ERROR_OUT_OF_MEMORY before the driver", err)
	}
	if c := managedCalls(); c != calls {
		t.Fatalf("a refused allocation made %d cuMemAllocManaged calls", c-calls)
	}

	managedMu.Lock()
	held := managedBytes[dev.raw]
	managedMu.Unlock()
	small, err := AllocManaged(ctx, 1<<20, AttachGlobal)
	must(t, err)
	managedMu.Lock()
	got := managedBytes[dev.raw]
	managedMu.Unlock()
	if got != held+1<<20 {
		t.Fatalf("managed bytes counted on the device: %d, want %d", got, held+1<<20)
	}
	must(t, small.Close())
	managedMu.Lock()
	got = managedBytes[dev.raw]
	managedMu.Unlock()
	if got != held {
		t.Fatalf("managed bytes counted after the free: %d, want %d", got, held)
	}

	if !cudatest.Active() {
		return // the rest allocates half the device, untouched: the fake's
	}
	// The fake driver, like the real one, does not count managed memory
	// as used until it is resident: AllocManaged counts it itself.
	half := int(free / 2)
	a, err := AllocManaged(ctx, half+4096, AttachGlobal)
	must(t, err)
	if _, err := AllocManaged(ctx, half, AttachGlobal); !errors.Is(err, ErrExceedsFreeMemory) {
		t.Fatalf("a second allocation of half the free memory = %v, want ErrExceedsFreeMemory", err)
	}
	must(t, a.Close())
	b, err := AllocManaged(ctx, half, AttachGlobal)
	must(t, err)
	must(t, b.Close())
	// Device memory in use counts too, through cuMemGetInfo.
	d, err := Alloc(ctx, half+4096)
	must(t, err)
	if _, err := AllocManaged(ctx, half, AttachGlobal); !errors.Is(err, ErrExceedsFreeMemory) {
		t.Fatalf("managed allocation of half the free memory with the other half allocated = %v, want ErrExceedsFreeMemory", err)
	}
	must(t, d.Close())
}

// TestManagedFaults: a failed cuMemGetInfo or cuMemAllocManaged leaves
// nothing behind and nothing counted.
func TestManagedFaults(t *testing.T) {
	dev, ctx := needManaged(t)
	if !cudatest.Active() {
		t.Skip("injects faults into the fake driver")
	}
	cudatest.CheckNoLeaks(t)
	before := LiveObjects()
	managedMu.Lock()
	held := managedBytes[dev.raw]
	managedMu.Unlock()
	for _, fn := range []string{"cuMemGetInfo", "cuMemAllocManaged"} {
		cudatest.FailCall(fn, 1, cu.CUDA_ERROR_OUT_OF_MEMORY)
		m, err := AllocManaged(ctx, 1<<20, AttachGlobal)
		var e *Error
		if m != nil || !errors.As(err, &e) || e.Func != fn || !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) {
			t.Fatalf("AllocManaged with %s failing = %v, %v; want the driver's error naming %s", fn, m, err, fn)
		}
	}
	managedMu.Lock()
	got := managedBytes[dev.raw]
	managedMu.Unlock()
	if got != held || LiveObjects() != before {
		t.Fatalf("after failed allocations: managed bytes %d (want %d), live %+v (want %+v)", got, held, LiveObjects(), before)
	}
	m, err := AllocManaged(ctx, 4096, AttachGlobal)
	must(t, err)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	cudatest.FailCall("cuMemPrefetchAsync", 1, cu.CUDA_ERROR_INVALID_DEVICE)
	var e *Error
	if err := m.Prefetch(s, DeviceLocation(dev)); !errors.As(err, &e) || e.Func != "cuMemPrefetchAsync" || !errors.Is(err, cu.CUDA_ERROR_INVALID_DEVICE) {
		t.Fatalf("Prefetch with the driver failing = %v", err)
	}
	cudatest.FailCall("cuMemAdvise", 1, cu.CUDA_ERROR_INVALID_DEVICE)
	if err := m.Advise(AdviseReadMostly, Location{}); !errors.As(err, &e) || e.Func != "cuMemAdvise" {
		t.Fatalf("Advise with the driver failing = %v", err)
	}
	must(t, m.Close())
}

// TestManagedPrefetchAndAdvice prefetches to the device and to the host on
// a stream and gives every advice, reading each back from the driver.
func TestManagedPrefetchAndAdvice(t *testing.T) {
	dev, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const size = 8 << 20
	m, err := AllocManaged(ctx, size, AttachGlobal)
	must(t, err)
	defer m.Close()
	here := DeviceLocation(dev)

	loc, err := m.LastPrefetchLocation()
	must(t, err)
	if !loc.IsZero() {
		t.Errorf("never prefetched, the last prefetch location is %v", loc)
	}
	must(t, m.Prefetch(s, here))
	if loc, err = m.LastPrefetchLocation(); err != nil || loc != here {
		t.Errorf("after a prefetch to %v the last prefetch location is %v (%v)", here, loc, err)
	}
	must(t, m.PrefetchRange(s, here, size/2, size/2))
	must(t, m.Prefetch(s, HostLocation()))
	must(t, s.Synchronize())
	if loc, err = m.LastPrefetchLocation(); err != nil || !loc.IsHost() {
		t.Errorf("after a prefetch to the host the last prefetch location is %v (%v)", loc, err)
	}

	must(t, m.Advise(AdviseReadMostly, Location{}))
	if rm, err := m.ReadMostly(); err != nil || !rm {
		t.Errorf("after AdviseReadMostly ReadMostly = %v, %v", rm, err)
	}
	must(t, m.Advise(AdviseUnsetReadMostly, Location{}))
	if rm, err := m.ReadMostly(); err != nil || rm {
		t.Errorf("after AdviseUnsetReadMostly ReadMostly = %v, %v", rm, err)
	}
	for _, want := range []Location{here, HostLocation()} {
		must(t, m.Advise(AdvisePreferredLocation, want))
		if loc, err := m.PreferredLocation(); err != nil || loc != want {
			t.Errorf("preferred location %v (%v), want %v", loc, err, want)
		}
	}
	must(t, m.Advise(AdviseUnsetPreferredLocation, Location{}))
	if loc, err := m.PreferredLocation(); err != nil || !loc.IsZero() {
		t.Errorf("preferred location %v (%v) after unsetting it", loc, err)
	}
	must(t, m.Advise(AdviseAccessedBy, here))
	if locs, err := m.AccessedBy(); err != nil || !slices.Contains(locs, here) {
		t.Errorf("accessed by %v (%v), want %v among them", locs, err, here)
	}
	must(t, m.Advise(AdviseUnsetAccessedBy, here))
	if locs, err := m.AccessedBy(); err != nil || slices.Contains(locs, here) {
		t.Errorf("accessed by %v (%v) after unsetting %v", locs, err, here)
	}
	must(t, m.AdviseRange(AdviseReadMostly, Location{}, 0, size/2))
	must(t, m.AdviseRange(AdviseUnsetReadMostly, Location{}, 0, size/2))
}

// TestManagedArguments: ranges, locations and advice are checked before
// the driver, closed handles give ErrClosed.
func TestManagedArguments(t *testing.T) {
	dev, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const size = 1 << 16
	m, err := AllocManaged(ctx, size, AttachGlobal)
	must(t, err)
	defer m.Close()
	here := DeviceLocation(dev)
	var prefetches, advices int
	if cudatest.Active() {
		prefetches, advices = cudatest.Calls("cuMemPrefetchAsync"), cudatest.Calls("cuMemAdvise")
	}
	for what, err := range map[string]error{
		"PrefetchRange offset -1":       m.PrefetchRange(s, here, -1, 16),
		"PrefetchRange 0 bytes":         m.PrefetchRange(s, here, 0, 0),
		"PrefetchRange -1 bytes":        m.PrefetchRange(s, here, 0, -1),
		"PrefetchRange past the end":    m.PrefetchRange(s, here, size-8, 16),
		"PrefetchRange offset past end": m.PrefetchRange(s, here, size+1, 1),
		"PrefetchRange overflowing":     m.PrefetchRange(s, here, 16, math.MaxInt),
		"Prefetch to no location":       m.Prefetch(s, Location{}),
		"Advise 0":                      m.Advise(0, here),
		"Advise 7":                      m.Advise(7, here),
		"AdvisePreferredLocation, none": m.Advise(AdvisePreferredLocation, Location{}),
		"AdviseAccessedBy, none":        m.Advise(AdviseAccessedBy, Location{}),
		"AdviseUnsetAccessedBy, none":   m.Advise(AdviseUnsetAccessedBy, Location{}),
		"AdviseRange overflowing":       m.AdviseRange(AdviseReadMostly, here, math.MaxInt, math.MaxInt),
		"AdviseRange past the end":      m.AdviseRange(AdviseReadMostly, here, 0, size+1),
	} {
		isInvalid(t, what, err)
	}
	if cudatest.Active() {
		if p, a := cudatest.Calls("cuMemPrefetchAsync"), cudatest.Calls("cuMemAdvise"); p != prefetches || a != advices {
			t.Fatalf("refused calls reached the driver: %d prefetches, %d advices", p-prefetches, a-advices)
		}
	}
	closed, err := NewStream(ctx)
	must(t, err)
	must(t, closed.Close())
	if err := m.Prefetch(closed, here); !errors.Is(err, ErrClosed) {
		t.Errorf("Prefetch on a closed stream = %v, want ErrClosed", err)
	}
	c, err := m.Clone()
	must(t, err)
	must(t, c.Close())
	for what, err := range map[string]error{
		"Prefetch":      c.Prefetch(s, here),
		"PrefetchRange": c.PrefetchRange(s, here, 0, 16),
		"Advise":        c.Advise(AdviseReadMostly, Location{}),
		"AccessManaged": AccessManaged(c, func([]byte) error { return nil }),
		"DeviceMemory":  second(c.DeviceMemory()),
		"Clone":         second(c.Clone()),
		"AccessedBy":    second(c.AccessedBy()),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed handle = %v, want ErrClosed", what, err)
		}
	}
	if err := AccessManaged[byte](m, nil); err == nil {
		t.Error("AccessManaged with a nil function succeeded")
	}
}

func second[T any](_ T, err error) error { return err }

// TestAccessManagedHoldsMemory: a Close during AccessManaged waits for the
// function, so its view stays valid.
func TestAccessManagedHoldsMemory(t *testing.T) {
	_, ctx := needManaged(t)
	cudatest.CheckNoLeaks(t)
	m, err := AllocManagedOf[int64](ctx, 512, AttachGlobal)
	must(t, err)
	inside, release, closed := make(chan struct{}), make(chan struct{}), make(chan error)
	done := make(chan error)
	go func() {
		done <- AccessManaged(m, func(v []int64) error {
			close(inside)
			<-release
			for i := range v { // the memory is still allocated
				v[i] = int64(i)
			}
			return nil
		})
	}()
	<-inside
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while AccessManaged's function ran", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	must(t, <-done)
	must(t, <-closed)
	if err := AccessManaged(m, func([]int64) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("AccessManaged after Close = %v, want ErrClosed", err)
	}
}

// TestManagedCleanup: unreachable managed memory is freed by its cleanup.
func TestManagedCleanup(t *testing.T) {
	_, ctx := needManaged(t)
	before := LiveObjects()
	func() {
		m, err := AllocManaged(ctx, 1<<20, AttachGlobal)
		must(t, err)
		_, err = m.DeviceMemory()
		must(t, err)
	}()
	if got := LiveObjects(); got.ManagedMemory != before.ManagedMemory+1 {
		t.Fatalf("live %+v, before %+v", got, before)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if got := LiveObjects(); got == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live %+v after cleanups, want %+v", LiveObjects(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLocationAndAdviceStrings(t *testing.T) {
	var zero Location
	if zero.String() != "no location" || !zero.IsZero() || zero.IsHost() {
		t.Errorf("zero Location: %v", zero)
	}
	dev := Device{raw: 1, ordinal: 1}
	if l := DeviceLocation(dev); l.String() != "cuda device 1" || l.IsZero() || l.IsHost() {
		t.Errorf("DeviceLocation: %v", l)
	} else if d, ok := l.Device(); !ok || d != dev {
		t.Errorf("DeviceLocation.Device() = %v, %v", d, ok)
	}
	if l := HostLocation(); l.String() != "host" || !l.IsHost() {
		t.Errorf("HostLocation: %v", l)
	} else if _, ok := l.Device(); ok {
		t.Error("HostLocation is a device")
	}
	if locationOf(cu.CU_DEVICE_CPU) != HostLocation() || !locationOf(cu.CU_DEVICE_INVALID).IsZero() || locationOf(1) != DeviceLocation(dev) {
		t.Error("locationOf maps the driver's device values wrongly")
	}
	if AdviseAccessedBy.String() != "AdviseAccessedBy" || Advice(9).String() != "Advice(9)" {
		t.Errorf("Advice strings: %v, %v", AdviseAccessedBy, Advice(9))
	}
	// The two ABIs' arguments.
	if HostLocation().cuDevice() != cu.CU_DEVICE_CPU || DeviceLocation(dev).cuDevice() != 1 {
		t.Error("cuDevice")
	}
	if l := HostLocation().cuLocation(); l.Type != 2 {
		t.Errorf("host as a CUmemLocation: %+v", l)
	}
	if l := DeviceLocation(dev).cuLocation(); l.Type != cu.CU_MEM_LOCATION_TYPE_DEVICE || l.Id != 1 {
		t.Errorf("device 1 as a CUmemLocation: %+v", l)
	}
}
