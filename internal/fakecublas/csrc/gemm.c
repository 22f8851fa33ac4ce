// The one product every GEMM of the fake comes to: cuBLAS's typed and Ex
// calls, their batched forms and cublasLtMatmul. It is checked when
// queued and computed on the stream's thread in double precision, each
// product element's sum in the order of k, then rounded once to the type
// of D: closer to the exact product than a GPU's float32 accumulation,
// which the tests' tolerances allow for.
#include "fakecublas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void gemm_destroy(struct job *j) { free(j); }
static void gemm_run(struct job *j);

struct gemm *gemm_new(void) {
	struct gemm *g = calloc(1, sizeof *g);
	if (g == NULL)
		return NULL;
	g->job.run = gemm_run;
	g->job.destroy = gemm_destroy;
	g->epilogue = 1;
	g->batch = 1;
	return g;
}

// extent is how many elements one matrix of x spans.
static int64_t extent(const struct operand *x) {
	if (x->rows == 0 || x->cols == 0)
		return 0;
	int64_t outer = x->row_order ? x->rows : x->cols, inner = x->row_order ? x->cols : x->rows;
	return (outer - 1) * x->ld + inner;
}

static int64_t at(const struct operand *x, int64_t i, int64_t j) {
	return x->row_order ? i * x->ld + j : i + j * x->ld;
}

// base is matrix b of the batch of x, NULL for a pointer of its array
// that is in no allocation.
static const void *base(const struct operand *x, int64_t b) {
	if (x->arr != NULL) {
		const void *p = x->arr[b];
		size_t bytes = (size_t)extent(x) * type_size(x->type);
		const struct cuda *cu = cuda();
		if (p == NULL || (cu->range_valid != NULL && bytes > 0 && !cu->range_valid((unsigned long long)(uintptr_t)p, bytes)))
			return NULL;
		return p;
	}
	return (const char *)x->p + b * x->stride * (int64_t)type_size(x->type);
}

