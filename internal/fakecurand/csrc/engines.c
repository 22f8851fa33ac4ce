// The bit generators, each a documented algorithm: Philox4x32-10
// (Salmon et al., 2011), XORWOW (Marsaglia's xorshift with a Weyl
// sequence, as cuRAND's device API seeds it for subsequence 0), MRG32k3a
// (L'Ecuyer, 1999) and MT19937 (Matsumoto and Nishimura, 1998).
//
// Simpler than cuRAND: the host API spreads each sequence over many
// GPU threads (subsequences, interleaved in memory in an order cuRAND
// does not document), so only the algorithms are cuRAND's, not the order
// of the numbers: here a generator's numbers are one sequence in order.
// Philox's number i is word i%4 of the block of counter i/4 under the key
// (seed's low and high words), as Random123 counts. The offset skips that
// many numbers: in O(1) for Philox, O(log offset) for XORWOW and MRG32k3a
// (jump matrices).
#include "fakecurand.h"

#include <pthread.h>
#include <string.h>

// splitmix64 spreads a seed over the state of the engines whose seeding
// cuRAND does not document.
static uint64_t splitmix64(uint64_t *x) {
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

// ---- Philox4x32-10 ----

static void philox_block(const uint32_t key[2], uint64_t ctr, uint32_t out[4]) {
	uint32_t x0 = (uint32_t)ctr, x1 = (uint32_t)(ctr >> 32), x2 = 0, x3 = 0;
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * x2;
		uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
		uint32_t y1 = (uint32_t)p1;
		uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
		uint32_t y3 = (uint32_t)p0;
		x0 = y0, x1 = y1, x2 = y2, x3 = y3;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

// ---- XORWOW ----

static void xorwow_step(uint32_t v[5], uint32_t *d) {
	uint32_t t = v[0] ^ (v[0] >> 2);
	v[0] = v[1], v[1] = v[2], v[2] = v[3], v[3] = v[4];
	v[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
	*d += 362437u;
}

// The xorshift part is linear over GF(2): a matrix of 160 columns (the
// images of the unit vectors) of 160 bits. jump[k] is the step to the
// power 2^k.
typedef struct {
	uint32_t c[160][5];
} gf2mat;

static gf2mat g_jump[64];
static pthread_once_t g_jump_once = PTHREAD_ONCE_INIT;

static void gf2_apply(const gf2mat *m, const uint32_t in[5], uint32_t out[5]) {
	uint32_t r[5] = {0};
	for (int j = 0; j < 160; j++)
		if (in[j / 32] >> (j % 32) & 1)
			for (int w = 0; w < 5; w++)
				r[w] ^= m->c[j][w];
	memcpy(out, r, sizeof r);
}

static void jump_init(void) {
	for (int j = 0; j < 160; j++) {
		uint32_t v[5] = {0}, d = 0;
		v[j / 32] = 1u << (j % 32);
		xorwow_step(v, &d);
		memcpy(g_jump[0].c[j], v, sizeof v);
	}
	for (int k = 1; k < 64; k++)
		for (int j = 0; j < 160; j++)
			gf2_apply(&g_jump[k - 1], g_jump[k - 1].c[j], g_jump[k].c[j]);
}

static void xorwow_skip(uint32_t v[5], uint32_t *d, uint64_t n) {
	*d += (uint32_t)(362437ull * n);
	if (n < 256) { // stepping is cheaper than the matrices
		uint32_t dd = 0;
		while (n-- > 0)
			xorwow_step(v, &dd);
		return;
	}
	pthread_once(&g_jump_once, jump_init);
	for (int k = 0; k < 64; k++)
		if (n >> k & 1)
			gf2_apply(&g_jump[k], v, v);
}

// ---- MRG32k3a ----

#define M1 4294967087ull
#define M2 4294944443ull

typedef uint64_t mat3[3][3];

static const mat3 A1 = {{0, 1, 0}, {0, 0, 1}, {M1 - 810728, 1403580, 0}};
static const mat3 A2 = {{0, 1, 0}, {0, 0, 1}, {M2 - 1370589, 0, 527612}};

static void mat3_mul(const mat3 a, const mat3 b, uint64_t m, mat3 out) {
	mat3 r;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			uint64_t s = 0;
			for (int k = 0; k < 3; k++)
				s = (s + a[i][k] * b[k][j] % m) % m;
			r[i][j] = s;
		}
	memcpy(out, r, sizeof r);
}

static void mat3_vec(const mat3 a, uint64_t v[3], uint64_t m) {
	uint64_t r[3];
	for (int i = 0; i < 3; i++) {
		uint64_t s = 0;
		for (int k = 0; k < 3; k++)
			s = (s + a[i][k] * v[k] % m) % m;
		r[i] = s;
	}
	memcpy(v, r, sizeof r);
}

static void mrg_skip(uint64_t s1[3], uint64_t s2[3], uint64_t n) {
	mat3 p1, p2;
	memcpy(p1, A1, sizeof p1);
	memcpy(p2, A2, sizeof p2);
	for (; n > 0; n >>= 1) {
		if (n & 1) {
			mat3_vec(p1, s1, M1);
			mat3_vec(p2, s2, M2);
		}
		mat3_mul(p1, p1, M1, p1);
		mat3_mul(p2, p2, M2, p2);
	}
}

// mrg_next returns a number in [1, M1−1].
static uint32_t mrg_next(uint64_t s1[3], uint64_t s2[3]) {
	mat3_vec(A1, s1, M1);
	mat3_vec(A2, s2, M2);
	uint64_t p1 = s1[2], p2 = s2[2];
	return (uint32_t)(p1 > p2 ? p1 - p2 : p1 + M1 - p2);
}

// ---- MT19937 ----

static void mt_seed(uint32_t mt[624], uint32_t s) {
	mt[0] = s;
	for (int i = 1; i < 624; i++)
		mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
}

static void mt_twist(uint32_t mt[624]) {
	for (int i = 0; i < 624; i++) {
		uint32_t y = (mt[i] & 0x80000000u) | (mt[(i + 1) % 624] & 0x7fffffffu);
		mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
	}
}

static uint32_t mt_next(uint32_t mt[624], int *i) {
	if (*i >= 624) {
		mt_twist(mt);
		*i = 0;
	}
	uint32_t y = mt[(*i)++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

// ---- the interface ----

int engine_has_offset(int type) { return type != RNG_PSEUDO_MT19937; }

void engine_start(struct engine *e, int type, uint64_t seed, uint64_t offset) {
	memset(e, 0, sizeof *e);
	e->type = type;
	switch (type) {
	case RNG_PSEUDO_PHILOX4_32_10:
		e->u.philox.key[0] = (uint32_t)seed;
		e->u.philox.key[1] = (uint32_t)(seed >> 32);
		e->u.philox.block = offset / 4;
		e->u.philox.used = 4;
		if (offset % 4 != 0) {
			philox_block(e->u.philox.key, e->u.philox.block++, e->u.philox.out);
			e->u.philox.used = (int)(offset % 4);
		}
		break;
	case RNG_PSEUDO_XORWOW: {
		// curand_init's seeding of subsequence 0.
		uint32_t s0 = (uint32_t)seed ^ 0xaad26b49u, s1 = (uint32_t)(seed >> 32) ^ 0xf7dcefddu;
		uint32_t t0 = 1099087573u * s0, t1 = 2591861531u * s1;
		uint32_t *v = e->u.xorwow.v;
		e->u.xorwow.d = 6615241u + t1 + t0;
		v[0] = 123456789u + t0;
		v[1] = 362436069u ^ t0;
		v[2] = 521288629u + t1;
		v[3] = 88675123u ^ t1;
		v[4] = 5783321u + t0;
		xorwow_skip(v, &e->u.xorwow.d, offset);
		break;
	}
	case RNG_PSEUDO_MRG32K3A: {
		uint64_t x = seed;
		for (int i = 0; i < 3; i++) {
			e->u.mrg.s1[i] = splitmix64(&x) % M1;
			e->u.mrg.s2[i] = splitmix64(&x) % M2;
		}
		if (e->u.mrg.s1[0] == 0 && e->u.mrg.s1[1] == 0 && e->u.mrg.s1[2] == 0)
			e->u.mrg.s1[0] = 12345; // all zero is the one bad state
		if (e->u.mrg.s2[0] == 0 && e->u.mrg.s2[1] == 0 && e->u.mrg.s2[2] == 0)
			e->u.mrg.s2[0] = 12345;
		mrg_skip(e->u.mrg.s1, e->u.mrg.s2, offset);
		break;
	}
	default: // MT19937, which has no offset
		mt_seed(e->u.mt.mt, (uint32_t)seed ^ (uint32_t)(seed >> 32) * 0x9E3779B9u);
		e->u.mt.i = 624;
		break;
	}
}

uint32_t engine_next(struct engine *e) {
	switch (e->type) {
	case RNG_PSEUDO_PHILOX4_32_10:
		if (e->u.philox.used == 4) {
			philox_block(e->u.philox.key, e->u.philox.block++, e->u.philox.out);
			e->u.philox.used = 0;
		}
		return e->u.philox.out[e->u.philox.used++];
	case RNG_PSEUDO_XORWOW:
		xorwow_step(e->u.xorwow.v, &e->u.xorwow.d);
		return e->u.xorwow.v[4] + e->u.xorwow.d;
	case RNG_PSEUDO_MRG32K3A:
		return mrg_next(e->u.mrg.s1, e->u.mrg.s2);
	default:
		return mt_next(e->u.mt.mt, &e->u.mt.i);
	}
}
