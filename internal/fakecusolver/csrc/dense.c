// The dense entry points, float (S) and double (D): their arguments are
// checked when the call is made, the work queued on the handle's stream
// (queue.c) and computed there in double precision (lapack.c), then
// rounded once to the caller's type.
//
// An illegal argument fails the call with CUSOLVER_STATUS_INVALID_VALUE
// and, as LAPACK reports it, queues info = -i, i its position among the
// arguments after the handle. Memory outside the fake driver's
// allocations fails the call with CUSOLVER_STATUS_INVALID_VALUE alone: a
// GPU would fault on it later. The workspace is checked for its size
// (lwork below what the _bufferSize call gives is an illegal argument)
// and written to, so that the race detector sees its use; its contents
// mean nothing.
#include "fakecusolver.h"

#include <stdlib.h>
#include <string.h>

enum { GETRF, GETRS, POTRF, POTRS, GEQRF, ORMQR, SYEVD, GESVD, GESVDJ };

size_t extent(const struct mat *x) {
	if (x->p == NULL || x->rows <= 0 || x->cols <= 0)
		return 0;
	return (size_t)(x->cols - 1) * (size_t)x->ld + (size_t)x->rows;
}

struct call {
	struct job job;
	int op, size;
	int illegal; // -i: the job only writes info
	int m, n, k;
	int f1, f2; // uplo, trans, side, jobz, jobu/jobvt as the call has them
	struct mat a, b, vt;
	void *vec; // ipiv, tau, W or S
	int vlen;  // its elements
	int *info;
	void *work;
	size_t work_bytes;
};

