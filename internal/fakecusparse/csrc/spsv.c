// SpSV: op(A)·y = alpha·x for a triangular A, CSR or COO, with the fill
// mode and diagonal type of A's attributes: the entries of the other
// triangle are ignored, and a unit diagonal ignores the stored one, as
// cuSPARSE documents. The analysis asks for a buffer and checks it gets
// one (reported written to the race detector, as cuSPARSE's analysis
// writes it); the solve, in stream order, substitutes row by row in
// double (complex) precision. A zero on the diagonal gives infinities,
// not an error.
#include "fakecusparse.h"

#include <stdlib.h>

#define SPSV_BUFFER 128

struct spsv {
	int analyzed;
	void *buffer;
};

EXPORT cusparseStatus_t cusparseSpSV_createDescr(struct spsv **out) {
	if (out == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpSV_createDescr: NULL pointer");
	struct spsv *d = calloc(1, sizeof *d);
	if (d == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "cusparseSpSV_createDescr: out of host memory");
	reg_add(K_SPSV, d);
	*out = d;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpSV_destroyDescr(struct spsv *d) {
	if (!reg_del(K_SPSV, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpSV_destroyDescr: %p is not a live SpSV descriptor", (void *)d);
	free(d);
	return CUSPARSE_STATUS_SUCCESS;
}

struct solve {
	struct job job;
	int op;
	struct spmat a;
	struct dnvec x, y;
	cplx alpha;
	void *buffer; // NULL: the analysis, which only writes the buffer
};

static void solve_destroy(struct job *j) { free(j); }

static void solve_run(struct job *j) {
	struct solve *s = (struct solve *)j;
	int64_t n = s->a.rows;
	size_t vs = type_size(s->x.vtype);
	spmat_note(&s->a);
	if (s->buffer != NULL) {
		note(s->buffer, SPSV_BUFFER, 1);
		return;
	}
	note(s->x.values, (size_t)n * vs, 0);
	note(s->y.values, (size_t)n * vs, 1);
	struct triplets t;
	if (triplets_of(&s->a, &t) != 0)
		return;
	int unit = s->a.diag == DIAG_UNIT;
	// Keep the stored triangle (and the diagonal), then apply op.
	int64_t kept = 0;
	for (int64_t e = 0; e < t.n; e++) {
		int64_t r = t.r[e], c = t.c[e];
		if ((s->a.fill == FILL_LOWER && c > r) || (s->a.fill == FILL_UPPER && c < r) || (unit && r == c))
			continue;
		t.r[kept] = r;
		t.c[kept] = c;
		t.v[kept] = t.v[e];
		kept++;
	}
	t.n = kept;
	transpose_op(&t, s->op);
	int lower = (s->a.fill == FILL_LOWER) == (s->op == OP_N);
	// Rows of op(A): counting sort of the entries by row.
	int64_t *start = calloc((size_t)n + 1, sizeof *start), *order = malloc((size_t)(t.n ? t.n : 1) * sizeof *order);
	cplx *y = malloc((size_t)(n ? n : 1) * sizeof *y), *diag = calloc((size_t)(n ? n : 1), sizeof *diag);
	int64_t *fillp = malloc((size_t)(n ? n : 1) * sizeof *fillp);
	if (!start || !order || !y || !diag || !fillp) {
		run_error("out of host memory for SpSV");
		goto out;
	}
	for (int64_t e = 0; e < t.n; e++)
		start[t.r[e] + 1]++;
	for (int64_t i = 0; i < n; i++) {
		start[i + 1] += start[i];
		fillp[i] = start[i];
	}
	for (int64_t e = 0; e < t.n; e++)
		order[fillp[t.r[e]]++] = e;
	for (int64_t step = 0; step < n; step++) {
		int64_t i = lower ? step : n - 1 - step;
		cplx sum = s->alpha * load(s->x.values, s->x.vtype, i), d = unit ? 1 : 0;
		for (int64_t k = start[i]; k < start[i + 1]; k++) {
			int64_t e = order[k], c = t.c[e];
			if (c == i)
				d += t.v[e];
			else
				sum -= t.v[e] * y[c];
		}
		y[i] = sum / d;
	}
	for (int64_t i = 0; i < n; i++)
		store(s->y.values, s->y.vtype, i, y[i]);
out:
	free(start);
	free(order);
	free(y);
	free(diag);
	free(fillp);
	triplets_free(&t);
}

static cusparseStatus_t args(const char *fn, struct handle *h, cudaStream_t *s, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                             struct dnvec *y, int ctype, struct spsv *d, struct solve *out) {
	cusparseStatus_t r = handle_stream(fn, h, s);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (!reg_has(K_SPMAT, a))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A is not a live sparse matrix", fn);
	if (!reg_has(K_DNVEC, x) || !reg_has(K_DNVEC, y))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: x or y is not a live dense vector", fn);
	if (!reg_has(K_SPSV, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live SpSV descriptor", fn, (void *)d);
	if (op != OP_N && op != OP_T && op != OP_C)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: operation %d", fn, op);
	if (a->format != FMT_CSR && a->format != FMT_COO)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: SpSV takes CSR and COO matrices", fn);
	if (alpha == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: alpha is NULL", fn);
	if (a->vtype != ctype || x->vtype != ctype || y->vtype != ctype)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value types %d, %d, %d with compute type %d", fn, a->vtype, x->vtype, y->vtype, ctype);
	if (a->rows != a->cols || x->size != a->rows || y->size != a->rows)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A %lld×%lld, x of %lld and y of %lld", fn, (long long)a->rows, (long long)a->cols,
		            (long long)x->size, (long long)y->size);
	size_t vs = type_size(ctype);
	if ((r = spmat_check(fn, "A", a)) != CUSPARSE_STATUS_SUCCESS || (r = check_range(fn, "x", x->values, (size_t)x->size * vs)) != 0 ||
	    (r = check_range(fn, "y", y->values, (size_t)y->size * vs)) != 0)
		return r;
	*out = (struct solve){{solve_run, solve_destroy, 0}, op, *a, *x, *y, scalar(alpha, ctype), NULL};
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpSV_bufferSize(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                                                struct dnvec *y, int ctype, int alg, struct spsv *d, size_t *size) {
	const char *fn = "cusparseSpSV_bufferSize";
	(void)alg;
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, h, &s, op, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (size == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	*size = SPSV_BUFFER;
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t queue(const char *fn, cudaStream_t s, struct solve *tmpl) {
	struct solve *j = malloc(sizeof *j);
	if (j == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*j = *tmpl;
	return enqueue(fn, s, &j->job);
}

EXPORT cusparseStatus_t cusparseSpSV_analysis(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                                              struct dnvec *y, int ctype, int alg, struct spsv *d, void *buffer) {
	const char *fn = "cusparseSpSV_analysis";
	(void)alg;
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, h, &s, op, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (buffer == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: no external buffer where cusparseSpSV_bufferSize asks for %d bytes", fn, SPSV_BUFFER);
	if ((r = check_range(fn, "the external buffer", buffer, SPSV_BUFFER)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	tmpl.buffer = buffer;
	if ((r = queue(fn, s, &tmpl)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	d->analyzed = 1;
	d->buffer = buffer;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpSV_solve(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x, struct dnvec *y,
                                           int ctype, int alg, struct spsv *d) {
	const char *fn = "cusparseSpSV_solve";
	(void)alg;
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, h, &s, op, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (!d->analyzed)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: the descriptor has not been through cusparseSpSV_analysis", fn);
	return queue(fn, s, &tmpl);
}
