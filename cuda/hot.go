package cuda

/*
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The hot calls (Event.Record and Query, Stream.Query and WaitEvent,
// GraphExec.Launch, the kernel launches) hold no reference on their
// handles. Each runs in one C
// function that marks its OS thread as inside a hot call, checks that the
// handles are open and calls the driver. A destroy of an object that has
// seen a hot call first waits for a grace period: until every thread that
// was inside a hot call when the object's last handle closed has left it.
// A reader that finds a handle open is then done with the object before
// the driver destroys it; one that starts later finds the handle closed.
//
// Per call this costs one fence where holding each handle costs two atomic
// read-modify-writes (one to enter, one to exit), four for the two-handle
// calls. The marks are per thread (a thread-local sequence number, odd
// while inside), so that readers on different threads never write a shared
// cache line. It is the scheme of userspace RCU's memory-barrier flavour,
// with the fence on the reader's side.
//
// On the H200's host that fence (a locked instruction) costs 4-9 ns
// (bench/c/hotcost.c).

#include "hot.h"

// Slots come in chunks that are never freed: the grace period reads them
// without a lock, and a thread's exit only marks its slot free for reuse.
#define GOCUDA_SLOTS 63
typedef struct gocuda_chunk {
	struct gocuda_chunk *next; // immutable once the chunk is published
	char pad[64 - sizeof(void *)];
	gocuda_slot slots[GOCUDA_SLOTS];
} gocuda_chunk;

static _Atomic(gocuda_chunk *) gocuda_chunks;
static pthread_mutex_t gocuda_hot_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t gocuda_hot_key;
static pthread_once_t gocuda_hot_once = PTHREAD_ONCE_INIT;
__thread gocuda_slot *gocuda_mine;
_Alignas(64) _Atomic uintptr_t gocuda_hot_fns[gocuda_hot_slots];

// A thread ends outside any hot call, so its slot's sequence is even.
static void gocuda_slot_free(void *p) {
	pthread_mutex_lock(&gocuda_hot_mu);
	((gocuda_slot *)p)->used = 0;
	pthread_mutex_unlock(&gocuda_hot_mu);
}

static void gocuda_hot_init(void) { pthread_key_create(&gocuda_hot_key, gocuda_slot_free); }

gocuda_slot *gocuda_slot_new(void) {
	pthread_once(&gocuda_hot_once, gocuda_hot_init);
	pthread_mutex_lock(&gocuda_hot_mu);
	gocuda_slot *s = NULL;
	for (gocuda_chunk *c = atomic_load(&gocuda_chunks); c != NULL && s == NULL; c = c->next)
		for (int i = 0; i < GOCUDA_SLOTS; i++)
			if (!c->slots[i].used) {
				s = &c->slots[i];
				break;
			}
	if (s == NULL) {
		gocuda_chunk *c = aligned_alloc(64, sizeof *c);
		if (c == NULL) {
			pthread_mutex_unlock(&gocuda_hot_mu);
			return NULL;
		}
		memset(c, 0, sizeof *c);
		c->next = atomic_load(&gocuda_chunks);
		atomic_store_explicit(&gocuda_chunks, c, memory_order_release);
		s = &c->slots[0];
	}
	s->used = 1;
	pthread_mutex_unlock(&gocuda_hot_mu);
	pthread_setspecific(gocuda_hot_key, s);
	gocuda_mine = s;
	return s;
}

static void gocuda_set_hot_fn(int i, uintptr_t fn) {
	atomic_store_explicit(&gocuda_hot_fns[i], fn, memory_order_relaxed);
}

static uintptr_t gocuda_hot_fn(int i) {
	return atomic_load_explicit(&gocuda_hot_fns[i], memory_order_relaxed);
}

// cuEventQuery(a), cuStreamQuery(a).
static int gocuda_hot1(int i, uintptr_t ops, uintptr_t a) {
	GOCUDA_HOT_FN(i);
	return GOCUDA_HOT_CALL(ops, ops, ((int (*)(uintptr_t))fn)(a));
}

// cuEventRecord(a, b), cuStreamWaitEvent(a, b, 0), cuGraphLaunch(a, b).
static int gocuda_hot2(int i, uintptr_t ops1, uintptr_t ops2, uintptr_t a, uintptr_t b) {
	GOCUDA_HOT_FN(i);
	return GOCUDA_HOT_CALL(ops1, ops2, i == gocuda_hot_fn_stream_wait_event
		? ((int (*)(uintptr_t, uintptr_t, unsigned int))fn)(a, b, 0)
		: ((int (*)(uintptr_t, uintptr_t))fn)(a, b));
}

// gocuda_hot_grace returns once every thread that was inside a hot call
// when it was called has left that call.
static void gocuda_hot_grace(void) {
	atomic_thread_fence(memory_order_seq_cst);
	for (gocuda_chunk *c = atomic_load_explicit(&gocuda_chunks, memory_order_acquire); c != NULL; c = c->next)
		for (int i = 0; i < GOCUDA_SLOTS; i++) {
			_Atomic uint64_t *seq = &c->slots[i].seq;
			uint64_t v = atomic_load_explicit(seq, memory_order_acquire);
			if ((v & 1) == 0)
				continue;
			for (int n = 0; atomic_load_explicit(seq, memory_order_acquire) == v; n++)
				if (n > 100)
					sched_yield();
		}
}

*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The results of a hot call that did not reach the driver.
const (
	hotClosed1    = int32(C.GOCUDA_HOT_CLOSED1)    // the first handle is closed
	hotClosed2    = int32(C.GOCUDA_HOT_CLOSED2)    // the second handle is closed
	hotUnresolved = int32(C.GOCUDA_HOT_UNRESOLVED) // the driver's entry points are not resolved yet
)

// hotReady returns h's core for a hot call, marked so that its destroy
// waits for a grace period, or nil when h is nil or zero. Whether h is
// closed is for the C side to check, after its thread's mark.
func hotReady[T any](h *handle[T]) *shared[T] {
	if h == nil || h.core == nil {
		return nil
	}
	if h.core.hot.Load() == 0 {
		h.core.hot.Store(1)
	}
	return h.core
}

// opsAddr is the address of h's ops word, passed to C as an integer: the
// handle lives in the Go heap, which does not move, and the caller keeps
// it alive across the call (runtime.KeepAlive). A pointer would make cgo
// check the whole handle, which holds Go pointers.
func opsAddr[T any](h *handle[T]) C.uintptr_t {
	return C.uintptr_t(uintptr(unsafe.Pointer(&h.ops)))
}

// A hotFn names the entry point of a hot call (gocuda_hot_fns, hot.h).
type hotFn C.int

const (
	hotEventRecord     = hotFn(C.gocuda_hot_fn_event_record)
	hotEventQuery      = hotFn(C.gocuda_hot_fn_event_query)
	hotStreamQuery     = hotFn(C.gocuda_hot_fn_stream_query)
	hotStreamWaitEvent = hotFn(C.gocuda_hot_fn_stream_wait_event)
	hotGraphLaunch     = hotFn(C.gocuda_hot_fn_graph_launch)
	hotLaunch          = hotFn(C.gocuda_hot_fn_launch)       // launchProc
	hotStandInHold     = hotFn(C.gocuda_hot_fn_standin_hold) // launchnop.go
	hotStandInNop      = hotFn(C.gocuda_hot_fn_standin_nop)
)

// hotFnOf returns the entry point of the hot call i, 0 while unset.
func hotFnOf(i hotFn) uintptr { return uintptr(C.gocuda_hot_fn(C.int(i))) }

// setHotFn makes fn the entry point of the hot call i.
func setHotFn(i hotFn, fn uintptr) { C.gocuda_set_hot_fn(C.int(i), C.uintptr_t(fn)) }

// setHotFns gives the C side the hot calls' entry points from f.
func setHotFns(f *boundFns) {
	for i, fn := range [...]uintptr{
		hotEventRecord:     f.eventRecord,
		hotEventQuery:      f.eventQuery,
		hotStreamQuery:     f.streamQuery,
		hotStreamWaitEvent: f.streamWaitEvent,
		hotGraphLaunch:     f.graphLaunch,
	} {
		setHotFn(hotFn(i), fn)
	}
}

// hotResolved resolves the entry points after a hot call found them
// unresolved (hotUnresolved), and reports whether the call may be made
// again; if not, hotError reports why.
func hotResolved(r int32) bool {
	if r != hotUnresolved {
		return false
	}
	// As the lifecycle calls' first procs does (boundProcs calls
	// setHotFns); the error, if any, is hotError's to report.
	_, err := resolveProcs("", "")
	return err == nil
}

// hot1 is a one-handle hot call: fn(raw) unless h is closed.
func hot1[T any](h *handle[T], fn hotFn, raw uintptr) int32 {
	r := int32(C.gocuda_hot1(C.int(fn), opsAddr(h), C.uintptr_t(raw)))
	if hotResolved(r) {
		r = int32(C.gocuda_hot1(C.int(fn), opsAddr(h), C.uintptr_t(raw)))
	}
	runtime.KeepAlive(h) // and so its core
	return r
}

// hot2 is a two-handle hot call: fn(a, b), or fn(a, b, 0) for
// cuStreamWaitEvent, unless h1 or h2 is closed.
func hot2[T1, T2 any](h1 *handle[T1], h2 *handle[T2], fn hotFn, a, b uintptr) int32 {
	r := int32(C.gocuda_hot2(C.int(fn), opsAddr(h1), opsAddr(h2), C.uintptr_t(a), C.uintptr_t(b)))
	if hotResolved(r) {
		r = int32(C.gocuda_hot2(C.int(fn), opsAddr(h1), opsAddr(h2), C.uintptr_t(a), C.uintptr_t(b)))
	}
	runtime.KeepAlive(h1) // and so their cores
	runtime.KeepAlive(h2)
	return r
}

// launchHold is what a launch holds as a hot call (hot.go): the module's
// handle (so that it is not unloaded under the launch) and the stream's,
// with their cores marked so that their destroy waits for it.
type launchHold struct {
	mh *handle[moduleState]
	sh *handle[streamState]
}

// checkLaunch is what every launch checks first, before its arguments:
// the kernel's module and the stream open (ErrClosed, as for any handle),
// then the shape. It returns what the launch holds, with the cores marked
// for a hot call; the C side checks the handles again under the thread's
// mark.
func (k *Kernel) checkLaunch(op string, s *Stream, cfg LaunchConfig) (launchHold, error) {
	mh, sh := k.module(), s.handle()
	h := launchHold{mh: mh, sh: sh}
	// The cores are marked before the C side looks; peek reports a nil,
	// zero or closed handle.
	hotReady(mh)
	hotReady(sh)
	if _, ok := mh.peek(); !ok {
		return h, mh.closedError(op)
	}
	if _, ok := sh.peek(); !ok {
		return h, sh.closedError(op + " (stream)")
	}
	return h, checkConfig(op, cfg)
}

func (h launchHold) ops() (C.uintptr_t, C.uintptr_t) { return opsAddr(h.mh), opsAddr(h.sh) }

func (h launchHold) keepAlive() {
	runtime.KeepAlive(h.mh) // and so their cores
	runtime.KeepAlive(h.sh)
}

// hotGrace waits until no hot call that began before it is still inside
// the driver (see the C side).
func hotGrace() { C.gocuda_hot_grace() }

// hotResult turns the result of a hot call into an error: ErrClosed for a
// closed handle (what names it: "" for the first, e.g. " (stream)" for the
// second), nil for success, the driver's error otherwise.
func hotResult(op, fn, second string, r int32) error {
	if r == 0 {
		return nil
	}
	return hotError(op, fn, second, r)
}

// hotError is hotResult's failure, out of line so that hotResult inlines.
func hotError(op, fn, second string, r int32) error {
	switch r {
	case hotClosed1:
		return closedError(op)
	case hotClosed2:
		return closedError(op + second)
	case hotUnresolved:
		if _, err := resolveProcs(op, fn); err != nil {
			return err
		}
		// Resolved, yet the C side still found no entry point: nothing
		// clears one once set, so this is a bug of this package.
		return newError(op, fn, errors.New("cuda: the hot calls' entry points are still unset after they were resolved"))
	}
	return newError(op, fn, cu.CUresult(r))
}
