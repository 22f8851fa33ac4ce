/* A stand-in for cuda/fused.h, for compiling the headers the fused
   calls' generator writes: the same names, doing the least that lets a
   test see what the wrappers do. */
#ifndef GOCUDA_FUSED_H
#define GOCUDA_FUSED_H

#include <stdint.h>

typedef struct {
	uint64_t out;
	int push, call, pop;
} gocuda_res;

/* The number of the stand-in's binds, unbinds and legacy-stream
   synchronizations. */
static int gocuda_binds, gocuda_unbinds, gocuda_syncs;

/* A context of 0 fails to bind, with 201 (CUDA_ERROR_INVALID_CONTEXT). */
#define GOCUDA_BIND(ctx)             \
	gocuda_res r = {0, 0, 0, 0}; \
	if ((ctx) == 0) {            \
		r.push = 201;        \
		return r;            \
	}                            \
	gocuda_binds++

#define GOCUDA_UNBIND() (gocuda_unbinds++)

static inline int gocuda_sync_legacy(void) {
	gocuda_syncs++;
	return 0;
}

/* A handle is closed when its ops word is odd. */
#define GOCUDA_HOT_CALL(ops1, ops2, call)                   \
	({                                                  \
		int r_;                                     \
		if (*(uint64_t *)(ops1) & 1)                \
			r_ = -1;                            \
		else if (*(uint64_t *)(ops2) & 1)           \
			r_ = -2;                            \
		else                                        \
			r_ = (call);                        \
		r_;                                         \
	})

#endif
