// The Jacobi SVD, gesvdj, and its gesvdjInfo_t: the decomposition is
// lapack.c's svd, of A or, for a wide A, of Aᵀ.
#include "fakecusolver.h"

#include <stdlib.h>

// A gesvdjInfo_t: the tolerance and sweeps are kept for the record (the
// fake's Jacobi runs to its own); magic tells a live one.
struct gesvdj_info {
	unsigned magic;
	double tolerance;
	int max_sweeps, sort;
};
enum { GESVDJ_MAGIC = 0x53564a49 };

EXPORT cusolverStatus_t cusolverDnCreateGesvdjInfo(struct gesvdj_info **out) {
	if (out == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	struct gesvdj_info *p = calloc(1, sizeof *p);
	if (p == NULL)
		return CUSOLVER_STATUS_ALLOC_FAILED;
	*p = (struct gesvdj_info){GESVDJ_MAGIC, 0, 100, 1};
	*out = p;
	return CUSOLVER_STATUS_SUCCESS;
}

static int gesvdj_live(const struct gesvdj_info *p) { return p != NULL && p->magic == GESVDJ_MAGIC; }

EXPORT cusolverStatus_t cusolverDnDestroyGesvdjInfo(struct gesvdj_info *p) {
	if (!gesvdj_live(p))
		return CUSOLVER_STATUS_INVALID_VALUE;
	p->magic = 0;
	free(p);
	return CUSOLVER_STATUS_SUCCESS;
}

EXPORT cusolverStatus_t cusolverDnXgesvdjSetTolerance(struct gesvdj_info *p, double tol) {
	if (!gesvdj_live(p))
		return CUSOLVER_STATUS_INVALID_VALUE;
	p->tolerance = tol;
	return CUSOLVER_STATUS_SUCCESS;
}

EXPORT cusolverStatus_t cusolverDnXgesvdjSetMaxSweeps(struct gesvdj_info *p, int sweeps) {
	if (!gesvdj_live(p))
		return CUSOLVER_STATUS_INVALID_VALUE;
	p->max_sweeps = sweeps;
	return CUSOLVER_STATUS_SUCCESS;
}

// run_gesvdj decomposes c's A (a, loaded) into s, c->b (U) and c->vt
// (V, not Vᵀ), through svd of A or, when it is wide, of Aᵀ = V·Σ·Uᵀ. It
// returns the info: imin(m, n)+1 where the rotations did not converge.
int run_gesvdj(struct call *c, const double *a, double *s) {
	int m = c->m, n = c->n, k = imin(m, n), vectors = c->f1 == EIG_VECTOR, econ = c->f2;
	if (k == 0)
		return 0;
	int tall = m >= n, rows = tall ? m : n, cols = tall ? n : m; // of the matrix svd takes
	double *x = malloc(((size_t)rows * cols + 1) * sizeof *x);
	int ucols = vectors ? (econ ? cols : rows) : 0;
	double *u = malloc(((size_t)rows * (ucols > 0 ? ucols : 1)) * sizeof *u);
	double *vt = malloc(((size_t)cols * cols + 1) * sizeof *vt);
	double *big = NULL, *small = NULL;
	int left = 0;
	if (x == NULL || u == NULL || vt == NULL) {
		left = 1;
		goto out;
	}
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < rows; i++)
			x[i + (size_t)j * rows] = tall ? a[i + (size_t)j * c->a.ld] : a[j + (size_t)i * c->a.ld];
	left = svd(rows, cols, x, rows, s, vectors ? u : NULL, rows, ucols, vectors ? vt : NULL, cols);
	if (!vectors)
		goto out;
	// The factor of the long side (rows×ucols) is u; of the short side
	// (cols×cols) vtᵀ. A tall A's U is the first, its V the second; a
	// wide A's the other way round.
	struct mat *long_side = tall ? &c->b : &c->vt, *short_side = tall ? &c->vt : &c->b;
	big = malloc(((size_t)long_side->ld * ucols + 1) * sizeof *big);
	small = malloc(((size_t)short_side->ld * cols + 1) * sizeof *small);
	if (big == NULL || small == NULL) {
		left = 1;
		goto out;
	}
	for (int j = 0; j < ucols; j++)
		for (int i = 0; i < rows; i++)
			big[i + (size_t)j * long_side->ld] = u[i + (size_t)j * rows];
	for (int j = 0; j < cols; j++)
		for (int i = 0; i < cols; i++)
			small[i + (size_t)j * short_side->ld] = vt[j + (size_t)i * cols];
	note_mat(long_side, c->size, 1);
	store(long_side, c->size, big);
	note_mat(short_side, c->size, 1);
	store(short_side, c->size, small);
out:
	free(x);
	free(u);
	free(vt);
	free(big);
	free(small);
	return left > 0 ? k + 1 : 0;
}

