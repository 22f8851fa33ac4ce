// Element types: reading an element as a double and writing one from a
// double, rounding to nearest, ties to even, as the GPU's conversions do.
#include "fakecublas.h"

#include <math.h>
#include <string.h>

size_t type_size(int t) {
	switch (t) {
	case R_32F:
		return 4;
	case R_64F:
		return 8;
	case R_16F:
	case R_16BF:
		return 2;
	case R_8F_E4M3:
	case R_8F_E5M2:
		return 1;
	}
	return 0;
}

const char *type_name(int t) {
	switch (t) {
	case R_32F:
		return "CUDA_R_32F";
	case R_64F:
		return "CUDA_R_64F";
	case R_16F:
		return "CUDA_R_16F";
	case R_16BF:
		return "CUDA_R_16BF";
	case R_8F_E4M3:
		return "CUDA_R_8F_E4M3";
	case R_8F_E5M2:
		return "CUDA_R_8F_E5M2";
	}
	return "a type the fake does not model";
}

static float bits_float(uint32_t x) {
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static uint32_t float_bits(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	return x;
}

static float half_float(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0) // zero or subnormal: m units of 2^-24
		return sign ? -ldexpf((float)m, -24) : ldexpf((float)m, -24);
	if (e == 31)
		return bits_float(sign | 0x7f800000 | (m << 13));
	return bits_float(sign | ((e - 15 + 127) << 23) | (m << 13));
}

static uint16_t float_half(float f) {
	uint32_t x = float_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t ax = x & 0x7fffffff;
	if (ax > 0x7f800000)
		return sign | 0x7e00;
	if (ax >= 0x477ff000) // 65520 and above round to infinity
		return sign | 0x7c00;
	if (ax < 0x38800000) // below 2^-14: a subnormal, in units of 2^-24
		return sign | (uint16_t)nearbyintf(bits_float(ax) * 16777216.0f);
	uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffff) >> 13));
	uint32_t rem = ax & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++; // a carry into the exponent is the next binade, as it should be
	return sign | (uint16_t)h;
}

static uint16_t float_bf16(float f) {
	uint32_t x = float_bits(f);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

// fp8 reads an FP8 number with ebits of exponent (e4m3 or e5m2). E4M3 has
// no infinities, and only all ones for NaN.
static float fp8(uint8_t v, int ebits) {
	int mbits = 7 - ebits, bias = (1 << (ebits - 1)) - 1;
	int e = (v >> mbits) & ((1 << ebits) - 1), m = v & ((1 << mbits) - 1);
	float s = (v & 0x80) ? -1.0f : 1.0f;
	if (ebits == 4 && e == 15 && m == 7)
		return NAN;
	if (ebits == 5 && e == 31)
		return m ? NAN : s * INFINITY;
	if (e == 0)
		return s * ldexpf((float)m, 1 - bias - mbits);
	return s * ldexpf((float)((1 << mbits) | m), e - bias - mbits);
}

double load(const void *p, int t, int64_t i) {
	switch (t) {
	case R_32F:
		return ((const float *)p)[i];
	case R_64F:
		return ((const double *)p)[i];
	case R_16F:
		return half_float(((const uint16_t *)p)[i]);
	case R_16BF:
		return bits_float((uint32_t)((const uint16_t *)p)[i] << 16);
	case R_8F_E4M3:
		return fp8(((const uint8_t *)p)[i], 4);
	case R_8F_E5M2:
		return fp8(((const uint8_t *)p)[i], 5);
	}
	return NAN;
}

// store writes v; a narrow type is rounded from float32, as a kernel that
// computes in float32 converts its result.
void store(void *p, int t, int64_t i, double v) {
	switch (t) {
	case R_32F:
		((float *)p)[i] = (float)v;
		break;
	case R_64F:
		((double *)p)[i] = v;
		break;
	case R_16F:
		((uint16_t *)p)[i] = float_half((float)v);
		break;
	case R_16BF:
		((uint16_t *)p)[i] = float_bf16((float)v);
		break;
	}
}

// tf32 rounds x to TF32's 10 bits of mantissa, to nearest with ties away
// from zero (PTX's cvt.rna.tf32.f32).
float tf32(float x) {
	uint32_t b = float_bits(x);
	if ((b & 0x7f800000) == 0x7f800000)
		return x;
	b += 0x1000;
	b &= 0xffffe000;
	return bits_float(b);
}

double scalar(const void *p, int t) { return load(p, t, 0); }
