// A dense call of the fake: its checks when made, its job when run. The
// arguments are checked when the call is made, the work queued on the
// handle's stream (queue.c) and computed there in double precision
// (lapack.c), then rounded once to the caller's type.
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

size_t extent(const struct mat *x) {
	if (x->p == NULL || x->rows <= 0 || x->cols <= 0)
		return 0;
	return (size_t)(x->cols - 1) * (size_t)x->ld + (size_t)x->rows;
}

double get(const void *p, int size, size_t i) {
	return size == 4 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

void put(void *p, int size, size_t i, double v) {
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
cusolverStatus_t submit(const char *fn, cusolverDnHandle_t h, struct call *c, int illegal) {
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

struct call *new_call(int op, int size, int *info) {
	struct call *c = calloc(1, sizeof *c);
	if (c != NULL) {
		c->job.run = run;
		c->op = op;
		c->size = size;
		c->info = info;
	}
	return c;
}

cusolverStatus_t size_out(cusolverDnHandle_t h, int ok, int v, int *lwork) {
	if (!handle_live(h))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	if (!ok || lwork == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	*lwork = v;
	return CUSOLVER_STATUS_SUCCESS;
}
