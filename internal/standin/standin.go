// Package standin provides C functions that stand in for driver entry
// points in package cuda's tests and benchmarks: calls that do nothing,
// record their arguments or stay inside until released, and the raw calls
// through an entry point that the benchmarks take as their baseline. Their
// prototypes are those of the fused calls (cuda/zfused.h).
package standin

/*
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include "../../cuda/zfused.h"

static int gocuda_nop1(uintptr_t a) { return 0; }
static int gocuda_nop2(uintptr_t a, uintptr_t b) { return 0; }
static int gocuda_nop3(uintptr_t a, uintptr_t b, unsigned int c) { return 0; }

static int gocuda_launch_nop(uintptr_t f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, uintptr_t stream, void *params, void *extra) {
	return 0;
}

static int gocuda_launch_ex_nop(void *config, uintptr_t f, void *params, void *extra) { return 0; }

// The recording launches keep the first 8 bytes each of the first
// gocuda_rec_n arguments.
static uint64_t gocuda_rec[16];
static int gocuda_rec_n;

static void gocuda_record(void **params) {
	for (int i = 0; i < gocuda_rec_n; i++)
		gocuda_rec[i] = *(uint64_t *)params[i];
}

static int gocuda_launch_rec(uintptr_t f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, uintptr_t stream, void *params, void *extra) {
	gocuda_record((void **)params);
	return 0;
}

static int gocuda_launch_ex_rec(void *config, uintptr_t f, void *params, void *extra) {
	gocuda_record((void **)params);
	return 0;
}

static void gocuda_rec_start(int n) { gocuda_rec_n = n; }
static uint64_t gocuda_rec_get(int i) { return gocuda_rec[i]; }

// A call that stays inside until gocuda_release, and counts its calls.
static atomic_int gocuda_held, gocuda_calls;
static int gocuda_hold(void) {
	atomic_fetch_add(&gocuda_calls, 1);
	atomic_store(&gocuda_held, 1);
	while (atomic_load(&gocuda_held) == 1)
		sched_yield();
	return 0;
}
static int gocuda_hold1(uintptr_t a) { return gocuda_hold(); }
static int gocuda_hold2(uintptr_t a, uintptr_t b) { return gocuda_hold(); }
static int gocuda_holding(void) { return atomic_load(&gocuda_held) == 1; }
static void gocuda_release(void) { atomic_store(&gocuda_held, 2); }
static int gocuda_hold_calls(void) { return atomic_load(&gocuda_calls); }

// Stand-ins for a create, a destroy and cuCtxGetCurrent: they do nothing,
// the create makes a made-up handle and the current context is the one
// given.
static uintptr_t gocuda_stub_ctx;
static int gocuda_get_stub(void *c) { *(uintptr_t *)c = gocuda_stub_ctx; return 0; }
static int gocuda_create_stub(void *h, unsigned int flags) { *(uintptr_t *)h = 0x51ab; return 0; }
static int gocuda_destroy_stub(uintptr_t h) { return 0; }
static void gocuda_set_stub_ctx(uintptr_t ctx) { gocuda_stub_ctx = ctx; }

static uintptr_t gocuda_addr(int i) {
	switch (i) {
	case 0: return (uintptr_t)gocuda_nop1;
	case 1: return (uintptr_t)gocuda_nop2;
	case 2: return (uintptr_t)gocuda_nop3;
	case 3: return (uintptr_t)gocuda_launch_nop;
	case 4: return (uintptr_t)gocuda_launch_ex_nop;
	case 5: return (uintptr_t)gocuda_launch_rec;
	case 6: return (uintptr_t)gocuda_launch_ex_rec;
	case 7: return (uintptr_t)gocuda_hold1;
	case 8: return (uintptr_t)gocuda_hold2;
	case 9: return (uintptr_t)gocuda_get_stub;
	case 10: return (uintptr_t)gocuda_create_stub;
	case 11: return (uintptr_t)gocuda_destroy_stub;
	}
	return 0;
}

// The raw calls: one crossing to the entry point, as the raw bindings
// make it.
static int gocuda_raw1(uintptr_t fn, uintptr_t a) { return ((gocuda_cuStreamQuery_fn)fn)(a); }
static int gocuda_raw2(uintptr_t fn, uintptr_t a, uintptr_t b) { return ((gocuda_cuEventRecord_fn)fn)(a, b); }
static uintptr_t gocuda_raw_create(uintptr_t fn, unsigned int flags) {
	uintptr_t h = 0;
	((gocuda_cuEventCreate_fn)fn)(&h, flags);
	return h;
}
static int gocuda_raw_destroy(uintptr_t fn, uintptr_t h) { return ((gocuda_cuEventDestroy_fn)fn)(h); }

static int gocuda_raw_launch(uintptr_t fn, uintptr_t f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, uintptr_t stream, uintptr_t params) {
	return ((gocuda_cuLaunchKernel_fn)fn)(f, gx, gy, gz, bx, by, bz, shmem, stream, (void *)params, 0);
}

static int gocuda_raw_launch_ex(uintptr_t fn, uintptr_t f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, uintptr_t stream,
		uintptr_t attrs, unsigned int nattrs, uintptr_t params) {
	gocuda_CUlaunchConfig cfg = {gx, gy, gz, bx, by, bz, shmem, stream, (void *)attrs, nattrs};
	return ((gocuda_cuLaunchKernelEx_fn)fn)(&cfg, f, (void *)params, 0);
}
*/
import "C"

