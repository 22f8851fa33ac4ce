// cublasLtMatmul and its algorithm: the heuristic, the algorithm ids,
// their capabilities and configuration, and the check. The fake has one
// algorithm (id 0) for every problem it models, which needs no workspace;
// its configuration can be read and set as cuBLASLt's can, but only the
// defaults (no tile or stage choice, no split-K, no swizzling, no custom
// option; any cluster shape) pass cublasLtMatmulAlgoCheck.
#include "lt.h"

#include <stdlib.h>
#include <string.h>

// types_ok reports whether the fake models a multiply of these types, as
// cuBLASLt's table of supported types allows it, setting *tf for TF32.
static cublasStatus_t types_ok(const char *fn, int compute, int scale, int at, int bt, int ct, int dt) {
	int fp8a = at == R_8F_E4M3 || at == R_8F_E5M2, fp8b = bt == R_8F_E4M3 || bt == R_8F_E5M2;
	switch (compute) {
	case COMPUTE_16F:
	case COMPUTE_16F_PEDANTIC:
		if ((scale != R_16F && scale != R_32F) || at != R_16F || bt != R_16F || ct != R_16F || dt != R_16F)
			return not_supported(fn, "these types with CUBLAS_COMPUTE_16F");
		return CUBLAS_STATUS_SUCCESS;
	case COMPUTE_64F:
	case COMPUTE_64F_PEDANTIC:
		if (scale != R_64F || at != R_64F || bt != R_64F || ct != R_64F || dt != R_64F)
			return not_supported(fn, "these types with CUBLAS_COMPUTE_64F");
		return CUBLAS_STATUS_SUCCESS;
	case COMPUTE_32F:
	case COMPUTE_32F_PEDANTIC:
	case COMPUTE_32F_FAST_16F:
	case COMPUTE_32F_FAST_16BF:
	case COMPUTE_32F_FAST_TF32:
		break;
	default:
		return not_supported(fn, "this compute type");
	}
	if (scale != R_32F)
		return not_supported(fn, "a scale type other than CUDA_R_32F with a float32 compute type");
	if (ct != dt || (dt != R_32F && dt != R_16F && dt != R_16BF))
		return not_supported(fn, "these C and D types");
	if (fp8a || fp8b) {
		if (!fp8a || !fp8b || (at == R_8F_E5M2 && bt == R_8F_E5M2))
			return not_supported(fn, "an FP8 product other than E4M3×E4M3, E4M3×E5M2 or E5M2×E4M3");
		return CUBLAS_STATUS_SUCCESS;
	}
	if (at != bt || (at != R_32F && at != R_16F && at != R_16BF))
		return not_supported(fn, "these A and B types");
	if (dt != R_32F && dt != at)
		return not_supported(fn, "a D of another narrow type than A's");
	if (at == R_32F && dt != R_32F)
		return not_supported(fn, "float32 inputs with a narrow D");
	return CUBLAS_STATUS_SUCCESS;
}

static struct operand operand_of(const struct layout *l) {
	return (struct operand){.type = l->type, .row_order = l->order == 1, .rows = (int64_t)l->rows, .cols = (int64_t)l->cols,
	                        .ld = l->ld, .stride = l->batch > 1 ? l->stride : 0};
}

