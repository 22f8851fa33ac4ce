// The transforms, in double precision whatever the type: a radix-2 FFT
// for sizes that are powers of two and Bluestein's chirp-z algorithm
// (through a radix-2 FFT of at least 2n−1 points) for the others, along
// each axis in turn. Twiddles come from sin and cos of exact fractions of
// a turn, so a float transform is within float rounding of the exact one.
#include "fakecufft.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

// A line is the 1-D transform of n points with sign in the exponent.
struct line {
	long long n;
	int sign;
	cplx *tw;          // radix 2: e^(sign·2πi·k/n), k < n/2
	long long m;       // Bluestein: the radix-2 size
	cplx *chirp;       // e^(sign·πi·k²/n), k < n
	cplx *kernel;      // the radix-2 transform of the conjugate chirp, wrapped
	cplx *buf;         // m points of scratch
	struct line *pow2; // Bluestein's radix-2 transforms, forward
	struct line *back; // and inverse
};

static int is_pow2(long long n) { return (n & (n - 1)) == 0; }

static cplx turn(long long num, long long den, int sign) {
	double a = 2 * M_PI * (double)num / (double)den;
	return cos(a) + sign * sin(a) * I;
}

static void line_free(struct line *l) {
	if (l == NULL)
		return;
	free(l->tw);
	free(l->chirp);
	free(l->kernel);
	free(l->buf);
	line_free(l->pow2);
	line_free(l->back);
	free(l);
}

