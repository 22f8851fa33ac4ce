// cuBLASLt's objects in the fake: descriptors, layouts, preferences and
// the algorithm's encoding.
#ifndef FAKECUBLAS_LT_H
#define FAKECUBLAS_LT_H

#include "fakecublas.h"

struct lthandle {
	int unused;
};

struct desc {
	int compute, scale_type, pointer_mode;
	int transa, transb, transc;
	uint32_t epilogue;
	const void *bias;
	int bias_type; // -1: D's
	int64_t bias_stride;
	const float *ascale, *bscale;
};

struct layout {
	int type, order;
	uint64_t rows, cols;
	int64_t ld;
	int32_t batch;
	int64_t stride;
};

struct pref {
	uint64_t max_workspace;
};

// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t.
typedef struct {
	uint64_t data[8];
} algo_t;

typedef struct {
	algo_t algo;
	size_t workspace_size;
	cublasStatus_t state;
	float waves;
	int reserved[4];
} heuristic_t;

// The fake's one algorithm, id 0, keeps its configuration in the words of
// algo_t (every other word 0), ALGO_MAGIC in the high half of the first:
// data[0] id | magic, data[1] tile | stages, data[2] split-K | reduction,
// data[3] swizzle | custom option, data[4] cluster shape | inner shape.
#define ALGO_MAGIC 0x66616b65u

enum { EPI_DEFAULT = 1, EPI_RELU = 2, EPI_BIAS = 4, EPI_RELU_BIAS = 6, EPI_GELU = 32, EPI_GELU_BIAS = 36 };

// lt_problem checks a multiply's descriptors and returns it as a gemm
// (without its pointers); NULL with the status in *r when refused.
struct gemm *lt_problem(const char *fn, struct lthandle *h, struct desc *d, struct layout *a, struct layout *b, struct layout *c,
                        struct layout *dd, cublasStatus_t *r);
// algo_check refuses a configuration the fake's algorithm does not have.
cublasStatus_t algo_check(const char *fn, const algo_t *a);
void algo_default(algo_t *a);

#endif
