// The batched Cholesky calls, potrfBatched and potrsBatched: the matrices
// are found through a device array of device pointers, read when the job
// runs, as the library reads it. A pointer in no allocation of the fake
// driver is skipped, said on standard error (with FAKECUSOLVER_VERBOSE),
// and, for potrf, its info set to -3 (the argument Aarray): a GPU would
// fault on it instead.
#include "fakecusolver.h"

#include <stdlib.h>

struct batch {
	struct job job;
	int potrs, size, upper, n, nrhs, count;
	int lda, ldb;
	void *const *a, *const *b;
	int *info; // count of them for potrf, one for potrs
};

// at is matrix i of the array arr, rows×cols with leading dimension ld;
// p is NULL where it lies in no allocation.
static struct mat at(void *const *arr, int i, int rows, int cols, int ld, int size) {
	struct mat m = {arr[i], rows, cols, ld};
	if (!in_memory(m.p, extent(&m) * (size_t)size) || (m.p == NULL && extent(&m) > 0))
		m.p = NULL;
	return m;
}

static void run_batch(struct job *j) {
	struct batch *c = (struct batch *)j;
	note(c->a, (size_t)c->count * sizeof(void *), 0);
	if (c->potrs)
		note(c->b, (size_t)c->count * sizeof(void *), 0);
	note(c->info, (c->potrs ? 1 : (size_t)c->count) * sizeof(int), 1);
	if (c->potrs)
		*c->info = 0;
	for (int i = 0; i < c->count; i++) {
		struct mat a = at(c->a, i, c->n, c->n, c->lda, c->size);
		if (a.p == NULL) {
			say(c->potrs ? "potrsBatched" : "potrfBatched", "matrix %d of A (%p) is in no allocation: skipped", i, c->a[i]);
			if (!c->potrs)
				c->info[i] = -3;
			continue;
		}
		double *da = load(&a, c->size);
		if (da == NULL)
			continue;
		note_mat(&a, c->size, 0);
		if (!c->potrs) {
			c->info[i] = chol(c->upper, c->n, da, c->lda);
			note_mat(&a, c->size, 1);
			store(&a, c->size, da);
			free(da);
			continue;
		}
		struct mat b = at(c->b, i, c->n, c->nrhs, c->ldb, c->size);
		double *db = b.p != NULL ? load(&b, c->size) : NULL;
		if (db != NULL) {
			note_mat(&b, c->size, 0);
			chol_solve(c->upper, c->n, c->nrhs, da, c->lda, db, c->ldb);
			note_mat(&b, c->size, 1);
			store(&b, c->size, db);
		} else
			say("potrsBatched", "matrix %d of B (%p) is in no allocation: skipped", i, c->b[i]);
		free(da);
		free(db);
	}
}

static cusolverStatus_t queue_batch(const char *fn, cusolverDnHandle_t h, struct batch *c, int illegal) {
	if (!handle_live(h)) {
		free(c);
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	}
	if (illegal != 0) {
		say(fn, "argument %d is illegal", illegal);
		free(c);
		return CUSOLVER_STATUS_INVALID_VALUE;
	}
	if (c->count == 0 || c->n == 0) {
		free(c);
		return CUSOLVER_STATUS_SUCCESS;
	}
	size_t ptrs = (size_t)c->count * sizeof(void *);
	if (!in_memory(c->a, ptrs) || (c->potrs && !in_memory(c->b, ptrs)) ||
	    !in_memory(c->info, (c->potrs ? 1 : (size_t)c->count) * sizeof(int))) {
		say(fn, "a pointer array or the info is not in one allocation of the fake driver");
		free(c);
		return CUSOLVER_STATUS_INVALID_VALUE;
	}
	c->job.run = run_batch;
	return enqueue(fn, h->stream, &c->job);
}

static cusolverStatus_t potrf_batched(const char *fn, int size, cusolverDnHandle_t h, int uplo, int n, void **a, int lda, int *info, int count) {
	struct batch *c = calloc(1, sizeof *c);
	if (c == NULL)
		return CUSOLVER_STATUS_ALLOC_FAILED;
	*c = (struct batch){.size = size, .upper = uplo == FILL_UPPER, .n = n, .count = count, .lda = lda, .a = a, .info = info};
	int bad = uplo != FILL_LOWER && uplo != FILL_UPPER ? 1 : n < 0 ? 2 : lda < max1(n) ? 4 : count < 0 ? 6 : 0;
	return queue_batch(fn, h, c, bad);
}

// potrs_batched takes nrhs = 1 only, as cuSOLVER documents.
static cusolverStatus_t potrs_batched(const char *fn, int size, cusolverDnHandle_t h, int uplo, int n, int nrhs, void **a, int lda, void **b, int ldb, int *info, int count) {
	struct batch *c = calloc(1, sizeof *c);
	if (c == NULL)
		return CUSOLVER_STATUS_ALLOC_FAILED;
	*c = (struct batch){.potrs = 1, .size = size, .upper = uplo == FILL_UPPER, .n = n, .nrhs = nrhs, .count = count, .lda = lda, .ldb = ldb, .a = a, .b = b, .info = info};
	int bad = uplo != FILL_LOWER && uplo != FILL_UPPER ? 1 : n < 0 ? 2 : nrhs != 1 ? 3 : lda < max1(n) ? 5 : ldb < max1(n) ? 7 : count < 0 ? 9 : 0;
	return queue_batch(fn, h, c, bad);
}

EXPORT cusolverStatus_t cusolverDnSpotrfBatched(cusolverDnHandle_t h, int uplo, int n, float **a, int lda, int *info, int count) {
	return potrf_batched("cusolverDnSpotrfBatched", 4, h, uplo, n, (void **)a, lda, info, count);
}
EXPORT cusolverStatus_t cusolverDnDpotrfBatched(cusolverDnHandle_t h, int uplo, int n, double **a, int lda, int *info, int count) {
	return potrf_batched("cusolverDnDpotrfBatched", 8, h, uplo, n, (void **)a, lda, info, count);
}
EXPORT cusolverStatus_t cusolverDnSpotrsBatched(cusolverDnHandle_t h, int uplo, int n, int nrhs, float **a, int lda, float **b, int ldb, int *info, int count) {
	return potrs_batched("cusolverDnSpotrsBatched", 4, h, uplo, n, nrhs, (void **)a, lda, (void **)b, ldb, info, count);
}
EXPORT cusolverStatus_t cusolverDnDpotrsBatched(cusolverDnHandle_t h, int uplo, int n, int nrhs, double **a, int lda, double **b, int ldb, int *info, int count) {
	return potrs_batched("cusolverDnDpotrsBatched", 8, h, uplo, n, nrhs, (void **)a, lda, (void **)b, ldb, info, count);
}
