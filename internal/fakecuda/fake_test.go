package fakecuda_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// These tests drive the fake through package cu's raw bindings, with
// calls whose signatures are the same for every version tag.

var lib *fakecuda.Lib

const childEnv = "FAKECUDA_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		// Every test runs with the race detector on (race_test.go reads
		// its reports); FAKECUDA_RACE=0 turns it off.
		if os.Getenv(fakecuda.RaceEnv) == "" {
			os.Setenv(fakecuda.RaceEnv, "1")
		}
		path, err := fakecuda.Build("")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Setenv(cu.LibraryEnv, path)
	}
	var err error
	if lib, err = fakecuda.Open(os.Getenv(cu.LibraryEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func is(tb testing.TB, what string, err error, want cu.CUresult) {
	tb.Helper()
	if !errors.Is(err, want) {
		tb.Errorf("%s = %v, want %v", what, err, want)
	}
}

// primary initializes the driver and makes device 0's primary context
// current on the locked calling thread until the test ends.
func primary(t testing.TB) cu.CUcontext {
	t.Helper()
	must(t, cu.Init(0))
	var ctx cu.CUcontext
	must(t, cu.DevicePrimaryCtxRetain(&ctx, 0))
	runtime.LockOSThread()
	must(t, cu.CtxPushCurrent(ctx))
	t.Cleanup(func() {
		var c cu.CUcontext
		must(t, cu.CtxPopCurrent(&c))
		runtime.UnlockOSThread()
		must(t, cu.DevicePrimaryCtxRelease(0))
	})
	return ctx
}

func alloc(t testing.TB, bytes uint64) cu.CUdeviceptr {
	t.Helper()
	var p cu.CUdeviceptr
	must(t, cu.MemAlloc(&p, bytes))
	t.Cleanup(func() { must(t, cu.MemFree(p)) })
	return p
}

func stream(t testing.TB, flags uint32) cu.CUstream {
	t.Helper()
	var s cu.CUstream
	must(t, cu.StreamCreate(&s, flags))
	t.Cleanup(func() { must(t, cu.StreamDestroy(s)) })
	return s
}

func words(t testing.TB, p cu.CUdeviceptr, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	must(t, cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, uint64(n*4)))
	return out
}

func TestBuildIsCached(t *testing.T) {
	a, err := fakecuda.Build("")
	must(t, err)
	start := time.Now()
	b, err := fakecuda.Build("")
	must(t, err)
	if a != b || a != lib.Path() {
		t.Fatalf("builds at %s, %s; loaded %s", a, b, lib.Path())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a cached build took %v", d)
	}
	if _, err := fakecuda.Open(os.Args[0]); err == nil {
		t.Error("Open accepted a file that is not a library")
	}
}

func TestProcAddress(t *testing.T) {
	for _, c := range []struct {
		api     string
		version int
		symbol  string
		status  int
	}{
		{"cuCtxCreate", 13000, "cuCtxCreate_v4", 0},
		{"cuCtxCreate", 12040, "cuCtxCreate_v2", 0},
		{"cuMemAlloc", 11080, "cuMemAlloc_v2", 0},
		{"cuEventElapsedTime", 13000, "cuEventElapsedTime_v2", 0},
		{"cuEventElapsedTime", 12040, "cuEventElapsedTime", 0},
		{"cuStreamGetCtx", 13000, "cuStreamGetCtx", 0},
		{"cuDeviceGetUuid", 13000, "cuDeviceGetUuid_v2", 0},
		{"cuMemAllocManaged", 11080, "cuMemAllocManaged", 0},
		{"cuMemPrefetchAsync", 12040, "cuMemPrefetchAsync", 0},
		{"cuMemPrefetchAsync", 13000, "cuMemPrefetchAsync_v2", 0},
		{"cuMemPrefetchAsync_v2", 12040, "cuMemPrefetchAsync_v2", 0},
		{"cuMemAdvise", 12080, "cuMemAdvise", 0},
		{"cuMemAdvise", 13000, "cuMemAdvise_v2", 0},
		{"cuMemPrefetchAsync_v2", 12000, "", 2},
		{"cuMemAlloc", 3000, "", 2},
		{"cuModuleLoadData", 13000, "cuModuleLoadData", 0},
		{"cuFuncGetParamInfo", 12030, "", 2},
		{"cuMemPoolCreate", 13000, "cuMemPoolCreate", 0},
		{"cuMemPoolCreate", 11010, "", 2},
		{"cuModuleGetGlobal", 13000, "", 1},
	} {
		fn, status, _ := lib.ProcAddress(c.api, c.version)
		want := uintptr(0)
		if c.symbol != "" {
			want = lib.Symbol(c.symbol)
		}
		if fn != want || status != c.status {
			t.Errorf("cuGetProcAddress(%s, %d) = %#x, status %d; want %s (%#x), status %d",
				c.api, c.version, fn, status, c.symbol, want, c.status)
		}
	}
	if v := cu.DriverVersionLoaded(); v != 13000 {
		t.Errorf("driver version %d, want 13000", v)
	}
}

func TestNotInitialized(t *testing.T) {
	if lib.Calls("cuInit") > 0 {
		t.Skip("cuInit already called in this process")
	}
	var n int32
	is(t, "cuDeviceGetCount before cuInit", cu.DeviceGetCount(&n), cu.CUDA_ERROR_NOT_INITIALIZED)
	is(t, "cuInit(1)", cu.Init(1), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.Init(0))
	must(t, cu.DeviceGetCount(&n))
	if n != 1 {
		t.Errorf("%d devices, want 1", n)
	}
}

func TestCurrentContextIsPerThread(t *testing.T) {
	ctx := primary(t)
	other := make(chan cu.CUcontext)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var c cu.CUcontext
		_ = cu.CtxGetCurrent(&c)
		other <- c
	}()
	var c cu.CUcontext
	must(t, cu.CtxGetCurrent(&c))
	if c != ctx {
		t.Fatalf("current %#x, want %#x", c, ctx)
	}
	if c := <-other; c != 0 {
		t.Fatalf("another thread sees current context %#x", c)
	}
	var s cu.CUstream
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- cu.StreamCreate(&s, 0)
	}()
	is(t, "cuStreamCreate on a thread without a context", <-done, cu.CUDA_ERROR_INVALID_CONTEXT)
}

