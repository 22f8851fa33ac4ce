// The per-thread marks of the hot calls, shared by the C preambles of
// hot.go (which defines them) and of the launches (launchvals.go,
// launchex.go). See hot.go.

#ifndef GOCUDA_HOT_H
#define GOCUDA_HOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { GOCUDA_HOT_CLOSED1 = -1, GOCUDA_HOT_CLOSED2 = -2, GOCUDA_HOT_UNRESOLVED = -3, GOCUDA_HOT_NOMEM = 2 };
#define GOCUDA_CLOSED_BIT (1ULL << 63) // handle.ops' closedBit

typedef struct {
	_Atomic uint64_t seq; // odd while the owning thread is inside a hot call
	int used;             // owned by a live thread; under gocuda_hot_mu
	char pad[64 - sizeof(uint64_t) - sizeof(int)];
} gocuda_slot;

extern __thread gocuda_slot *gocuda_mine;
gocuda_slot *gocuda_slot_new(void);

// gocuda_hot_fns holds the hot calls' entry points, by gocuda_hot_fn_*,
// and the mode: C statics that the calls read themselves, in one cache
// line read by nothing else, where passing them from Go would load Go
// variables, lines that a driver call just before may have taken out of
// the cache. An entry point is 0 until the driver's are resolved
// (setHotFns, launchProc). The second line holds the stand-ins of the
// tests (launchnop.go).
enum {
	gocuda_hot_fn_event_record,
	gocuda_hot_fn_event_query,
	gocuda_hot_fn_stream_query,
	gocuda_hot_fn_stream_wait_event,
	gocuda_hot_fn_graph_launch,
	gocuda_hot_fn_launch,
	gocuda_hot_fn_standin_hold = 8,
	gocuda_hot_fn_standin_nop,
	gocuda_hot_slots = 16,
};
extern _Atomic uintptr_t gocuda_hot_fns[gocuda_hot_slots];

// GOCUDA_HOT_FN declares fn, the entry point of the hot call i, or
// returns GOCUDA_HOT_UNRESOLVED from the calling function while it is
// unset.
#define GOCUDA_HOT_FN(i)                                                           \
	uintptr_t fn = atomic_load_explicit(&gocuda_hot_fns[i], memory_order_relaxed); \
	if (fn == 0)                                                                   \
		return GOCUDA_HOT_UNRESOLVED;

// gocuda_hot_enter marks the calling thread as inside a hot call.
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

// ops is the address of a handle's ops word, which Go updates atomically.
// The fence of gocuda_hot_enter orders the load after the thread's mark;
// the acquire costs nothing more (on amd64 it is a plain load).
static inline int gocuda_open(uintptr_t ops) {
	return (__atomic_load_n((uint64_t *)ops, __ATOMIC_ACQUIRE) & GOCUDA_CLOSED_BIT) == 0;
}

// GOCUDA_HOT_CALL evaluates call, an int-valued driver call, inside the
// thread's mark, unless the handle whose ops word is at ops1 or ops2 is
// closed.
#define GOCUDA_HOT_CALL(ops1, ops2, call)                      \
	({                                                         \
		gocuda_slot *s_ = gocuda_hot_enter();                  \
		int r_ = GOCUDA_HOT_NOMEM;                             \
		if (s_ != NULL) {                                      \
			if (!gocuda_open(ops1))                            \
				r_ = GOCUDA_HOT_CLOSED1;                       \
			else if (!gocuda_open(ops2))                       \
				r_ = GOCUDA_HOT_CLOSED2;                       \
			else                                               \
				r_ = (call);                                   \
			gocuda_hot_exit(s_);                               \
		}                                                      \
		r_;                                                    \
	})

#endif
