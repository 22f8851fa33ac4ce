// SpMV and SpMM: y = alpha·op(A)·x + beta·y and C = alpha·op(A)·op(B) +
// beta·C, checked when called and computed on the stream's thread in
// double (complex) precision, each output element summed in the order of
// A's entries, then rounded once to the output's type. As in cuSPARSE,
// beta 0 writes the output without reading it. The work asks for a small
// buffer (the bufferSize calls) and checks that it is given one: the
// fake uses none of it, but reports writing it to the race detector, as
// cuSPARSE's kernels would.
#include "fakecusparse.h"

#include <stdlib.h>
#include <string.h>

// The buffer sizes the fake asks for.
#define SPMV_BUFFER 256
#define SPMM_BUFFER 512

static int op_valid(int op) { return op == OP_N || op == OP_T || op == OP_C; }

struct product {
	struct job job;
	int vector; // SpMV: B and C are x and y, n is 1
	int opa, opb;
	struct spmat a;
	struct dnmat b, c; // for SpMV: column vectors
	cplx alpha, beta;
	void *buffer;
	size_t buffer_size;
};

static void product_destroy(struct job *j) { free(j); }

static int64_t dn_at(const struct dnmat *d, int64_t i, int64_t j) {
	return d->order == ORDER_COL ? i + j * d->ld : i * d->ld + j;
}

static void product_run(struct job *j) {
	struct product *p = (struct product *)j;
	int64_t m, k, n = p->c.cols;
	op_shape(p->opa, p->a.rows, p->a.cols, &m, &k);
	spmat_note(&p->a);
	note(p->b.values, dnmat_bytes(&p->b), 0);
	if (p->beta != 0)
		note(p->c.values, dnmat_bytes(&p->c), 0);
	note(p->c.values, dnmat_bytes(&p->c), 1);
	note(p->buffer, p->buffer_size, 1);
	if (m == 0 || n == 0)
		return;
	struct triplets t;
	if (triplets_of(&p->a, &t) != 0)
		return;
	transpose_op(&t, p->opa);
	cplx *acc = calloc((size_t)(m * n), sizeof *acc);
	if (acc == NULL) {
		run_error("out of host memory for a %lld×%lld product", (long long)m, (long long)n);
		triplets_free(&t);
		return;
	}
	for (int64_t e = 0; e < t.n; e++) {
		int64_t r = t.r[e], c = t.c[e];
		for (int64_t col = 0; col < n; col++) {
			cplx bv;
			if (p->opb == OP_N)
				bv = load(p->b.values, p->b.vtype, dn_at(&p->b, c, col));
			else {
				bv = load(p->b.values, p->b.vtype, dn_at(&p->b, col, c));
				if (p->opb == OP_C)
					bv = conj(bv);
			}
			acc[r * n + col] += t.v[e] * bv;
		}
	}
	for (int64_t r = 0; r < m; r++)
		for (int64_t col = 0; col < n; col++) {
			int64_t at = dn_at(&p->c, r, col);
			cplx v = p->alpha * acc[r * n + col];
			if (p->beta != 0)
				v += p->beta * load(p->c.values, p->c.vtype, at);
			store(p->c.values, p->c.vtype, at, v);
		}
	free(acc);
	triplets_free(&t);
}