struct gemm *lt_problem(const char *fn, struct lthandle *h, struct desc *d, struct layout *a, struct layout *b, struct layout *c,
                        struct layout *dd, cublasStatus_t *r) {
	*r = CUBLAS_STATUS_SUCCESS;
	if (!reg_has(K_LTHANDLE, h)) {
		*r = set_error(CUBLAS_STATUS_NOT_INITIALIZED, "%s: %p is not a live cuBLASLt handle", fn, (void *)h);
		return NULL;
	}
	if (!reg_has(K_DESC, d) || !reg_has(K_LAYOUT, a) || !reg_has(K_LAYOUT, b) || !reg_has(K_LAYOUT, c) || !reg_has(K_LAYOUT, dd)) {
		*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: a descriptor or layout is not live", fn);
		return NULL;
	}
	if ((*r = types_ok(fn, d->compute, d->scale_type, a->type, b->type, c->type, dd->type)) != CUBLAS_STATUS_SUCCESS)
		return NULL;
	int fp8 = a->type == R_8F_E4M3 || a->type == R_8F_E5M2;
	const struct layout *ls[] = {a, b, c, dd};
	for (int i = 0; i < 4; i++) {
		if (ls[i]->order != 0 && ls[i]->order != 1) {
			*r = not_supported(fn, "a layout order other than CUBLASLT_ORDER_COL and CUBLASLT_ORDER_ROW");
			return NULL;
		}
		if (ls[i]->batch < 1 || ls[i]->rows > INT64_MAX / 2 || ls[i]->cols > INT64_MAX / 2) {
			*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: a layout of %llu×%llu, batch %d", fn, (unsigned long long)ls[i]->rows,
			               (unsigned long long)ls[i]->cols, ls[i]->batch);
			return NULL;
		}
	}
	if (d->transa < OP_N || d->transa > OP_C || d->transb < OP_N || d->transb > OP_C || d->transc != OP_N) {
		*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: operations %d, %d and %d (C's must be N)", fn, d->transa, d->transb, d->transc);
		return NULL;
	}
	if (fp8 && (d->transa != OP_T || d->transb != OP_N || a->order != 0 || b->order != 0)) {
		*r = not_supported(fn, "an FP8 product other than column-order A transposed and B not (TN)");
		return NULL;
	}
	switch (d->epilogue) {
	case EPI_DEFAULT:
	case EPI_RELU:
	case EPI_BIAS:
	case EPI_RELU_BIAS:
	case EPI_GELU:
	case EPI_GELU_BIAS:
		break;
	default:
		*r = not_supported(fn, "this epilogue");
		return NULL;
	}
	if (d->pointer_mode != POINTER_HOST && d->pointer_mode != POINTER_DEVICE) {
		*r = not_supported(fn, "this pointer mode");
		return NULL;
	}
	int batch = dd->batch;
	if ((a->batch != batch && a->batch != 1) || (b->batch != batch && b->batch != 1) || (c->batch != batch && c->batch != 1)) {
		*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: batch counts %d, %d, %d and %d", fn, a->batch, b->batch, c->batch, dd->batch);
		return NULL;
	}
	struct gemm *g = gemm_new();
	if (g == NULL) {
		*r = set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
		return NULL;
	}
	g->opa = d->transa, g->opb = d->transb;
	g->a = operand_of(a), g->b = operand_of(b), g->c = operand_of(c), g->d = operand_of(dd);
	g->m = (int64_t)dd->rows, g->n = (int64_t)dd->cols;
	g->k = d->transa == OP_N ? (int64_t)a->cols : (int64_t)a->rows;
	g->batch = batch;
	g->scale_type = d->scale_type;
	g->tf32 = d->compute == COMPUTE_32F_FAST_TF32 && a->type == R_32F;
	g->epilogue = (int)d->epilogue;
	g->bias_type = d->bias_type >= 0 ? d->bias_type : dd->type;
	// cuBLASLt's FP8 multiplies take a bfloat16 bias for a float32 D, and
	// one of D's type otherwise.
	if (fp8 && (d->epilogue & EPI_BIAS) && g->bias_type != (dd->type == R_32F ? R_16BF : dd->type)) {
		*r = not_supported(fn, "this bias type with FP8 inputs");
		free(g);
		return NULL;
	}
	g->bias_stride = d->bias_stride;
	// The shapes, as gemm_queue will check them with the pointers.
	int64_t ar = g->opa == OP_N ? g->m : g->k, br = g->opb == OP_N ? g->k : g->n, bc = g->opb == OP_N ? g->n : g->k;
	if (g->a.rows != ar || g->b.rows != br || g->b.cols != bc || g->c.rows != g->m || g->c.cols != g->n) {
		*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: A %lld×%lld (op %d), B %lld×%lld (op %d), C %lld×%lld and D %lld×%lld do not multiply",
		               fn, (long long)g->a.rows, (long long)g->a.cols, g->opa, (long long)g->b.rows, (long long)g->b.cols, g->opb,
		               (long long)g->c.rows, (long long)g->c.cols, (long long)g->m, (long long)g->n);
		free(g);
		return NULL;
	}
	for (int i = 0; i < 4; i++) {
		const struct layout *l = ls[i];
		uint64_t inner = l->order == 1 ? l->cols : l->rows;
		if (l->ld < 1 || (uint64_t)l->ld < inner) {
			*r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: a layout of %llu×%llu has leading dimension %lld", fn,
			               (unsigned long long)l->rows, (unsigned long long)l->cols, (long long)l->ld);
			free(g);
			return NULL;
		}
	}
	return g;
}

