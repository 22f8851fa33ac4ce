// The generating functions: 32-bit numbers, uniform, normal, log-normal
// and Poisson distributions, from the engine's 32-bit numbers.
//
// As cuRAND documents: uniform numbers lie in (0, 1] (a float from one
// 32-bit number, a double from two); normal numbers come in pairs from a
// Box-Muller transform of two uniform ones, so their count must be even
// (CURAND_STATUS_LENGTH_NOT_MULTIPLE otherwise); log-normal numbers are
// exp of normal ones; Poisson numbers need a positive lambda
// (CURAND_STATUS_OUT_OF_RANGE). curandGenerateLongLong is for 64-bit
// quasi-random generators, which the fake lacks: CURAND_STATUS_TYPE_ERROR.
// Memory not aligned to its element is refused with
// CURAND_STATUS_LAUNCH_FAILURE, as the kernel's misaligned access fails.
//
// Simpler than cuRAND: Poisson numbers come from Knuth's method below
// lambda 30 and Hörmann's PTRS above, taking as many 32-bit numbers as
// each needs, where cuRAND has its own methods.
#include "fakecurand.h"

#include <math.h>
#include <stdlib.h>

// The conversions of cuRAND's device API: x·2^-32 + 2^-33 in float,
// which rounds into (0, 1]; a double from two numbers, the second's 21
// low bits above the first's 32, z·2^-53 + 2^-54.
static float uniform_f(struct engine *e) {
	return (float)engine_next(e) * 0x1p-32f + 0x1p-33f;
}

static double uniform_d(struct engine *e) {
	uint64_t x = engine_next(e), y = engine_next(e);
	uint64_t z = x ^ (y << 21);
	return (double)z * 0x1p-53 + 0x1p-54;
}

// fits reports whether n numbers of elem bytes can be in memory at all:
// a count past the device's memory would be a fault of cuRAND's kernel,
// found here before the numbers are made.
static int fits(struct gen *g, size_t n, size_t elem) {
	if (n > SIZE_MAX / elem)
		return 0;
	return g->host || n * elem <= device_memory();
}

// start checks a generating call and gives its engine, under the
// generator's lock, with *buf the buffer for bytes of numbers.
static curandStatus_t start(struct gen *g, const void *out, size_t n, size_t elem, int pairs, void **buf) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	if (pairs && n % 2 != 0)
		r = CURAND_STATUS_LENGTH_NOT_MULTIPLE;
	else if (n > 0 && (out == NULL || (uintptr_t)out % elem != 0 || !fits(g, n, elem)))
		r = CURAND_STATUS_LAUNCH_FAILURE;
	else if (n > 0 && (*buf = malloc(n * elem)) == NULL)
		r = CURAND_STATUS_ALLOCATION_FAILED;
	if (r != CURAND_STATUS_SUCCESS)
		gen_put(g);
	return r;
}

static curandStatus_t finish(struct gen *g, const char *fn, void *out, void *buf, size_t bytes) {
	curandStatus_t r = bytes > 0 ? output(g, fn, out, buf, bytes) : CURAND_STATUS_SUCCESS;
	gen_put(g);
	return r;
}

EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned *out, size_t n) {
	void *buf = NULL;
	curandStatus_t r = start(g, out, n, 4, 0, &buf);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	struct engine *e = gen_engine(g);
	for (size_t i = 0; i < n; i++)
		((uint32_t *)buf)[i] = engine_next(e);
	return finish(g, "curandGenerate", out, buf, n * 4);
}

EXPORT curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long *out, size_t n) {
	(void)out, (void)n;
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	gen_put(g);
	return CURAND_STATUS_TYPE_ERROR;
}

EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *out, size_t n) {
	void *buf = NULL;
	curandStatus_t r = start(g, out, n, 4, 0, &buf);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	struct engine *e = gen_engine(g);
	for (size_t i = 0; i < n; i++)
		((float *)buf)[i] = uniform_f(e);
	return finish(g, "curandGenerateUniform", out, buf, n * 4);
}