static double get(const void *p, int size, size_t i) {
	return size == 4 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void put(void *p, int size, size_t i, double v) {
	if (size == 4)
		((float *)p)[i] = (float)v;
	else
		((double *)p)[i] = v;
}

// load copies x into doubles with x's leading dimension (NULL when out of
// host memory); store writes its elements back, the gaps between columns
// left as they are.
double *load(const struct mat *x, int size) {
	size_t n = extent(x);
	double *d = malloc((n + 1) * sizeof *d);
	if (d == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		d[i] = get(x->p, size, i);
	return d;
}

void store(const struct mat *x, int size, const double *d) {
	for (int j = 0; j < x->cols; j++)
		for (int i = 0; i < x->rows; i++) {
			size_t at = (size_t)i + (size_t)j * (size_t)x->ld;
			put(x->p, size, at, d[at]);
		}
}

void note_mat(const struct mat *x, int size, int write) { note(x->p, extent(x) * (size_t)size, write); }

static int run_gesvdj(struct call *c, const double *a, double *s);

static void set_info(struct call *c, int v) {
	note(c->info, sizeof *c->info, 1);
	*c->info = v;
}

static void run(struct job *j) {
	struct call *c = (struct call *)j;
	if (c->illegal != 0) {
		set_info(c, c->illegal);
		return;
	}
	if (c->work_bytes > 0) {
		note(c->work, c->work_bytes, 1);
		memset(c->work, 0, c->work_bytes);
	}
	int sz = c->size, info = 0;
	double *a = load(&c->a, sz), *b = NULL, *vec = malloc(((size_t)c->vlen + 1) * sizeof *vec), *vt = NULL;
	int *ipiv = NULL;
	if (a == NULL || vec == NULL)
		goto oom;
	note_mat(&c->a, sz, 0);
	switch (c->op) {
	case GETRF:
		ipiv = malloc(((size_t)c->vlen + 1) * sizeof *ipiv);
		if (ipiv == NULL)
			goto oom;
		info = lu(c->m, c->n, a, c->a.ld, ipiv);
		note(c->vec, (size_t)c->vlen * sizeof(int), 1);
		memcpy(c->vec, ipiv, (size_t)c->vlen * sizeof(int));
		note_mat(&c->a, sz, 1);
		store(&c->a, sz, a);
		break;
	case GETRS:
	case POTRS:
		if ((b = load(&c->b, sz)) == NULL)
			goto oom;
		note_mat(&c->b, sz, 0);
		if (c->op == GETRS) {
			note(c->vec, (size_t)c->vlen * sizeof(int), 0);
			lu_solve(c->f1, c->n, c->b.cols, a, c->a.ld, c->vec, b, c->b.ld);
		} else
			chol_solve(c->f1 == FILL_UPPER, c->n, c->b.cols, a, c->a.ld, b, c->b.ld);
		note_mat(&c->b, sz, 1);
		store(&c->b, sz, b);
		break;
	case POTRF:
		info = chol(c->f1 == FILL_UPPER, c->n, a, c->a.ld);
		note_mat(&c->a, sz, 1);
		store(&c->a, sz, a);
		break;
	case GEQRF:
		qr(c->m, c->n, a, c->a.ld, vec);
		note_mat(&c->a, sz, 1);
		store(&c->a, sz, a);
		note(c->vec, (size_t)c->vlen * (size_t)sz, 1);
		for (int i = 0; i < c->vlen; i++)
			put(c->vec, sz, (size_t)i, vec[i]);
		break;
	case ORMQR:
		if ((b = load(&c->b, sz)) == NULL)
			goto oom;
		note(c->vec, (size_t)c->vlen * (size_t)sz, 0);
		for (int i = 0; i < c->vlen; i++)
			vec[i] = get(c->vec, sz, (size_t)i);
		note_mat(&c->b, sz, 0);
		apply_q(c->f1 == SIDE_LEFT, c->f2, c->m, c->n, c->k, a, c->a.ld, vec, b, c->b.ld);
		note_mat(&c->b, sz, 1);
		store(&c->b, sz, b);
		break;
	case SYEVD:
		// The triangle uplo names is the matrix: the other is mirrored
		// from it.
		for (int jj = 0; jj < c->n; jj++)
			for (int i = jj + 1; i < c->n; i++) {
				double *lo = &a[(size_t)i + (size_t)jj * c->a.ld], *up = &a[(size_t)jj + (size_t)i * c->a.ld];
				if (c->f2 == FILL_LOWER)
					*up = *lo;
				else
					*lo = *up;
			}
		info = sym_eig(c->n, a, c->a.ld, vec, c->f1 == EIG_VECTOR);
		note(c->vec, (size_t)c->vlen * (size_t)sz, 1);
		for (int i = 0; i < c->vlen; i++)
			put(c->vec, sz, (size_t)i, vec[i]);
		if (c->f1 == EIG_VECTOR) {
			note_mat(&c->a, sz, 1);
			store(&c->a, sz, a);
		}
		break;
	case GESVDJ:
		info = run_gesvdj(c, a, vec);
		note(c->vec, (size_t)c->vlen * (size_t)sz, 1);
		for (int i = 0; i < c->vlen; i++)
			put(c->vec, sz, (size_t)i, vec[i]);
		break;
	case GESVD: {
		int ucols = c->f1 == 'A' ? c->m : c->f1 == 'S' ? c->n : 0;
		if (ucols > 0 && (b = malloc(((size_t)c->b.ld * ucols + 1) * sizeof *b)) == NULL)
			goto oom;
		if (c->f2 != 'N' && (vt = malloc(((size_t)c->vt.ld * c->n + 1) * sizeof *vt)) == NULL)
			goto oom;
		info = svd(c->m, c->n, a, c->a.ld, vec, b, c->b.ld, ucols, vt, c->vt.ld);
		note(c->vec, (size_t)c->vlen * (size_t)sz, 1);
		for (int i = 0; i < c->vlen; i++)
			put(c->vec, sz, (size_t)i, vec[i]);
		if (b != NULL) {
			note_mat(&c->b, sz, 1);
			store(&c->b, sz, b);
		}
		if (vt != NULL) {
			note_mat(&c->vt, sz, 1);
			store(&c->vt, sz, vt);
		}
		break;
	}
	}
	set_info(c, info);
	free(a);
	free(b);
	free(vt);
	free(vec);
	free(ipiv);
	return;
oom:
	say("a queued call", "out of host memory");
	set_info(c, 0x7fffffff);
	free(a);
	free(b);
	free(vt);
	free(vec);
	free(ipiv);
}

// submit checks what the entry point's own checks left (the handle, the
// memory) and queues c, which it takes. illegal is the 1-based position
// of an illegal argument, 0 for none.
static cusolverStatus_t submit(const char *fn, cusolverDnHandle_t h, struct call *c, int illegal) {
	if (!handle_live(h)) {
		free(c);
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	}
	if (c->info == NULL || !in_memory(c->info, sizeof *c->info)) {
		say(fn, "info %p is not an int of device memory", (void *)c->info);
		free(c);
		return CUSOLVER_STATUS_INVALID_VALUE;
	}
	if (illegal != 0) {
		say(fn, "argument %d is illegal", illegal);
		c->illegal = -illegal;
		cusolverStatus_t r = enqueue(fn, h->stream, &c->job);
		return r != CUSOLVER_STATUS_SUCCESS ? r : CUSOLVER_STATUS_INVALID_VALUE;
	}
	const struct mat *ms[] = {&c->a, &c->b, &c->vt};
	const char *names[] = {"A", "B", "VT"};
	for (int i = 0; i < 3; i++)
		if (!in_memory(ms[i]->p, extent(ms[i]) * (size_t)c->size)) {
			say(fn, "%s (%p) is not in one allocation of the fake driver", names[i], ms[i]->p);
			free(c);
			return CUSOLVER_STATUS_INVALID_VALUE;
		}
	size_t vsize = c->op == GETRF || c->op == GETRS ? sizeof(int) : (size_t)c->size;
	if (!in_memory(c->vec, (size_t)c->vlen * vsize) || !in_memory(c->work, c->work_bytes)) {
		say(fn, "a vector or the workspace is not in one allocation of the fake driver");
		free(c);
		return CUSOLVER_STATUS_INVALID_VALUE;
	}
	return enqueue(fn, h->stream, &c->job);
}

static struct call *new_call(int op, int size, int *info) {
	struct call *c = calloc(1, sizeof *c);
	if (c != NULL) {
		c->job.run = run;
		c->op = op;
		c->size = size;
		c->info = info;
	}
	return c;
}

int max1(int v) { return v > 1 ? v : 1; }
static int min(int a, int b) { return a < b ? a : b; }

// The workspace each call asks for, in elements.
static int lwork_getrf(int m, int n) { return max1(min(m, n)); }
static int lwork_potrf(int n) { return max1(n); }
static int lwork_geqrf(int n) { return max1(n); }
static int lwork_ormqr(int side, int m, int n) { return max1(side == SIDE_LEFT ? n : m); }
static int lwork_syevd(int n) { return max1(2 * n + 1); }
static int lwork_gesvd(int m, int n) { return max1(5 * min(m, n)); }

#define NEW(op)                                  \
	struct call *c = new_call(op, size, info);   \
	if (c == NULL)                               \
		return CUSOLVER_STATUS_ALLOC_FAILED;

static cusolverStatus_t size_out(cusolverDnHandle_t h, int ok, int v, int *lwork) {
	if (!handle_live(h))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	if (!ok || lwork == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	*lwork = v;
	return CUSOLVER_STATUS_SUCCESS;
}

// ---- LU ----

static cusolverStatus_t getrf(const char *fn, int size, cusolverDnHandle_t h, int m, int n, void *A, int lda, void *work, int *ipiv, int *info) {
	NEW(GETRF);
	c->m = m, c->n = n;
	c->a = (struct mat){A, m, n, lda};
	c->vec = ipiv, c->vlen = min(m, n) > 0 ? min(m, n) : 0;
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
	c->vec = tau, c->vlen = min(m, n) > 0 ? min(m, n) : 0;
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

// ---- Jacobi SVD ----

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
// returns the info: min(m, n)+1 where the rotations did not converge.
static int run_gesvdj(struct call *c, const double *a, double *s) {
	int m = c->m, n = c->n, k = min(m, n), vectors = c->f1 == EIG_VECTOR, econ = c->f2;
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
	int k = min(m, n) > 0 ? min(m, n) : 0, vectors = jobz == EIG_VECTOR;
	c->m = m, c->n = n, c->f1 = jobz, c->f2 = econ;
	c->a = (struct mat){A, m, n, lda};
	c->b = (struct mat){U, vectors ? m : 0, econ ? k : m, ldu};
	c->vt = (struct mat){V, vectors ? n : 0, econ ? k : n, ldv};
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
