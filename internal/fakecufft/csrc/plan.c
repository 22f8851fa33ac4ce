// Plans: creation, the checks of their sizes and layouts as cufftPlanMany
// documents them, the stream, the work area, the version.
//
// A plan needs no work area here: every planner reports 0 bytes, and
// cufftSetWorkArea and cufftSetAutoAllocation are taken and kept, unused.
#include "fakecufft.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct plan **g_plans; // by handle − 1; NULL: destroyed
static int g_nplans;

void note(const char *fn, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fakecufft: %s: ", fn);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

// fakecufft_marker tells Is that a library is this one.
EXPORT int fakecufft_marker(void) { return 1; }

// fakecufft_live is the number of plans not destroyed.
EXPORT long fakecufft_live(void) {
	long n = 0;
	pthread_mutex_lock(&g_mu);
	for (int i = 0; i < g_nplans; i++)
		n += g_plans[i] != NULL;
	pthread_mutex_unlock(&g_mu);
	return n;
}

cufftResult plan_get(cufftHandle h, struct plan **p) {
	pthread_mutex_lock(&g_mu);
	if (h < 1 || h > g_nplans || g_plans[h - 1] == NULL) {
		pthread_mutex_unlock(&g_mu);
		return CUFFT_INVALID_PLAN;
	}
	*p = g_plans[h - 1];
	return CUFFT_SUCCESS;
}

void plan_put(void) { pthread_mutex_unlock(&g_mu); }

EXPORT cufftResult cufftCreate(cufftHandle *h) {
	if (h == NULL)
		return CUFFT_INVALID_VALUE;
	struct plan *p = calloc(1, sizeof *p);
	if (p == NULL)
		return CUFFT_ALLOC_FAILED;
	p->autoalloc = 1;
	pthread_mutex_lock(&g_mu);
	struct plan **t = realloc(g_plans, sizeof *t * (size_t)(g_nplans + 1));
	if (t == NULL) {
		pthread_mutex_unlock(&g_mu);
		free(p);
		return CUFFT_ALLOC_FAILED;
	}
	g_plans = t;
	g_plans[g_nplans++] = p;
	*h = g_nplans;
	pthread_mutex_unlock(&g_mu);
	return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftDestroy(cufftHandle h) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	g_plans[h - 1] = NULL;
	plan_put();
	free(p);
	return CUFFT_SUCCESS;
}

long long side_extent(const struct side *s, int rank, long long batch) {
	long long off = 0;
	for (int a = 0; a < rank; a++) {
		long long span = s->n[a] - 1;
		for (int b = a + 1; b < rank; b++)
			span *= s->embed[b];
		off += span;
	}
	return (batch - 1) * s->dist + off * s->stride + 1;
}

int side_dense(const struct side *s, int rank, long long batch) {
	long long np = 1;
	for (int a = 0; a < rank; a++)
		np *= s->n[a];
	return side_extent(s, rank, batch) == np * batch;
}

// extent_checked is side_extent, or −1 where it passes 2^44 elements,
// the in-place padding included, or overflows on the way.
static long long extent_checked(const struct side *s, int rank, long long batch) {
	const long long limit = 1ll << 44;
	long long off = 0, t;
	for (int a = 0; a < rank; a++) {
		long long span = s->n[a] - 1;
		for (int b = a + 1; b < rank; b++) {
			long long e = b == rank - 1 ? s->embed[b] + 2 : s->embed[b];
			if (__builtin_mul_overflow(span, e, &span) || span > limit)
				return -1;
		}
		if (__builtin_add_overflow(off, span, &off) || off > limit)
			return -1;
	}
	if (__builtin_mul_overflow(off, s->stride, &off) || __builtin_mul_overflow(batch - 1, s->dist, &t) || __builtin_add_overflow(off, t, &off) || off > limit)
		return -1;
	return off + 1;
}

// set_side lays a side out: n its points per axis, the embeds (NULL:
// packed, the last axis padded to pad), stride and distance.
static void set_side(struct side *s, int is_complex, size_t elem, int rank, const long long n[3], const long long *embed, long long stride, long long dist, long long pad) {
	s->is_complex = is_complex;
	s->elem = elem;
	for (int a = 0; a < 3; a++)
		s->n[a] = s->embed[a] = 1;
	for (int a = 0; a < rank; a++)
		s->n[a] = s->embed[a] = n[a];
	if (embed == NULL) {
		s->embed[rank - 1] = pad;
		s->stride = 1;
		s->dist = 1;
		for (int a = 0; a < rank; a++)
			s->dist *= s->embed[a];
		return;
	}
	for (int a = 0; a < rank; a++)
		s->embed[a] = embed[a];
	s->stride = stride;
	s->dist = dist;
}

// make checks and makes plan h: the one planner every cufftPlan* and
// cufftMakePlan* call.
static cufftResult make(cufftHandle h, int rank, const long long *n, const long long *inembed, long long istride, long long idist, const long long *onembed, long long ostride, long long odist, int type, long long batch, size_t *work) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	int complex_in, complex_out;
	size_t ein, eout;
	switch (type) {
	case T_C2C: complex_in = complex_out = 1, ein = eout = 8; break;
	case T_Z2Z: complex_in = complex_out = 1, ein = eout = 16; break;
	case T_R2C: complex_in = 0, complex_out = 1, ein = 4, eout = 8; break;
	case T_D2Z: complex_in = 0, complex_out = 1, ein = 8, eout = 16; break;
	case T_C2R: complex_in = 1, complex_out = 0, ein = 8, eout = 4; break;
	case T_Z2D: complex_in = 1, complex_out = 0, ein = 16, eout = 8; break;
	default: r = CUFFT_INVALID_TYPE; goto done;
	}
	if (p->made) {
		r = CUFFT_INVALID_PLAN;
		goto done;
	}
	if (rank < 1 || rank > 3 || n == NULL || batch < 1) {
		r = CUFFT_INVALID_VALUE;
		goto done;
	}
	long long total = batch;
	for (int a = 0; a < rank; a++) {
		if (n[a] < 1 || n[a] > (1ll << 40) / total) {
			r = CUFFT_INVALID_SIZE;
			goto done;
		}
		total *= n[a];
	}
	int basic = inembed == NULL || onembed == NULL;
	if (!basic) {
		for (int a = 1; a < rank; a++)
			if (inembed[a] < 1 || onembed[a] < 1)
				r = CUFFT_INVALID_VALUE;
		if (istride < 1 || ostride < 1 || idist < 0 || odist < 0)
			r = CUFFT_INVALID_VALUE;
		if (r != CUFFT_SUCCESS)
			goto done;
	}
	long long nh[3], last = n[rank - 1];
	for (int a = 0; a < rank; a++)
		nh[a] = n[a];
	nh[rank - 1] = last / 2 + 1;
	const long long *nin = complex_in && !complex_out ? nh : n;
	const long long *nout = complex_out && !complex_in ? nh : n;
	// The basic layout is packed; exec pads a real side's rows in place.
	set_side(&p->in, complex_in, ein, rank, nin, basic ? NULL : inembed, istride, idist, nin[rank - 1]);
	set_side(&p->out, complex_out, eout, rank, nout, basic ? NULL : onembed, ostride, odist, nout[rank - 1]);
	if (!basic) {
		for (int a = 1; a < rank; a++)
			if (inembed[a] < nin[a] || onembed[a] < nout[a])
				r = CUFFT_INVALID_SIZE; // an embed smaller than its axis overlaps
		if (r != CUFFT_SUCCESS)
			goto done;
	}
	// An extent that wraps around would make the host buffers too small.
	if (extent_checked(&p->in, rank, batch) < 0 || extent_checked(&p->out, rank, batch) < 0) {
		r = CUFFT_INVALID_SIZE;
		goto done;
	}
	p->type = type;
	p->rank = rank;
	for (int a = 0; a < 3; a++)
		p->n[a] = a < rank ? n[a] : 1;
	p->batch = batch;
	p->basic = basic;
	p->made = 1;
	if (work != NULL)
		*work = 0;
done:
	plan_put();
	return r;
}

