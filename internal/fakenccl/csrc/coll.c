// Collectives, point-to-point and groups, run in stream order on the
// caller's stream through the fake driver's cuLaunchHostFunc.
//
// A call outside a group queues one host function (a work) on its stream;
// the calls of a group (per thread, nestable) are queued at the outermost
// ncclGroupEnd, one work per stream holding that stream's calls in order.
// The fake driver runs each stream's operations on a thread of the
// stream's own, so a work may block there:
//
//   - it first posts its sends to their clique;
//   - then, in order, it receives (waiting for the matching send of the
//     peer: sends and receives of a pair of ranks match in order) and
//     takes part in collectives: a rank's collectives are numbered in the
//     order its works run them, and the work of each rank waits at the
//     clique's slot of that number until every rank has reached it; the
//     last to arrive checks that they agree (kind, count, type, op,
//     root), computes the result from every rank's send buffer and writes
//     it into every rank's receive buffer (device memory is host memory in
//     the fake driver);
//   - last it waits until its sends are received.
//
// A wait ends early when its comm is aborted (the work then does
// nothing more) or when a rank it waits for can never come (aborted, or
// destroyed with nothing queued): the comm then has the asynchronous
// error ncclRemoteError, as on a broken network. So nothing stays blocked
// once the communicators are aborted or destroyed.
//
// Simpler than NCCL: ranks of a clique must be on different streams (they
// are on different devices), collectives are not captured into graphs
// (ncclInvalidUsage while the stream captures), ncclRedOpCreatePreMulSum
// is absent, and floating-point reductions accumulate in double
// precision, rank by rank in rank order, and round once to the type.
//
// FP8 (ncclFloat8e4m3, ncclFloat8e5m2; refused with ncclInvalidArgument
// where the fake reports a version before 2.24, as NCCL's ArgsCheck
// refuses a type number it does not know) is decoded to double and
// reduced like the other floating-point types; the result is rounded to
// nearest, ties to even, saturating: a magnitude above the largest finite
// number (448, 57344), an infinity included, becomes it, and a NaN becomes
// 0x7f. That is __NV_SATFINITE, the conversion of CUDA's __nv_fp8_e4m3 and
// __nv_fp8_e5m2 constructors with which NCCL ends each step of an FP8
// reduction (NVIDIA/nccl src/device/reduce_kernel.h: it converts both
// operands to half, adds, multiplies or takes the larger or smaller in
// half, and converts back, in kernels built for sm90 and later only); NCCL's
// avg multiplies each rank's value by 1/nranks rounded to FP8 before the
// sum (ncclDevPreMulSum, src/enqueue.cc), the fake divides the sum. NCCL
// so rounds at every step, the fake once: for two ranks they agree, but
// for avg of values whose halves are not FP8 numbers (subnormals).
// NCCL refuses FP8 reductions (and, in releases before the newest, FP8
// all-gathers and broadcasts) where a rank's device is older than sm90;
// the fake driver's devices are 9.0, and the fake does not check.
#include "fakenccl.h"

#include <stdlib.h>
#include <string.h>

// ---- element types ----

size_t type_size(ncclDataType_t t) {
	switch (t) {
	case T_INT8:
	case T_UINT8:
	case T_FLOAT8E4M3:
	case T_FLOAT8E5M2:
		return 1;
	case T_FLOAT16:
	case T_BFLOAT16:
		return 2;
	case T_INT32:
	case T_UINT32:
	case T_FLOAT32:
		return 4;
	default:
		return 8;
	}
}

