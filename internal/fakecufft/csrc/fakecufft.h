// The fake cuFFT's declarations: the ABI of cufft.h as generated/cufft's
// z-files describe it (every version of the matrix agrees on what is
// here), and the fake's own structures.
#ifndef FAKECUFFT_H
#define FAKECUFFT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- cufft.h's ABI ----

typedef enum {
	CUFFT_SUCCESS = 0,
	CUFFT_INVALID_PLAN = 1,
	CUFFT_ALLOC_FAILED = 2,
	CUFFT_INVALID_TYPE = 3,
	CUFFT_INVALID_VALUE = 4,
	CUFFT_INTERNAL_ERROR = 5,
	CUFFT_EXEC_FAILED = 6,
	CUFFT_SETUP_FAILED = 7,
	CUFFT_INVALID_SIZE = 8,
	CUFFT_UNALIGNED_DATA = 9,
	CUFFT_INVALID_DEVICE = 11,
	CUFFT_NO_WORKSPACE = 13,
	CUFFT_NOT_IMPLEMENTED = 14,
	CUFFT_NOT_SUPPORTED = 16
} cufftResult;

enum { T_R2C = 0x2a, T_C2R = 0x2c, T_C2C = 0x29, T_D2Z = 0x6a, T_Z2D = 0x6c, T_Z2Z = 0x69 };

#define CUFFT_FORWARD (-1)
#define CUFFT_INVERSE 1

// libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
enum { PROP_MAJOR, PROP_MINOR, PROP_PATCH };

typedef int cufftHandle;
typedef void *cudaStream_t; // a CUstream

// ---- plans (plan.c) ----

// A side is the input or the output of a transform as it lies in memory:
// element i of point (x0, x1, x2) of transform b is at
// b·dist + ((x0·embed[1] + x1)·embed[2] + x2)·stride, elements of size
// elem, complex or not.
struct side {
	int is_complex;
	size_t elem;
	long long embed[3];
	long long stride, dist;
	long long n[3]; // the points along each axis on this side
};

struct plan {
	int made;
	int type;
	int rank;
	long long n[3]; // sizes, slowest first
	long long batch;
	int basic; // no embeds given: cuFFT's basic layout (padded in place)
	struct side in, out;
	cudaStream_t stream;
	int autoalloc;
	void *work;
};

// plan_get finds handle h's plan and locks the table; plan_put unlocks.
cufftResult plan_get(cufftHandle h, struct plan **p);
void plan_put(void);

// side_extent is the number of elements from a side's first to its last,
// inclusive, over the batch.
long long side_extent(const struct side *s, int rank, long long batch);
// side_dense reports whether a side's elements fill its extent.
int side_dense(const struct side *s, int rank, long long batch);

// ---- execution (exec.c) ----

cufftResult exec(cufftHandle h, const char *fn, int type, void *in, void *out, int dir);

// ---- the transforms (transform.c) ----

// transform computes plan p's transform in direction dir of the input in
// ibuf (laid out as p->in, from its first element) into obuf (as p->out);
// ibuf and obuf may be the same. It returns 0, or -1 when out of memory.
int transform(const struct plan *p, const void *ibuf, void *obuf, int dir);

void note(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