func TestBadHandlesAndPointers(t *testing.T) {
	primary(t)
	p := alloc(t, 4096)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	is(t, "memset past the allocation", cu.MemsetD8Async(p+4000, 1, 200, s), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "memset of a pointer never allocated", cu.MemsetD8(p+8192, 1, 1), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "misaligned 32-bit memset", cu.MemsetD32(p+2, 1, 1), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "query of a forged stream", cu.StreamQuery(cu.CUstream(0x12345678)), cu.CUDA_ERROR_INVALID_HANDLE)
	var dead cu.CUstream
	must(t, cu.StreamCreate(&dead, 0))
	must(t, cu.StreamDestroy(dead))
	is(t, "query of a destroyed stream", cu.StreamQuery(dead), cu.CUDA_ERROR_INVALID_HANDLE)
	var q cu.CUdeviceptr
	is(t, "allocating more than the device has", cu.MemAlloc(&q, 1<<40), cu.CUDA_ERROR_OUT_OF_MEMORY)
	is(t, "freeing inside an allocation", cu.MemFree(p+16), cu.CUDA_ERROR_INVALID_VALUE)
}

func TestMemsetPatternsAndCopies(t *testing.T) {
	primary(t)
	const n = 1000
	p, q := alloc(t, 4*n), alloc(t, 4*n)
	must(t, cu.MemsetD32(p, 0xA1B2C3D4, n))
	must(t, cu.MemsetD16(p+8, 0x1122, 2))
	must(t, cu.MemsetD8(p+4*n-1, 0xEE, 1))
	must(t, cu.MemcpyDtoD(q, p, 4*n))
	got := words(t, q, n)
	if got[0] != 0xA1B2C3D4 || got[2] != 0x11221122 || got[3] != 0xA1B2C3D4 || got[n-1] != 0xEEB2C3D4 {
		t.Fatalf("words %#x %#x %#x %#x", got[0], got[2], got[3], got[n-1])
	}
	src := []uint32{1, 2, 3}
	must(t, cu.MemcpyHtoD(q, unsafe.Pointer(&src[0]), 12))
	if got := words(t, q, 3); got[2] != 3 {
		t.Fatalf("after HtoD: %v", got)
	}
}

