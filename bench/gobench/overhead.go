package main

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>

// The same driver entry points package cu resolved, as C sees them.
static void *gb_proc(const char *api, int cudaVersion) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib) return 0;
	int (*gp)(const char *, void **, int, uint64_t, int *) = dlsym(lib, "cuGetProcAddress_v2");
	void *fn = 0;
	int status = 0;
	if (!gp || gp(api, &fn, cudaVersion, 1, &status) != 0 || status != 0) return 0;
	return fn;
}

// Loops of n calls made from C within one cgo call: C's own cost, on the
// same thread and driver state as the Go loop they are compared with.
static int gb_ctx_loop(void *fn, int n) {
	void *c;
	for (int i = 0; i < n; i++) { int r = ((int (*)(void **))fn)(&c); if (r) return r; }
	return 0;
}
static int gb_record_loop(void *fn, uintptr_t ev, uintptr_t s, int n) {
	for (int i = 0; i < n; i++) { int r = ((int (*)(uintptr_t, uintptr_t))fn)(ev, s); if (r) return r; }
	return 0;
}
static int gb_launch_loop(void *fn, uintptr_t k, uintptr_t s, void **params, int n) {
	for (int i = 0; i < n; i++) {
		int r = ((int (*)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, uintptr_t, void **, void **))fn)(k, 1, 1, 1, 1, 1, 1, 0, s, params, 0);
		if (r) return r;
	}
	return 0;
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// runOverhead measures what a raw binding costs over C, per call, inside one
// process: chunks of a C loop (one cgo call for many driver calls) alternate
// with chunks of the Go loop (one binding call per driver call).
func runOverhead(ptx []byte) {
	r := newRawSetup(ptx)
	s, ev, k := r.stream, r.event, r.k1
	params := kernelArgs(1)

	proc := func(api string) unsafe.Pointer {
		cs := C.CString(api)
		p := C.gb_proc(cs, C.int(cu.HeaderVersion()))
		if p == nil {
			must("resolve "+api, fmt.Errorf("not found"))
		}
		return p
	}
	pCtx, pRec, pLaunch := proc("cuCtxGetCurrent"), proc("cuEventRecord"), proc("cuLaunchKernel")
	var cur cu.CUcontext

	compare := func(op string, chunks, per int, cLoop func(n int) C.int, goCall func() error) {
		var deltas, cs, gos []float64
		timeC := func() float64 {
			t := time.Now()
			if r := cLoop(per); r != 0 {
				must(op+" (C loop)", cu.CUresult(r))
			}
			d := float64(time.Since(t).Nanoseconds()) / float64(per)
			must("cuStreamSynchronize", cu.StreamSynchronize(s))
			return d
		}
		timeGo := func() float64 {
			t := time.Now()
			for i := 0; i < per; i++ {
				must(op, goCall())
			}
			d := float64(time.Since(t).Nanoseconds()) / float64(per)
			must("cuStreamSynchronize", cu.StreamSynchronize(s))
			return d
		}
		for c := 0; c < chunks; c++ {
			var a, b float64
			if c%2 == 0 {
				a, b = timeC(), timeGo()
			} else {
				b, a = timeGo(), timeC()
			}
			cs, gos, deltas = append(cs, a), append(gos, b), append(deltas, b-a)
		}
		fmt.Printf("OVERHEAD op=%s c_median=%.1f go_raw_median=%.1f delta_median=%+.1f delta_p25=%+.1f delta_p75=%+.1f ratio=%.3f unit=ns/op chunks=%d calls_per_chunk=%d\n",
			op, median(cs), median(gos), median(deltas), quantile(deltas, 0.25), quantile(deltas, 0.75), median(gos)/median(cs), chunks, per)
	}
	compare("ctx_get_current", 400, 5000,
		func(n int) C.int { return C.gb_ctx_loop(pCtx, C.int(n)) },
		func() error { return cu.CtxGetCurrent(&cur) })
	compare("event_record", 400, 2000,
		func(n int) C.int { return C.gb_record_loop(pRec, C.uintptr_t(ev), C.uintptr_t(s), C.int(n)) },
		func() error { return cu.EventRecord(ev, s) })
	launchLoop := func(n int) C.int {
		return C.gb_launch_loop(pLaunch, C.uintptr_t(k), C.uintptr_t(s), (*unsafe.Pointer)(params), C.int(n))
	}
	compare("launch_1arg", 100, 2000, launchLoop,
		func() error { return cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, (*unsafe.Pointer)(params), nil) })
	// The same crossing without package cu: a hand-written cgo call per
	// launch. If it costs what the binding costs, the gap is the crossing's.
	compare("launch_1arg_cgo_direct", 100, 2000, launchLoop,
		func() error {
			if r := launchLoop(1); r != 0 {
				return cu.CUresult(r)
			}
			return nil
		})
}