import "unsafe"

func addr(i int) uintptr { return uintptr(C.gocuda_addr(C.int(i))) }

// Nop1, Nop2 and Nop3 are entry points that return success and do
// nothing, with the prototypes of cuStreamQuery, cuEventRecord and
// cuStreamWaitEvent.
func Nop1() uintptr { return addr(0) }
func Nop2() uintptr { return addr(1) }
func Nop3() uintptr { return addr(2) }

// LaunchNop and LaunchExNop are cuLaunchKernel and cuLaunchKernelEx
// that return success and do nothing.
func LaunchNop() uintptr   { return addr(3) }
func LaunchExNop() uintptr { return addr(4) }

// LaunchRecorders returns entry points for cuLaunchKernel and
// cuLaunchKernelEx that keep the first 8 bytes of each of the first n
// arguments, which Recorded returns; not safe for concurrent use.
func LaunchRecorders(n int) (launch, launchEx uintptr) {
	C.gocuda_rec_start(C.int(n))
	return addr(5), addr(6)
}

func Recorded(i int) uint64 { return uint64(C.gocuda_rec_get(C.int(i))) }

// Hold1 and Hold2 are entry points of one and two handles that stay
// inside until Release; Holding says whether a call is inside, and
// HoldCalls how many calls there were.
func Hold1() uintptr { return addr(7) }
func Hold2() uintptr { return addr(8) }
func Holding() bool  { return C.gocuda_holding() != 0 }
func Release()       { C.gocuda_release() }
func HoldCalls() int { return int(C.gocuda_hold_calls()) }

// Lifecycle returns cuCtxGetCurrent, create and destroy entry points that
// do nothing: ctx is current, and the create makes a made-up handle.
func Lifecycle(ctx uintptr) (get, create, destroy uintptr) {
	C.gocuda_set_stub_ctx(C.uintptr_t(ctx))
	return addr(9), addr(10), addr(11)
}

// RawCall1 and RawCall2 call fn(a) and fn(a, b).
func RawCall1(fn, a uintptr) int32 { return int32(C.gocuda_raw1(C.uintptr_t(fn), C.uintptr_t(a))) }
func RawCall2(fn, a, b uintptr) int32 {
	return int32(C.gocuda_raw2(C.uintptr_t(fn), C.uintptr_t(a), C.uintptr_t(b)))
}

// RawCreate and RawDestroy call a create fn(&h, flags) and a destroy fn(h).
func RawCreate(fn uintptr, flags uint32) uintptr {
	return uintptr(C.gocuda_raw_create(C.uintptr_t(fn), C.uint(flags)))
}
func RawDestroy(fn, h uintptr) int32 {
	return int32(C.gocuda_raw_destroy(C.uintptr_t(fn), C.uintptr_t(h)))
}

// Dims are a launch's grid, block and shared memory.
type Dims struct{ GX, GY, GZ, BX, BY, BZ, Shmem uint32 }

// RawLaunch calls fn as cuLaunchKernel with params, a kernelParams array
// in C memory.
func RawLaunch(fn, f uintptr, d Dims, stream uintptr, params unsafe.Pointer) int32 {
	return int32(C.gocuda_raw_launch(C.uintptr_t(fn), C.uintptr_t(f), C.uint(d.GX), C.uint(d.GY), C.uint(d.GZ),
		C.uint(d.BX), C.uint(d.BY), C.uint(d.BZ), C.uint(d.Shmem), C.uintptr_t(stream), C.uintptr_t(uintptr(params))))
}

// RawLaunchEx calls fn as cuLaunchKernelEx with nattrs attributes at
// attrs and params, both in memory the caller keeps alive and unmoved.
func RawLaunchEx(fn, f uintptr, d Dims, stream uintptr, attrs unsafe.Pointer, nattrs int, params unsafe.Pointer) int32 {
	return int32(C.gocuda_raw_launch_ex(C.uintptr_t(fn), C.uintptr_t(f), C.uint(d.GX), C.uint(d.GY), C.uint(d.GZ),
		C.uint(d.BX), C.uint(d.BY), C.uint(d.BZ), C.uint(d.Shmem), C.uintptr_t(stream),
		C.uintptr_t(uintptr(attrs)), C.uint(nattrs), C.uintptr_t(uintptr(params))))
}