// A memset followed by one that covers it is skipped, but only then.
func TestMemsetElision(t *testing.T) {
	primary(t)
	const n = 1 << 20
	p := alloc(t, 4*n)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	for i := range 50 {
		must(t, cu.MemsetD8Async(p, uint8(i), 4*n, s))
	}
	must(t, cu.MemsetD32Async(p+4, 0x01020304, n-2, s)) // covers the middle only
	must(t, cu.StreamSynchronize(s))
	got := words(t, p, n)
	if got[0] != 0x31313131 || got[1] != 0x01020304 || got[n-1] != 0x31313131 {
		t.Fatalf("words %#x %#x %#x", got[0], got[1], got[n-1])
	}
}

// Work runs on the stream's own thread, in order, while the caller goes on.
func TestStreamsAreAsynchronousAndOrdered(t *testing.T) {
	primary(t)
	const bytes = 64 << 20
	p := alloc(t, bytes)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	var start, end cu.CUevent
	must(t, cu.EventCreate(&start, 0))
	defer cu.EventDestroy(start)
	must(t, cu.EventCreate(&end, 0))
	defer cu.EventDestroy(end)
	var untimed cu.CUevent
	must(t, cu.EventCreate(&untimed, uint32(cu.CU_EVENT_DISABLE_TIMING)))
	defer cu.EventDestroy(untimed)
	var flag uint32
	host := (*uint32)(pinned(t, 4))
	must(t, cu.EventRecord(start, s))
	for i := range 200 { // 12.8 GiB: about 27 ms at the modeled 500 GB/s
		must(t, cu.MemsetD8Async(p, uint8(i), bytes, s))
	}
	must(t, cu.LaunchHostFunc(s, cu.CUhostFn(lib.Symbol("fakecuda_hostfn_store")), unsafe.Pointer(host)))
	must(t, cu.EventRecord(end, s))
	must(t, cu.EventRecord(untimed, s))
	is(t, "cuStreamQuery right after enqueueing", cu.StreamQuery(s), cu.CUDA_ERROR_NOT_READY)
	is(t, "cuEventQuery right after enqueueing", cu.EventQuery(end), cu.CUDA_ERROR_NOT_READY)
	var ms float32
	is(t, "cuEventElapsedTime before the end", cu.EventElapsedTime(&ms, start, end), cu.CUDA_ERROR_NOT_READY)
	if atomic.LoadUint32(host) != 0 {
		t.Fatal("the host function ran before the work queued ahead of it")
	}
	must(t, cu.EventSynchronize(end))
	must(t, cu.EventElapsedTime(&ms, start, end))
	if ms < 20 || ms > 10000 {
		t.Errorf("elapsed %v ms for 12.8 GB at 500 GB/s", ms)
	}
	flag = atomic.LoadUint32(host)
	if flag != 1 {
		t.Error("the host function did not run before the event after it")
	}
	must(t, cu.StreamSynchronize(s))
	is(t, "elapsed time of an untimed event", cu.EventElapsedTime(&ms, start, untimed), cu.CUDA_ERROR_INVALID_HANDLE)
	if got := words(t, p, 1); got[0] != 0xC7C7C7C7 {
		t.Errorf("memory after 200 memsets: %#x, want 0xc7c7c7c7", got[0])
	}
}

func pinned(t *testing.T, bytes uint64) unsafe.Pointer {
	t.Helper()
	var p unsafe.Pointer
	must(t, cu.MemAllocHost(&p, bytes))
	t.Cleanup(func() { must(t, cu.MemFreeHost(p)) })
	return p
}

