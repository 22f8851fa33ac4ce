// Descriptors of sparse matrices, dense vectors and dense matrices: host
// objects that name device memory, as cuSPARSE's are. A call that takes
// one copies what it needs, so a descriptor destroyed after the call
// leaves queued work unharmed.
#include "fakecusparse.h"

#include <stdlib.h>

static cusparseStatus_t create_sp(const char *fn, struct spmat **out, int format, int64_t rows, int64_t cols, int64_t nnz, void *p,
                                  void *q, void *values, int ptype, int qtype, int base, int vtype) {
	if (out == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL descriptor pointer", fn);
	if (rows < 0 || cols < 0 || nnz < 0)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %lld×%lld with %lld entries", fn, (long long)rows, (long long)cols, (long long)nnz);
	if (index_size(ptype) == 0 || index_size(qtype) == 0)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: index types %d and %d: the fake models 32- and 64-bit indices", fn, ptype, qtype);
	if (type_size(vtype) == 0)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value type %d: the fake models float32, float64 and their complex types", fn, vtype);
	if (base != BASE_ZERO && base != BASE_ONE)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: index base %d", fn, base);
	struct spmat *m = calloc(1, sizeof *m);
	if (m == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*m = (struct spmat){format, rows, cols, nnz, p, q, values, ptype, qtype, base, vtype, FILL_LOWER, DIAG_NON_UNIT, 1, 1, ORDER_ROW};
	reg_add(K_SPMAT, m);
	*out = m;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseCreateCsr(struct spmat **out, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *colind,
                                          void *values, int otype, int ctype, int base, int vtype) {
	return create_sp("cusparseCreateCsr", out, FMT_CSR, rows, cols, nnz, offsets, colind, values, otype, ctype, base, vtype);
}

EXPORT cusparseStatus_t cusparseCreateCsc(struct spmat **out, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *rowind,
                                          void *values, int otype, int rtype, int base, int vtype) {
	return create_sp("cusparseCreateCsc", out, FMT_CSC, rows, cols, nnz, offsets, rowind, values, otype, rtype, base, vtype);
}

EXPORT cusparseStatus_t cusparseCreateCoo(struct spmat **out, int64_t rows, int64_t cols, int64_t nnz, void *rowind, void *colind,
                                          void *values, int itype, int base, int vtype) {
	return create_sp("cusparseCreateCoo", out, FMT_COO, rows, cols, nnz, rowind, colind, values, itype, itype, base, vtype);
}

EXPORT cusparseStatus_t cusparseCreateBsr(struct spmat **out, int64_t brows, int64_t bcols, int64_t bnnz, int64_t rbs, int64_t cbs, void *offsets,
                                          void *colind, void *values, int otype, int ctype, int base, int vtype, int order) {
	const char *fn = "cusparseCreateBsr";
	if (rbs < 1 || cbs < 1 || brows < 0 || bcols < 0 || (order != ORDER_ROW && order != ORDER_COL))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: blocks of %lld×%lld in order %d", fn, (long long)rbs, (long long)cbs, order);
	cusparseStatus_t r = create_sp(fn, out, FMT_BSR, brows * rbs, bcols * cbs, bnnz, offsets, colind, values, otype, ctype, base, vtype);
	if (r == CUSPARSE_STATUS_SUCCESS) {
		(*out)->rbs = rbs;
		(*out)->cbs = cbs;
		(*out)->border = order;
	}
	return r;
}

int64_t spmat_values(const struct spmat *m) { return m->nnz * m->rbs * m->cbs; }

EXPORT cusparseStatus_t cusparseDestroySpMat(struct spmat *m) {
	if (!reg_del(K_SPMAT, m))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseDestroySpMat: %p is not a live sparse matrix", (void *)m);
	free(m);
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpMatGetSize(struct spmat *m, int64_t *rows, int64_t *cols, int64_t *nnz) {
	if (!reg_has(K_SPMAT, m))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpMatGetSize: %p is not a live sparse matrix", (void *)m);
	if (rows == NULL || cols == NULL || nnz == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseSpMatGetSize: NULL pointer");
	*rows = m->rows;
	*cols = m->cols;
	*nnz = m->nnz;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseCsrSetPointers(struct spmat *m, void *offsets, void *colind, void *values) {
	if (!reg_has(K_SPMAT, m) || m->format != FMT_CSR)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseCsrSetPointers: %p is not a live CSR matrix", (void *)m);
	m->p = offsets;
	m->q = colind;
	m->values = values;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSpMatSetAttribute(struct spmat *m, int attr, const void *data, size_t size) {
	const char *fn = "cusparseSpMatSetAttribute";
	if (!reg_has(K_SPMAT, m))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %p is not a live sparse matrix", fn, (void *)m);
	if (data == NULL || size != sizeof(int))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: the value is %zu bytes, not an enumeration's %zu", fn, size, sizeof(int));
	int v = *(const int *)data;
	switch (attr) {
	case ATTR_FILL_MODE:
		if (v != FILL_LOWER && v != FILL_UPPER)
			return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: fill mode %d", fn, v);
		m->fill = v;
		return CUSPARSE_STATUS_SUCCESS;
	case ATTR_DIAG_TYPE:
		if (v != DIAG_NON_UNIT && v != DIAG_UNIT)
			return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: diagonal type %d", fn, v);
		m->diag = v;
		return CUSPARSE_STATUS_SUCCESS;
	}
	return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: attribute %d", fn, attr);
}

EXPORT cusparseStatus_t cusparseCreateDnVec(struct dnvec **out, int64_t size, void *values, int vtype) {
	const char *fn = "cusparseCreateDnVec";
	if (out == NULL || size < 0)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL descriptor pointer or size %lld", fn, (long long)size);
	if (type_size(vtype) == 0)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value type %d", fn, vtype);
	struct dnvec *v = calloc(1, sizeof *v);
	if (v == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*v = (struct dnvec){size, values, vtype};
	reg_add(K_DNVEC, v);
	*out = v;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseDestroyDnVec(struct dnvec *v) {
	if (!reg_del(K_DNVEC, v))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseDestroyDnVec: %p is not a live dense vector", (void *)v);
	free(v);
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseCreateDnMat(struct dnmat **out, int64_t rows, int64_t cols, int64_t ld, void *values, int vtype, int order) {
	const char *fn = "cusparseCreateDnMat";
	if (out == NULL || rows < 0 || cols < 0)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: NULL descriptor pointer or a %lld×%lld matrix", fn, (long long)rows, (long long)cols);
	if (order != ORDER_COL && order != ORDER_ROW)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: order %d", fn, order);
	int64_t inner = order == ORDER_COL ? rows : cols;
	if (ld < inner || ld < 1)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: leading dimension %lld under %lld", fn, (long long)ld, (long long)inner);
	if (type_size(vtype) == 0)
		return fail(CUSPARSE_STATUS_NOT_SUPPORTED, "%s: value type %d", fn, vtype);
	struct dnmat *d = calloc(1, sizeof *d);
	if (d == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
	*d = (struct dnmat){rows, cols, ld, values, vtype, order};
	reg_add(K_DNMAT, d);
	*out = d;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseDestroyDnMat(struct dnmat *d) {
	if (!reg_del(K_DNMAT, d))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseDestroyDnMat: %p is not a live dense matrix", (void *)d);
	free(d);
	return CUSPARSE_STATUS_SUCCESS;
}

size_t dnmat_bytes(const struct dnmat *d) {
	if (d->rows == 0 || d->cols == 0)
		return 0;
	int64_t outer = d->order == ORDER_COL ? d->cols : d->rows, inner = d->order == ORDER_COL ? d->rows : d->cols;
	return (size_t)((outer - 1) * d->ld + inner) * type_size(d->vtype);
}

// spmat_arrays gives the element counts of m's index arrays.
static void spmat_arrays(const struct spmat *m, int64_t *np, int64_t *nq) {
	switch (m->format) {
	case FMT_CSR:
		*np = m->rows + 1;
		break;
	case FMT_BSR:
		*np = m->rows / m->rbs + 1;
		break;
	case FMT_CSC:
		*np = m->cols + 1;
		break;
	default:
		*np = m->nnz;
	}
	*nq = m->nnz;
}

cusparseStatus_t spmat_check(const char *fn, const char *name, const struct spmat *m) {
	int64_t np, nq;
	spmat_arrays(m, &np, &nq);
	cusparseStatus_t r = check_range(fn, name, m->p, (size_t)np * index_size(m->ptype));
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_range(fn, name, m->q, (size_t)nq * index_size(m->qtype));
	if (r == CUSPARSE_STATUS_SUCCESS)
		r = check_range(fn, name, m->values, (size_t)spmat_values(m) * type_size(m->vtype));
	return r;
}

void spmat_note(const struct spmat *m) {
	int64_t np, nq;
	spmat_arrays(m, &np, &nq);
	note(m->p, (size_t)np * index_size(m->ptype), 0);
	note(m->q, (size_t)nq * index_size(m->qtype), 0);
	note(m->values, (size_t)spmat_values(m) * type_size(m->vtype), 0);
}

void triplets_free(struct triplets *t) {
	free(t->r);
	free(t->c);
	free(t->v);
	*t = (struct triplets){0};
}

// bsr_triplets expands m's blocks, every value of each (zeros too).
static int bsr_triplets(const struct spmat *m, struct triplets *t) {
	int64_t b = m->base, brows = m->rows / m->rbs, bs = m->rbs * m->cbs;
	for (int64_t i = 0; i < brows; i++) {
		int64_t lo = load_index(m->p, m->ptype, i) - b, hi = load_index(m->p, m->ptype, i + 1) - b;
		if (lo < 0 || hi > m->nnz || lo > hi) {
			run_error("offsets %lld to %lld of block row %lld lie outside the %lld blocks", (long long)lo, (long long)hi, (long long)i,
			          (long long)m->nnz);
			return -1;
		}
		for (int64_t k = lo; k < hi; k++) {
			int64_t j = load_index(m->q, m->qtype, k) - b;
			for (int64_t r = 0; r < m->rbs; r++)
				for (int64_t c = 0; c < m->cbs; c++) {
					int64_t e = k * bs + r * m->cbs + c;
					t->r[e] = i * m->rbs + r;
					t->c[e] = j * m->cbs + c;
					t->v[e] = load(m->values, m->vtype, k * bs + (m->border == ORDER_ROW ? r * m->cbs + c : r + c * m->rbs));
				}
		}
	}
	return 0;
}

int triplets_of(const struct spmat *m, struct triplets *t) {
	*t = (struct triplets){0};
	int64_t n = spmat_values(m);
	t->r = malloc((size_t)(n ? n : 1) * sizeof *t->r);
	t->c = malloc((size_t)(n ? n : 1) * sizeof *t->c);
	t->v = malloc((size_t)(n ? n : 1) * sizeof *t->v);
	if (t->r == NULL || t->c == NULL || t->v == NULL) {
		triplets_free(t);
		run_error("out of host memory for a matrix of %lld entries", (long long)n);
		return -1;
	}
	int64_t b = m->base;
	if (m->format != FMT_COO) {
		// The offsets must end at the number of entries (or blocks), or
		// some would be in no row.
		int64_t outer = m->format == FMT_CSR ? m->rows : m->format == FMT_CSC ? m->cols : m->rows / m->rbs;
		int64_t end = load_index(m->p, m->ptype, outer) - b, first = load_index(m->p, m->ptype, 0) - b;
		if (first != 0 || end != m->nnz) {
			run_error("the offsets run from %lld to %lld, not from 0 to the %lld entries", (long long)first, (long long)end, (long long)m->nnz);
			triplets_free(t);
			return -1;
		}
	}
	if (m->format == FMT_BSR) {
		if (bsr_triplets(m, t) != 0) {
			triplets_free(t);
			return -1;
		}
	} else if (m->format == FMT_COO) {
		for (int64_t k = 0; k < n; k++) {
			t->r[k] = load_index(m->p, m->ptype, k) - b;
			t->c[k] = load_index(m->q, m->qtype, k) - b;
		}
	} else {
		int64_t outer = m->format == FMT_CSR ? m->rows : m->cols;
		for (int64_t i = 0; i < outer; i++) {
			int64_t lo = load_index(m->p, m->ptype, i) - b, hi = load_index(m->p, m->ptype, i + 1) - b;
			if (lo < 0 || hi > n || lo > hi) {
				run_error("offsets %lld to %lld of line %lld lie outside the %lld entries", (long long)lo, (long long)hi, (long long)i,
				          (long long)n);
				triplets_free(t);
				return -1;
			}
			for (int64_t k = lo; k < hi; k++) {
				int64_t j = load_index(m->q, m->qtype, k) - b;
				t->r[k] = m->format == FMT_CSR ? i : j;
				t->c[k] = m->format == FMT_CSR ? j : i;
			}
		}
	}
	for (int64_t k = 0; k < n; k++) {
		if (t->r[k] < 0 || t->r[k] >= m->rows || t->c[k] < 0 || t->c[k] >= m->cols) {
			run_error("entry %lld at (%lld, %lld) lies outside the %lld×%lld matrix", (long long)k, (long long)t->r[k],
			          (long long)t->c[k], (long long)m->rows, (long long)m->cols);
			triplets_free(t);
			return -1;
		}
		if (m->format != FMT_BSR)
			t->v[k] = load(m->values, m->vtype, k);
	}
	t->n = n;
	return 0;
}

void transpose_op(struct triplets *t, int op) {
	if (op == OP_N)
		return;
	for (int64_t k = 0; k < t->n; k++) {
		int64_t x = t->r[k];
		t->r[k] = t->c[k];
		t->c[k] = x;
		if (op == OP_C)
			t->v[k] = conj(t->v[k]);
	}
}

void op_shape(int op, int64_t rows, int64_t cols, int64_t *orows, int64_t *ocols) {
	*orows = op == OP_N ? rows : cols;
	*ocols = op == OP_N ? cols : rows;
}