EXPORT curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double *out, size_t n) {
	void *buf = NULL;
	curandStatus_t r = start(g, out, n, 8, 0, &buf);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	struct engine *e = gen_engine(g);
	for (size_t i = 0; i < n; i++)
		((double *)buf)[i] = uniform_d(e);
	return finish(g, "curandGenerateUniformDouble", out, buf, n * 8);
}

// normal fills buf with n (even) normal numbers of mean and stddev, as
// doubles or floats; logn takes their exp.
static void normal(struct engine *e, void *buf, size_t n, double mean, double stddev, int dbl, int logn) {
	for (size_t i = 0; i < n; i += 2) {
		double u1, u2;
		if (dbl)
			u1 = uniform_d(e), u2 = uniform_d(e);
		else
			u1 = uniform_f(e), u2 = uniform_f(e);
		double r = sqrt(-2.0 * log(u1)), z[2] = {r * sin(2 * M_PI * u2), r * cos(2 * M_PI * u2)};
		for (int k = 0; k < 2; k++) {
			double v = mean + stddev * z[k];
			if (logn)
				v = exp(v);
			if (dbl)
				((double *)buf)[i + k] = v;
			else
				((float *)buf)[i + k] = (float)v;
		}
	}
}

static curandStatus_t gen_normal(const char *fn, struct gen *g, void *out, size_t n, double mean, double stddev, int dbl, int logn) {
	void *buf = NULL;
	size_t elem = dbl ? 8 : 4;
	curandStatus_t r = start(g, out, n, elem, 1, &buf);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	normal(gen_engine(g), buf, n, mean, stddev, dbl, logn);
	return finish(g, fn, out, buf, n * elem);
}

EXPORT curandStatus_t curandGenerateNormal(curandGenerator_t g, float *out, size_t n, float mean, float stddev) {
	return gen_normal("curandGenerateNormal", g, out, n, mean, stddev, 0, 0);
}

EXPORT curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double *out, size_t n, double mean, double stddev) {
	return gen_normal("curandGenerateNormalDouble", g, out, n, mean, stddev, 1, 0);
}

EXPORT curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float *out, size_t n, float mean, float stddev) {
	return gen_normal("curandGenerateLogNormal", g, out, n, mean, stddev, 0, 1);
}

EXPORT curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double *out, size_t n, double mean, double stddev) {
	return gen_normal("curandGenerateLogNormalDouble", g, out, n, mean, stddev, 1, 1);
}

// poisson draws one Poisson number of mean lambda > 0.
static uint32_t poisson(struct engine *e, double lambda) {
	if (lambda < 30) { // Knuth: multiply uniforms until below e^-lambda
		double limit = exp(-lambda), p = 1;
		uint32_t k = 0;
		for (;;) {
			p *= uniform_d(e);
			if (p <= limit)
				return k;
			k++;
		}
	}
	// PTRS, transformed rejection with squeeze (Hörmann, 1993).
	double slam = sqrt(lambda), loglam = log(lambda);
	double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
	double inva = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
	for (;;) {
		double u = uniform_d(e) - 0.5, v = uniform_d(e);
		double us = 0.5 - fabs(u);
		double k = floor((2 * a / us + b) * u + lambda + 0.43);
		if (us >= 0.07 && v <= vr)
			return (uint32_t)k;
		if (k < 0 || (us < 0.013 && v > us))
			continue;
		if (log(v) + log(inva) - log(a / (us * us) + b) <= -lambda + k * loglam - lgamma(k + 1))
			return (uint32_t)k;
	}
}

EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned *out, size_t n, double lambda) {
	if (!(lambda > 0) || isinf(lambda)) {
		curandStatus_t r = gen_get(g);
		if (r == CURAND_STATUS_SUCCESS)
			gen_put(g);
		return r != CURAND_STATUS_SUCCESS ? r : CURAND_STATUS_OUT_OF_RANGE;
	}
	void *buf = NULL;
	curandStatus_t r = start(g, out, n, 4, 0, &buf);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	struct engine *e = gen_engine(g);
	for (size_t i = 0; i < n; i++)
		((uint32_t *)buf)[i] = poisson(e, lambda);
	return finish(g, "curandGeneratePoisson", out, buf, n * 4);
}