// Work on the NULL stream waits for blocking streams, and theirs for it.
func TestLegacyStreamSynchronizes(t *testing.T) {
	primary(t)
	const bytes = 64 << 20
	p := alloc(t, bytes)
	blocking := stream(t, 0)
	for i := range 20 {
		must(t, cu.MemsetD8Async(p, uint8(i), bytes, blocking))
	}
	must(t, cu.MemsetD8Async(p, 0x5A, bytes, blocking))
	// A synchronous copy runs on the NULL stream: after the memsets.
	if got := words(t, p+bytes-4, 1); got[0] != 0x5A5A5A5A {
		t.Fatalf("the NULL stream did not wait for a blocking stream: %#x", got[0])
	}
	must(t, cu.MemsetD8(p, 0x11, bytes))            // NULL stream, asynchronous for device memory
	must(t, cu.MemsetD8Async(p, 0x22, 4, blocking)) // after it
	must(t, cu.StreamSynchronize(blocking))
	if got := words(t, p, 2); got[0] != 0x22222222 || got[1] != 0x11111111 {
		t.Fatalf("a blocking stream did not wait for the NULL stream: %#x %#x", got[0], got[1])
	}
}

func TestStreamOrderedFree(t *testing.T) {
	primary(t)
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	var p cu.CUdeviceptr
	must(t, cu.MemAllocAsync(&p, 1<<20, s))
	if lib.Live("device") != 1 {
		t.Fatalf("live device allocations %d, want 1", lib.Live("device"))
	}
	host := (*uint32)(pinned(t, 4))
	must(t, cu.MemsetD32Async(p, 9, 1<<18, s))
	must(t, cu.MemcpyDtoHAsync(unsafe.Pointer(host), p, 4, s))
	must(t, cu.MemFreeAsync(p, s))
	must(t, cu.StreamSynchronize(s))
	if *host != 9 || lib.Live("device") != 0 {
		t.Fatalf("copied %d (want 9); live device allocations %d (want 0)", *host, lib.Live("device"))
	}
}

// Destroying a context takes down what was left in it, counted as reaped.
func TestContextEndReaps(t *testing.T) {
	must(t, cu.Init(0))
	lib.Reset()
	var ctx cu.CUcontext
	must(t, cu.DevicePrimaryCtxRetain(&ctx, 0))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, cu.CtxPushCurrent(ctx))
	var s cu.CUstream
	must(t, cu.StreamCreate(&s, 0))
	var ev cu.CUevent
	must(t, cu.EventCreate(&ev, 0))
	var p cu.CUdeviceptr
	must(t, cu.MemAlloc(&p, 1<<20))
	must(t, cu.MemsetD8Async(p, 1, 1<<20, s))
	var popped cu.CUcontext
	must(t, cu.CtxPopCurrent(&popped))
	must(t, cu.DevicePrimaryCtxRelease(0))
	for kind, want := range map[string]int{"streams": 0, "events": 0, "device": 0, "primary": 0, "reaped": 3} {
		if n := lib.Live(kind); n != want {
			t.Errorf("live %s = %d after the context's end, want %d", kind, n, want)
		}
	}
	is(t, "query of a reaped stream", cu.StreamQuery(s), cu.CUDA_ERROR_INVALID_HANDLE)
	lib.Reset()
}

func TestFailAndCount(t *testing.T) {
	primary(t)
	lib.Reset()
	must(t, lib.Fail("cuMemAlloc_v2", 2, int(cu.CUDA_ERROR_OUT_OF_MEMORY)))
	p := alloc(t, 16)
	var q cu.CUdeviceptr
	is(t, "the second cuMemAlloc", cu.MemAlloc(&q, 16), cu.CUDA_ERROR_OUT_OF_MEMORY)
	if q != 0 || lib.Live("device") != 1 || p == 0 {
		t.Fatal("the failed call had an effect")
	}
	_ = alloc(t, 16)
	if n := lib.Calls("cuMemAlloc"); n != 3 {
		t.Errorf("cuMemAlloc called %d times, want 3", n)
	}
	if err := lib.Fail("cuNoSuchFunction", 1, 1); err == nil {
		t.Error("Fail accepted an unknown function")
	}
	if !strings.Contains(strings.Join(lib.Functions(), " "), "cuStreamWaitEvent") {
		t.Error("Functions does not list cuStreamWaitEvent")
	}
}

