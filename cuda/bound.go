package cuda

/*
// The two calls that pass a Go pointer (the source of a synchronous copy to
// the device, the destination of one from it) do not keep it after they
// return and never call back into Go (the driver calls Go only through
// host functions, on its own threads): noescape, which cgo honours only
// with nocallback, keeps the slice's memory where it is.
#cgo noescape gocuda_bound_cuMemcpyHtoD
#cgo nocallback gocuda_bound_cuMemcpyHtoD
#cgo noescape gocuda_bound_cuMemcpyDtoH
#cgo nocallback gocuda_bound_cuMemcpyDtoH
// Frame pointers keep the chain from the driver back to the Go caller
// intact through the fused calls: the fake driver's race detector walks
// it to say where an operation was queued.
#cgo CFLAGS: -fno-omit-frame-pointer
#include "zfused.h"

uintptr_t gocuda_ctx_get, gocuda_ctx_push, gocuda_ctx_pop, gocuda_stream_sync;

static void gocuda_set_ctx_fns(uintptr_t get, uintptr_t push, uintptr_t pop, uintptr_t sync) {
	gocuda_ctx_get = get;
	gocuda_ctx_push = push;
	gocuda_ctx_pop = pop;
	gocuda_stream_sync = sync;
}

// bind's two halves: the push, with out saying whether there is a context
// to pop, and the pop.
static gocuda_res gocuda_bind(uintptr_t ctx) {
	gocuda_res r = {0, 0, 0, 0};
	int pushed = 0;
	r.push = gocuda_push(ctx, &pushed);
	r.out = pushed;
	return r;
}

static int gocuda_unbind(uint64_t pushed) { return gocuda_pop((int)pushed); }

// The destroys of an event and a stream with no context bound
// (destroyUnbound).
static int gocuda_unbound_cuEventDestroy(uintptr_t fn, uintptr_t h) { return ((gocuda_cuEventDestroy_fn)fn)(h); }
static int gocuda_unbound_cuStreamDestroy(uintptr_t fn, uintptr_t h) { return ((gocuda_cuStreamDestroy_fn)fn)(h); }
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// A driver call that needs a context current is made in one of two ways,
// both through the same push and pop (fused.h): a fused call of zfused.h
// (the lifecycle calls: create, destroy, allocate, free, synchronous copies
// and memsets) binds the context, calls the entry point and unbinds in one
// cgo crossing, with no Go code run while the context is pushed; bind runs
// a Go function with the context bound, for sequences of calls through
// package cu. Either way the context is pushed only when it is not current
// already, and the thread's context stack is left as it was.

// entries are the driver's entry points that the fused calls take.
type entries struct {
	ctxGet, ctxPush, ctxPop, streamSync           uintptr
	eventCreate, eventDestroy                     uintptr
	streamCreate, streamCreatePrio, streamDestroy uintptr
	memAlloc, memFree                             uintptr
	hostRegister, hostUnregister                  uintptr
	htod, dtoh, dtod                              uintptr
	memsetD8, memsetD16, memsetD32                uintptr
	// The hot calls (hot.go).
	eventRecord, eventQuery, streamQuery, streamWaitEvent, graphLaunch uintptr
	// The launches' entry points are 0 where the driver has none (the
	// fake driver serves no kernel without a registration of its own):
	// launchErr and launchExErr say why, at a launch.
	launch, launchEx       uintptr
	launchErr, launchExErr error
}

// resolveEntries looks up every entry point once per process.
var resolveEntries = sync.OnceValues(func() (*entries, error) {
	var e entries
	for _, x := range []struct {
		name string
		p    *uintptr
	}{
		{"cuCtxGetCurrent", &e.ctxGet}, {"cuCtxPushCurrent", &e.ctxPush}, {"cuCtxPopCurrent", &e.ctxPop},
		{"cuStreamSynchronize", &e.streamSync},
		{"cuEventCreate", &e.eventCreate}, {"cuEventDestroy", &e.eventDestroy},
		{"cuStreamCreate", &e.streamCreate}, {"cuStreamCreateWithPriority", &e.streamCreatePrio},
		{"cuStreamDestroy", &e.streamDestroy},
		{"cuMemAlloc", &e.memAlloc}, {"cuMemFree", &e.memFree},
		{"cuMemHostRegister", &e.hostRegister}, {"cuMemHostUnregister", &e.hostUnregister},
		{"cuMemcpyHtoD", &e.htod}, {"cuMemcpyDtoH", &e.dtoh}, {"cuMemcpyDtoD", &e.dtod},
		{"cuMemsetD8", &e.memsetD8}, {"cuMemsetD16", &e.memsetD16}, {"cuMemsetD32", &e.memsetD32},
		{"cuEventRecord", &e.eventRecord}, {"cuEventQuery", &e.eventQuery},
		{"cuStreamQuery", &e.streamQuery}, {"cuStreamWaitEvent", &e.streamWaitEvent},
		{"cuGraphLaunch", &e.graphLaunch},
	} {
		p, err := cu.Proc(x.name)
		if err != nil {
			return nil, err
		}
		*x.p = p
	}
	e.launch, e.launchErr = cu.Proc("cuLaunchKernel")
	e.launchEx, e.launchExErr = cu.Proc("cuLaunchKernelEx")
	setEntries(&e)
	return &e, nil
})

// installed holds the entry points the fused calls use, once resolved.
var installed atomic.Pointer[entries]

// setEntries makes e the entry points of the fused calls, and returns
// those it replaces.
func setEntries(e *entries) *entries {
	C.gocuda_set_ctx_fns(C.uintptr_t(e.ctxGet), C.uintptr_t(e.ctxPush), C.uintptr_t(e.ctxPop), C.uintptr_t(e.streamSync))
	return installed.Swap(e)
}

// procs returns the entry points, or the error of op (calling fn) when the
// driver lacks one.
func procs(op, fn string) (*entries, error) {
	if e := installed.Load(); e != nil {
		return e, nil
	}
	return resolveProcs(op, fn)
}

// resolveProcs is procs's first call, out of line so that procs inlines.
func resolveProcs(op, fn string) (*entries, error) {
	e, err := resolveEntries()
	if err != nil {
		return nil, newError(op, fn, err)
	}
	return e, nil
}

// bind runs fn with ctx current on the calling OS thread and then restores
// the thread's context stack exactly as it was.
//
// The thread stays locked for the whole sequence because CUDA's current
// context belongs to the OS thread while a goroutine may move between
// threads at any call. Push/pop instead of set never loses a context the
// caller (or a library in the same process) had current.
//
// The stack is restored on every way out of fn: a return, a panic (which
// then goes on) and runtime.Goexit. When the driver refuses to pop, the
// stack cannot be restored: the thread then stays locked to the calling
// goroutine, so that no other goroutine ever runs on it, and the Go runtime
// ends the thread when that goroutine exits.
func bind(op string, ctx cu.CUcontext, fn func() error) error {
	if _, err := procs(op, "cuCtxPushCurrent"); err != nil {
		return err
	}
	runtime.LockOSThread()
	b := C.gocuda_bind(C.uintptr_t(ctx))
	if b.push != 0 {
		runtime.UnlockOSThread()
		return newError(op, "cuCtxPushCurrent", cu.CUresult(b.push))
	}
	returned := false
	defer func() {
		if !returned && C.gocuda_unbind(b.out) == 0 {
			runtime.UnlockOSThread()
		}
	}()
	ferr := fn()
	returned = true
	if r := C.gocuda_unbind(b.out); r != 0 {
		if ferr == nil {
			ferr = newError(op, "cuCtxPopCurrent", cu.CUresult(r))
		}
		return ferr
	}
	runtime.UnlockOSThread()
	return ferr
}

// settle turns a fused call's results into the handle it made and an
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

func cctx(ctx cu.CUcontext) C.uintptr_t { return C.uintptr_t(ctx) }

func boundEventCreate(op string, e *entries, ctx cu.CUcontext, flags uint32) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, "cuEventCreate", C.gocuda_bound_cuEventCreate(C.uintptr_t(e.eventCreate), cctx(ctx), C.uint(flags)))
}

func boundStreamCreate(op string, e *entries, ctx cu.CUcontext, flags uint32) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, "cuStreamCreate", C.gocuda_bound_cuStreamCreate(C.uintptr_t(e.streamCreate), cctx(ctx), C.uint(flags)))
}

func boundStreamCreatePrio(op string, e *entries, ctx cu.CUcontext, flags uint32, prio int) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, "cuStreamCreateWithPriority", C.gocuda_bound_cuStreamCreateWithPriority(C.uintptr_t(e.streamCreatePrio), cctx(ctx), C.uint(flags), C.int(prio)))
}

func boundMemAlloc(op string, e *entries, ctx cu.CUcontext, bytes int) (uint64, error) {
	runtime.LockOSThread()
	return settle(op, "cuMemAlloc", C.gocuda_bound_cuMemAlloc(C.uintptr_t(e.memAlloc), cctx(ctx), C.ulong(bytes)))
}

// destroyEventUnbound and destroyStreamUnbound destroy an event or a
// stream without binding its context: the driver finds the context from
// the handle and destroys the object whatever context the thread has
// current (driver 580, checked with none and with another current). For a
// program with no context current, which every program using only this
// package is, that saves a push and a pop: on the H200, 150-200 ns of an
// event's create and destroy of 450. A driver that wants the context
// current says CUDA_ERROR_INVALID_CONTEXT, and gets the bound form.
func destroyEventUnbound(op string, e *entries, ctx cu.CUcontext, h uint64) error {
	r := cu.CUresult(C.gocuda_unbound_cuEventDestroy(C.uintptr_t(e.eventDestroy), C.uintptr_t(h)))
	switch r {
	case cu.CUDA_SUCCESS:
		return nil
	case cu.CUDA_ERROR_INVALID_CONTEXT:
		return boundEventDestroy(op, e, ctx, h)
	}
	return newError(op, "cuEventDestroy", r)
}

func destroyStreamUnbound(op string, e *entries, ctx cu.CUcontext, h uint64) error {
	r := cu.CUresult(C.gocuda_unbound_cuStreamDestroy(C.uintptr_t(e.streamDestroy), C.uintptr_t(h)))
	switch r {
	case cu.CUDA_SUCCESS:
		return nil
	case cu.CUDA_ERROR_INVALID_CONTEXT:
		return boundStreamDestroy(op, e, ctx, h)
	}
	return newError(op, "cuStreamDestroy", r)
}

func boundEventDestroy(op string, e *entries, ctx cu.CUcontext, h uint64) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuEventDestroy", C.gocuda_bound_cuEventDestroy(C.uintptr_t(e.eventDestroy), cctx(ctx), C.uintptr_t(h)))
	return err
}

func boundStreamDestroy(op string, e *entries, ctx cu.CUcontext, h uint64) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuStreamDestroy", C.gocuda_bound_cuStreamDestroy(C.uintptr_t(e.streamDestroy), cctx(ctx), C.uintptr_t(h)))
	return err
}

func boundMemFree(op string, e *entries, ctx cu.CUcontext, p cu.CUdeviceptr) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemFree", C.gocuda_bound_cuMemFree(C.uintptr_t(e.memFree), cctx(ctx), C.ulonglong(p)))
	return err
}

// boundHostRegister page-locks pinned Go memory, which the driver keeps
// after the call: the runtime.Pinner that holds it allows that.
func boundHostRegister(op string, e *entries, ctx cu.CUcontext, p unsafe.Pointer, bytes int, flags uint32) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemHostRegister", C.gocuda_bound_cuMemHostRegister(C.uintptr_t(e.hostRegister), cctx(ctx), p, C.ulong(bytes), C.uint(flags)))
	return err
}

func boundHostUnregister(op string, e *entries, ctx cu.CUcontext, p unsafe.Pointer) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemHostUnregister", C.gocuda_bound_cuMemHostUnregister(C.uintptr_t(e.hostUnregister), cctx(ctx), p))
	return err
}

func boundHtoD(op string, ctx cu.CUcontext, e *entries, dst cu.CUdeviceptr, src unsafe.Pointer, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyHtoD", C.gocuda_bound_cuMemcpyHtoD(C.uintptr_t(e.htod), cctx(ctx), C.ulonglong(dst), src, C.ulong(n)))
	return err
}

func boundDtoH(op string, ctx cu.CUcontext, e *entries, dst unsafe.Pointer, src cu.CUdeviceptr, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyDtoH", C.gocuda_bound_cuMemcpyDtoH(C.uintptr_t(e.dtoh), cctx(ctx), dst, C.ulonglong(src), C.ulong(n)))
	return err
}

func boundDtoD(op string, ctx cu.CUcontext, e *entries, dst, src cu.CUdeviceptr, n int) error {
	runtime.LockOSThread()
	_, err := settle(op, "cuMemcpyDtoD", C.gocuda_bound_cuMemcpyDtoD(C.uintptr_t(e.dtod), cctx(ctx), C.ulonglong(dst), C.ulonglong(src), C.ulong(n)))
	return err
}

// boundMemset sets n elements of width bytes (1, 2 or 4) at dst to the
// low width bytes of v.
func boundMemset(op string, e *entries, ctx cu.CUcontext, dst cu.CUdeviceptr, width int, v uint32, n int) error {
	runtime.LockOSThread()
	var r C.gocuda_res
	fn := "cuMemsetD32"
	switch width {
	case 1:
		fn = "cuMemsetD8"
		r = C.gocuda_bound_cuMemsetD8(C.uintptr_t(e.memsetD8), cctx(ctx), C.ulonglong(dst), C.uchar(v), C.ulong(n))
	case 2:
		fn = "cuMemsetD16"
		r = C.gocuda_bound_cuMemsetD16(C.uintptr_t(e.memsetD16), cctx(ctx), C.ulonglong(dst), C.ushort(v), C.ulong(n))
	default:
		r = C.gocuda_bound_cuMemsetD32(C.uintptr_t(e.memsetD32), cctx(ctx), C.ulonglong(dst), C.uint(v), C.ulong(n))
	}
	_, err := settle(op, fn, r)
	return err
}
