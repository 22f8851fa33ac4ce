// The dense entry points of one matrix, float (S) and double (D), and
// their _bufferSize calls: each checks its arguments and hands them to
// submit (call.c) as a struct call.
//
// The workspace sizes are the fake's own; the work never reads the
// workspace, but writes it, so that the race detector sees its use.
#include "fakecusolver.h"

#include <stdlib.h>

// The workspace each call asks for, in elements.
static int lwork_getrf(int m, int n) { return max1(imin(m, n)); }
static int lwork_potrf(int n) { return max1(n); }
static int lwork_geqrf(int n) { return max1(n); }
static int lwork_ormqr(int side, int m, int n) { return max1(side == SIDE_LEFT ? n : m); }
static int lwork_syevd(int n) { return max1(2 * n + 1); }
static int lwork_gesvd(int m, int n) { return max1(5 * imin(m, n)); }

// ---- LU ----

static cusolverStatus_t getrf(const char *fn, int size, cusolverDnHandle_t h, int m, int n, void *A, int lda, void *work, int *ipiv, int *info) {
	NEW(GETRF);
	c->m = m, c->n = n;
	c->a = (struct mat){A, m, n, lda};
	c->vec = ipiv, c->vlen = imin(m, n) > 0 ? imin(m, n) : 0;
	c->work = work, c->work_bytes = (size_t)lwork_getrf(m, n) * (size_t)size;
	int bad = m < 0 ? 1 : n < 0 ? 2 : lda < max1(m) ? 4 : 0;
	if (bad == 0 && ipiv == NULL) {
		say(fn, "no pivoting (a NULL devIpiv) is not modeled by the fake cuSOLVER");
		free(c);
		return CUSOLVER_STATUS_NOT_SUPPORTED;
	}
	return submit(fn, h, c, bad);
}

static cusolverStatus_t getrs(const char *fn, int size, cusolverDnHandle_t h, int trans, int n, int nrhs, void *A, int lda, int *ipiv, void *B, int ldb, int *info) {
	NEW(GETRS);
	c->n = n, c->f1 = trans;
	c->a = (struct mat){A, n, n, lda};
	c->b = (struct mat){B, n, nrhs, ldb};
	c->vec = ipiv, c->vlen = n > 0 ? n : 0;
	int bad = trans != OP_N && trans != OP_T ? 1 : n < 0 ? 2 : nrhs < 0 ? 3 : lda < max1(n) ? 5 : ldb < max1(n) ? 8 : 0;
	return submit(fn, h, c, bad);
}

// ---- Cholesky ----

static cusolverStatus_t potrf(const char *fn, int size, cusolverDnHandle_t h, int uplo, int n, void *A, int lda, void *work, int lwork, int *info) {
	NEW(POTRF);
	c->n = n, c->f1 = uplo;
	c->a = (struct mat){A, n, n, lda};
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	int bad = uplo != FILL_LOWER && uplo != FILL_UPPER ? 1 : n < 0 ? 2 : lda < max1(n) ? 4 : lwork < lwork_potrf(n) ? 6 : 0;
	return submit(fn, h, c, bad);
}

static cusolverStatus_t potrs(const char *fn, int size, cusolverDnHandle_t h, int uplo, int n, int nrhs, void *A, int lda, void *B, int ldb, int *info) {
	NEW(POTRS);
	c->n = n, c->f1 = uplo;
	c->a = (struct mat){A, n, n, lda};
	c->b = (struct mat){B, n, nrhs, ldb};
	int bad = uplo != FILL_LOWER && uplo != FILL_UPPER ? 1 : n < 0 ? 2 : nrhs < 0 ? 3 : lda < max1(n) ? 5 : ldb < max1(n) ? 7 : 0;
	return submit(fn, h, c, bad);
}

// ---- QR ----

