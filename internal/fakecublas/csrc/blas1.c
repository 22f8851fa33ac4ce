// The level-1 and level-2 calls the fake models, in float32 and float64:
// AXPY, SCAL, DOT, NRM2 and GEMV. A result in host memory (DOT and NRM2 in
// host pointer mode) is written when the stream reaches the job, and the
// call waits for that, as cuBLAS's does.
#include "fakecublas.h"

#include <math.h>
#include <stdlib.h>

enum { AXPY, SCAL, DOT, NRM2, GEMV };

struct vec {
	struct job job;
	int kind, type, trans;
	int64_t n, m, lda;
	const void *a; // GEMV's matrix
	const void *x;
	void *y;
	int64_t incx, incy;
	double alpha, beta;
	const void *dalpha, *dbeta;
	void *result;
	int result_device; // result is device memory (device pointer mode)
};

static void vec_destroy(struct job *j) { free(j); }

// idx is BLAS's element i of n with increment inc: from the end when inc
// is negative.
static int64_t idx(int64_t i, int64_t n, int64_t inc) { return inc >= 0 ? i * inc : (n - 1 - i) * -inc; }

static size_t span(int64_t n, int64_t inc, int t) { return n > 0 ? (size_t)((n - 1) * llabs(inc) + 1) * type_size(t) : 0; }

static void vec_run(struct job *j) {
	struct vec *v = (struct vec *)j;
	double alpha = v->dalpha != NULL ? load(v->dalpha, v->type, 0) : v->alpha;
	double beta = v->dbeta != NULL ? load(v->dbeta, v->type, 0) : v->beta;
	int t = v->type;
	switch (v->kind) {
	case AXPY:
		note(v->x, span(v->n, v->incx, t), 0);
		note(v->y, span(v->n, v->incy, t), 1);
		for (int64_t i = 0; i < v->n; i++) {
			int64_t iy = idx(i, v->n, v->incy);
			store(v->y, t, iy, load(v->y, t, iy) + alpha * load(v->x, t, idx(i, v->n, v->incx)));
		}
		break;
	case SCAL:
		note(v->y, span(v->n, v->incy, t), 1);
		for (int64_t i = 0; i < v->n; i++)
			store(v->y, t, i * v->incy, alpha * load(v->y, t, i * v->incy));
		break;
	case DOT: {
		double s = 0;
		note(v->x, span(v->n, v->incx, t), 0);
		note(v->y, span(v->n, v->incy, t), 0);
		for (int64_t i = 0; i < v->n; i++)
			s += load(v->x, t, idx(i, v->n, v->incx)) * load(v->y, t, idx(i, v->n, v->incy));
		store(v->result, t, 0, s);
		break;
	}
	case NRM2: {
		double s = 0;
		note(v->x, span(v->n, v->incx, t), 0);
		for (int64_t i = 0; i < v->n; i++) {
			double e = load(v->x, t, i * v->incx);
			s += e * e;
		}
		store(v->result, t, 0, sqrt(s));
		break;
	}
	case GEMV: {
		// y = alpha·op(A)·x + beta·y, A m×n column-major.
		int64_t rows = v->trans == OP_N ? v->m : v->n, cols = v->trans == OP_N ? v->n : v->m;
		note(v->a, (size_t)((v->n - 1) * v->lda + v->m) * type_size(t), 0);
		note(v->x, span(cols, v->incx, t), 0);
		note(v->y, span(rows, v->incy, t), 1);
		for (int64_t i = 0; i < rows; i++) {
			double s = 0;
			for (int64_t l = 0; l < cols; l++) {
				int64_t e = v->trans == OP_N ? i + l * v->lda : l + i * v->lda;
				s += load(v->a, t, e) * load(v->x, t, idx(l, cols, v->incx));
			}
			int64_t iy = idx(i, rows, v->incy);
			store(v->y, t, iy, alpha * s + (beta != 0 ? beta * load(v->y, t, iy) : 0));
		}
		break;
	}
	}
	if (v->result_device)
		note(v->result, type_size(t), 1);
}