static float bits_float(uint32_t x) {
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

static uint32_t float_bits(float f) {
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	return x;
}

static float half_to_float(uint16_t h) {
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	if (exp == 0) {
		float v = (float)mant * 5.9604644775390625e-08f; // 2^-24
		return sign ? -v : v;
	}
	if (exp == 31)
		return bits_float(sign | 0x7f800000u | mant << 13);
	return bits_float(sign | (exp - 15 + 127) << 23 | mant << 13);
}

// float_to_half rounds to nearest, ties to even.
static uint16_t float_to_half(float f) {
	uint32_t x = float_bits(f);
	uint32_t sign = (x >> 16) & 0x8000, fexp = (x >> 23) & 0xff, mant = x & 0x7fffff;
	if (fexp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
	int exp = (int)fexp - 127 + 15;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		int shift = 14 - exp;
		uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = (uint32_t)exp << 10 | mant >> 13, rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++; // a carry into the exponent is right, up to infinity
	return (uint16_t)(sign | h);
}

static uint16_t float_to_bf16(float f) {
	uint32_t x = float_bits(f);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)(x >> 16 | 0x40); // a quiet NaN
	return (uint16_t)((x + 0x7fff + (x >> 16 & 1)) >> 16);
}

// pow2 is 2^e, for -1022 <= e <= 1023: built from its bits, as the fake
// links no libm.
static double pow2(int e) {
	uint64_t x = (uint64_t)(e + 1023) << 52;
	double d;
	memcpy(&d, &x, sizeof d);
	return d;
}

// fp8_to_double decodes b, an FP8 number of type t, exactly. E4M3 (bias 7,
// 3 mantissa bits) has no infinities and its NaNs are S.1111.111; E5M2
// (bias 15, 2 mantissa bits) has IEEE 754's infinities and NaNs.
static double fp8_to_double(uint8_t b, ncclDataType_t t) {
	int e4m3 = t == T_FLOAT8E4M3;
	int man = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
	int exp = (b & 0x7f) >> man, mant = b & ((1 << man) - 1);
	double v;
	if (e4m3 && (b & 0x7f) == 0x7f)
		v = __builtin_nan("");
	else if (!e4m3 && exp == 31)
		v = mant != 0 ? __builtin_nan("") : __builtin_inf();
	else if (exp == 0) // zero or subnormal: mant units of the smallest
		v = mant * pow2(1 - bias - man);
	else
		v = (mant | 1 << man) * pow2(exp - bias - man);
	return b & 0x80 ? -v : v;
}

// double_to_fp8 rounds v to the FP8 type t: to nearest, ties to even,
// saturating at the largest finite number (an infinity included), a NaN
// becoming 0x7f, and a zero or a magnitude that rounds to zero keeping
// v's sign.
static uint8_t double_to_fp8(double v, ncclDataType_t t) {
	int e4m3 = t == T_FLOAT8E4M3;
	int man = e4m3 ? 3 : 2, emin = e4m3 ? -6 : -14; // emin: of the smallest normal
	double max = e4m3 ? 448.0 : 57344.0;
	uint8_t maxcode = e4m3 ? 0x7e : 0x7b;
	if (v != v)
		return 0x7f;
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	uint8_t sign = bits >> 63 ? 0x80 : 0;
	double a = sign ? -v : v;
	if (a > max)
		return sign | maxcode;
	if (a == 0)
		return sign;
	// e is a's binary exponent, but not below emin: a is q units of
	// 2^(e-man), q < 2^(man+1), whose integer part n is the significand.
	int e = (int)(bits >> 52 & 0x7ff) - 1023;
	if (e < emin)
		e = emin;
	double q = a * pow2(man - e); // exact: a power of two
	uint32_t n = (uint32_t)q;
	double rem = q - n; // exact
	if (rem > 0.5 || (rem == 0.5 && (n & 1)))
		n++;
	// The exponent field is e-emin+1 over a normal significand n (its
	// implicit bit 2^man included), 0 over a subnormal one (e = emin, n <
	// 2^man), and a carry of n to 2^(man+1) moves into it: the code is
	// (e-emin)<<man plus n in every case. It stays at or below maxcode, as
	// a <= max.
	return sign | (uint8_t)(((e - emin) << man) + n);
}

static int is_fp8(ncclDataType_t t) { return t == T_FLOAT8E4M3 || t == T_FLOAT8E5M2; }
static int is_float(ncclDataType_t t) { return t >= T_FLOAT16; }
static int is_signed(ncclDataType_t t) { return t == T_INT8 || t == T_INT32 || t == T_INT64; }

static double load_f(const void *p, ncclDataType_t t, size_t i) {
	switch (t) {
	case T_FLOAT16:
		return half_to_float(((const uint16_t *)p)[i]);
	case T_BFLOAT16:
		return bits_float((uint32_t)((const uint16_t *)p)[i] << 16);
	case T_FLOAT32:
		return ((const float *)p)[i];
	case T_FLOAT8E4M3:
	case T_FLOAT8E5M2:
		return fp8_to_double(((const uint8_t *)p)[i], t);
	default:
		return ((const double *)p)[i];
	}
}

static void store_f(void *p, ncclDataType_t t, size_t i, double v) {
	switch (t) {
	case T_FLOAT16:
		((uint16_t *)p)[i] = float_to_half((float)v);
		break;
	case T_BFLOAT16:
		((uint16_t *)p)[i] = float_to_bf16((float)v);
		break;
	case T_FLOAT32:
		((float *)p)[i] = (float)v;
		break;
	case T_FLOAT8E4M3:
	case T_FLOAT8E5M2:
		((uint8_t *)p)[i] = double_to_fp8(v, t);
		break;
	default:
		((double *)p)[i] = v;
	}
}

// load_i reads an integer element, sign- or zero-extended to 64 bits.
static uint64_t load_i(const void *p, ncclDataType_t t, size_t i) {
	switch (t) {
	case T_INT8:
		return (uint64_t)(int64_t)((const int8_t *)p)[i];
	case T_UINT8:
		return ((const uint8_t *)p)[i];
	case T_INT32:
		return (uint64_t)(int64_t)((const int32_t *)p)[i];
	case T_UINT32:
		return ((const uint32_t *)p)[i];
	default:
		return ((const uint64_t *)p)[i];
	}
}

static void store_i(void *p, ncclDataType_t t, size_t i, uint64_t v) {
	switch (type_size(t)) {
	case 1:
		((uint8_t *)p)[i] = (uint8_t)v;
		break;
	case 4:
		((uint32_t *)p)[i] = (uint32_t)v;
		break;
	default:
		((uint64_t *)p)[i] = v;
	}
}

// reduce writes into out the reduction with op of the n arrays of in, of
// count elements of type t. Integer sums and products wrap, as on the
// device; an integer average truncates.
void reduce(void *out, const void *const *in, int n, size_t count, ncclDataType_t t, ncclRedOp_t op) {
	for (size_t i = 0; i < count; i++) {
		if (is_float(t)) {
			double acc = load_f(in[0], t, i);
			for (int r = 1; r < n; r++) {
				double v = load_f(in[r], t, i);
				switch (op) {
				case OP_PROD:
					acc *= v;
					break;
				case OP_MAX:
					acc = v > acc ? v : acc;
					break;
				case OP_MIN:
					acc = v < acc ? v : acc;
					break;
				default:
					acc += v;
				}
			}
			store_f(out, t, i, op == OP_AVG ? acc / n : acc);
			continue;
		}
		uint64_t acc = load_i(in[0], t, i);
		for (int r = 1; r < n; r++) {
			uint64_t v = load_i(in[r], t, i);
			int less = is_signed(t) ? (int64_t)v < (int64_t)acc : v < acc;
			switch (op) {
			case OP_PROD:
				acc *= v;
				break;
			case OP_MAX:
				acc = less ? acc : v;
				break;
			case OP_MIN:
				acc = less ? v : acc;
				break;
			default:
				acc += v;
			}
		}
		if (op == OP_AVG)
			acc = is_signed(t) ? (uint64_t)((int64_t)acc / n) : acc / (uint64_t)n;
		store_i(out, t, i, acc);
	}
}

// ---- running works (on the streams' threads) ----

static int reduces(int kind) { return kind == K_ALLREDUCE || kind == K_REDUCE || kind == K_REDUCESCATTER; }
static int rooted(int kind) { return kind == K_BROADCAST || kind == K_REDUCE; }

static const char *kind_name(int kind) {
	static const char *names[] = {"ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv"};
	return names[kind];
}

// compute_for does the collective of slot s, whose every rank has arrived.
void compute_for(struct clique *cl, int n, struct slot *s) {
	(void)cl;
	struct item *a = s->items[0];
	for (int r = 1; r < n; r++) {
		struct item *b = s->items[r];
		if (b->kind != a->kind || b->count != a->count || b->type != a->type || (reduces(a->kind) && b->op != a->op) ||
		    (rooted(a->kind) && b->root != a->root)) {
			for (int q = 0; q < n; q++)
				set_async(s->items[q]->comm, ncclInvalidUsage,
				          "collective %llu: rank 0 called %s (count %zu, type %d, op %d, root %d), rank %d %s (count %zu, type %d, op %d, root %d)",
				          (unsigned long long)s->seq, kind_name(a->kind), a->count, a->type, a->op, a->root, r, kind_name(b->kind),
				          b->count, b->type, b->op, b->root);
			return;
		}
	}
	size_t bytes = a->count * type_size(a->type);
	size_t total = a->kind == K_ALLGATHER || a->kind == K_REDUCESCATTER ? bytes * (size_t)n : bytes;
	// The result goes to a buffer of its own first: receive buffers may
	// be send buffers (in place).
	unsigned char *tmp = malloc(total ? total : 1);
	const void **in = malloc((size_t)n * sizeof *in);
	if (tmp == NULL || in == NULL)
		abort();
	for (int r = 0; r < n; r++)
		in[r] = s->items[r]->send;
	switch (a->kind) {
	case K_ALLREDUCE:
	case K_REDUCE:
		reduce(tmp, in, n, a->count, a->type, a->op);
		break;
	case K_REDUCESCATTER:
		reduce(tmp, in, n, a->count * (size_t)n, a->type, a->op);
		break;
	case K_BROADCAST:
		memcpy(tmp, in[a->root], bytes);
		break;
	case K_ALLGATHER:
		for (int r = 0; r < n; r++)
			memcpy(tmp + (size_t)r * bytes, in[r], bytes);
		break;
	}
	for (int r = 0; r < n; r++) {
		void *dst = s->items[r]->recv;
		if (dst == NULL)
			continue; // another process's rank
		switch (a->kind) {
		case K_REDUCE:
			if (r == a->root)
				memcpy(dst, tmp, bytes);
			break;
		case K_REDUCESCATTER:
			memcpy(dst, tmp + (size_t)r * bytes, bytes);
			break;
		default:
			memcpy(dst, tmp, total);
		}
	}
	free(in);
	free(tmp);
}

static struct slot *slot_get(struct clique *cl, uint64_t seq) {
	for (struct slot *s = cl->slots; s != NULL; s = s->next)
		if (s->seq == seq)
			return s;
	struct slot *s = calloc(1, sizeof *s);
	if (s == NULL || (s->items = calloc((size_t)cl->nranks, sizeof *s->items)) == NULL)
		abort();
	s->seq = seq;
	s->next = cl->slots;
	cl->slots = s;
	return s;
}

static void slot_free(struct clique *cl, struct slot *s) {
	for (struct slot **p = &cl->slots; *p != NULL; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	free(s->items);
	free(s);
}

// missing returns a rank of cl that has not reached s and never will, or -1.
static int missing(struct clique *cl, struct slot *s) {
	for (int r = 0; r < cl->nranks; r++)
		if (s->items[r] == NULL && rank_gone(cl, r))
			return r;
	return -1;
}

static void collective(struct item *it) {
	struct comm *c = it->comm;
	struct clique *cl = c->cl;
	struct slot *s = slot_get(cl, ++c->seq);
	s->items[c->rank] = it;
	if (++s->arrived == cl->nranks) {
		compute_for(cl, cl->nranks, s);
		s->done = 1;
		wake();
	}
	int gone = -1;
	while (!s->done && !s->broken && !c->aborted && (gone = missing(cl, s)) < 0)
		pthread_cond_wait(&g_cv, &g_mu);
	if (s->done) {
		if (++s->left == cl->nranks)
			slot_free(cl, s);
		return;
	}
	// Leaving before the end: the collective cannot complete.
	if (!c->aborted)
		set_async(c, ncclRemoteError, "%s (collective %llu): rank %d will never take part (aborted or destroyed)", kind_name(it->kind),
		          (unsigned long long)s->seq, gone);
	s->items[c->rank] = NULL;
	s->broken = 1;
	wake();
	if (--s->arrived == 0)
		slot_free(cl, s);
}

static void post(struct item *it) {
	struct item **p = &it->comm->cl->msgs;
	while (*p != NULL)
		p = &(*p)->next;
	it->next = NULL;
	*p = it;
	wake();
}

static void unpost(struct item *it) {
	for (struct item **p = &it->comm->cl->msgs; *p != NULL; p = &(*p)->next)
		if (*p == it) {
			*p = it->next;
			return;
		}
}

static void receive(struct item *it) {
	struct comm *c = it->comm;
	struct clique *cl = c->cl;
	for (;;) {
		if (c->aborted)
			return;
		for (struct item *m = cl->msgs; m != NULL; m = m->next) {
			if (m->comm->rank != it->root || m->root != c->rank)
				continue;
			unpost(m);
			if (m->count != it->count || m->type != it->type)
				set_async(c, ncclInvalidUsage, "ncclRecv of %zu elements of type %d from rank %d, which sent %zu of type %d", it->count,
				          it->type, it->root, m->count, m->type);
			else
				memcpy(it->recv, m->send, it->count * type_size(it->type));
			m->taken = 1;
			wake();
			return;
		}
		if (rank_gone(cl, it->root)) {
			set_async(c, ncclRemoteError, "ncclRecv: rank %d will never send (aborted or destroyed)", it->root);
			return;
		}
		pthread_cond_wait(&g_cv, &g_mu);
	}
}

static void await_received(struct item *it) {
	struct comm *c = it->comm;
	while (!it->taken && !c->aborted) {
		if (rank_gone(c->cl, it->root)) {
			set_async(c, ncclRemoteError, "ncclSend: rank %d will never receive (aborted or destroyed)", it->root);
			break;
		}
		pthread_cond_wait(&g_cv, &g_mu);
	}
	if (!it->taken)
		unpost(it);
}

void run_work(void *arg) {
	struct work *w = arg;
	lock();
	for (int i = 0; i < w->n; i++)
		if (w->items[i].kind == K_SEND && !w->items[i].comm->aborted)
			post(&w->items[i]);
	for (int i = 0; i < w->n; i++) {
		struct item *it = &w->items[i];
		if (it->comm->aborted || it->kind == K_SEND)
			continue;
		if (it->comm->xmode)
			x_collective(it);
		else if (it->kind == K_RECV)
			receive(it);
		else
			collective(it);
	}
	for (int i = 0; i < w->n; i++)
		if (w->items[i].kind == K_SEND)
			await_received(&w->items[i]);
	for (int i = 0; i < w->n; i++)
		comm_unref(w->items[i].comm);
	unlock();
	free(w);
}

// ---- queueing ----

// The group of this thread: its depth and the items called inside it.
static __thread int t_depth;
static __thread struct item *t_items;
static __thread int t_n, t_cap;

// launch queues the n items, all of stream, as one work; on failure it
// drops their references.
static ncclResult_t launch(cudaStream_t stream, const struct item *items, int n) {
	struct work *w = malloc(sizeof *w + (size_t)n * sizeof *items);
	if (w == NULL)
		abort();
	w->n = n;
	memcpy(w->items, items, (size_t)n * sizeof *items);
	int res = cuda()->launch_host_func(stream, run_work, w);
	if (res == 0)
		return ncclSuccess;
	free(w);
	lock();
	for (int i = 0; i < n; i++)
		comm_unref(items[i].comm);
	unlock();
	return set_error(ncclUnhandledCudaError, "cuLaunchHostFunc failed: CUresult %d", res);
}

// enqueue checks a call and queues it, or adds it to the thread's group.
static ncclResult_t enqueue(struct item it, const char *fn) {
	const struct cuda *cu = cuda();
	if (cu->err != NULL)
		return set_error(ncclSystemError, "%s: %s", fn, cu->err);
	if (it.type < 0 || it.type >= T_NUM || (is_fp8(it.type) && fake_version() < FP8_VERSION))
		return set_error(ncclInvalidArgument, "%s: invalid type %d (NCCL %d)", fn, it.type, fake_version());
	if (reduces(it.kind) && (it.op < 0 || it.op >= OP_NUM))
		return set_error(ncclInvalidArgument, "%s: reduction %d", fn, it.op);
	int capturing = 0;
	if (cu->stream_is_capturing(it.stream, &capturing) != 0)
		return set_error(ncclUnhandledCudaError, "%s: cuStreamIsCapturing failed (an invalid stream?)", fn);
	if (capturing != 0)
		return set_error(ncclInvalidUsage, "%s: the fake NCCL cannot be captured into a graph", fn);
	lock();
	ncclResult_t r = comm_get(it.comm, fn);
	if (r == ncclSuccess && !it.comm->ready)
		r = set_error(ncclInvalidUsage, "%s: the communicator's init is not done", fn);
	if (r == ncclSuccess && it.comm->xmode && (it.kind == K_SEND || it.kind == K_RECV))
		r = set_error(ncclInvalidUsage, "%s: the fake NCCL sends and receives between ranks of one process only", fn);
	int nranks = r == ncclSuccess ? it.comm->cl->nranks : 0;
	if (r == ncclSuccess && (rooted(it.kind) || it.kind == K_SEND || it.kind == K_RECV) && (it.root < 0 || it.root >= nranks))
		r = set_error(ncclInvalidArgument, "%s: %s %d of %d ranks", fn, rooted(it.kind) ? "root" : "peer", it.root, nranks);
	// The send buffer of a broadcast is read on the root only.
	int reads = it.kind != K_RECV && (it.kind != K_BROADCAST || (r == ncclSuccess && it.comm->rank == it.root));
	if (r == ncclSuccess && it.count > 0 && ((reads && it.send == NULL) || (it.kind != K_SEND && it.recv == NULL)))
		r = set_error(ncclInvalidArgument, "%s: NULL buffer", fn);
	if (r == ncclSuccess)
		it.comm->pending++;
	unlock();
	if (r != ncclSuccess)
		return r;
	if (t_depth == 0)
		return launch(it.stream, &it, 1);
	if (t_n == t_cap) {
		t_cap = t_cap ? 2 * t_cap : 16;
		if ((t_items = realloc(t_items, (size_t)t_cap * sizeof *t_items)) == NULL)
			abort();
	}
	t_items[t_n++] = it;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupStart(void) {
	enter();
	t_depth++;
	return ncclSuccess;
}

// ncclGroupEnd queues the group's items, one work per stream, at the
// outermost end.
EXPORT ncclResult_t ncclGroupEnd(void) {
	enter();
	if (t_depth == 0)
		return set_error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
	if (--t_depth > 0)
		return ncclSuccess;
	ncclResult_t res = ncclSuccess;
	struct item *rest = malloc((size_t)(t_n ? t_n : 1) * sizeof *rest);
	if (rest == NULL)
		abort();
	while (t_n > 0) {
		// The items of the first item's stream, in order; the others stay.
		cudaStream_t s = t_items[0].stream;
		int n = 0, m = 0;
		for (int i = 0; i < t_n; i++) {
			if (t_items[i].stream == s)
				t_items[n++] = t_items[i];
			else
				rest[m++] = t_items[i];
		}
		ncclResult_t r = launch(s, t_items, n);
		if (res == ncclSuccess)
			res = r;
		memcpy(t_items, rest, (size_t)m * sizeof *rest);
		t_n = m;
	}
	free(rest);
	return res;
}

#define ITEM(...) ((struct item){__VA_ARGS__})

EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_ALLREDUCE, .send = send, .recv = recv, .count = count, .type = type, .op = op, .comm = comm, .stream = stream),
	               "ncclAllReduce");
}

EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_BROADCAST, .send = send, .recv = recv, .count = count, .type = type, .root = root, .comm = comm, .stream = stream),
	               "ncclBroadcast");
}

EXPORT ncclResult_t ncclBcast(void *buf, size_t count, ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_BROADCAST, .send = buf, .recv = buf, .count = count, .type = type, .root = root, .comm = comm, .stream = stream),
	               "ncclBcast");
}

// ncclReduce: off the root, recv is not written (and may be NULL).
EXPORT ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm,
                               cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_REDUCE, .send = send, .recv = recv != NULL ? recv : (void *)send, .count = count, .type = type, .op = op,
	                    .root = root, .comm = comm, .stream = stream),
	               "ncclReduce");
}

EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_ALLGATHER, .send = send, .recv = recv, .count = sendcount, .type = type, .comm = comm, .stream = stream),
	               "ncclAllGather");
}

EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_REDUCESCATTER, .send = send, .recv = recv, .count = recvcount, .type = type, .op = op, .comm = comm, .stream = stream),
	               "ncclReduceScatter");
}

EXPORT ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_SEND, .send = send, .count = count, .type = type, .root = peer, .comm = comm, .stream = stream), "ncclSend");
}

EXPORT ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
	enter();
	return enqueue(ITEM(.kind = K_RECV, .recv = recv, .count = count, .type = type, .root = peer, .comm = comm, .stream = stream), "ncclRecv");
}