// The environment's settings are read when the library loads, so they are
// checked in child processes.
func TestEnvironment(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in a child")
	}
	for _, c := range []struct{ env, check string }{
		{"FAKECUDA_FAIL=cuStreamCreate:2:999", "fail"},
		{"FAKECUDA_DRIVER_VERSION=12040", "version"},
		{"FAKECUDA_DEVICES=0", "nodevice"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvironmentChild$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+c.check, c.env, fakecuda.QuickRaceExit())
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Errorf("%s: %v\n%s", c.env, err, out)
		}
	}
}

func TestEnvironmentChild(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "fail":
		primary(t)
		var s cu.CUstream
		must(t, cu.StreamCreate(&s, 0))
		defer cu.StreamDestroy(s)
		is(t, "the second cuStreamCreate", cu.StreamCreate(&s, 0), cu.CUresult(999))
	case "version":
		if v := cu.DriverVersionLoaded(); v != 12040 {
			t.Errorf("driver version %d, want 12040", v)
		}
		if fn, status, _ := lib.ProcAddress("cuCtxCreate", 13000); fn != lib.Symbol("cuCtxCreate_v2") || status != 0 {
			t.Errorf("a 12.4 driver handed out %#x (status %d) for cuCtxCreate, want cuCtxCreate_v2", fn, status)
		}
	case "nodevice":
		is(t, "cuInit without devices", cu.Init(0), cu.CUDA_ERROR_NO_DEVICE)
	default:
		t.Skip("runs as a child of TestEnvironment")
	}
}

// During a global-mode capture, a synchronous copy anywhere is refused and
// breaks the capture; captured work does not run.
func TestCaptureRules(t *testing.T) {
	primary(t)
	p := alloc(t, 4096)
	must(t, cu.MemsetD32(p, 5, 1024))
	s := stream(t, uint32(cu.CU_STREAM_NON_BLOCKING))
	must(t, cu.StreamBeginCapture(s, cu.CU_STREAM_CAPTURE_MODE_GLOBAL))
	is(t, "a second BeginCapture", cu.StreamBeginCapture(s, cu.CU_STREAM_CAPTURE_MODE_GLOBAL), cu.CUDA_ERROR_ILLEGAL_STATE)
	must(t, cu.MemsetD32Async(p, 6, 1024, s)) // captured, not run
	var status cu.CUstreamCaptureStatus
	must(t, cu.StreamIsCapturing(s, &status))
	if status != cu.CU_STREAM_CAPTURE_STATUS_ACTIVE {
		t.Fatalf("capture status %v", status)
	}
	var ev cu.CUevent
	must(t, cu.EventCreate(&ev, 0))
	defer cu.EventDestroy(ev)
	must(t, cu.EventRecord(ev, s))
	is(t, "querying an event recorded in a capture", cu.EventQuery(ev), cu.CUDA_ERROR_CAPTURED_EVENT)
	out := make([]uint32, 1)
	is(t, "a synchronous copy during a global capture",
		cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, 4), cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
	must(t, cu.StreamIsCapturing(s, &status))
	if status != cu.CU_STREAM_CAPTURE_STATUS_INVALIDATED {
		t.Fatalf("capture status after the refused copy: %v", status)
	}
	var g cu.CUgraph
	is(t, "ending an invalidated capture", cu.StreamEndCapture(s, &g), cu.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
	if g != 0 || lib.Live("graphs") != 0 {
		t.Fatal("an invalidated capture made a graph")
	}
	if got := words(t, p, 1); got[0] != 5 {
		t.Fatalf("captured work ran: %d", got[0])
	}
}
