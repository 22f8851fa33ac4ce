// SpGEMM: C = alpha·A·B of CSR matrices, in cuSPARSE's three steps. The
// work estimation and the compute step each ask for a buffer (a NULL
// buffer returns its size) and check that they get one; the compute step
// multiplies, in stream order, into the descriptor, waits for it (as
// cuSPARSE does, to learn C's number of entries, which cusparseSpMatGetSize
// then reports), and the copy step writes C's arrays in stream order.
// Each row of C has its columns in increasing order, each value summed in
// double (complex) precision in the order of A's and B's entries; an
// entry whose products cancel stays, as a structural entry.
#include "fakecusparse.h"

#include <stdlib.h>
#include <string.h>

#define SPGEMM_BUFFER1 128
#define SPGEMM_BUFFER2 256

struct spgemm {
	int stage; // 1: estimated, 2: computed
	int64_t rows, cols, nnz;
	int64_t *offsets, *colind; // host arrays of the result
	cplx *values;
	int failed;
};

static void result_free(struct spgemm *d) {
	free(d->offsets);
	free(d->colind);
	free(d->values);
	d->offsets = d->colind = NULL;
	d->values = NULL;
	d->nnz = 0;
}

EXPORT cusparseStatus_t cusparseSpGEMM_createDescr(struct spgemm **out) {
	if (out == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpGEMM_createDescr: NULL pointer");
	struct spgemm *d = calloc(1, sizeof *d);
	if (d == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "cusparseSpGEMM_createDescr: out of host memory");
	reg_add(K_SPGEMM, d);
	*out = d;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpGEMM_destroyDescr(struct spgemm *d) {
	if (!reg_del(K_SPGEMM, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpGEMM_destroyDescr: %p is not a live SpGEMM descriptor", (void *)d);
	result_free(d);
	free(d);
	return CUSPARSE_STATUS_SUCCESS;
}

// args checks what the three steps share.
static cusparseStatus_t args(const char *fn, struct handle *h, cudaStream_t *s, int opa, int opb, const void *alpha, struct spmat *a,
                             struct spmat *b, struct spmat *c, int ctype, struct spgemm *d) {
	cusparseStatus_t r = handle_stream(fn, h, s);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (!reg_has(K_SPMAT, a) || !reg_has(K_SPMAT, b) || !reg_has(K_SPMAT, c))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A, B or C is not a live sparse matrix", fn);
	if (!reg_has(K_SPGEMM, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live SpGEMM descriptor", fn, (void *)d);
	if (opa != OP_N || opb != OP_N)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: operations %d and %d: SpGEMM takes only non-transposed operands", fn, opa, opb);
	if (a->format != FMT_CSR || b->format != FMT_CSR || c->format != FMT_CSR)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: SpGEMM takes CSR matrices only", fn);
	if (alpha == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: alpha is NULL", fn);
	if (a->vtype != ctype || b->vtype != ctype || c->vtype != ctype)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value types %d, %d, %d with compute type %d", fn, a->vtype, b->vtype, c->vtype, ctype);
	if (a->cols != b->rows || c->rows != a->rows || c->cols != b->cols)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: A %lld×%lld, B %lld×%lld and C %lld×%lld do not multiply", fn, (long long)a->rows,
		            (long long)a->cols, (long long)b->rows, (long long)b->cols, (long long)c->rows, (long long)c->cols);
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpGEMM_workEstimation(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct spmat *b,
                                                      const void *beta, struct spmat *c, int ctype, int alg, struct spgemm *d,
                                                      size_t *size1, void *buffer1) {
	const char *fn = "cusparseSpGEMM_workEstimation";
	(void)beta;
	(void)alg;
	cudaStream_t s;
	cusparseStatus_t r = args(fn, h, &s, opa, opb, alpha, a, b, c, ctype, d);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (size1 == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	if (buffer1 == NULL) {
		*size1 = SPGEMM_BUFFER1;
		return CUSPARSE_STATUS_SUCCESS;
	}
	if (*size1 < SPGEMM_BUFFER1)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: a buffer of %zu bytes, under the %d asked for", fn, *size1, SPGEMM_BUFFER1);
	if ((r = check_range(fn, "buffer1", buffer1, *size1)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	if ((r = spmat_check(fn, "A", a)) != CUSPARSE_STATUS_SUCCESS || (r = spmat_check(fn, "B", b)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	d->stage = 1;
	return CUSPARSE_STATUS_SUCCESS;
}

struct multiply {
	struct job job;
	struct spmat a, b;
	cplx alpha;
	struct spgemm *d;
	void *buffer;
	size_t buffer_size;
};

static void multiply_destroy(struct job *j) { free(j); }

static void multiply_run(struct job *j) {
	struct multiply *m = (struct multiply *)j;
	struct spgemm *d = m->d;
	spmat_note(&m->a);
	spmat_note(&m->b);
	note(m->buffer, m->buffer_size, 1);
	result_free(d);
	d->failed = 1;
	struct triplets ta, tb;
	if (triplets_of(&m->a, &ta) != 0)
		return;
	if (triplets_of(&m->b, &tb) != 0) {
		triplets_free(&ta);
		return;
	}
	int64_t rows = m->a.rows, cols = m->b.cols;
	// B's entries by row: B is CSR, so its triplets come in row order.
	int64_t *bstart = calloc((size_t)m->b.rows + 1, sizeof *bstart);
	cplx *acc = calloc((size_t)(cols ? cols : 1), sizeof *acc);
	int64_t *mark = malloc((size_t)(cols ? cols : 1) * sizeof *mark);
	int64_t *list = malloc((size_t)(cols ? cols : 1) * sizeof *list);
	int64_t cap = 16, nnz = 0;
	int64_t *offsets = calloc((size_t)rows + 1, sizeof *offsets), *colind = malloc((size_t)cap * sizeof *colind);
	cplx *values = malloc((size_t)cap * sizeof *values);
	if (!bstart || !acc || !mark || !list || !offsets || !colind || !values) {
		run_error("out of host memory for SpGEMM");
		goto out;
	}
	for (int64_t e = 0; e < tb.n; e++)
		bstart[tb.r[e] + 1]++;
	for (int64_t i = 0; i < m->b.rows; i++)
		bstart[i + 1] += bstart[i];
	for (int64_t c = 0; c < cols; c++)
		mark[c] = -1;
	int64_t e = 0;
	for (int64_t i = 0; i < rows; i++) {
		int64_t n = 0;
		for (; e < ta.n && ta.r[e] == i; e++) {
			int64_t k = ta.c[e];
			for (int64_t f = bstart[k]; f < bstart[k + 1]; f++) {
				int64_t c = tb.c[f];
				if (mark[c] != i) {
					mark[c] = i;
					acc[c] = 0;
					list[n++] = c;
				}
				acc[c] += ta.v[e] * tb.v[f];
			}
		}
		// Columns in increasing order: insertion sort of the row's list.
		for (int64_t x = 1; x < n; x++)
			for (int64_t y = x; y > 0 && list[y - 1] > list[y]; y--) {
				int64_t t = list[y];
				list[y] = list[y - 1];
				list[y - 1] = t;
			}
		if (nnz + n > cap) {
			while (nnz + n > cap)
				cap *= 2;
			int64_t *nc = realloc(colind, (size_t)cap * sizeof *colind);
			if (nc != NULL)
				colind = nc;
			cplx *nv = realloc(values, (size_t)cap * sizeof *values);
			if (nv != NULL)
				values = nv;
			if (nc == NULL || nv == NULL) {
				run_error("out of host memory for SpGEMM");
				goto out;
			}
		}
		for (int64_t x = 0; x < n; x++) {
			colind[nnz] = list[x];
			values[nnz] = m->alpha * acc[list[x]];
			nnz++;
		}
		offsets[i + 1] = nnz;
	}
	d->rows = rows;
	d->cols = cols;
	d->nnz = nnz;
	d->offsets = offsets;
	d->colind = colind;
	d->values = values;
	offsets = colind = NULL;
	values = NULL;
	d->failed = 0;
out:
	free(bstart);
	free(acc);
	free(mark);
	free(list);
	free(offsets);
	free(colind);
	free(values);
	triplets_free(&ta);
	triplets_free(&tb);
}

EXPORT cusparseStatus_t cusparseSpGEMM_compute(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct spmat *b,
                                               const void *beta, struct spmat *c, int ctype, int alg, struct spgemm *d, size_t *size2,
                                               void *buffer2) {
	const char *fn = "cusparseSpGEMM_compute";
	(void)beta;
	(void)alg;
	cudaStream_t s;
	cusparseStatus_t r = args(fn, h, &s, opa, opb, alpha, a, b, c, ctype, d);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (size2 == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL size pointer", fn);
	if (d->stage < 1)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: the work estimation has not run with its buffer", fn);
	if (buffer2 == NULL) {
		*size2 = SPGEMM_BUFFER2;
		return CUSPARSE_STATUS_SUCCESS;
	}
	if (*size2 < SPGEMM_BUFFER2)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: a buffer of %zu bytes, under the %d asked for", fn, *size2, SPGEMM_BUFFER2);
	if ((r = check_range(fn, "buffer2", buffer2, *size2)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	if ((r = spmat_check(fn, "A", a)) != CUSPARSE_STATUS_SUCCESS || (r = spmat_check(fn, "B", b)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	int cap = capturing(s);
	if (cap != 0)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: a stream being captured: the compute step waits for its stream", fn);
	struct multiply *m = calloc(1, sizeof *m);
	if (m == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*m = (struct multiply){{multiply_run, multiply_destroy, 0}, *a, *b, scalar(alpha, ctype), d, buffer2, *size2};
	if ((r = enqueue(fn, s, &m->job)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	if ((r = sync_stream(fn, s)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (d->failed)
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: the product failed (see standard error)", fn);
	c->nnz = d->nnz;
	d->stage = 2;
	return CUSPARSE_STATUS_SUCCESS;
}

struct copy {
	struct job job;
	struct spmat c;
	int64_t *offsets, *colind;
	cplx *values;
};

static void copy_destroy(struct job *j) {
	struct copy *x = (struct copy *)j;
	free(x->offsets);
	free(x->colind);
	free(x->values);
	free(x);
}

static void copy_run(struct job *j) {
	struct copy *x = (struct copy *)j;
	const struct spmat *c = &x->c;
	note(c->p, (size_t)(c->rows + 1) * index_size(c->ptype), 1);
	note(c->q, (size_t)c->nnz * index_size(c->qtype), 1);
	note(c->values, (size_t)c->nnz * type_size(c->vtype), 1);
	for (int64_t i = 0; i <= c->rows; i++)
		store_index(c->p, c->ptype, i, x->offsets[i] + c->base);
	for (int64_t k = 0; k < c->nnz; k++) {
		store_index(c->q, c->qtype, k, x->colind[k] + c->base);
		store(c->values, c->vtype, k, x->values[k]);
	}
}

EXPORT cusparseStatus_t cusparseSpGEMM_copy(struct handle *h, int opa, int opb, const void *alpha, struct spmat *a, struct spmat *b,
                                            const void *beta, struct spmat *c, int ctype, int alg, struct spgemm *d) {
	const char *fn = "cusparseSpGEMM_copy";
	(void)beta;
	(void)alg;
	cudaStream_t s;
	cusparseStatus_t r = args(fn, h, &s, opa, opb, alpha, a, b, c, ctype, d);
	if (r != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (d->stage < 2)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: the compute step has not run with its buffer", fn);
	if (c->nnz != d->nnz || c->rows != d->rows)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: C has %lld entries, the product %lld", fn, (long long)c->nnz, (long long)d->nnz);
	if ((r = spmat_check(fn, "C", c)) != CUSPARSE_STATUS_SUCCESS)
		return r;
	if (c->rows >= 0 && c->p == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: C has no row offsets", fn);
	struct copy *x = calloc(1, sizeof *x);
	if (x == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	x->job = (struct job){copy_run, copy_destroy, 0};
	x->c = *c;
	x->offsets = malloc((size_t)(d->rows + 1) * sizeof *x->offsets);
	x->colind = malloc((size_t)(d->nnz ? d->nnz : 1) * sizeof *x->colind);
	x->values = malloc((size_t)(d->nnz ? d->nnz : 1) * sizeof *x->values);
	if (!x->offsets || !x->colind || !x->values) {
		copy_destroy(&x->job);
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	}
	memcpy(x->offsets, d->offsets, (size_t)(d->rows + 1) * sizeof *x->offsets);
	memcpy(x->colind, d->colind, (size_t)d->nnz * sizeof *x->colind);
	memcpy(x->values, d->values, (size_t)d->nnz * sizeof *x->values);
	return enqueue(fn, s, &x->job);
}