void algo_default(algo_t *a) {
	memset(a, 0, sizeof *a);
	a->data[0] = (uint64_t)ALGO_MAGIC << 32;
	a->data[2] = 1; // split-K 1, reduction none
}

static int is_algo(const algo_t *a) { return a != NULL && (uint32_t)(a->data[0] >> 32) == ALGO_MAGIC; }

cublasStatus_t algo_check(const char *fn, const algo_t *a) {
	if (!is_algo(a))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: the algorithm is not one of the fake cuBLASLt's", fn);
	uint32_t id = (uint32_t)a->data[0], tile = (uint32_t)a->data[1], stages = (uint32_t)(a->data[1] >> 32);
	uint32_t splitk = (uint32_t)a->data[2], reduction = (uint32_t)(a->data[2] >> 32);
	if (id != 0 || tile != 0 || stages != 0 || splitk > 1 || reduction != 0 || a->data[3] != 0)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: a configuration the fake's algorithm lacks (tile %u, stages %u, split-K %u, reduction %u, swizzle %u, custom %u)",
		                 fn, tile, stages, splitk, reduction, (uint32_t)a->data[3], (uint32_t)(a->data[3] >> 32));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(struct lthandle *h, struct desc *d, struct layout *a, struct layout *b,
                                                     struct layout *c, struct layout *dd, struct pref *p, int requested,
                                                     heuristic_t *results, int *returned) {
	const char *fn = "cublasLtMatmulAlgoGetHeuristic";
	if (requested <= 0 || results == NULL || returned == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %d results asked into %p", fn, requested, (void *)results);
	*returned = 0;
	if (!reg_has(K_PREF, p))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %p is not a live preference", fn, (void *)p);
	cublasStatus_t r;
	struct gemm *g = lt_problem(fn, h, d, a, b, c, dd, &r);
	if (g == NULL)
		return r;
	free(g);
	memset(&results[0], 0, sizeof results[0]);
	algo_default(&results[0].algo);
	results[0].state = CUBLAS_STATUS_SUCCESS;
	results[0].waves = 1;
	*returned = 1;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(struct lthandle *h, struct desc *d, struct layout *a, struct layout *b, struct layout *c,
                                              struct layout *dd, const algo_t *algo, heuristic_t *result) {
	const char *fn = "cublasLtMatmulAlgoCheck";
	if (result == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL result", fn);
	cublasStatus_t r;
	struct gemm *g = lt_problem(fn, h, d, a, b, c, dd, &r);
	if (g == NULL)
		return r;
	free(g);
	if ((r = algo_check(fn, algo)) != CUBLAS_STATUS_SUCCESS)
		return r;
	memset(result, 0, sizeof *result);
	result->algo = *algo;
	result->state = CUBLAS_STATUS_SUCCESS;
	result->waves = 1;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(struct lthandle *h, int compute, int scale, int at, int bt, int ct, int dt, int requested,
                                               int *ids, int *returned) {
	const char *fn = "cublasLtMatmulAlgoGetIds";
	if (!reg_has(K_LTHANDLE, h))
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "%s: %p is not a live cuBLASLt handle", fn, (void *)h);
	if (requested <= 0 || ids == NULL || returned == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %d ids asked into %p", fn, requested, (void *)ids);
	*returned = 0;
	if (types_ok(fn, compute, scale, at, bt, ct, dt) == CUBLAS_STATUS_SUCCESS) {
		ids[0] = 0;
		*returned = 1;
	}
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoInit(struct lthandle *h, int compute, int scale, int at, int bt, int ct, int dt, int id, algo_t *algo) {
	const char *fn = "cublasLtMatmulAlgoInit";
	if (!reg_has(K_LTHANDLE, h))
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "%s: %p is not a live cuBLASLt handle", fn, (void *)h);
	if (algo == NULL || id != 0)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: algorithm id %d (the fake has only 0)", fn, id);
	cublasStatus_t r = types_ok(fn, compute, scale, at, bt, ct, dt);
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	algo_default(algo);
	return CUBLAS_STATUS_SUCCESS;
}

// CUBLASLT_ALGO_CAP_*: what the fake's algorithm can do, each a number of
// 4 or 8 bytes; the tile and stage lists are empty.
EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const algo_t *algo, int a, void *buf, size_t n, size_t *written) {
	const char *fn = "cublasLtMatmulAlgoCapGetAttribute";
	if (!is_algo(algo))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: the algorithm is not one of the fake cuBLASLt's", fn);
	uint64_t v = 0;
	size_t size = 4;
	switch (a) {
	case 0:  // SPLITK_SUPPORT
	case 1:  // REDUCTION_SCHEME_MASK
	case 2:  // CTA_SWIZZLING_SUPPORT
	case 5:  // UPLO_SUPPORT
	case 7:  // CUSTOM_OPTION_MAX
	case 10: // CUSTOM_MEMORY_ORDER
	case 14: // LD_NEGATIVE
		break;
	case 3: // STRIDED_BATCH_SUPPORT
	case 4: // OUT_OF_PLACE_RESULT_SUPPORT
		v = 1;
		break;
	case 11: // POINTER_MODE_MASK: host and device
		v = 3;
		break;
	case 12: // EPILOGUE_MASK
		v = EPI_DEFAULT | EPI_RELU | EPI_BIAS | EPI_GELU;
		break;
	case 15: // NUMERICAL_IMPL_FLAGS
		size = 8;
		break;
	case 16: // MIN_ALIGNMENT_A_BYTES … D
	case 17:
	case 18:
	case 19:
		v = 1;
		break;
	case 6:  // TILE_IDS
	case 13: // STAGES_IDS
		if (written == NULL)
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
		*written = 0;
		return CUBLAS_STATUS_SUCCESS;
	default:
		return not_supported(fn, "this CUBLASLT_ALGO_CAP attribute");
	}
	if (n == 0 && buf == NULL) {
		if (written == NULL)
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: no buffer and no size pointer", fn);
		*written = size;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (buf == NULL || n < size)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: attribute %d takes %zu bytes, given %zu", fn, a, size, n);
	if (size == 4) {
		uint32_t w = (uint32_t)v;
		memcpy(buf, &w, 4);
	} else {
		memcpy(buf, &v, 8);
	}
	if (written != NULL)
		*written = size;
	return CUBLAS_STATUS_SUCCESS;
}

// config finds attribute a of CUBLASLT_ALGO_CONFIG_* in algo: its word,
// bit offset and size in bytes.
static int config(int a, int *word, int *shift, size_t *size) {
	static const struct {
		int word, shift, size;
	} f[] = {
	    {0, 0, 4},  // ID
	    {1, 0, 4},  // TILE_ID
	    {2, 0, 4},  // SPLITK_NUM
	    {2, 32, 4}, // REDUCTION_SCHEME
	    {3, 0, 4},  // CTA_SWIZZLING
	    {3, 32, 4}, // CUSTOM_OPTION
	    {1, 32, 4}, // STAGES_ID
	    {4, 16, 2}, // INNER_SHAPE_ID
	    {4, 0, 2},  // CLUSTER_SHAPE_ID
	};
	if (a < 0 || a >= (int)(sizeof f / sizeof f[0]))
		return 0;
	*word = f[a].word, *shift = f[a].shift, *size = (size_t)f[a].size;
	return 1;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(algo_t *algo, int a, const void *buf, size_t n) {
	const char *fn = "cublasLtMatmulAlgoConfigSetAttribute";
	int word, shift;
	size_t size;
	if (!is_algo(algo))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: the algorithm is not one of the fake cuBLASLt's", fn);
	if (!config(a, &word, &shift, &size))
		return not_supported(fn, "this CUBLASLT_ALGO_CONFIG attribute");
	if (a == 0)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: CUBLASLT_ALGO_CONFIG_ID is read-only", fn);
	if (buf == NULL || n != size)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: attribute %d takes %zu bytes, given %zu", fn, a, size, n);
	uint64_t v = 0;
	memcpy(&v, buf, size);
	uint64_t mask = (size == 4 ? 0xffffffffull : 0xffffull) << shift;
	algo->data[word] = (algo->data[word] & ~mask) | (v << shift);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const algo_t *algo, int a, void *buf, size_t n, size_t *written) {
	const char *fn = "cublasLtMatmulAlgoConfigGetAttribute";
	int word, shift;
	size_t size;
	if (!is_algo(algo))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: the algorithm is not one of the fake cuBLASLt's", fn);
	if (!config(a, &word, &shift, &size))
		return not_supported(fn, "this CUBLASLT_ALGO_CONFIG attribute");
	if (n == 0 && buf == NULL) {
		if (written == NULL)
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: no buffer and no size pointer", fn);
		*written = size;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (buf == NULL || n < size)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: attribute %d takes %zu bytes, given %zu", fn, a, size, n);
	uint64_t v = algo->data[word] >> shift;
	if (size == 4)
		v &= 0xffffffffull;
	else
		v &= 0xffffull;
	memcpy(buf, &v, size);
	if (written != NULL)
		*written = size;
	return CUBLAS_STATUS_SUCCESS;
}

static int same_layout(const struct layout *x, const struct layout *y) {
	return x->type == y->type && x->order == y->order && x->rows == y->rows && x->cols == y->cols && x->ld == y->ld &&
	       x->batch == y->batch && (x->batch == 1 || x->stride == y->stride);
}

// cublasLtMatmul runs the fake's algorithm whatever algo's configuration
// (once algo_check has taken it); NULL is the heuristic's choice. The
// workspace is not used.
EXPORT cublasStatus_t cublasLtMatmul(struct lthandle *h, struct desc *d, const void *alpha, const void *a, struct layout *ad, const void *b,
                                     struct layout *bd, const void *beta, const void *c, struct layout *cd, void *dp, struct layout *dd,
                                     const algo_t *algo, void *workspace, size_t workspace_size, cudaStream_t stream) {
	(void)workspace, (void)workspace_size;
	const char *fn = "cublasLtMatmul";
	cublasStatus_t r;
	struct gemm *g = lt_problem(fn, h, d, ad, bd, cd, dd, &r);
	if (g == NULL)
		return r;
	if (algo != NULL && (r = algo_check(fn, algo)) != CUBLAS_STATUS_SUCCESS) {
		free(g);
		return r;
	}
	if (alpha == NULL || beta == NULL)
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: alpha or beta is NULL", fn);
	else if ((d->epilogue & EPI_BIAS) && d->bias == NULL)
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: an epilogue with a bias, and no CUBLASLT_MATMUL_DESC_BIAS_POINTER", fn);
	else if (c == dp && !same_layout(cd, dd))
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: C is D in place, but their layouts differ", fn);
	if (r != CUBLAS_STATUS_SUCCESS) {
		free(g);
		return r;
	}
	if (d->pointer_mode == POINTER_DEVICE) {
		g->dalpha = alpha, g->dbeta = beta;
	} else {
		g->alpha = scalar(alpha, g->scale_type), g->beta = scalar(beta, g->scale_type);
	}
	g->a.p = a, g->b.p = b, g->c.p = c, g->d.p = dp;
	if (d->epilogue & EPI_BIAS)
		g->bias = d->bias;
	g->ascale = d->ascale, g->bscale = d->bscale;
	return gemm_queue(fn, stream, g);
}
