// The per-thread marks of the hot calls, shared by the C preambles of
// hot.go (which defines them) and of the launches (launchvals.go,
// launchex.go). See hot.go.

#ifndef GOCUDA_HOT_H
#define GOCUDA_HOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { GOCUDA_HOT_CLOSED1 = -1, GOCUDA_HOT_CLOSED2 = -2, GOCUDA_HOT_NOMEM = 2 };
#define GOCUDA_CLOSED_BIT (1ULL << 63) // handle.ops' closedBit

typedef struct {
	_Atomic uint64_t seq; // odd while the owning thread is inside a hot call
	int used;             // owned by a live thread; under gocuda_hot_mu
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

// ops is the address of a handle's ops word, which Go updates atomically.
static inline int gocuda_open(uintptr_t ops) {
	return (__atomic_load_n((uint64_t *)ops, __ATOMIC_RELAXED) & GOCUDA_CLOSED_BIT) == 0;
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