static cusolverStatus_t geqrf(const char *fn, int size, cusolverDnHandle_t h, int m, int n, void *A, int lda, void *tau, void *work, int lwork, int *info) {
	NEW(GEQRF);
	c->m = m, c->n = n;
	c->a = (struct mat){A, m, n, lda};
	c->vec = tau, c->vlen = imin(m, n) > 0 ? imin(m, n) : 0;
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	int bad = m < 0 ? 1 : n < 0 ? 2 : lda < max1(m) ? 4 : lwork < lwork_geqrf(n) ? 7 : 0;
	return submit(fn, h, c, bad);
}

static cusolverStatus_t ormqr(const char *fn, int size, cusolverDnHandle_t h, int side, int trans, int m, int n, int k, void *A, int lda, void *tau, void *C, int ldc, void *work, int lwork, int *info) {
	NEW(ORMQR);
	int nq = side == SIDE_LEFT ? m : n;
	c->m = m, c->n = n, c->k = k, c->f1 = side, c->f2 = trans;
	c->a = (struct mat){A, nq, k, lda};
	c->b = (struct mat){C, m, n, ldc};
	c->vec = tau, c->vlen = k > 0 ? k : 0;
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	int bad = side != SIDE_LEFT && side != SIDE_RIGHT ? 1 : trans != OP_N && trans != OP_T ? 2 : m < 0 ? 3 : n < 0 ? 4 : k < 0 || k > nq ? 5 : lda < max1(nq) ? 7 : ldc < max1(m) ? 10 : lwork < lwork_ormqr(side, m, n) ? 12 : 0;
	return submit(fn, h, c, bad);
}

// ---- eigenvalues and singular values ----

static cusolverStatus_t syevd(const char *fn, int size, cusolverDnHandle_t h, int jobz, int uplo, int n, void *A, int lda, void *W, void *work, int lwork, int *info) {
	NEW(SYEVD);
	c->n = n, c->f1 = jobz, c->f2 = uplo;
	c->a = (struct mat){A, n, n, lda};
	c->vec = W, c->vlen = n > 0 ? n : 0;
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	int bad = jobz != EIG_NOVECTOR && jobz != EIG_VECTOR ? 1 : uplo != FILL_LOWER && uplo != FILL_UPPER ? 2 : n < 0 ? 3 : lda < max1(n) ? 5 : lwork < lwork_syevd(n) ? 8 : 0;
	return submit(fn, h, c, bad);
}

static cusolverStatus_t gesvd(const char *fn, int size, cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, void *A, int lda, void *S, void *U, int ldu, void *VT, int ldvt, void *work, int lwork, void *rwork, int *info) {
	NEW(GESVD);
	c->m = m, c->n = n, c->f1 = jobu, c->f2 = jobvt;
	c->a = (struct mat){A, m, n, lda};
	int ucols = jobu == 'A' ? m : jobu == 'S' ? n : 0;
	c->b = (struct mat){U, m, ucols, ldu};
	c->vt = (struct mat){VT, jobvt == 'N' ? 0 : n, n, ldvt};
	c->vec = S, c->vlen = n > 0 && m >= n ? n : 0;
	c->work = work, c->work_bytes = (size_t)(lwork > 0 ? lwork : 0) * (size_t)size;
	(void)rwork;
	int bad = jobu != 'A' && jobu != 'S' && jobu != 'O' && jobu != 'N' ? 1
	        : jobvt != 'A' && jobvt != 'S' && jobvt != 'O' && jobvt != 'N' ? 2
	        : m < 0 ? 3
	        : n < 0 || n > m ? 4
	        : lda < max1(m) ? 6
	        : ldu < (ucols > 0 ? max1(m) : 1) ? 9
	        : ldvt < (jobvt != 'N' ? max1(n) : 1) ? 11
	        : lwork < lwork_gesvd(m, n) ? 13 : 0;
	if (bad == 0 && (jobu == 'O' || jobvt == 'O')) {
		say(fn, "results written over A (job 'O') are not modeled by the fake cuSOLVER");
		free(c);
		return CUSOLVER_STATUS_NOT_SUPPORTED;
	}
	return submit(fn, h, c, bad);
}

// ---- the exported names ----

