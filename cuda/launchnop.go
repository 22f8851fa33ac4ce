package cuda

/*
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

// gocuda_launch_nop has cuLaunchKernel's signature and does nothing: the
// benchmarks of the Go side of a launch (launch_bench_test.go) put it in
// place of the driver's entry point, so that they run on the fake driver,
// which has no cuLaunchKernel, and measure only this package's work.
static int gocuda_launch_nop(uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, void **params, void **extra) {
	return 0;
}

static uintptr_t gocuda_launch_nop_addr(void) { return (uintptr_t)gocuda_launch_nop; }

// gocuda_launch_ex_nop is the same for cuLaunchKernelEx.
static int gocuda_launch_ex_nop(void *config, uintptr_t f, void **params, void **extra) {
	return 0;
}

static uintptr_t gocuda_launch_ex_nop_addr(void) { return (uintptr_t)gocuda_launch_ex_nop; }

// The recording launches keep the first 8 bytes each of the first
// gocuda_rec_n arguments (every slot Launch passes has 8), for tests
// of what reaches the driver.
static uint64_t gocuda_rec[16];
static int gocuda_rec_n;

static void gocuda_record(void **params) {
	for (int i = 0; i < gocuda_rec_n; i++)
		gocuda_rec[i] = *(uint64_t *)params[i];
}

static int gocuda_launch_rec(uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, void **params, void **extra) {
	gocuda_record(params);
	return 0;
}

static int gocuda_launch_ex_rec(void *config, uintptr_t f, void **params, void **extra) {
	gocuda_record(params);
	return 0;
}

static uintptr_t gocuda_launch_rec_addr(void) { return (uintptr_t)gocuda_launch_rec; }
static uintptr_t gocuda_launch_ex_rec_addr(void) { return (uintptr_t)gocuda_launch_ex_rec; }
static void gocuda_rec_start(int n) { gocuda_rec_n = n; }
static uint64_t gocuda_rec_get(int i) { return gocuda_rec[i]; }

// For the tests of the grace period: a stand-in for a driver call that
// stays inside until gocuda_hot_release, and counts its calls.
static atomic_int gocuda_hot_held, gocuda_hot_calls;
static int gocuda_hot_hold(uintptr_t a) {
	atomic_fetch_add(&gocuda_hot_calls, 1);
	atomic_store(&gocuda_hot_held, 1);
	while (atomic_load(&gocuda_hot_held) == 1)
		sched_yield();
	return 0;
}
static int gocuda_hot_nop(uintptr_t a) { return 0; }
static uintptr_t gocuda_hot_nop_addr(void) { return (uintptr_t)gocuda_hot_nop; }
static uintptr_t gocuda_hot_hold_addr(void) { return (uintptr_t)gocuda_hot_hold; }
static int gocuda_hot_holding(void) { return atomic_load(&gocuda_hot_held) == 1; }
static void gocuda_hot_release(void) { atomic_store(&gocuda_hot_held, 2); }
static int gocuda_hot_hold_calls(void) { return atomic_load(&gocuda_hot_calls); }

// The raw side of BenchmarkHotGoSide: a one- and a two-argument driver
// call through its entry point, as package cu makes them.
static int gocuda_raw_call1(uintptr_t fn, uintptr_t a) { return ((int (*)(uintptr_t))fn)(a); }
static int gocuda_raw_call2(uintptr_t fn, uintptr_t a, uintptr_t b) { return ((int (*)(uintptr_t, uintptr_t))fn)(a, b); }
*/
import "C"

// launchNop returns the address of a C function with cuLaunchKernel's
// signature that returns CUDA_SUCCESS and does nothing (for benchmarks).
func launchNop() uintptr { return uintptr(C.gocuda_launch_nop_addr()) }

// launchExNop is launchNop for cuLaunchKernelEx.
func launchExNop() uintptr { return uintptr(C.gocuda_launch_ex_nop_addr()) }

// launchRecorders return entry points for cuLaunchKernel and
// cuLaunchKernelEx that do nothing but keep the first 8 bytes of each of
// the first n arguments, which recorded then returns (for tests; not safe
// for concurrent use).
func launchRecorders(n int) (launch, launchEx uintptr) {
	C.gocuda_rec_start(C.int(n))
	return uintptr(C.gocuda_launch_rec_addr()), uintptr(C.gocuda_launch_ex_rec_addr())
}

func recorded(i int) uint64 { return uint64(C.gocuda_rec_get(C.int(i))) }

// For tests: a stand-in driver call that stays inside until
// hotReleaseHold, whether one is inside it now, and how many calls it had.
func hotHoldFn() uintptr { return uintptr(C.gocuda_hot_hold_addr()) }
func hotNopFn() uintptr  { return uintptr(C.gocuda_hot_nop_addr()) }

// hotHold and hotNop are the hot calls of the two stand-ins, through the
// slots of gocuda_hot_fns kept for them.
func hotHold() hotFn {
	setHotFn(hotStandInHold, hotHoldFn())
	return hotStandInHold
}

func hotNop() hotFn {
	setHotFn(hotStandInNop, hotNopFn())
	return hotStandInNop
}
func hotHolding() bool  { return C.gocuda_hot_holding() != 0 }
func hotReleaseHold()   { C.gocuda_hot_release() }
func hotHoldCalls() int { return int(C.gocuda_hot_hold_calls()) }

// rawCall1 and rawCall2 call fn(a) and fn(a, b) in one cgo call each, as
// the raw bindings do: the baseline of BenchmarkHotGoSide.
func rawCall1(fn, a uintptr) int32 { return int32(C.gocuda_raw_call1(C.uintptr_t(fn), C.uintptr_t(a))) }
func rawCall2(fn, a, b uintptr) int32 {
	return int32(C.gocuda_raw_call2(C.uintptr_t(fn), C.uintptr_t(a), C.uintptr_t(b)))
}