static struct vec *vec_new(int kind, int type) {
	struct vec *v = calloc(1, sizeof *v);
	if (v != NULL) {
		v->job.run = vec_run;
		v->job.destroy = vec_destroy;
		v->kind = kind;
		v->type = type;
	}
	return v;
}

// scalars reads alpha and beta now in host pointer mode, or keeps where
// the device holds them.
static void scalars(cublasHandle_t h, struct vec *v, const void *alpha, const void *beta) {
	if (h->pointer_mode == POINTER_DEVICE) {
		v->dalpha = alpha, v->dbeta = beta;
		return;
	}
	if (alpha != NULL)
		v->alpha = scalar(alpha, v->type);
	if (beta != NULL)
		v->beta = scalar(beta, v->type);
}

// submit checks the vectors' memory and queues v; a result in host memory
// is waited for.
static cublasStatus_t submit(const char *fn, cublasHandle_t h, struct vec *v) {
	cublasStatus_t r = CUBLAS_STATUS_SUCCESS;
	int t = v->type;
	int64_t xn = v->n, yn = v->n;
	if (v->kind == GEMV) {
		xn = v->trans == OP_N ? v->n : v->m;
		yn = v->trans == OP_N ? v->m : v->n;
		if (v->m > 0 && v->n > 0)
			r = check_range(fn, "A", v->a, (size_t)((v->n - 1) * v->lda + v->m) * type_size(t));
	}
	if (r == CUBLAS_STATUS_SUCCESS && v->kind != SCAL)
		r = check_range(fn, "x", v->x, span(xn, v->incx, t));
	if (r == CUBLAS_STATUS_SUCCESS && v->kind != NRM2)
		r = check_range(fn, v->kind == SCAL ? "x" : "y", v->y, span(yn, v->incy, t));
	int host_result = (v->kind == DOT || v->kind == NRM2) && h->pointer_mode == POINTER_HOST;
	if (r == CUBLAS_STATUS_SUCCESS && (v->kind == DOT || v->kind == NRM2)) {
		if (v->result == NULL)
			r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL result", fn);
		else if (!host_result && (r = check_range(fn, "the result", v->result, type_size(t))) == CUBLAS_STATUS_SUCCESS)
			v->result_device = 1;
	}
	if (r == CUBLAS_STATUS_SUCCESS && v->dalpha != NULL)
		r = check_range(fn, "alpha", v->dalpha, type_size(t));
	if (r == CUBLAS_STATUS_SUCCESS && v->dbeta != NULL)
		r = check_range(fn, "beta", v->dbeta, type_size(t));
	if (r != CUBLAS_STATUS_SUCCESS) {
		free(v);
		return r;
	}
	cudaStream_t s = h->stream;
	if ((r = enqueue(fn, s, &v->job)) != CUBLAS_STATUS_SUCCESS || !host_result)
		return r;
	return sync_stream(fn, s);
}