static void radix2(const struct line *l, cplx *x) {
	long long n = l->n;
	for (long long i = 1, j = 0; i < n; i++) { // bit reversal
		long long bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			cplx t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	for (long long len = 2; len <= n; len <<= 1) {
		long long step = n / len;
		for (long long i = 0; i < n; i += len)
			for (long long k = 0; k < len / 2; k++) {
				cplx w = l->tw[k * step];
				cplx u = x[i + k], v = x[i + k + len / 2] * w;
				x[i + k] = u + v;
				x[i + k + len / 2] = u - v;
			}
	}
}

static void line_run(const struct line *l, cplx *x);

static struct line *line_new(long long n, int sign) {
	struct line *l = calloc(1, sizeof *l);
	if (l == NULL)
		return NULL;
	l->n = n;
	l->sign = sign;
	if (is_pow2(n)) {
		l->tw = malloc(sizeof(cplx) * (size_t)(n / 2 + 1));
		if (l->tw == NULL)
			goto fail;
		for (long long k = 0; k < n / 2 + 1; k++)
			l->tw[k] = turn(k, n, sign);
		return l;
	}
	l->m = 1;
	while (l->m < 2 * n - 1)
		l->m <<= 1;
	l->chirp = malloc(sizeof(cplx) * (size_t)n);
	l->kernel = calloc((size_t)l->m, sizeof(cplx));
	l->buf = malloc(sizeof(cplx) * (size_t)l->m);
	l->pow2 = line_new(l->m, -1);
	l->back = line_new(l->m, 1);
	if (!l->chirp || !l->kernel || !l->buf || !l->pow2 || !l->back)
		goto fail;
	for (long long k = 0; k < n; k++) {
		// k² mod 2n keeps the angle exact for large k.
		long long k2 = (long long)((unsigned __int128)k * (unsigned __int128)k % (unsigned __int128)(2 * n));
		l->chirp[k] = turn(k2, 2 * n, sign);
	}
	l->kernel[0] = conj(l->chirp[0]);
	for (long long k = 1; k < n; k++)
		l->kernel[k] = l->kernel[l->m - k] = conj(l->chirp[k]);
	line_run(l->pow2, l->kernel);
	return l;
fail:
	line_free(l);
	return NULL;
}

// line_run transforms the n points of x in place.
static void line_run(const struct line *l, cplx *x) {
	if (l->tw != NULL) {
		radix2(l, x);
		return;
	}
	long long n = l->n, m = l->m;
	cplx *b = l->buf;
	for (long long k = 0; k < n; k++)
		b[k] = x[k] * l->chirp[k];
	memset(b + n, 0, sizeof(cplx) * (size_t)(m - n));
	line_run(l->pow2, b);
	for (long long k = 0; k < m; k++)
		b[k] *= l->kernel[k];
	line_run(l->back, b);
	for (long long k = 0; k < n; k++)
		x[k] = b[k] * l->chirp[k] / (double)m;
}

// axis transforms, along axis a of the packed array x of count arrays of
// sizes dims[0..rank), every line.
static int axis(cplx *x, long long count, int rank, const long long dims[3], int a, int sign) {
	long long n = dims[a], inner = 1, outer = count;
	for (int i = a + 1; i < rank; i++)
		inner *= dims[i];
	for (int i = 0; i < a; i++)
		outer *= dims[i];
	if (n == 1)
		return 0;
	struct line *l = line_new(n, sign);
	cplx *t = malloc(sizeof(cplx) * (size_t)n);
	if (l == NULL || t == NULL) {
		line_free(l);
		free(t);
		return -1;
	}
	for (long long o = 0; o < outer; o++)
		for (long long i = 0; i < inner; i++) {
			cplx *base = x + o * n * inner + i;
			for (long long j = 0; j < n; j++)
				t[j] = base[j * inner];
			line_run(l, t);
			for (long long j = 0; j < n; j++)
				base[j * inner] = t[j];
		}
	line_free(l);
	free(t);
	return 0;
}

// at is the element offset of point idx (row-major over s->n) of
// transform b on side s.
static long long at(const struct side *s, int rank, long long b, long long idx) {
	long long x[3] = {0, 0, 0};
	for (int a = rank - 1; a >= 0; a--) {
		x[a] = idx % s->n[a];
		idx /= s->n[a];
	}
	long long off = x[0];
	if (rank >= 2)
		off = off * s->embed[1] + x[1];
	if (rank >= 3)
		off = off * s->embed[2] + x[2];
	return b * s->dist + off * s->stride;
}

static long long points(const struct side *s, int rank) {
	long long p = 1;
	for (int a = 0; a < rank; a++)
		p *= s->n[a];
	return p;
}

// load reads side s of buf into the packed complex array x.
static void load(const struct side *s, int rank, long long batch, const void *buf, cplx *x) {
	long long np = points(s, rank);
	for (long long b = 0; b < batch; b++)
		for (long long i = 0; i < np; i++) {
			long long o = at(s, rank, b, i);
			cplx v;
			if (s->is_complex && s->elem == 8)
				v = ((const float *)buf)[2 * o] + ((const float *)buf)[2 * o + 1] * I;
			else if (s->is_complex)
				v = ((const double *)buf)[2 * o] + ((const double *)buf)[2 * o + 1] * I;
			else if (s->elem == 4)
				v = ((const float *)buf)[o];
			else
				v = ((const double *)buf)[o];
			x[b * np + i] = v;
		}
}

// store writes the packed array x to side s of buf (reals: the real parts).
static void store(const struct side *s, int rank, long long batch, const cplx *x, void *buf) {
	long long np = points(s, rank);
	for (long long b = 0; b < batch; b++)
		for (long long i = 0; i < np; i++) {
			long long o = at(s, rank, b, i);
			cplx v = x[b * np + i];
			if (s->is_complex && s->elem == 8) {
				((float *)buf)[2 * o] = (float)creal(v);
				((float *)buf)[2 * o + 1] = (float)cimag(v);
			} else if (s->is_complex) {
				((double *)buf)[2 * o] = creal(v);
				((double *)buf)[2 * o + 1] = cimag(v);
			} else if (s->elem == 4)
				((float *)buf)[o] = (float)creal(v);
			else
				((double *)buf)[o] = creal(v);
		}
}

int transform(const struct plan *p, const void *ibuf, void *obuf, int dir) {
	int rank = p->rank, rc = -1;
	long long full = 1, last = p->n[rank - 1], h = last / 2 + 1;
	for (int a = 0; a < rank; a++)
		full *= p->n[a];
	long long rows = full / last;
	cplx *x = malloc(sizeof(cplx) * (size_t)(full * p->batch));
	cplx *y = NULL;
	if (x == NULL)
		return -1;
	if (p->in.is_complex && p->out.is_complex) { // C2C, Z2Z
		load(&p->in, rank, p->batch, ibuf, x);
		for (int a = 0; a < rank; a++)
			if (axis(x, p->batch, rank, p->n, a, dir) != 0)
				goto out;
		store(&p->out, rank, p->batch, x, obuf);
	} else if (p->out.is_complex) { // R2C, D2Z: the full transform, then its half
		load(&p->in, rank, p->batch, ibuf, x);
		for (int a = 0; a < rank; a++)
			if (axis(x, p->batch, rank, p->n, a, CUFFT_FORWARD) != 0)
				goto out;
		for (long long r = 0; r < rows * p->batch; r++)
			memmove(x + r * h, x + r * last, sizeof(cplx) * (size_t)h);
		store(&p->out, rank, p->batch, x, obuf);
	} else { // C2R, Z2D: the other axes on the half, then each row made whole
		load(&p->in, rank, p->batch, ibuf, x);
		long long half[3] = {p->n[0], p->n[1], p->n[2]};
		half[rank - 1] = h;
		for (int a = 0; a < rank - 1; a++)
			if (axis(x, p->batch, rank, half, a, CUFFT_INVERSE) != 0)
				goto out;
		y = malloc(sizeof(cplx) * (size_t)(full * p->batch));
		struct line *l = y != NULL ? line_new(last, CUFFT_INVERSE) : NULL;
		if (l == NULL)
			goto out;
		for (long long r = 0; r < rows * p->batch; r++) {
			cplx *row = y + r * last;
			const cplx *hr = x + r * h;
			for (long long k = 0; k < last; k++)
				row[k] = k < h ? hr[k] : conj(hr[last - k]);
			line_run(l, row);
		}
		line_free(l);
		store(&p->out, rank, p->batch, y, obuf);
	}
	rc = 0;
out:
	free(x);
	free(y);
	return rc;
}
