package cuda

/*
#include <stdint.h>

// Stand-ins for the driver's create, destroy and cuCtxGetCurrent, so that
// BenchmarkLifecycleGoSide measures only this package's part of a create
// and destroy: they do nothing, and the create makes a made-up handle.
static uintptr_t gocuda_stub_ctx;
static int gocuda_get_stub(uintptr_t *c) { *c = gocuda_stub_ctx; return 0; }
static int gocuda_create_stub(uintptr_t *h, unsigned flags) { *h = 0x51ab; return 0; }
static int gocuda_destroy_stub(uint64_t h) { return 0; }

static uintptr_t gocuda_get_stub_addr(uintptr_t ctx) { gocuda_stub_ctx = ctx; return (uintptr_t)gocuda_get_stub; }
static uintptr_t gocuda_create_stub_addr(void) { return (uintptr_t)gocuda_create_stub; }
static uintptr_t gocuda_destroy_stub_addr(void) { return (uintptr_t)gocuda_destroy_stub; }

// The raw side: the two stand-ins through two cgo calls, as a program
// calling cuEventCreate and cuEventDestroy through package cu makes them.
static uintptr_t gocuda_create_stub_call(unsigned flags) { uintptr_t h; gocuda_create_stub(&h, flags); return h; }
static int gocuda_destroy_stub_call(uint64_t h) { return gocuda_destroy_stub(h); }
*/
import "C"

import "github.com/gocuda/gocuda/generated/cu"

// lifecycleStubs returns boundFns whose event and stream creates and
// destroys are the stand-ins, and a cuCtxGetCurrent stand-in that reports
// ctx current.
func lifecycleStubs(f boundFns, ctx cu.CUcontext) (boundFns, uintptr) {
	create, destroy := uintptr(C.gocuda_create_stub_addr()), uintptr(C.gocuda_destroy_stub_addr())
	f.eventCreate, f.eventDestroy = create, destroy
	f.streamCreate, f.streamDestroy = create, destroy
	return f, uintptr(C.gocuda_get_stub_addr(C.uintptr_t(ctx)))
}

func stubCreate() uint64       { return uint64(C.gocuda_create_stub_call(2)) }
func stubDestroy(h uint64) int { return int(C.gocuda_destroy_stub_call(C.uint64_t(h))) }