static cufftResult make32(cufftHandle h, int rank, const int *n, const int *inembed, int istride, int idist, const int *onembed, int ostride, int odist, int type, int batch, size_t *work) {
	long long n64[3] = {1, 1, 1}, ie[3] = {1, 1, 1}, oe[3] = {1, 1, 1};
	if (rank < 1 || rank > 3 || n == NULL)
		return make(h, rank, NULL, NULL, 0, 0, NULL, 0, 0, type, batch, work);
	for (int a = 0; a < rank; a++) {
		n64[a] = n[a];
		if (inembed != NULL)
			ie[a] = inembed[a];
		if (onembed != NULL)
			oe[a] = onembed[a];
	}
	return make(h, rank, n64, inembed ? ie : NULL, istride, idist, onembed ? oe : NULL, ostride, odist, type, batch, work);
}

EXPORT cufftResult cufftMakePlanMany64(cufftHandle h, int rank, long long *n, long long *inembed, long long istride, long long idist, long long *onembed, long long ostride, long long odist, int type, long long batch, size_t *work) {
	return make(h, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, work);
}

EXPORT cufftResult cufftMakePlanMany(cufftHandle h, int rank, int *n, int *inembed, int istride, int idist, int *onembed, int ostride, int odist, int type, int batch, size_t *work) {
	return make32(h, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, work);
}

