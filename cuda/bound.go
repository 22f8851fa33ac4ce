package cuda

/*
// The two calls that pass a Go pointer (the source of a synchronous copy to
// the device, the destination of one from it) do not keep it after they
// return and never call back into Go (the driver calls Go only through
// host functions, on its own threads): noescape, which cgo honours only
// with nocallback, keeps the slice's memory where it is. The other calls
// pass no pointer, and the pair would buy them nothing.
#cgo noescape gocuda_htod
#cgo nocallback gocuda_htod
#cgo noescape gocuda_dtoh
#cgo nocallback gocuda_dtoh
// Frame pointers keep the chain from the driver back to the Go caller
// intact through these functions: the fake driver's race detector walks
// it to say where an operation was queued.
#cgo CFLAGS: -fno-omit-frame-pointer
#include <stddef.h>
#include <stdint.h>

// The lifecycle calls (create, destroy, allocate, free, synchronous copies
// and memsets) need their context current. Doing the push, the call and
// the pop in one C function costs one cgo crossing instead of three, and no
// Go code runs while the context is pushed. Each function returns the three
// results and the handle the call made; the entry points come from package
// cu (cu.Proc), with the ABI of the header the bindings follow.

typedef struct {
	uint64_t out;
	int push, call, pop;
} gocuda_res;

static uintptr_t gocuda_get_fn, gocuda_push_fn, gocuda_pop_fn;

static void gocuda_set_ctx_fns(uintptr_t get, uintptr_t push, uintptr_t pop) {
	gocuda_get_fn = get;
	gocuda_push_fn = push;
	gocuda_pop_fn = pop;
}

// A context already current on the thread (a program that keeps one
// current, as C programs do) needs no push and pop: cuCtxGetCurrent costs
// a few nanoseconds, the pair much more.
#define GOCUDA_PUSH(ctx)                                              \
	gocuda_res r = {0, 0, 0, 0};                                      \
	uintptr_t cur = 0;                                                \
	int bound = 0;                                                    \
	if (((int (*)(uintptr_t *))gocuda_get_fn)(&cur) != 0 || cur != ctx) { \
		r.push = ((int (*)(uintptr_t))gocuda_push_fn)(ctx);           \
		if (r.push != 0)                                              \
			return r;                                                 \
		bound = 1;                                                    \
	}

#define GOCUDA_POP()                                                  \
	do {                                                              \
		uintptr_t popped;                                             \
		if (bound)                                                    \
			r.pop = ((int (*)(uintptr_t *))gocuda_pop_fn)(&popped);   \
	} while (0)

// cuStreamSynchronize(CU_STREAM_LEGACY), after a synchronous copy or
// memset. They run on the context's legacy default stream, and the driver
// returns from some of them (a copy from pageable memory, a device to
// device copy, a memset of device memory) before the device is done: work
// on the non-blocking streams NewStream makes would not wait for them.
static int gocuda_sync_legacy(uintptr_t sync) {
	return sync ? ((int (*)(uintptr_t))sync)(1) : 0;
}

// cuEventCreate(&out, flags), cuStreamCreate(&out, flags).
static gocuda_res gocuda_create(uintptr_t ctx, uintptr_t fn, unsigned int flags) {
	GOCUDA_PUSH(ctx);
	uintptr_t h = 0;
	r.call = ((int (*)(uintptr_t *, unsigned int))fn)(&h, flags);
	r.out = h;
	GOCUDA_POP();
	return r;
}

// cuStreamCreateWithPriority(&out, flags, priority).
static gocuda_res gocuda_create_prio(uintptr_t ctx, uintptr_t fn, unsigned int flags, int prio) {
	GOCUDA_PUSH(ctx);
	uintptr_t h = 0;
	r.call = ((int (*)(uintptr_t *, unsigned int, int))fn)(&h, flags, prio);
	r.out = h;
	GOCUDA_POP();
	return r;
}

// cuMemAlloc(&out, bytes).
static gocuda_res gocuda_alloc(uintptr_t ctx, uintptr_t fn, size_t bytes) {
	GOCUDA_PUSH(ctx);
	uint64_t p = 0;
	r.call = ((int (*)(uint64_t *, size_t))fn)(&p, bytes);
	r.out = p;
	GOCUDA_POP();
	return r;
}

// The destroys, of one handle or address: cuEventDestroy, cuStreamDestroy,
// cuMemFree, cuMemHostUnregister (pointers and CUdeviceptr alike are one
// 64-bit integer register on the LP64 ABIs this package builds for).
static gocuda_res gocuda_destroy(uintptr_t ctx, uintptr_t fn, uint64_t h) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(uint64_t))fn)(h);
	GOCUDA_POP();
	return r;
}

// cuEventDestroy(h), cuStreamDestroy(h) with no context bound: see
// destroyUnbound.
static int gocuda_destroy_unbound(uintptr_t fn, uint64_t h) {
	return ((int (*)(uint64_t))fn)(h);
}

// cuMemHostRegister(p, bytes, flags) of pinned Go memory (hostmem.go).
static gocuda_res gocuda_register(uintptr_t ctx, uintptr_t fn, uintptr_t p, size_t bytes, unsigned int flags) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(uintptr_t, size_t, unsigned int))fn)(p, bytes, flags);
	GOCUDA_POP();
	return r;
}

// cuMemcpyHtoD(dst, src, n), then the legacy stream's synchronize.
static gocuda_res gocuda_htod(uintptr_t ctx, uintptr_t fn, uintptr_t sync, uint64_t dst, const void *src, size_t n) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(uint64_t, const void *, size_t))fn)(dst, src, n);
	if (r.call == 0)
		r.call = gocuda_sync_legacy(sync);
	GOCUDA_POP();
	return r;
}

// cuMemcpyDtoH(dst, src, n).
static gocuda_res gocuda_dtoh(uintptr_t ctx, uintptr_t fn, void *dst, uint64_t src, size_t n) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(void *, uint64_t, size_t))fn)(dst, src, n);
	GOCUDA_POP();
	return r;
}

// cuMemcpyDtoD(dst, src, n) and cuMemsetD8/D16/D32(dst, value, n) (the
// value's narrower C type is passed zero-extended in the same register),
// then the legacy stream's synchronize.
static gocuda_res gocuda_dev3(uintptr_t ctx, uintptr_t fn, uintptr_t sync, uint64_t a, uint64_t b, size_t n) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(uint64_t, uint64_t, size_t))fn)(a, b, n);
	if (r.call == 0)
		r.call = gocuda_sync_legacy(sync);
	GOCUDA_POP();
	return r;
}

static gocuda_res gocuda_memset(uintptr_t ctx, uintptr_t fn, uintptr_t sync, uint64_t dst, unsigned int v, size_t n) {
	GOCUDA_PUSH(ctx);
	r.call = ((int (*)(uint64_t, unsigned int, size_t))fn)(dst, v, n);
	if (r.call == 0)
		r.call = gocuda_sync_legacy(sync);
	GOCUDA_POP();
	return r;
}
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// entry points of the bound calls and the hot calls, resolved once.
type boundFns struct {
	eventCreate, eventDestroy                     uintptr
	streamCreate, streamCreatePrio, streamDestroy uintptr
	memAlloc, memFree                             uintptr
	hostRegister, hostUnregister                  uintptr
	htod, dtoh, dtod, syncStream                  uintptr
	memsetD8, memsetD16, memsetD32                uintptr
	// The hot calls (hot.go).
	eventRecord, eventQuery, streamQuery, streamWaitEvent, graphLaunch uintptr
}

var boundProcs = sync.OnceValues(func() (*boundFns, error) {
	var f boundFns
	var get, push, pop uintptr
	for _, e := range []struct {
		name string
		p    *uintptr
	}{
		{"cuCtxGetCurrent", &get}, {"cuCtxPushCurrent", &push}, {"cuCtxPopCurrent", &pop},
		{"cuEventCreate", &f.eventCreate}, {"cuEventDestroy", &f.eventDestroy},
		{"cuStreamCreate", &f.streamCreate}, {"cuStreamCreateWithPriority", &f.streamCreatePrio},
		{"cuStreamDestroy", &f.streamDestroy},
		{"cuMemAlloc", &f.memAlloc}, {"cuMemFree", &f.memFree},
		{"cuMemHostRegister", &f.hostRegister}, {"cuMemHostUnregister", &f.hostUnregister},
		{"cuMemcpyHtoD", &f.htod}, {"cuMemcpyDtoH", &f.dtoh}, {"cuMemcpyDtoD", &f.dtod},
		{"cuStreamSynchronize", &f.syncStream},
		{"cuMemsetD8", &f.memsetD8}, {"cuMemsetD16", &f.memsetD16}, {"cuMemsetD32", &f.memsetD32},
		{"cuEventRecord", &f.eventRecord}, {"cuEventQuery", &f.eventQuery},
		{"cuStreamQuery", &f.streamQuery}, {"cuStreamWaitEvent", &f.streamWaitEvent},
		{"cuGraphLaunch", &f.graphLaunch},
	} {
		p, err := cu.Proc(e.name)
		if err != nil {
			return nil, err
		}
		*e.p = p
	}
	setCtxFns(ctxFns{get, push, pop})
	setHotFns(&f)
	return &f, nil
})

// ctxFns are the context calls of the bound calls' C side:
// cuCtxGetCurrent, cuCtxPushCurrent and cuCtxPopCurrent.
type ctxFns struct{ get, push, pop uintptr }

// boundCtxFns is what the C side was last given, for the benchmarks that
// put stand-ins in place of the driver's calls.
var boundCtxFns ctxFns

func setCtxFns(f ctxFns) {
	boundCtxFns = f
	C.gocuda_set_ctx_fns(C.uintptr_t(f.get), C.uintptr_t(f.push), C.uintptr_t(f.pop))
}

// procs returns the bound calls' entry points, or the error of op when the
// driver lacks one.
func procs(op, fn string) (*boundFns, error) {
	if f := boundFnsP.Load(); f != nil {
		return f, nil
	}
	return resolveProcs(op, fn)
}

// resolveProcs is procs's first call, out of line so that procs inlines.
func resolveProcs(op, fn string) (*boundFns, error) {
	f, err := boundProcs()
	if err != nil {
		return nil, newError(op, fn, err)
	}
	boundFnsP.Store(f)
	return f, nil
}

// boundFnsP holds boundProcs' entry points once resolved: every lifecycle
// call loads it instead of calling the OnceValues function.
var boundFnsP atomic.Pointer[boundFns]

// settle turns a bound call's results into the handle it made and an
// error, and gives the thread back. The caller locked the thread before
// the call; when the pop failed, the thread's context stack cannot be
// restored and it stays locked to this goroutine (see bind). A handle
// made before a failed pop is returned with the error, for the caller to
// destroy.
func settle(op, fn string, r C.gocuda_res) (uint64, error) {
	switch {
	case r.push != 0:
		runtime.UnlockOSThread()
		return 0, newError(op, "cuCtxPushCurrent", cu.CUresult(r.push))
	case r.pop != 0:
		if r.call != 0 {
			return 0, newError(op, fn, cu.CUresult(r.call))
		}
		return uint64(r.out), newError(op, "cuCtxPopCurrent", cu.CUresult(r.pop))
	}
	runtime.UnlockOSThread()
	if r.call != 0 {
		return 0, newError(op, fn, cu.CUresult(r.call))
	}
	return uint64(r.out), nil
}

func boundCreate(op, fn string, ctx cu.CUcontext, entry uintptr, flags uint32) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, fn, C.gocuda_create(C.uintptr_t(ctx), C.uintptr_t(entry), C.uint(flags)))
}

func boundCreatePrio(op, fn string, ctx cu.CUcontext, entry uintptr, flags uint32, prio int) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, fn, C.gocuda_create_prio(C.uintptr_t(ctx), C.uintptr_t(entry), C.uint(flags), C.int(prio)))
}

func boundAlloc(op string, ctx cu.CUcontext, entry uintptr, bytes int) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, "cuMemAlloc", C.gocuda_alloc(C.uintptr_t(ctx), C.uintptr_t(entry), C.size_t(bytes)))
}

func boundDestroy(op, fn string, ctx cu.CUcontext, entry uintptr, h uint64) error {
	runtime.LockOSThread()
	_, err := settle(op, fn, C.gocuda_destroy(C.uintptr_t(ctx), C.uintptr_t(entry), C.uint64_t(h)))
	return err
}

// destroyUnbound destroys an event or a stream without binding its
// context: the driver finds the context from the handle, and destroys the
// object whatever context the thread has current (driver 580, checked with
// none and with another current). That saves the bound form's
// cuCtxGetCurrent and thread lock, a tenth of an event's create and
// destroy. A driver that wants the context current says
// CUDA_ERROR_INVALID_CONTEXT, and gets the bound form.
func destroyUnbound(op, fn string, ctx cu.CUcontext, entry uintptr, h uint64) error {
	r := cu.CUresult(C.gocuda_destroy_unbound(C.uintptr_t(entry), C.uint64_t(h)))
	switch r {
	case cu.CUDA_SUCCESS:
		return nil
	case cu.CUDA_ERROR_INVALID_CONTEXT:
		return boundDestroy(op, fn, ctx, entry, h)
	}
	return newError(op, fn, r)
}

// boundRegister page-locks pinned Go memory: p is an address (uintptr, not
// a pointer) because the driver keeps it after the call, which the
// runtime.Pinner that holds the memory allows.
func boundRegister(op string, ctx cu.CUcontext, entry uintptr, p uintptr, bytes int, flags uint32) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemHostRegister", C.gocuda_register(C.uintptr_t(ctx), C.uintptr_t(entry), C.uintptr_t(p), C.size_t(bytes), C.uint(flags)))
	return err
}

func boundHtoD(op string, ctx cu.CUcontext, f *boundFns, dst cu.CUdeviceptr, src unsafe.Pointer, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyHtoD", C.gocuda_htod(C.uintptr_t(ctx), C.uintptr_t(f.htod), C.uintptr_t(f.syncStream),
		C.uint64_t(dst), src, C.size_t(n)))
	return err
}

func boundDtoH(op string, ctx cu.CUcontext, f *boundFns, dst unsafe.Pointer, src cu.CUdeviceptr, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyDtoH", C.gocuda_dtoh(C.uintptr_t(ctx), C.uintptr_t(f.dtoh), dst, C.uint64_t(src), C.size_t(n)))
	return err
}

func boundDtoD(op string, ctx cu.CUcontext, f *boundFns, dst, src cu.CUdeviceptr, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyDtoD", C.gocuda_dev3(C.uintptr_t(ctx), C.uintptr_t(f.dtod), C.uintptr_t(f.syncStream),
		C.uint64_t(dst), C.uint64_t(src), C.size_t(n)))
	return err
}

func boundMemset(op, fn string, ctx cu.CUcontext, entry, sync uintptr, dst cu.CUdeviceptr, v uint32, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, fn, C.gocuda_memset(C.uintptr_t(ctx), C.uintptr_t(entry), C.uintptr_t(sync), C.uint64_t(dst), C.uint(v), C.size_t(n)))
	return err
}
