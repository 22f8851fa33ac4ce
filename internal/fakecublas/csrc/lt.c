// cuBLASLt's handles, descriptors, layouts and preferences: their create,
// destroy and attributes. An attribute the fake does not model is refused
// with CUBLAS_STATUS_NOT_SUPPORTED naming it, and one of the wrong size with
// CUBLAS_STATUS_INVALID_VALUE, as cuBLASLt does.
#include "lt.h"

#include <stdlib.h>
#include <string.h>

typedef struct lthandle *cublasLtHandle_t;

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *out) {
	if (out == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtCreate: NULL handle pointer");
	if (cuda()->err != NULL)
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtCreate: %s", cuda()->err);
	struct lthandle *h = calloc(1, sizeof *h);
	if (h == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtCreate: out of host memory");
	reg_add(K_LTHANDLE, h);
	*out = h;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
	if (!reg_del(K_LTHANDLE, h))
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: %p is not a live cuBLASLt handle", (void *)h);
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

// attr copies an attribute of size bytes between the caller's buf and
// the field at p: in (set) or out (get, with *written).
static cublasStatus_t attr(const char *fn, int a, void *p, size_t size, void *buf, size_t n, size_t *written, int set) {
	if (!set && n == 0 && buf == NULL) {
		if (written == NULL)
			return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: attribute %d: no buffer and no size pointer", fn, a);
		*written = size; // a query of the size
		return CUBLAS_STATUS_SUCCESS;
	}
	if (buf == NULL || n != size)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: attribute %d takes %zu bytes, given %zu", fn, a, size, n);
	if (set)
		memcpy(p, buf, size);
	else
		memcpy(buf, p, size);
	if (written != NULL)
		*written = size;
	return CUBLAS_STATUS_SUCCESS;
}

// ---- matmul descriptors ----

EXPORT cublasStatus_t cublasLtMatmulDescCreate(struct desc **out, int compute, int scale_type) {
	if (out == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescCreate: NULL pointer");
	struct desc *d = calloc(1, sizeof *d);
	if (d == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmulDescCreate: out of host memory");
	d->compute = compute;
	d->scale_type = scale_type;
	d->epilogue = EPI_DEFAULT;
	d->bias_type = -1;
	reg_add(K_DESC, d);
	*out = d;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(struct desc *d) {
	if (!reg_del(K_DESC, d))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescDestroy: %p is not a live descriptor", (void *)d);
	free(d);
	return CUBLAS_STATUS_SUCCESS;
}

// CUBLASLT_MATMUL_DESC_*.
enum {
	D_COMPUTE_TYPE = 0,
	D_SCALE_TYPE = 1,
	D_POINTER_MODE = 2,
	D_TRANSA = 3,
	D_TRANSB = 4,
	D_TRANSC = 5,
	D_EPILOGUE = 7,
	D_BIAS_POINTER = 8,
	D_BIAS_BATCH_STRIDE = 10,
	D_A_SCALE_POINTER = 17,
	D_B_SCALE_POINTER = 18,
	D_FAST_ACCUM = 25,
	D_BIAS_DATA_TYPE = 26,
};

static cublasStatus_t desc_attr(const char *fn, struct desc *d, int a, void *buf, size_t n, size_t *written, int set) {
	if (!reg_has(K_DESC, d))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %p is not a live descriptor", fn, (void *)d);
	static int8_t fast_accum; // accepted and ignored: the fake has one accumulation
	switch (a) {
	case D_COMPUTE_TYPE:
		return attr(fn, a, &d->compute, 4, buf, n, written, set);
	case D_SCALE_TYPE:
		return attr(fn, a, &d->scale_type, 4, buf, n, written, set);
	case D_POINTER_MODE:
		return attr(fn, a, &d->pointer_mode, 4, buf, n, written, set);
	case D_TRANSA:
		return attr(fn, a, &d->transa, 4, buf, n, written, set);
	case D_TRANSB:
		return attr(fn, a, &d->transb, 4, buf, n, written, set);
	case D_TRANSC:
		return attr(fn, a, &d->transc, 4, buf, n, written, set);
	case D_EPILOGUE:
		return attr(fn, a, &d->epilogue, 4, buf, n, written, set);
	case D_BIAS_POINTER:
		return attr(fn, a, (void *)&d->bias, 8, buf, n, written, set);
	case D_BIAS_BATCH_STRIDE:
		return attr(fn, a, &d->bias_stride, 8, buf, n, written, set);
	case D_A_SCALE_POINTER:
		return attr(fn, a, (void *)&d->ascale, 8, buf, n, written, set);
	case D_B_SCALE_POINTER:
		return attr(fn, a, (void *)&d->bscale, 8, buf, n, written, set);
	case D_FAST_ACCUM: {
		int8_t v = fast_accum;
		return attr(fn, a, &v, 1, buf, n, written, set);
	}
	case D_BIAS_DATA_TYPE:
		return attr(fn, a, &d->bias_type, 4, buf, n, written, set);
	}
	return not_supported(fn, "this CUBLASLT_MATMUL_DESC attribute");
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(struct desc *d, int a, const void *buf, size_t n) {
	return desc_attr("cublasLtMatmulDescSetAttribute", d, a, (void *)buf, n, NULL, 1);
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(struct desc *d, int a, void *buf, size_t n, size_t *written) {
	return desc_attr("cublasLtMatmulDescGetAttribute", d, a, buf, n, written, 0);
}

// ---- matrix layouts ----

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(struct layout **out, int type, uint64_t rows, uint64_t cols, int64_t ld) {
	if (out == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutCreate: NULL pointer");
	struct layout *l = calloc(1, sizeof *l);
	if (l == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatrixLayoutCreate: out of host memory");
	*l = (struct layout){.type = type, .rows = rows, .cols = cols, .ld = ld, .batch = 1};
	reg_add(K_LAYOUT, l);
	*out = l;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(struct layout *l) {
	if (!reg_del(K_LAYOUT, l))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutDestroy: %p is not a live layout", (void *)l);
	free(l);
	return CUBLAS_STATUS_SUCCESS;
}

// CUBLASLT_MATRIX_LAYOUT_*.
enum { L_TYPE = 0, L_ORDER = 1, L_ROWS = 2, L_COLS = 3, L_LD = 4, L_BATCH_COUNT = 5, L_STRIDED_BATCH_OFFSET = 6 };

static cublasStatus_t layout_attr(const char *fn, struct layout *l, int a, void *buf, size_t n, size_t *written, int set) {
	if (!reg_has(K_LAYOUT, l))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %p is not a live layout", fn, (void *)l);
	switch (a) {
	case L_TYPE:
		return attr(fn, a, &l->type, 4, buf, n, written, set);
	case L_ORDER:
		return attr(fn, a, &l->order, 4, buf, n, written, set);
	case L_ROWS:
		return attr(fn, a, &l->rows, 8, buf, n, written, set);
	case L_COLS:
		return attr(fn, a, &l->cols, 8, buf, n, written, set);
	case L_LD:
		return attr(fn, a, &l->ld, 8, buf, n, written, set);
	case L_BATCH_COUNT:
		return attr(fn, a, &l->batch, 4, buf, n, written, set);
	case L_STRIDED_BATCH_OFFSET:
		return attr(fn, a, &l->stride, 8, buf, n, written, set);
	}
	return not_supported(fn, "this CUBLASLT_MATRIX_LAYOUT attribute");
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(struct layout *l, int a, const void *buf, size_t n) {
	return layout_attr("cublasLtMatrixLayoutSetAttribute", l, a, (void *)buf, n, NULL, 1);
}

EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(struct layout *l, int a, void *buf, size_t n, size_t *written) {
	return layout_attr("cublasLtMatrixLayoutGetAttribute", l, a, buf, n, written, 0);
}

// ---- preferences ----

EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(struct pref **out) {
	if (out == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceCreate: NULL pointer");
	struct pref *p = calloc(1, sizeof *p);
	if (p == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmulPreferenceCreate: out of host memory");
	reg_add(K_PREF, p);
	*out = p;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(struct pref *p) {
	if (!reg_del(K_PREF, p))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceDestroy: %p is not a live preference", (void *)p);
	free(p);
	return CUBLAS_STATUS_SUCCESS;
}

// The fake's algorithm needs no workspace and has no alignment or wave
// demands, so of the preferences only the workspace is kept; the others
// are taken at their sizes and narrow nothing.
static cublasStatus_t pref_attr(const char *fn, struct pref *p, int a, void *buf, size_t n, size_t *written, int set) {
	if (!reg_has(K_PREF, p))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %p is not a live preference", fn, (void *)p);
	uint64_t ignored = 0;
	switch (a) {
	case 1: // MAX_WORKSPACE_BYTES
		return attr(fn, a, &p->max_workspace, 8, buf, n, written, set);
	case 0: // SEARCH_MODE
	case 3: // REDUCTION_SCHEME_MASK
	case 5: // MIN_ALIGNMENT_A_BYTES … D
	case 6:
	case 7:
	case 8:
	case 9: // MAX_WAVES_COUNT
		return attr(fn, a, &ignored, 4, buf, n, written, set);
	case 11: // IMPL_MASK
		return attr(fn, a, &ignored, 8, buf, n, written, set);
	}
	return not_supported(fn, "this CUBLASLT_MATMUL_PREF attribute");
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(struct pref *p, int a, const void *buf, size_t n) {
	return pref_attr("cublasLtMatmulPreferenceSetAttribute", p, a, (void *)buf, n, NULL, 1);
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceGetAttribute(struct pref *p, int a, void *buf, size_t n, size_t *written) {
	return pref_attr("cublasLtMatmulPreferenceGetAttribute", p, a, buf, n, written, 0);
}
