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
// handles. Each runs in one C function of zfused.h that marks its OS
// thread as inside a hot call, checks that the handles are open and calls
// the driver. A destroy of an object that has
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

#include "zfused.h"

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
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The results of a hot call that did not reach the driver.
const (
	hotClosed1 = int32(C.GOCUDA_HOT_CLOSED1) // the first handle is closed
	hotClosed2 = int32(C.GOCUDA_HOT_CLOSED2) // the second handle is closed
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

// The hot calls, through the entry point fn, unless a handle is closed:
// its raw driver handle follows each handle. Keeping a handle alive keeps
// its core.

func hotEventRecord[E, S any](fn uintptr, e *handle[E], s *handle[S], re, rs uintptr) int32 {
	r := int32(C.gocuda_hot_cuEventRecord(C.uintptr_t(fn), opsAddr(e), opsAddr(s), C.uintptr_t(re), C.uintptr_t(rs)))
	runtime.KeepAlive(e)
	runtime.KeepAlive(s)
	return r
}

func hotEventQuery[E any](fn uintptr, e *handle[E], re uintptr) int32 {
	r := int32(C.gocuda_hot_cuEventQuery(C.uintptr_t(fn), opsAddr(e), opsAddr(e), C.uintptr_t(re)))
	runtime.KeepAlive(e)
	return r
}

func hotStreamQuery[S any](fn uintptr, s *handle[S], rs uintptr) int32 {
	r := int32(C.gocuda_hot_cuStreamQuery(C.uintptr_t(fn), opsAddr(s), opsAddr(s), C.uintptr_t(rs)))
	runtime.KeepAlive(s)
	return r
}

func hotStreamWaitEvent[S, E any](fn uintptr, s *handle[S], e *handle[E], rs, re uintptr) int32 {
	r := int32(C.gocuda_hot_cuStreamWaitEvent(C.uintptr_t(fn), opsAddr(s), opsAddr(e), C.uintptr_t(rs), C.uintptr_t(re), 0))
	runtime.KeepAlive(s)
	runtime.KeepAlive(e)
	return r
}

func hotGraphLaunch[G, S any](fn uintptr, g *handle[G], s *handle[S], rg, rs uintptr) int32 {
	r := int32(C.gocuda_hot_cuGraphLaunch(C.uintptr_t(fn), opsAddr(g), opsAddr(s), C.uintptr_t(rg), C.uintptr_t(rs)))
	runtime.KeepAlive(g)
	runtime.KeepAlive(s)
	return r
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
	}
	return newError(op, fn, cu.CUresult(r))
}