static cublasStatus_t check_operand(const char *fn, const char *name, const struct operand *x, int64_t batch) {
	if (type_size(x->type) == 0)
		return set_error(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %s has type %d, %s", fn, name, x->type, type_name(x->type));
	int64_t inner = x->row_order ? x->cols : x->rows;
	if (x->rows < 0 || x->cols < 0 || x->ld < 1 || x->ld < inner)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %s is %lld×%lld with leading dimension %lld", fn, name,
		                 (long long)x->rows, (long long)x->cols, (long long)x->ld);
	size_t size = type_size(x->type);
	if (x->arr != NULL)
		return check_range(fn, name, x->arr, (size_t)batch * sizeof(void *));
	if (x->stride < 0)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %s has a negative batch stride %lld", fn, name, (long long)x->stride);
	// Sizes no memory can hold are refused before extent multiplies them.
	int64_t outer = x->row_order ? x->rows : x->cols, span, bytes;
	if (x->rows == 0 || x->cols == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (__builtin_mul_overflow(outer - 1, x->ld, &span) || __builtin_add_overflow(span, inner, &span) ||
	    __builtin_mul_overflow(batch - 1, x->stride, &bytes) || __builtin_add_overflow(span, bytes, &span) ||
	    __builtin_mul_overflow(span, (int64_t)size, &bytes))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %s spans more bytes than memory holds", fn, name);
	return check_range(fn, name, x->p, (size_t)bytes);
}

cublasStatus_t gemm_queue(const char *fn, cudaStream_t s, struct gemm *g) {
	cublasStatus_t r = CUBLAS_STATUS_SUCCESS;
	int64_t ar = g->opa == OP_N ? g->m : g->k, ac = g->opa == OP_N ? g->k : g->m;
	int64_t br = g->opb == OP_N ? g->k : g->n, bc = g->opb == OP_N ? g->n : g->k;
	if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0)
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: m %lld, n %lld, k %lld, batch %lld: negative", fn, (long long)g->m,
		              (long long)g->n, (long long)g->k, (long long)g->batch);
	else if ((g->opa != OP_N && g->opa != OP_T && g->opa != OP_C) || (g->opb != OP_N && g->opb != OP_T && g->opb != OP_C))
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: unknown operation %d or %d", fn, g->opa, g->opb);
	else if (g->a.rows != ar || g->a.cols != ac || g->b.rows != br || g->b.cols != bc || g->c.rows != g->m ||
	         g->c.cols != g->n || g->d.rows != g->m || g->d.cols != g->n)
		r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: op(A) %lld×%lld, op(B) %lld×%lld, C %lld×%lld and D %lld×%lld do not multiply", fn,
		              (long long)(g->opa == OP_N ? g->a.rows : g->a.cols), (long long)(g->opa == OP_N ? g->a.cols : g->a.rows),
		              (long long)(g->opb == OP_N ? g->b.rows : g->b.cols), (long long)(g->opb == OP_N ? g->b.cols : g->b.rows),
		              (long long)g->c.rows, (long long)g->c.cols, (long long)g->d.rows, (long long)g->d.cols);
	else if (g->d.type == R_8F_E4M3 || g->d.type == R_8F_E5M2)
		r = not_supported(fn, "an FP8 result");
	if (r == CUBLAS_STATUS_SUCCESS && (g->m == 0 || g->n == 0 || g->batch == 0)) {
		free(g);
		return CUBLAS_STATUS_SUCCESS; // nothing to compute
	}
	if (r == CUBLAS_STATUS_SUCCESS && (r = check_operand(fn, "A", &g->a, g->batch)) == CUBLAS_STATUS_SUCCESS)
		r = check_operand(fn, "B", &g->b, g->batch);
	if (r == CUBLAS_STATUS_SUCCESS && (r = check_operand(fn, "C", &g->c, g->batch)) == CUBLAS_STATUS_SUCCESS)
		r = check_operand(fn, "D", &g->d, g->batch);
	if (r == CUBLAS_STATUS_SUCCESS && g->bias != NULL) {
		if (type_size(g->bias_type) == 0)
			r = set_error(CUBLAS_STATUS_NOT_SUPPORTED, "%s: the bias has type %d, %s", fn, g->bias_type, type_name(g->bias_type));
		else {
			int64_t n;
			if (g->bias_stride < 0 || __builtin_mul_overflow(g->batch - 1, g->bias_stride, &n) || __builtin_add_overflow(n, g->m, &n) ||
			    __builtin_mul_overflow(n, (int64_t)type_size(g->bias_type), &n))
				r = set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: a bias batch stride of %lld", fn, (long long)g->bias_stride);
			else
				r = check_range(fn, "the bias", g->bias, (size_t)n);
		}
	}
	if (r == CUBLAS_STATUS_SUCCESS && g->ascale != NULL)
		r = check_range(fn, "A's scale", g->ascale, 4);
	if (r == CUBLAS_STATUS_SUCCESS && g->bscale != NULL)
		r = check_range(fn, "B's scale", g->bscale, 4);
	if (r == CUBLAS_STATUS_SUCCESS && g->dalpha != NULL)
		r = check_range(fn, "alpha", g->dalpha, type_size(g->scale_type));
	if (r == CUBLAS_STATUS_SUCCESS && g->dbeta != NULL)
		r = check_range(fn, "beta", g->dbeta, type_size(g->scale_type));
	if (r != CUBLAS_STATUS_SUCCESS) {
		free(g);
		return r;
	}
	return enqueue(fn, s, &g->job);
}

// note_operand reports the bytes of x's batch to the race detector.
static void note_operand(const struct operand *x, int64_t batch, int write) {
	size_t size = type_size(x->type);
	int64_t ext = extent(x);
	if (x->arr != NULL) {
		note(x->arr, (size_t)batch * sizeof(void *), 0);
		for (int64_t b = 0; b < batch; b++)
			if (base(x, b) != NULL)
				note(base(x, b), (size_t)ext * size, write);
		return;
	}
	if (ext > 0)
		note(x->p, (size_t)((batch - 1) * x->stride + ext) * size, write);
}