EXPORT cufftResult cufftMakePlan1d(cufftHandle h, int nx, int type, int batch, size_t *work) {
	int n[1] = {nx};
	return make32(h, 1, n, NULL, 1, 0, NULL, 1, 0, type, batch, work);
}

EXPORT cufftResult cufftMakePlan2d(cufftHandle h, int nx, int ny, int type, size_t *work) {
	int n[2] = {nx, ny};
	return make32(h, 2, n, NULL, 1, 0, NULL, 1, 0, type, 1, work);
}

EXPORT cufftResult cufftMakePlan3d(cufftHandle h, int nx, int ny, int nz, int type, size_t *work) {
	int n[3] = {nx, ny, nz};
	return make32(h, 3, n, NULL, 1, 0, NULL, 1, 0, type, 1, work);
}

// PLAN_NEW is cufftCreate and a planner, the plan destroyed if the
// planner refuses.
#define PLAN_NEW(out, call)                          \
	do {                                             \
		if ((out) == NULL)                           \
			return CUFFT_INVALID_VALUE;              \
		cufftResult r_ = cufftCreate(out);           \
		if (r_ != CUFFT_SUCCESS)                     \
			return r_;                               \
		cufftHandle h = *(out);                      \
		r_ = (call);                                 \
		if (r_ != CUFFT_SUCCESS)                     \
			cufftDestroy(h);                         \
		return r_;                                   \
	} while (0)

EXPORT cufftResult cufftPlan1d(cufftHandle *plan, int nx, int type, int batch) {
	PLAN_NEW(plan, cufftMakePlan1d(h, nx, type, batch, NULL));
}

EXPORT cufftResult cufftPlan2d(cufftHandle *plan, int nx, int ny, int type) {
	PLAN_NEW(plan, cufftMakePlan2d(h, nx, ny, type, NULL));
}

EXPORT cufftResult cufftPlan3d(cufftHandle *plan, int nx, int ny, int nz, int type) {
	PLAN_NEW(plan, cufftMakePlan3d(h, nx, ny, nz, type, NULL));
}

EXPORT cufftResult cufftPlanMany(cufftHandle *plan, int rank, int *n, int *inembed, int istride, int idist, int *onembed, int ostride, int odist, int type, int batch) {
	PLAN_NEW(plan, cufftMakePlanMany(h, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, NULL));
}

EXPORT cufftResult cufftGetSize(cufftHandle h, size_t *work) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	if (work == NULL)
		r = CUFFT_INVALID_VALUE;
	else
		*work = 0;
	plan_put();
	return r;
}

EXPORT cufftResult cufftSetAutoAllocation(cufftHandle h, int on) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	p->autoalloc = on != 0;
	plan_put();
	return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftSetWorkArea(cufftHandle h, void *work) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	p->work = work;
	plan_put();
	return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftSetStream(cufftHandle h, cudaStream_t s) {
	struct plan *p;
	cufftResult r = plan_get(h, &p);
	if (r != CUFFT_SUCCESS)
		return r;
	p->stream = s;
	plan_put();
	return CUFFT_SUCCESS;
}

// fake_version is FAKECUFFT_VERSION, 12000 (cuFFT 12.0.0, of CUDA 13.0)
// when unset.
static int fake_version(void) {
	const char *v = getenv("FAKECUFFT_VERSION");
	int n = v != NULL ? atoi(v) : 0;
	return n > 0 ? n : 12000;
}

EXPORT cufftResult cufftGetVersion(int *version) {
	if (version == NULL)
		return CUFFT_INVALID_VALUE;
	*version = fake_version();
	return CUFFT_SUCCESS;
}

EXPORT cufftResult cufftGetProperty(int type, int *value) {
	int v = fake_version();
	if (value == NULL)
		return CUFFT_INVALID_VALUE;
	switch (type) {
	case PROP_MAJOR: *value = v / 1000; break;
	case PROP_MINOR: *value = v % 1000 / 100; break;
	case PROP_PATCH: *value = v % 100; break;
	default: return CUFFT_INVALID_TYPE;
	}
	return CUFFT_SUCCESS;
}
