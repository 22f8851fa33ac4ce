package main

/*
#include <stdint.h>
#include <time.h>

static uint64_t bc_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef int (*bc_get_t)(uintptr_t *);
typedef int (*bc_ctx_t)(uintptr_t);
typedef int (*bc_pop_t)(uintptr_t *);
typedef int (*bc_create_t)(uintptr_t *, unsigned);
typedef int (*bc_destroy_t)(uintptr_t);

// bc_loop times n iterations of one way of making an event and destroying
// it, in C, and returns nanoseconds per iteration (0 on a driver error):
//   0: create and destroy, the context current (what a C program does)
//   1: cuCtxGetCurrent alone
//   2: push and pop around each of create and destroy, from a thread with
//      no context current (package cuda's bound calls)
//   3: set and unset (cuCtxSetCurrent(ctx), cuCtxSetCurrent(NULL)) instead
//   4: get, then push and pop, as the bound calls do on a bare thread
static double bc_loop(int mode, int n, uintptr_t ctx, uintptr_t get, uintptr_t push, uintptr_t pop,
		uintptr_t set, uintptr_t create, uintptr_t destroy) {
	uintptr_t e, cur, popped;
	uint64_t t = bc_now();
	for (int i = 0; i < n; i++) {
		switch (mode) {
		case 0:
			if (((bc_create_t)create)(&e, 2) || ((bc_destroy_t)destroy)(e)) return 0;
			break;
		case 1:
			if (((bc_get_t)get)(&cur)) return 0;
			break;
		case 2:
			if (((bc_ctx_t)push)(ctx) || ((bc_create_t)create)(&e, 2) || ((bc_pop_t)pop)(&popped)) return 0;
			if (((bc_ctx_t)push)(ctx) || ((bc_destroy_t)destroy)(e) || ((bc_pop_t)pop)(&popped)) return 0;
			break;
		case 3:
			if (((bc_ctx_t)set)(ctx) || ((bc_create_t)create)(&e, 2) || ((bc_ctx_t)set)(0)) return 0;
			if (((bc_ctx_t)set)(ctx) || ((bc_destroy_t)destroy)(e) || ((bc_ctx_t)set)(0)) return 0;
			break;
		case 4:
			((bc_get_t)get)(&cur);
			if (((bc_ctx_t)push)(ctx) || ((bc_create_t)create)(&e, 2) || ((bc_pop_t)pop)(&popped)) return 0;
			((bc_get_t)get)(&cur);
			if (((bc_ctx_t)push)(ctx) || ((bc_destroy_t)destroy)(e) || ((bc_pop_t)pop)(&popped)) return 0;
			break;
		}
	}
	return (double)(bc_now() - t) / n;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// runBindCost measures, in C and from Go, what binding a context costs
// around an event's create and destroy: the driver's own push and pop
// (which no binding that restores the thread's context stack avoids), and
// what package cuda adds over them. Rounds alternate the modes.
func runBindCost() {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()
	runtime.LockOSThread()
	entry := func(name string) C.uintptr_t {
		p, err := cu.Proc(name)
		must("cu.Proc "+name, err)
		return C.uintptr_t(p)
	}
	get, push, pop, set := entry("cuCtxGetCurrent"), entry("cuCtxPushCurrent"), entry("cuCtxPopCurrent"), entry("cuCtxSetCurrent")
	create, destroy := entry("cuEventCreate"), entry("cuEventDestroy")
	raw := C.uintptr_t(ctx.Raw())
	names := []string{"c_create_destroy_current", "c_get_current", "c_push_pop_bare", "c_set_unset_bare", "c_get_push_pop_bare"}
	const rounds, n = 20, 2000
	res := make([][]float64, len(names)+2)
	goBare := func(current bool) float64 {
		if current {
			must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw()))
		}
		t := time.Now()
		for i := 0; i < n; i++ {
			e, err := cuda.NewEvent(ctx)
			must("cuda.NewEvent", err)
			must("Event.Close", e.Close())
		}
		d := float64(time.Since(t).Nanoseconds()) / n
		if current {
			var c cu.CUcontext
			must("cuCtxPopCurrent", cu.CtxPopCurrent(&c))
		}
		return d
	}
	for r := 0; r < rounds; r++ {
		for m := range names {
			cur := m <= 1
			if cur {
				must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw()))
			}
			v := float64(C.bc_loop(C.int(m), n, raw, get, push, pop, set, create, destroy))
			if cur {
				var c cu.CUcontext
				must("cuCtxPopCurrent", cu.CtxPopCurrent(&c))
			}
			if v == 0 {
				must(names[m], fmt.Errorf("driver error"))
			}
			res[m] = append(res[m], v)
		}
		res[len(names)] = append(res[len(names)], goBare(true))
		res[len(names)+1] = append(res[len(names)+1], goBare(false))
	}
	names = append(names, "go_cuda_create_destroy_current", "go_cuda_create_destroy_bare")
	for i, name := range names {
		fmt.Printf("BINDCOST op=%s median=%.1f p25=%.1f p75=%.1f unit=ns/iteration rounds=%d n=%d\n",
			name, median(res[i]), quantile(res[i], 0.25), quantile(res[i], 0.75), rounds, n)
	}
}
