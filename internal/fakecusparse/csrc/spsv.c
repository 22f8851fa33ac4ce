// SpSV and SpSM: op(A)·Y = alpha·op(X) for a triangular A, CSR or COO,
// with the fill mode and diagonal type of A's attributes: the entries of
// the other triangle are ignored, and a unit diagonal ignores the stored
// one, as cuSPARSE documents. SpSV's vectors are one-column matrices
// here. The analysis asks for a buffer and checks it gets one (reported
// written to the race detector, as cuSPARSE's analysis writes it); the
// solve, in stream order, substitutes row by row, column by column, in
// double (complex) precision. A zero on the diagonal gives infinities,
// not an error.
#include "fakecusparse.h"

#include <stdlib.h>

#define SPSV_BUFFER 128
#define SPSM_BUFFER 192

// A descriptor of either: the analysis has run (with its buffer).
struct trsv {
	int analyzed;
	void *buffer;
};

static cusparseStatus_t create(const char *fn, int kind, struct trsv **out) {
	if (out == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL pointer", fn);
	struct trsv *d = calloc(1, sizeof *d);
	if (d == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	reg_add(kind, d);
	*out = d;
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t destroy(const char *fn, int kind, struct trsv *d) {
	if (!reg_del(kind, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live descriptor", fn, (void *)d);
	free(d);
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpSV_createDescr(struct trsv **out) { return create("cusparseSpSV_createDescr", K_SPSV, out); }
EXPORT cusparseStatus_t cusparseSpSV_destroyDescr(struct trsv *d) { return destroy("cusparseSpSV_destroyDescr", K_SPSV, d); }
EXPORT cusparseStatus_t cusparseSpSM_createDescr(struct trsv **out) { return create("cusparseSpSM_createDescr", K_SPSM, out); }
EXPORT cusparseStatus_t cusparseSpSM_destroyDescr(struct trsv *d) { return destroy("cusparseSpSM_destroyDescr", K_SPSM, d); }

struct solve {
	struct job job;
	int opa, opb;
	struct spmat a;
	struct dnmat x, y; // op(x) and y are n×k
	cplx alpha;
	void *buffer; // not NULL: the analysis, which only writes the buffer
	size_t buffer_size;
};

static void solve_destroy(struct job *j) { free(j); }

static int64_t dn_at(const struct dnmat *d, int64_t i, int64_t j) {
	return d->order == ORDER_COL ? i + j * d->ld : i * d->ld + j;
}

static void solve_run(struct job *j) {
	struct solve *s = (struct solve *)j;
	int64_t n = s->a.rows, k = s->y.cols;
	spmat_note(&s->a);
	if (s->buffer != NULL) {
		note(s->buffer, s->buffer_size, 1);
		return;
	}
	note(s->x.values, dnmat_bytes(&s->x), 0);
	note(s->y.values, dnmat_bytes(&s->y), 1);
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
	transpose_op(&t, s->opa);
	int lower = (s->a.fill == FILL_LOWER) == (s->opa == OP_N);
	// Rows of op(A): counting sort of the entries by row.
	int64_t *start = calloc((size_t)n + 1, sizeof *start), *order = malloc((size_t)(t.n ? t.n : 1) * sizeof *order);
	int64_t *fillp = malloc((size_t)(n ? n : 1) * sizeof *fillp);
	cplx *y = malloc((size_t)(n ? n : 1) * sizeof *y);
	if (!start || !order || !y || !fillp) {
		run_error("out of host memory for a triangular solve");
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
	for (int64_t col = 0; col < k; col++) {
		for (int64_t step = 0; step < n; step++) {
			int64_t i = lower ? step : n - 1 - step;
			cplx xv;
			if (s->opb == OP_N)
				xv = load(s->x.values, s->x.vtype, dn_at(&s->x, i, col));
			else {
				xv = load(s->x.values, s->x.vtype, dn_at(&s->x, col, i));
				if (s->opb == OP_C)
					xv = conj(xv);
			}
			cplx sum = s->alpha * xv, d = unit ? 1 : 0;
			for (int64_t q = start[i]; q < start[i + 1]; q++) {
				int64_t e = order[q], c = t.c[e];
				if (c == i)
					d += t.v[e];
				else
					sum -= t.v[e] * y[c];
			}
			y[i] = sum / d;
		}
		for (int64_t i = 0; i < n; i++)
			store(s->y.values, s->y.vtype, dn_at(&s->y, i, col), y[i]);
	}
out:
	free(start);
	free(order);
	free(y);
	free(fillp);
	triplets_free(&t);
}

// args checks a solve's arguments into out; x and y are dense vectors
// (SpSV) or matrices (SpSM).
static cusparseStatus_t args(const char *fn, int sm, struct handle *h, cudaStream_t *s, int opa, int opb, const void *alpha,
                             struct spmat *a, void *x, void *y, int ctype, struct trsv *d, struct solve *out) {
	cusparseStatus_t r = handle_stream(fn, h, s);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (!reg_has(K_SPMAT, a))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A is not a live sparse matrix", fn);
	struct dnmat dx, dy;
	if (sm) {
		if (!reg_has(K_DNMAT, x) || !reg_has(K_DNMAT, y))
			return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: B or C is not a live dense matrix", fn);
		dx = *(struct dnmat *)x;
		dy = *(struct dnmat *)y;
	} else {
		if (!reg_has(K_DNVEC, x) || !reg_has(K_DNVEC, y))
			return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: x or y is not a live dense vector", fn);
		const struct dnvec *vx = x, *vy = y;
		dx = (struct dnmat){vx->size, 1, vx->size > 0 ? vx->size : 1, vx->values, vx->vtype, ORDER_COL};
		dy = (struct dnmat){vy->size, 1, vy->size > 0 ? vy->size : 1, vy->values, vy->vtype, ORDER_COL};
	}
	if (!reg_has(sm ? K_SPSM : K_SPSV, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live %s descriptor", fn, (void *)d, sm ? "SpSM" : "SpSV");
	if ((opa != OP_N && opa != OP_T && opa != OP_C) || (opb != OP_N && opb != OP_T && opb != OP_C))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: operations %d and %d", fn, opa, opb);
	if (a->format != FMT_CSR && a->format != FMT_COO)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: %s takes CSR and COO matrices", fn, sm ? "SpSM" : "SpSV");
	if (alpha == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: alpha is NULL", fn);
	if (a->vtype != ctype || dx.vtype != ctype || dy.vtype != ctype)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value types %d, %d, %d with compute type %d", fn, a->vtype, dx.vtype, dy.vtype, ctype);
	int64_t xr, xc;
	op_shape(opb, dx.rows, dx.cols, &xr, &xc);
	if (a->rows != a->cols || xr != a->rows || dy.rows != a->rows || xc != dy.cols)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A %lld×%lld, op(%s) %lld×%lld and %s %lld×%lld", fn, (long long)a->rows,
		            (long long)a->cols, sm ? "B" : "x", (long long)xr, (long long)xc, sm ? "C" : "y", (long long)dy.rows, (long long)dy.cols);
	if ((r = spmat_check(fn, "A", a)) != CUSPARSE_STATUS_SUCCESS ||
	    (r = check_range(fn, sm ? "B" : "x", dx.values, dnmat_bytes(&dx))) != CUSPARSE_STATUS_SUCCESS ||
	    (r = check_range(fn, sm ? "C" : "y", dy.values, dnmat_bytes(&dy))) != CUSPARSE_STATUS_SUCCESS)
		return r;
	*out = (struct solve){{solve_run, solve_destroy, 0}, opa, opb, *a, dx, dy, scalar(alpha, ctype), NULL, 0};
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t queue(const char *fn, cudaStream_t s, struct solve *tmpl) {
	struct solve *j = malloc(sizeof *j);
	if (j == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*j = *tmpl;
	return enqueue(fn, s, &j->job);
}

static cusparseStatus_t buffer_size(const char *fn, int sm, struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, void *x,
                                    void *y, int ctype, struct trsv *d, size_t *size) {
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, sm, h, &s, opa, opb, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (size == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	*size = sm ? SPSM_BUFFER : SPSV_BUFFER;
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t analysis(const char *fn, int sm, struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, void *x,
                                 void *y, int ctype, struct trsv *d, void *buffer) {
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, sm, h, &s, opa, opb, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	size_t need = sm ? SPSM_BUFFER : SPSV_BUFFER;
	if (buffer == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: no external buffer where the bufferSize call asks for %zu bytes", fn, need);
	if ((r = check_range(fn, "the external buffer", buffer, need)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	tmpl.buffer = buffer;
	tmpl.buffer_size = need;
	if ((r = queue(fn, s, &tmpl)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	d->analyzed = 1;
	d->buffer = buffer;
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t solve(const char *fn, int sm, struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, void *x, void *y,
                              int ctype, struct trsv *d) {
	cudaStream_t s;
	struct solve tmpl;
	cusparseStatus_t r = args(fn, sm, h, &s, opa, opb, alpha, a, x, y, ctype, d, &tmpl);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (!d->analyzed)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: the descriptor has not been through the analysis", fn);
	return queue(fn, s, &tmpl);
}

EXPORT cusparseStatus_t cusparseSpSV_bufferSize(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                                                struct dnvec *y, int ctype, int alg, struct trsv *d, size_t *size) {
	(void)alg;
	return buffer_size("cusparseSpSV_bufferSize", 0, h, op, OP_N, alpha, a, x, y, ctype, d, size);
}

EXPORT cusparseStatus_t cusparseSpSV_analysis(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                                              struct dnvec *y, int ctype, int alg, struct trsv *d, void *buffer) {
	(void)alg;
	return analysis("cusparseSpSV_analysis", 0, h, op, OP_N, alpha, a, x, y, ctype, d, buffer);
}

EXPORT cusparseStatus_t cusparseSpSV_solve(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x, struct dnvec *y,
                                           int ctype, int alg, struct trsv *d) {
	(void)alg;
	return solve("cusparseSpSV_solve", 0, h, op, OP_N, alpha, a, x, y, ctype, d);
}

EXPORT cusparseStatus_t cusparseSpSM_bufferSize(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct dnmat *b,
                                                struct dnmat *c, int ctype, int alg, struct trsv *d, size_t *size) {
	(void)alg;
	return buffer_size("cusparseSpSM_bufferSize", 1, h, opa, opb, alpha, a, b, c, ctype, d, size);
}

EXPORT cusparseStatus_t cusparseSpSM_analysis(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct dnmat *b,
                                              struct dnmat *c, int ctype, int alg, struct trsv *d, void *buffer) {
	(void)alg;
	return analysis("cusparseSpSM_analysis", 1, h, opa, opb, alpha, a, b, c, ctype, d, buffer);
}

EXPORT cusparseStatus_t cusparseSpSM_solve(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct dnmat *b,
                                           struct dnmat *c, int ctype, int alg, struct trsv *d) {
	(void)alg;
	return solve("cusparseSpSM_solve", 1, h, opa, opb, alpha, a, b, c, ctype, d);
}