EXPORT cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, float *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, m >= 0 && n >= 0 && lda >= max1(m), lwork_getrf(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, double *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, m >= 0 && n >= 0 && lda >= max1(m), lwork_getrf(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t h, int m, int n, float *A, int lda, float *work, int *ipiv, int *info) {
	return getrf("cusolverDnSgetrf", 4, h, m, n, A, lda, work, ipiv, info);
}
EXPORT cusolverStatus_t cusolverDnDgetrf(cusolverDnHandle_t h, int m, int n, double *A, int lda, double *work, int *ipiv, int *info) {
	return getrf("cusolverDnDgetrf", 8, h, m, n, A, lda, work, ipiv, info);
}
EXPORT cusolverStatus_t cusolverDnSgetrs(cusolverDnHandle_t h, int trans, int n, int nrhs, const float *A, int lda, const int *ipiv, float *B, int ldb, int *info) {
	return getrs("cusolverDnSgetrs", 4, h, trans, n, nrhs, (void *)A, lda, (int *)ipiv, B, ldb, info);
}
EXPORT cusolverStatus_t cusolverDnDgetrs(cusolverDnHandle_t h, int trans, int n, int nrhs, const double *A, int lda, const int *ipiv, double *B, int ldb, int *info) {
	return getrs("cusolverDnDgetrs", 8, h, trans, n, nrhs, (void *)A, lda, (int *)ipiv, B, ldb, info);
}

EXPORT cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t h, int uplo, int n, float *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, (uplo == FILL_LOWER || uplo == FILL_UPPER) && n >= 0 && lda >= max1(n), lwork_potrf(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDpotrf_bufferSize(cusolverDnHandle_t h, int uplo, int n, double *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, (uplo == FILL_LOWER || uplo == FILL_UPPER) && n >= 0 && lda >= max1(n), lwork_potrf(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t h, int uplo, int n, float *A, int lda, float *work, int lwork, int *info) {
	return potrf("cusolverDnSpotrf", 4, h, uplo, n, A, lda, work, lwork, info);
}
EXPORT cusolverStatus_t cusolverDnDpotrf(cusolverDnHandle_t h, int uplo, int n, double *A, int lda, double *work, int lwork, int *info) {
	return potrf("cusolverDnDpotrf", 8, h, uplo, n, A, lda, work, lwork, info);
}
EXPORT cusolverStatus_t cusolverDnSpotrs(cusolverDnHandle_t h, int uplo, int n, int nrhs, const float *A, int lda, float *B, int ldb, int *info) {
	return potrs("cusolverDnSpotrs", 4, h, uplo, n, nrhs, (void *)A, lda, B, ldb, info);
}
EXPORT cusolverStatus_t cusolverDnDpotrs(cusolverDnHandle_t h, int uplo, int n, int nrhs, const double *A, int lda, double *B, int ldb, int *info) {
	return potrs("cusolverDnDpotrs", 8, h, uplo, n, nrhs, (void *)A, lda, B, ldb, info);
}

EXPORT cusolverStatus_t cusolverDnSgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, float *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, m >= 0 && n >= 0 && lda >= max1(m), lwork_geqrf(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, double *A, int lda, int *lwork) {
	(void)A;
	return size_out(h, m >= 0 && n >= 0 && lda >= max1(m), lwork_geqrf(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSgeqrf(cusolverDnHandle_t h, int m, int n, float *A, int lda, float *tau, float *work, int lwork, int *info) {
	return geqrf("cusolverDnSgeqrf", 4, h, m, n, A, lda, tau, work, lwork, info);
}
EXPORT cusolverStatus_t cusolverDnDgeqrf(cusolverDnHandle_t h, int m, int n, double *A, int lda, double *tau, double *work, int lwork, int *info) {
	return geqrf("cusolverDnDgeqrf", 8, h, m, n, A, lda, tau, work, lwork, info);
}

static int ormqr_ok(int side, int trans, int m, int n, int k, int lda, int ldc) {
	int nq = side == SIDE_LEFT ? m : n;
	return (side == SIDE_LEFT || side == SIDE_RIGHT) && (trans == OP_N || trans == OP_T) && m >= 0 && n >= 0 && k >= 0 && k <= nq &&
	       lda >= max1(nq) && ldc >= max1(m);
}
EXPORT cusolverStatus_t cusolverDnSormqr_bufferSize(cusolverDnHandle_t h, int side, int trans, int m, int n, int k, const float *A, int lda, const float *tau, const float *C, int ldc, int *lwork) {
	(void)A, (void)tau, (void)C;
	return size_out(h, ormqr_ok(side, trans, m, n, k, lda, ldc), lwork_ormqr(side, m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDormqr_bufferSize(cusolverDnHandle_t h, int side, int trans, int m, int n, int k, const double *A, int lda, const double *tau, const double *C, int ldc, int *lwork) {
	(void)A, (void)tau, (void)C;
	return size_out(h, ormqr_ok(side, trans, m, n, k, lda, ldc), lwork_ormqr(side, m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSormqr(cusolverDnHandle_t h, int side, int trans, int m, int n, int k, const float *A, int lda, const float *tau, float *C, int ldc, float *work, int lwork, int *info) {
	return ormqr("cusolverDnSormqr", 4, h, side, trans, m, n, k, (void *)A, lda, (void *)tau, C, ldc, work, lwork, info);
}
EXPORT cusolverStatus_t cusolverDnDormqr(cusolverDnHandle_t h, int side, int trans, int m, int n, int k, const double *A, int lda, const double *tau, double *C, int ldc, double *work, int lwork, int *info) {
	return ormqr("cusolverDnDormqr", 8, h, side, trans, m, n, k, (void *)A, lda, (void *)tau, C, ldc, work, lwork, info);
}

EXPORT cusolverStatus_t cusolverDnSsyevd_bufferSize(cusolverDnHandle_t h, int jobz, int uplo, int n, const float *A, int lda, const float *W, int *lwork) {
	(void)A, (void)W;
	return size_out(h, (jobz == EIG_NOVECTOR || jobz == EIG_VECTOR) && (uplo == FILL_LOWER || uplo == FILL_UPPER) && n >= 0 && lda >= max1(n), lwork_syevd(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDsyevd_bufferSize(cusolverDnHandle_t h, int jobz, int uplo, int n, const double *A, int lda, const double *W, int *lwork) {
	(void)A, (void)W;
	return size_out(h, (jobz == EIG_NOVECTOR || jobz == EIG_VECTOR) && (uplo == FILL_LOWER || uplo == FILL_UPPER) && n >= 0 && lda >= max1(n), lwork_syevd(n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSsyevd(cusolverDnHandle_t h, int jobz, int uplo, int n, float *A, int lda, float *W, float *work, int lwork, int *info) {
	return syevd("cusolverDnSsyevd", 4, h, jobz, uplo, n, A, lda, W, work, lwork, info);
}
EXPORT cusolverStatus_t cusolverDnDsyevd(cusolverDnHandle_t h, int jobz, int uplo, int n, double *A, int lda, double *W, double *work, int lwork, int *info) {
	return syevd("cusolverDnDsyevd", 8, h, jobz, uplo, n, A, lda, W, work, lwork, info);
}

EXPORT cusolverStatus_t cusolverDnSgesvd_bufferSize(cusolverDnHandle_t h, int m, int n, int *lwork) {
	return size_out(h, m >= 0 && n >= 0, lwork_gesvd(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnDgesvd_bufferSize(cusolverDnHandle_t h, int m, int n, int *lwork) {
	return size_out(h, m >= 0 && n >= 0, lwork_gesvd(m, n), lwork);
}
EXPORT cusolverStatus_t cusolverDnSgesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, float *A, int lda, float *S, float *U, int ldu, float *VT, int ldvt, float *work, int lwork, float *rwork, int *info) {
	return gesvd("cusolverDnSgesvd", 4, h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info);
}
EXPORT cusolverStatus_t cusolverDnDgesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, double *A, int lda, double *S, double *U, int ldu, double *VT, int ldvt, double *work, int lwork, double *rwork, int *info) {
	return gesvd("cusolverDnDgesvd", 8, h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info);
}
