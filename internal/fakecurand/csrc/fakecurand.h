// The fake cuRAND's declarations: the ABI of curand.h as generated/curand's
// z-files describe it (every version of the matrix agrees on what is
// here), and the fake's own structures.
#ifndef FAKECURAND_H
#define FAKECURAND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- curand.h's ABI ----

typedef enum {
	CURAND_STATUS_SUCCESS = 0,
	CURAND_STATUS_VERSION_MISMATCH = 100,
	CURAND_STATUS_NOT_INITIALIZED = 101,
	CURAND_STATUS_ALLOCATION_FAILED = 102,
	CURAND_STATUS_TYPE_ERROR = 103,
	CURAND_STATUS_OUT_OF_RANGE = 104,
	CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
	CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
	CURAND_STATUS_LAUNCH_FAILURE = 201,
	CURAND_STATUS_PREEXISTING_FAILURE = 202,
	CURAND_STATUS_INITIALIZATION_FAILED = 203,
	CURAND_STATUS_ARCH_MISMATCH = 204,
	CURAND_STATUS_INTERNAL_ERROR = 999
} curandStatus_t;

enum {
	RNG_TEST = 0,
	RNG_PSEUDO_DEFAULT = 100,
	RNG_PSEUDO_XORWOW = 101,
	RNG_PSEUDO_MRG32K3A = 121,
	RNG_PSEUDO_MTGP32 = 141,
	RNG_PSEUDO_MT19937 = 142,
	RNG_PSEUDO_PHILOX4_32_10 = 161,
	RNG_QUASI_DEFAULT = 200,
	RNG_QUASI_SOBOL32 = 201,
	RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
	RNG_QUASI_SOBOL64 = 203,
	RNG_QUASI_SCRAMBLED_SOBOL64 = 204
};

enum {
	ORDERING_PSEUDO_BEST = 100,
	ORDERING_PSEUDO_DEFAULT = 101,
	ORDERING_PSEUDO_SEEDED = 102,
	ORDERING_PSEUDO_LEGACY = 103,
	ORDERING_PSEUDO_DYNAMIC = 104,
	ORDERING_QUASI_DEFAULT = 201
};

// libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2.
enum { PROP_MAJOR, PROP_MINOR, PROP_PATCH };

typedef void *cudaStream_t; // a CUstream
typedef struct gen *curandGenerator_t;

// ---- the engines (engines.c) ----

// An engine is one of the bit generators, positioned in its sequence of
// 32-bit numbers.
struct engine {
	int type; // RNG_PSEUDO_*, DEFAULT resolved to XORWOW
	union {
		struct {
			uint32_t key[2];
			uint64_t block;   // the counter of the next block
			uint32_t out[4];  // the current block's numbers
			int used;         // of out; 4: none left
		} philox;
		struct {
			uint32_t v[5];
			uint32_t d;
		} xorwow;
		struct {
			uint64_t s1[3], s2[3];
		} mrg;
		struct {
			uint32_t mt[624];
			int i;
		} mt;
	} u;
};

// engine_start sets e to position offset of seed's sequence of type.
void engine_start(struct engine *e, int type, uint64_t seed, uint64_t offset);
// engine_next returns the next 32-bit number.
uint32_t engine_next(struct engine *e);
// engine_has_offset reports whether the type has cuRAND's offset.
int engine_has_offset(int type);

// ---- generators (generator.c) ----

struct gen {
	int type;
	int host; // curandCreateGeneratorHost: output to host memory
	uint64_t seed, offset;
	int ordering;
	int fresh; // the engine must restart from seed and offset
	struct engine e;
	cudaStream_t stream;
	struct gen *next; // in g_gens
};

// gen_get checks that g is a live generator and locks it; gen_put
// unlocks. Entry points name themselves for the message of a refusal.
curandStatus_t gen_get(struct gen *g);
void gen_put(struct gen *g);
// gen_engine is g's engine, restarted first where seed or offset changed.
struct engine *gen_engine(struct gen *g);

// output delivers bytes of numbers made in buf (malloc'd, given away) to
// out, the user's pointer: copied in stream order on g's stream for a
// device generator, at once for a host one.
curandStatus_t output(struct gen *g, const char *fn, void *out, void *buf, size_t bytes);

// device_memory is the total memory of the current context's device,
// as the fake driver reports it (SIZE_MAX where it cannot say).
size_t device_memory(void);

// note says on standard error why the fake refused a call it does not
// model, naming the call.
void note(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