static double gelu(double x) {
	const double c = 0.7978845608028654; // sqrt(2/pi)
	return 0.5 * x * (1 + tanh(c * (x + 0.044715 * x * x * x)));
}

static void gemm_run(struct job *j) {
	struct gemm *g = (struct gemm *)j;
	double alpha = g->dalpha != NULL ? load(g->dalpha, g->scale_type, 0) : g->alpha;
	double beta = g->dbeta != NULL ? load(g->dbeta, g->scale_type, 0) : g->beta;
	double scale = 1;
	if (g->ascale != NULL)
		scale *= *g->ascale;
	if (g->bscale != NULL)
		scale *= *g->bscale;
	if (g->dalpha != NULL)
		note(g->dalpha, type_size(g->scale_type), 0);
	if (g->dbeta != NULL)
		note(g->dbeta, type_size(g->scale_type), 0);
	if (g->k > 0) {
		note_operand(&g->a, g->batch, 0);
		note_operand(&g->b, g->batch, 0);
	}
	if (beta != 0)
		note_operand(&g->c, g->batch, 0);
	note_operand(&g->d, g->batch, 1);
	int64_t m = g->m, n = g->n, k = g->k;
	double *a = malloc(sizeof(double) * (size_t)(m * k + k + 1));
	if (a == NULL) {
		run_error("a GEMM of %lld×%lld×%lld: out of host memory", (long long)m, (long long)n, (long long)k);
		return;
	}
	double *col = a + m * k;
	int relu = g->epilogue == 2 || g->epilogue == 6, use_gelu = g->epilogue == 32 || g->epilogue == 36;
	for (int64_t b = 0; b < g->batch; b++) {
		const void *pa = base(&g->a, b), *pb = base(&g->b, b), *pc = base(&g->c, b);
		void *pd = (void *)base(&g->d, b);
		if ((k > 0 && (pa == NULL || pb == NULL)) || (beta != 0 && pc == NULL) || pd == NULL) {
			run_error("product %lld of a batched GEMM: a pointer of its arrays is in no allocation", (long long)b);
			continue;
		}
		for (int64_t i = 0; i < m; i++)
			for (int64_t l = 0; l < k; l++) {
				double v = load(pa, g->a.type, g->opa == OP_N ? at(&g->a, i, l) : at(&g->a, l, i));
				a[i * k + l] = g->tf32 && g->a.type == R_32F ? tf32((float)v) : v;
			}
		for (int64_t jj = 0; jj < n; jj++) {
			for (int64_t l = 0; l < k; l++) {
				double v = load(pb, g->b.type, g->opb == OP_N ? at(&g->b, l, jj) : at(&g->b, jj, l));
				col[l] = g->tf32 && g->b.type == R_32F ? tf32((float)v) : v;
			}
			for (int64_t i = 0; i < m; i++) {
				const double *row = a + i * k;
				double sum = 0;
				for (int64_t l = 0; l < k; l++)
					sum += row[l] * col[l];
				double v = alpha * scale * sum;
				if (beta != 0)
					v += beta * load(pc, g->c.type, at(&g->c, i, jj));
				if (g->bias != NULL)
					v += load(g->bias, g->bias_type, b * g->bias_stride + i);
				if (relu && !(v > 0))
					v = isnan(v) ? v : 0;
				if (use_gelu)
					v = gelu(v);
				store(pd, g->d.type, at(&g->d, i, jj), v);
			}
		}
	}
	if (g->bias != NULL)
		note(g->bias, (size_t)((g->batch - 1) * g->bias_stride + m) * type_size(g->bias_type), 0);
	free(a);
}