#define LEVEL1(P, T, TYPE)                                                                                                     \
	EXPORT cublasStatus_t cublas##P##axpy_v2(cublasHandle_t h, int n, const T *alpha, const T *x, int incx, T *y, int incy) {  \
		const char *fn = "cublas" #P "axpy_v2";                                                                            \
		cublasStatus_t r = handle_get(h, fn);                                                                              \
		if (r != CUBLAS_STATUS_SUCCESS)                                                                                    \
			return r;                                                                                                  \
		if (alpha == NULL)                                                                                                 \
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL alpha", fn);                                       \
		if (n <= 0)                                                                                                        \
			return CUBLAS_STATUS_SUCCESS;                                                                              \
		struct vec *v = vec_new(AXPY, TYPE);                                                                               \
		if (v == NULL)                                                                                                     \
			return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);                                \
		v->n = n, v->x = x, v->incx = incx, v->y = y, v->incy = incy;                                                      \
		scalars(h, v, alpha, NULL);                                                                                        \
		return submit(fn, h, v);                                                                                           \
	}                                                                                                                      \
	EXPORT cublasStatus_t cublas##P##scal_v2(cublasHandle_t h, int n, const T *alpha, T *x, int incx) {                        \
		const char *fn = "cublas" #P "scal_v2";                                                                            \
		cublasStatus_t r = handle_get(h, fn);                                                                              \
		if (r != CUBLAS_STATUS_SUCCESS)                                                                                    \
			return r;                                                                                                  \
		if (alpha == NULL)                                                                                                 \
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL alpha", fn);                                       \
		if (n <= 0 || incx <= 0)                                                                                           \
			return CUBLAS_STATUS_SUCCESS;                                                                              \
		struct vec *v = vec_new(SCAL, TYPE);                                                                               \
		if (v == NULL)                                                                                                     \
			return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);                                \
		v->n = n, v->y = x, v->incy = incx;                                                                                \
		scalars(h, v, alpha, NULL);                                                                                        \
		return submit(fn, h, v);                                                                                           \
	}                                                                                                                      \
	EXPORT cublasStatus_t cublas##P##dot_v2(cublasHandle_t h, int n, const T *x, int incx, const T *y, int incy, T *result) {  \
		const char *fn = "cublas" #P "dot_v2";                                                                             \
		cublasStatus_t r = handle_get(h, fn);                                                                              \
		if (r != CUBLAS_STATUS_SUCCESS)                                                                                    \
			return r;                                                                                                  \
		struct vec *v = vec_new(DOT, TYPE);                                                                                \
		if (v == NULL)                                                                                                     \
			return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);                                \
		v->n = n > 0 ? n : 0, v->x = x, v->incx = incx, v->y = (void *)y, v->incy = incy, v->result = result;             \
		return submit(fn, h, v);                                                                                           \
	}                                                                                                                      \
	EXPORT cublasStatus_t cublas##P##nrm2_v2(cublasHandle_t h, int n, const T *x, int incx, T *result) {                       \
		const char *fn = "cublas" #P "nrm2_v2";                                                                            \
		cublasStatus_t r = handle_get(h, fn);                                                                              \
		if (r != CUBLAS_STATUS_SUCCESS)                                                                                    \
			return r;                                                                                                  \
		struct vec *v = vec_new(NRM2, TYPE);                                                                               \
		if (v == NULL)                                                                                                     \
			return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);                                \
		v->n = n > 0 && incx > 0 ? n : 0, v->x = x, v->incx = incx, v->result = result;                                   \
		return submit(fn, h, v);                                                                                           \
	}                                                                                                                      \
	EXPORT cublasStatus_t cublas##P##gemv_v2(cublasHandle_t h, int trans, int m, int n, const T *alpha, const T *a, int lda,   \
	                                         const T *x, int incx, const T *beta, T *y, int incy) {                            \
		const char *fn = "cublas" #P "gemv_v2";                                                                            \
		cublasStatus_t r = handle_get(h, fn);                                                                              \
		if (r != CUBLAS_STATUS_SUCCESS)                                                                                    \
			return r;                                                                                                  \
		if (trans < OP_N || trans > OP_C || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0)             \
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: trans %d, m %d, n %d, lda %d, incx %d, incy %d", fn,     \
			                 trans, m, n, lda, incx, incy);                                                            \
		if (alpha == NULL || beta == NULL)                                                                                 \
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL alpha or beta", fn);                               \
		if (m == 0 || n == 0)                                                                                              \
			return CUBLAS_STATUS_SUCCESS;                                                                              \
		struct vec *v = vec_new(GEMV, TYPE);                                                                               \
		if (v == NULL)                                                                                                     \
			return set_error(CUBLAS_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);                                \
		v->trans = trans, v->m = m, v->n = n, v->a = a, v->lda = lda;                                                      \
		v->x = x, v->incx = incx, v->y = y, v->incy = incy;                                                                \
		scalars(h, v, alpha, beta);                                                                                        \
		return submit(fn, h, v);                                                                                           \
	}

LEVEL1(S, float, R_32F)
LEVEL1(D, double, R_64F)
