// cuBLAS's GEMMs: the typed calls (cublasSgemm, cublasDgemm, cublasHgemm
// and their strided-batched forms) and the Ex calls (cublasGemmEx,
// cublasGemmStridedBatchedEx, cublasGemmBatchedEx), each mapped to one
// struct gemm in column order with C read and written in place.
#include "fakecublas.h"

#include <stdlib.h>

// setup fills what every cuBLAS GEMM shares: the shape, the operations,
// the column-major operands and the scalars (read now in host pointer
// mode, from the device when the job runs otherwise).
static cublasStatus_t setup(const char *fn, cublasHandle_t h, struct gemm **out, int opa, int opb, int m, int n, int k, int atype,
                            int btype, int ctype, const void *alpha, const void *beta, int scale_type, int lda, int ldb, int ldc) {
	cublasStatus_t r = handle_get(h, fn);
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (alpha == NULL || beta == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: alpha or beta is NULL", fn);
	struct gemm *g = gemm_new();
	if (g == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	g->m = m, g->n = n, g->k = k;
	g->opa = opa, g->opb = opb;
	g->a = (struct operand){.type = atype, .rows = opa == OP_N ? m : k, .cols = opa == OP_N ? k : m, .ld = lda};
	g->b = (struct operand){.type = btype, .rows = opb == OP_N ? k : n, .cols = opb == OP_N ? n : k, .ld = ldb};
	g->c = (struct operand){.type = ctype, .rows = m, .cols = n, .ld = ldc};
	g->scale_type = scale_type;
	if (h->pointer_mode == POINTER_DEVICE) {
		g->dalpha = alpha, g->dbeta = beta;
	} else {
		g->alpha = scalar(alpha, scale_type), g->beta = scalar(beta, scale_type);
	}
	// CUBLAS_TF32_TENSOR_OP_MATH lets cuBLAS's float32 products use TF32.
	g->tf32 = (h->math & ~MATH_DISALLOW_REDUCED) == MATH_TF32 && atype == R_32F && btype == R_32F;
	*out = g;
	return CUBLAS_STATUS_SUCCESS;
}

// queue finishes g: D is C, with the strides, and queues it.
static cublasStatus_t queue(const char *fn, cublasHandle_t h, struct gemm *g, const void *a, long long sa, const void *b,
                            long long sb, void *c, long long sc, int batch) {
	g->a.p = a, g->a.stride = sa;
	g->b.p = b, g->b.stride = sb;
	g->c.p = c, g->c.stride = sc;
	g->batch = batch;
	g->d = g->c;
	return gemm_queue(fn, h->stream, g);
}

// sizes refuses what cuBLAS refuses before looking at memory: negative
// sizes and batches, and leading dimensions shorter than a column.
static cublasStatus_t sizes(const char *fn, int opa, int opb, int m, int n, int k, int lda, int ldb, int ldc, int batch) {
	if (opa < OP_N || opa > OP_C || opb < OP_N || opb > OP_C)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: unknown operation %d or %d", fn, opa, opb);
	if (m < 0 || n < 0 || k < 0 || batch < 0)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: m %d, n %d, k %d, batch %d: negative", fn, m, n, k, batch);
	int ra = opa == OP_N ? m : k, rb = opb == OP_N ? k : n;
	if (lda < (ra > 1 ? ra : 1) || ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: lda %d, ldb %d or ldc %d is shorter than a column (%d, %d, %d rows)", fn, lda, ldb,
		                 ldc, ra, rb, m);
	return CUBLAS_STATUS_SUCCESS;
}

#define TYPED(NAME, BATCHED, T, TYPE)                                                                                                   \
	EXPORT cublasStatus_t NAME(cublasHandle_t h, int opa, int opb, int m, int n, int k, const T *alpha, const T *a, int lda,    \
	                           const T *b, int ldb, const T *beta, T *c, int ldc) {                                            \
		struct gemm *g;                                                                                                    \
		cublasStatus_t r = sizes(#NAME, opa, opb, m, n, k, lda, ldb, ldc, 1);                                               \
		if (r == CUBLAS_STATUS_SUCCESS)                                                                                    \
			r = setup(#NAME, h, &g, opa, opb, m, n, k, TYPE, TYPE, TYPE, alpha, beta, TYPE, lda, ldb, ldc);            \
		return r != CUBLAS_STATUS_SUCCESS ? r : queue(#NAME, h, g, a, 0, b, 0, c, 0, 1);                                   \
	}                                                                                                                      \
	EXPORT cublasStatus_t BATCHED(cublasHandle_t h, int opa, int opb, int m, int n, int k, const T *alpha,        \
	                                           const T *a, int lda, long long sa, const T *b, int ldb, long long sb,           \
	                                           const T *beta, T *c, int ldc, long long sc, int batch) {                        \
		struct gemm *g;                                                                                                    \
		cublasStatus_t r = sizes(#BATCHED, opa, opb, m, n, k, lda, ldb, ldc, batch);                          \
		if (r == CUBLAS_STATUS_SUCCESS)                                                                                    \
			r = setup(#BATCHED, h, &g, opa, opb, m, n, k, TYPE, TYPE, TYPE, alpha, beta, TYPE, lda, ldb, \
			          ldc);                                                                                            \
		return r != CUBLAS_STATUS_SUCCESS ? r : queue(#BATCHED, h, g, a, sa, b, sb, c, sc, batch);          \
	}

// The _v2 symbols are what cublas_v2.h binds cublasSgemm to; the
// strided-batched ones have no _v2.
TYPED(cublasSgemm_v2, cublasSgemmStridedBatched, float, R_32F)
TYPED(cublasDgemm_v2, cublasDgemmStridedBatched, double, R_64F)
TYPED(cublasHgemm, cublasHgemmStridedBatched, uint16_t, R_16F)

// ex_types checks an Ex call's types and gives its scalars' type: that
// of the compute type, as cuBLAS documents.
static cublasStatus_t ex_types(const char *fn, cublasHandle_t h, int atype, int btype, int ctype, int compute, int *scale, int *tf) {
	*tf = 0;
	switch (compute) {
	case COMPUTE_16F:
	case COMPUTE_16F_PEDANTIC:
		*scale = R_16F;
		if (atype != R_16F || btype != R_16F || ctype != R_16F)
			return not_supported(fn, "a CUBLAS_COMPUTE_16F product of other types than CUDA_R_16F");
		return CUBLAS_STATUS_SUCCESS;
	case COMPUTE_64F:
	case COMPUTE_64F_PEDANTIC:
		*scale = R_64F;
		if (atype != R_64F || btype != R_64F || ctype != R_64F)
			return not_supported(fn, "a CUBLAS_COMPUTE_64F product of other types than CUDA_R_64F");
		return CUBLAS_STATUS_SUCCESS;
	case COMPUTE_32F_FAST_TF32:
		*tf = 1;
		// fallthrough
	case COMPUTE_32F:
	case COMPUTE_32F_PEDANTIC:
	case COMPUTE_32F_FAST_16F:
	case COMPUTE_32F_FAST_16BF:
		*scale = R_32F;
		break;
	default:
		return not_supported(fn, "this compute type");
	}
	if (atype != btype)
		return not_supported(fn, "A and B of different types");
	if ((atype != R_32F && atype != R_16F && atype != R_16BF) || (ctype != R_32F && ctype != R_16F && ctype != R_16BF))
		return not_supported(fn, "these types with a float32 compute type");
	if (ctype != R_32F && ctype != atype)
		return not_supported(fn, "a C of another narrow type than A's");
	if (compute == COMPUTE_32F && (h->math & ~MATH_DISALLOW_REDUCED) == MATH_TF32 && atype == R_32F)
		*tf = 1;
	return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t ex_setup(const char *fn, cublasHandle_t h, struct gemm **g, int opa, int opb, int m, int n, int k,
                               const void *alpha, int atype, int lda, int btype, int ldb, const void *beta, int ctype, int ldc,
                               int batch, int compute) {
	cublasStatus_t r = handle_get(h, fn);
	int scale, tf;
	if (r == CUBLAS_STATUS_SUCCESS)
		r = sizes(fn, opa, opb, m, n, k, lda, ldb, ldc, batch);
	if (r == CUBLAS_STATUS_SUCCESS)
		r = ex_types(fn, h, atype, btype, ctype, compute, &scale, &tf);
	if (r == CUBLAS_STATUS_SUCCESS)
		r = setup(fn, h, g, opa, opb, m, n, k, atype, btype, ctype, alpha, beta, scale, lda, ldb, ldc);
	if (r == CUBLAS_STATUS_SUCCESS)
		(*g)->tf32 = tf;
	return r;
}

// The algorithm argument (cublasGemmAlgo_t) chooses nothing in the fake.
EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, int opa, int opb, int m, int n, int k, const void *alpha, const void *a, int atype,
                                   int lda, const void *b, int btype, int ldb, const void *beta, void *c, int ctype, int ldc,
                                   int compute, int algo) {
	(void)algo;
	struct gemm *g;
	cublasStatus_t r = ex_setup("cublasGemmEx", h, &g, opa, opb, m, n, k, alpha, atype, lda, btype, ldb, beta, ctype, ldc, 1, compute);
	return r != CUBLAS_STATUS_SUCCESS ? r : queue("cublasGemmEx", h, g, a, 0, b, 0, c, 0, 1);
}

EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int opa, int opb, int m, int n, int k, const void *alpha,
                                                 const void *a, int atype, int lda, long long sa, const void *b, int btype, int ldb,
                                                 long long sb, const void *beta, void *c, int ctype, int ldc, long long sc, int batch,
                                                 int compute, int algo) {
	(void)algo;
	const char *fn = "cublasGemmStridedBatchedEx";
	struct gemm *g;
	cublasStatus_t r = ex_setup(fn, h, &g, opa, opb, m, n, k, alpha, atype, lda, btype, ldb, beta, ctype, ldc, batch, compute);
	return r != CUBLAS_STATUS_SUCCESS ? r : queue(fn, h, g, a, sa, b, sb, c, sc, batch);
}

// cublasGemmBatchedEx's arrays of pointers are device memory, read when
// the product runs: a pointer in no allocation then skips its product,
// reported on standard error (a GPU would fault).
EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, int opa, int opb, int m, int n, int k, const void *alpha,
                                          void *const *a, int atype, int lda, void *const *b, int btype, int ldb, const void *beta,
                                          void *const *c, int ctype, int ldc, int batch, int compute, int algo) {
	(void)algo;
	const char *fn = "cublasGemmBatchedEx";
	struct gemm *g;
	cublasStatus_t r = ex_setup(fn, h, &g, opa, opb, m, n, k, alpha, atype, lda, btype, ldb, beta, ctype, ldc, batch, compute);
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	g->a.arr = a, g->b.arr = b, g->c.arr = c;
	g->batch = batch;
	g->d = g->c;
	return gemm_queue(fn, h->stream, g);
}