static int lwork_gesvdj(int m, int n) { return max1(2 * (m > n ? m : n)); }

static cusolverStatus_t gesvdj(const char *fn, int size, cusolverDnHandle_t h, int jobz, int econ, int m, int n, void *A, int lda, void *S, void *U, int ldu, void *V, int ldv, void *work, int lwork, int *info, struct gesvdj_info *params) {
	NEW(GESVDJ);
	int k = imin(m, n) > 0 ? imin(m, n) : 0, vectors = jobz == EIG_VECTOR;
	c->m = m, c->n = n, c->f1 = jobz, c->f2 = econ;
	c->a = (struct mat){A, m, n, lda};
	// Asked for the values alone, cuSOLVER still writes U and V, at their
	// economy size (with none it fails): they must be device memory.
	c->b = (struct mat){U, m, econ || !vectors ? k : m, ldu};
	c->vt = (struct mat){V, n, econ || !vectors ? k : n, ldv};
	c->vec = S, c->vlen = k;
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	int bad = jobz != EIG_NOVECTOR && jobz != EIG_VECTOR ? 1
	        : econ != 0 && econ != 1 ? 2
	        : m < 0 ? 3
	        : n < 0 ? 4
	        : lda < max1(m) ? 6
	        : ldu < max1(m) ? 9
	        : ldv < max1(n) ? 11
	        : lwork < lwork_gesvdj(m, n) ? 13
	        : !gesvdj_live(params) ? 15 : 0;
	if (bad == 0 && k > 0 && (U == NULL || V == NULL)) {
		say(fn, "U or V is NULL, which cuSOLVER writes");
		free(c);
		return CUSOLVER_STATUS_INTERNAL_ERROR;
	}
	return submit(fn, h, c, bad);
}

static int gesvdj_ok(int jobz, int econ, int m, int n, int lda, int ldu, int ldv, struct gesvdj_info *params) {
	return (jobz == EIG_NOVECTOR || jobz == EIG_VECTOR) && (econ == 0 || econ == 1) && m >= 0 && n >= 0 && lda >= max1(m) &&
	       ldu >= max1(m) && ldv >= max1(n) && gesvdj_live(params);
}

EXPORT cusolverStatus_t cusolverDnSgesvdj_bufferSize(cusolverDnHandle_t h, int jobz, int econ, int m, int n, const float *A, int lda, const float *S, const float *U, int ldu, const float *V, int ldv, int *lwork, struct gesvdj_info *params) {
	(void)A, (void)S, (void)U, (void)V;
	return size_out(h, gesvdj_ok(jobz, econ, m, n, lda, ldu, ldv, params), lwork_gesvdj(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDgesvdj_bufferSize(cusolverDnHandle_t h, int jobz, int econ, int m, int n, const double *A, int lda, const double *S, const double *U, int ldu, const double *V, int ldv, int *lwork, struct gesvdj_info *params) {
	(void)A, (void)S, (void)U, (void)V;
	return size_out(h, gesvdj_ok(jobz, econ, m, n, lda, ldu, ldv, params), lwork_gesvdj(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSgesvdj(cusolverDnHandle_t h, int jobz, int econ, int m, int n, float *A, int lda, float *S, float *U, int ldu, float *V, int ldv, float *work, int lwork, int *info, struct gesvdj_info *params) {
	return gesvdj("cusolverDnSgesvdj", 4, h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params);
}
EXPORT cusolverStatus_t cusolverDnDgesvdj(cusolverDnHandle_t h, int jobz, int econ, int m, int n, double *A, int lda, double *S, double *U, int ldu, double *V, int ldv, double *work, int lwork, int *info, struct gesvdj_info *params) {
	return gesvdj("cusolverDnDgesvdj", 8, h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params);
}