// check_product checks the product's operands, types and shapes.
static cusparseStatus_t check_product(const char *fn, struct product *p, int ctype, const void *alpha, const void *beta) {
	if (!op_valid(p->opa) || !op_valid(p->opb))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: operations %d and %d", fn, p->opa, p->opb);
	if (alpha == NULL || beta == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: alpha or beta is NULL", fn);
	if (p->a.vtype != ctype || p->b.vtype != ctype || p->c.vtype != ctype)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value types %d, %d, %d with compute type %d: the fake models one type throughout", fn,
		            p->a.vtype, p->b.vtype, p->c.vtype, ctype);
	int64_t m, k, br, bc;
	op_shape(p->opa, p->a.rows, p->a.cols, &m, &k);
	op_shape(p->opb, p->b.rows, p->b.cols, &br, &bc);
	if (br != k || p->c.rows != m || bc != p->c.cols)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: op(A) %lld×%lld, op(B) %lld×%lld and C %lld×%lld do not multiply", fn, (long long)m,
		            (long long)k, (long long)br, (long long)bc, (long long)p->c.rows, (long long)p->c.cols);
	p->alpha = scalar(alpha, ctype);
	p->beta = scalar(beta, ctype);
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t vec_as_mat(const char *fn, struct dnvec *v, struct dnmat *d) {
	if (!reg_has(K_DNVEC, v))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live dense vector", fn, (void *)v);
	*d = (struct dnmat){v->size, 1, v->size > 0 ? v->size : 1, v->values, v->vtype, ORDER_COL};
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t get_mat(const char *fn, struct dnmat *src, struct dnmat *d) {
	if (!reg_has(K_DNMAT, src))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live dense matrix", fn, (void *)src);
	*d = *src;
	return CUSPARSE_STATUS_SUCCESS;
}

static cusparseStatus_t get_sp(const char *fn, struct spmat *src, struct spmat *d) {
	if (!reg_has(K_SPMAT, src))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live sparse matrix", fn, (void *)src);
	*d = *src;
	return CUSPARSE_STATUS_SUCCESS;
}

// setup reads a product's arguments into p.
static cusparseStatus_t setup(const char *fn, struct handle *h, cudaStream_t *s, struct product *p, int vector, int opa, int opb,
                              const void *alpha, struct spmat *a, void *b, const void *beta, void *c, int ctype) {
	cusparseStatus_t r = handle_stream(fn, h, s);
	memset(p, 0, sizeof *p);
	p->vector = vector;
	p->opa = opa;
	p->opb = opb;
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = get_sp(fn, a, &p->a);
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = vector ? vec_as_mat(fn, b, &p->b) : get_mat(fn, b, &p->b);
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = vector ? vec_as_mat(fn, c, &p->c) : get_mat(fn, c, &p->c);
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_product(fn, p, ctype, alpha, beta);
	return r;
}

static cusparseStatus_t run(const char *fn, cudaStream_t s, struct product *tmpl, void *buffer, size_t need) {
	cusparseStatus_t r = spmat_check(fn, "A", &tmpl->a);
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_range(fn, tmpl->vector ? "x" : "B", tmpl->b.values, dnmat_bytes(&tmpl->b));
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_range(fn, tmpl->vector ? "y" : "C", tmpl->c.values, dnmat_bytes(&tmpl->c));
	if (r == CUSPARSE_STATUS_SUCCESS && buffer == NULL)
		r = fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: no external buffer where the bufferSize call asks for %zu bytes", fn, need);
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_range(fn, "the external buffer", buffer, need);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	struct product *p = malloc(sizeof *p);
	if (p == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*p = *tmpl;
	p->job.run = product_run;
	p->job.destroy = product_destroy;
	p->buffer = buffer;
	p->buffer_size = need;
	return enqueue(fn, s, &p->job);
}

EXPORT cusparseStatus_t cusparseSpMV_bufferSize(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x,
                                                const void *beta, struct dnvec *y, int ctype, int alg, size_t *size) {
	const char *fn = "cusparseSpMV_bufferSize";
	(void)alg;
	cudaStream_t s;
	struct product p;
	cusparseStatus_t r = setup(fn, h, &s, &p, 1, op, OP_N, alpha, a, x, beta, y, ctype);
	if (r == CUSPARSE_STATUS_SUCCESS && size == NULL)
		r = fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	if (r == CUSPARSE_STATUS_SUCCESS)
		*size = SPMV_BUFFER;
	return r;
}

EXPORT cusparseStatus_t cusparseSpMV(struct handle *h, int op, const void *alpha, struct spmat *a, struct dnvec *x, const void *beta,
                                     struct dnvec *y, int ctype, int alg, void *buffer) {
	const char *fn = "cusparseSpMV";
	(void)alg;
	cudaStream_t s;
	struct product p;
	cusparseStatus_t r = setup(fn, h, &s, &p, 1, op, OP_N, alpha, a, x, beta, y, ctype);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	return run(fn, s, &p, buffer, SPMV_BUFFER);
}

EXPORT cusparseStatus_t cusparseSpMM_bufferSize(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct dnmat *b,
                                                const void *beta, struct dnmat *c, int ctype, int alg, size_t *size) {
	const char *fn = "cusparseSpMM_bufferSize";
	(void)alg;
	cudaStream_t s;
	struct product p;
	cusparseStatus_t r = setup(fn, h, &s, &p, 0, opa, opb, alpha, a, b, beta, c, ctype);
	if (r == CUSPARSE_STATUS_SUCCESS && size == NULL)
		r = fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	if (r == CUSPARSE_STATUS_SUCCESS)
		*size = SPMM_BUFFER;
	return r;
}

EXPORT cusparseStatus_t cusparseSpMM(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct dnmat *b,
                                     const void *beta, struct dnmat *c, int ctype, int alg, void *buffer) {
	const char *fn = "cusparseSpMM";
	(void)alg;
	cudaStream_t s;
	struct product p;
	cusparseStatus_t r = setup(fn, h, &s, &p, 0, opa, opb, alpha, a, b, beta, c, ctype);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	return run(fn, s, &p, buffer, SPMM_BUFFER);
}
