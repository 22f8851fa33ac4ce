// What the fused calls of zfused.h do around a driver's entry point: the
// bound calls make a context current for the call, the hot calls check
// their handles inside the calling thread's mark (hot.go). zfused.h
// includes this file after the entry points' typedefs, which it uses.

#ifndef GOCUDA_FUSED_H
#define GOCUDA_FUSED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

// The bound calls' results: the call's and, when they failed, the push's
// or the pop's, with the handle or address the call made.
typedef struct {
	uint64_t out;
	int push, call, pop;
} gocuda_res;

// The entry points of the context calls, set before any fused call runs
// (setEntries, bound.go).
extern uintptr_t gocuda_ctx_get, gocuda_ctx_push, gocuda_ctx_pop, gocuda_stream_sync;

// gocuda_push makes ctx current on the thread, unless it is current
// already (a program that keeps one current, as C programs do): the check
// costs a few nanoseconds, a push and pop much more. *pushed says whether
// gocuda_pop has a context to pop.
static inline int gocuda_push(uintptr_t ctx, int *pushed) {
	uintptr_t cur = 0;
	*pushed = 0;
	if (((gocuda_cuCtxGetCurrent_fn)gocuda_ctx_get)(&cur) == 0 && cur == ctx)
		return 0;
	int r = ((gocuda_cuCtxPushCurrent_fn)gocuda_ctx_push)(ctx);
	*pushed = r == 0;
	return r;
}

static inline int gocuda_pop(int pushed) {
	uintptr_t popped = 0;
	return pushed ? ((gocuda_cuCtxPopCurrent_fn)gocuda_ctx_pop)(&popped) : 0;
}

// GOCUDA_BIND declares the result r of a bound call and makes ctx
// current, returning r from the function if that failed; GOCUDA_UNBIND
// gives the thread back the context stack it had.
#define GOCUDA_BIND(ctx)                                \
	gocuda_res r = {0, 0, 0, 0};                        \
	int gocuda_pushed_ = 0;                             \
	if ((r.push = gocuda_push(ctx, &gocuda_pushed_)) != 0) \
		return r;

#define GOCUDA_UNBIND() (r.pop = gocuda_pop(gocuda_pushed_))

// gocuda_sync_legacy is cuStreamSynchronize(CU_STREAM_LEGACY), after a
// synchronous copy or memset. Those run on the context's legacy default
// stream, and the driver returns from some of them (a copy from pageable
// memory, a device to device copy, a memset of device memory) before the
// device is done: work on the non-blocking streams NewStream makes would
// not wait for them.
static inline int gocuda_sync_legacy(void) {
	return ((gocuda_cuStreamSynchronize_fn)gocuda_stream_sync)((uintptr_t)1);
}

// The hot calls' marks (hot.go): a thread's sequence number is odd while
// it is inside a hot call.
enum { GOCUDA_HOT_CLOSED1 = -1, GOCUDA_HOT_CLOSED2 = -2, GOCUDA_HOT_NOMEM = 2 };
#define GOCUDA_CLOSED_BIT (1ULL << 63) // handle.ops' closedBit

typedef struct {
	_Atomic uint64_t seq;
	int used; // owned by a live thread; under gocuda_hot_mu
	char pad[64 - sizeof(uint64_t) - sizeof(int)];
} gocuda_slot;

extern __thread gocuda_slot *gocuda_mine;
gocuda_slot *gocuda_slot_new(void);

static inline gocuda_slot *gocuda_hot_enter(void) {
	gocuda_slot *s = gocuda_mine;
	if (s == NULL && (s = gocuda_slot_new()) == NULL)
		return NULL;
	uint64_t v = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, v + 1, memory_order_relaxed);
	// The mark must be visible before the handles' closed bits are read:
	// the grace period reads the marks after the bits were set.
	atomic_thread_fence(memory_order_seq_cst);
	return s;
}

static inline void gocuda_hot_exit(gocuda_slot *s) {
	uint64_t v = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, v + 1, memory_order_release);
}

// ops is the address of a handle's ops word, which Go updates atomically;
// the fence of gocuda_hot_enter orders this load after the thread's mark.
static inline int gocuda_open(uintptr_t ops) {
	return (__atomic_load_n((uint64_t *)ops, __ATOMIC_ACQUIRE) & GOCUDA_CLOSED_BIT) == 0;
}

// GOCUDA_HOT_CALL evaluates call, an int-valued driver call, inside the
// thread's mark, unless the handle whose ops word is at ops1 or ops2 is
// closed.
#define GOCUDA_HOT_CALL(ops1, ops2, call)     \
	({                                        \
		gocuda_slot *s_ = gocuda_hot_enter(); \
		int r_ = GOCUDA_HOT_NOMEM;            \
		if (s_ != NULL) {                     \
			if (!gocuda_open(ops1))           \
				r_ = GOCUDA_HOT_CLOSED1;      \
			else if (!gocuda_open(ops2))      \
				r_ = GOCUDA_HOT_CLOSED2;      \
			else                              \
				r_ = (call);                  \
			gocuda_hot_exit(s_);              \
		}                                     \
		r_;                                   \
	})

#endif
