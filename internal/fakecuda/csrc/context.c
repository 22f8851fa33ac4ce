// Contexts: primary contexts (retained, released), created contexts, and
// each thread's stack of current contexts.
#include "fake.h"

#include <stdlib.h>

// ---- the calling thread's context stack ----

// The stack is thread-local, as the driver's is: that is the property the
// cuda package's binding exists for, so the fake must not be more forgiving
// than the driver here. Entries are handle values, checked when used.
static __thread struct {
	uint64_t *v;
	int n, cap;
} tls;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

// bound counts the threads whose stack is not empty (L_BOUND): a thread
// left with a context pushed when its user is done with it is a leak the
// tests look for. A thread that exits with one no longer counts.
static void bound_add(long d) { __atomic_add_fetch(&g_live[L_BOUND], d, __ATOMIC_RELAXED); }

// The key only frees a thread's stack when the thread exits.
static void tls_exit(void *v) {
	if (tls.n > 0)
		bound_add(-1);
	tls.n = 0;
	tls.cap = 0;
	tls.v = NULL;
	free(v);
}

static void tls_init(void) { pthread_key_create(&tls_key, tls_exit); }

static void tls_pop(void) {
	if (--tls.n == 0)
		bound_add(-1);
}

static void tls_push(uint64_t h) {
	if (tls.n == tls.cap) {
		pthread_once(&tls_once, tls_init);
		tls.cap = tls.cap ? 2 * tls.cap : 8;
		tls.v = realloc(tls.v, (size_t)tls.cap * sizeof *tls.v);
		if (tls.v == NULL)
			abort();
		pthread_setspecific(tls_key, tls.v);
	}
	if (tls.n++ == 0)
		bound_add(1);
	tls.v[tls.n - 1] = h;
}

static uint64_t tls_top(void) { return tls.n ? tls.v[tls.n - 1] : 0; }

// ---- context objects ----

// Context objects are never freed: a thread's stack may still name one
// after it is destroyed, and its handle then reads as destroyed rather
// than as something else.
static struct ctx *g_primary[8];
static uint64_t g_ctx_ids;

static struct ctx *ctx_new(CUdevice dev, int primary, unsigned flags) {
	struct ctx *c = calloc(1, sizeof *c);
	if (c == NULL)
		abort();
	c->dev = dev;
	c->primary = primary;
	c->flags = flags;
	c->id = ++g_ctx_ids;
	c->h = handle_new(K_CTX, c);
	return c;
}

static CUresult lookup_ctx(uint64_t h, struct ctx **out) {
	struct ctx *c = handle_get(h, K_CTX);
	if (c == NULL)
		return (h >> 56) == K_CTX ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_CONTEXT;
	if (!c->alive)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*out = c;
	return CUDA_SUCCESS;
}

CUresult current_ctx(struct ctx **out) {
	uint64_t h = tls_top();
	if (h == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return lookup_ctx(h, out);
}

CUresult ctx_of(CUcontext c, struct ctx **out) {
	return c == NULL ? current_ctx(out) : lookup_ctx((uint64_t)(uintptr_t)c, out);
}

static void reap_stream(void *obj, void *arg) {
	struct stream *s = obj;
	if (s->ctx == arg) {
		g_live[L_STREAMS]--;
		g_live[L_REAPED]++;
		stream_destroy(s);
	}
}

static void reap_event(void *obj, void *arg) {
	struct event *e = obj;
	if (e->ctx == arg) {
		g_live[L_EVENTS]--;
		g_live[L_REAPED]++;
		event_destroy(e);
	}
}

void ctx_teardown(struct ctx *c) {
	ctx_sync(c);
	handle_each(K_STREAM, reap_stream, c);
	handle_each(K_EVENT, reap_event, c);
	alloc_reap(c);
	exec_reap(c);
	module_reap(c);
	c->sticky = CUDA_SUCCESS; // the context's end clears a kernel's fault
	c->peers = 0;
	if (c->legacy != NULL) {
		stream_destroy(c->legacy);
		c->legacy = NULL;
	}
}

static int flags_valid(unsigned f) {
	unsigned sched = f & 0x7; // CU_CTX_SCHED_MASK: one of AUTO, SPIN, YIELD, BLOCKING_SYNC
	return (f & ~0xFFu) == 0 && (sched == 0 || sched == 1 || sched == 2 || sched == 4);
}

// Every context call checks initialization first, as the driver does.
#define NEED_INIT()                        \
	do {                                   \
		CUresult r_ = driver_ready();      \
		if (r_ != CUDA_SUCCESS)            \
			return r_;                     \
	} while (0)

// ---- created contexts ----

static CUresult create(CUcontext *pctx, unsigned flags, CUdevice dev) {
	NEED_INIT();
	if (pctx == NULL || !flags_valid(flags))
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct ctx *c = ctx_new(dev, 0, flags);
	c->alive = 1;
	g_live[L_CONTEXTS]++;
	unlock();
	tls_push(c->h);
	*pctx = (CUcontext)(uintptr_t)c->h;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
	ENTER(cuCtxCreate);
	return create(pctx, flags, dev);
}

// CUDA 13's cuCtxCreate takes optional parameters; the fake supports none
// of execution affinity or CIG, like a GPU without MPS.
EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev) {
	ENTER(cuCtxCreate);
	if (params != NULL && (params->numExecAffinityParams != 0 || params->execAffinityParams != NULL || params->cigParams != NULL))
		return CUDA_ERROR_NOT_SUPPORTED;
	return create(pctx, flags, dev);
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
	ENTER(cuCtxDestroy);
	NEED_INIT();
	uint64_t h = (uint64_t)(uintptr_t)ctx;
	lock();
	struct ctx *c = handle_get(h, K_CTX);
	if (c == NULL || c->primary || !c->alive) {
		unlock();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	// Dead first, so that a concurrent destroy fails; then wait for its
	// work and take down what is left in it.
	c->alive = 0;
	handle_free(h);
	g_live[L_CONTEXTS]--;
	ctx_teardown(c);
	unlock();
	if (tls_top() == h)
		tls_pop();
	return CUDA_SUCCESS;
}

// ---- the current context ----

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
	ENTER(cuCtxPushCurrent);
	NEED_INIT();
	uint64_t h = (uint64_t)(uintptr_t)ctx;
	lock();
	struct ctx *c = handle_get(h, K_CTX);
	unlock();
	// An inactive primary context may be pushed: its handle stays valid,
	// and calls that need it active fail.
	if (c == NULL)
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_push(h);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx) {
	ENTER(cuCtxPopCurrent);
	NEED_INIT();
	if (tls.n == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	uint64_t h = tls.v[tls.n - 1];
	tls_pop();
	if (pctx != NULL)
		*pctx = (CUcontext)(uintptr_t)h;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
	ENTER(cuCtxSetCurrent);
	NEED_INIT();
	uint64_t h = (uint64_t)(uintptr_t)ctx;
	if (h == 0) { // pops, or does nothing on an empty stack
		if (tls.n > 0)
			tls_pop();
		return CUDA_SUCCESS;
	}
	lock();
	struct ctx *c = handle_get(h, K_CTX);
	unlock();
	if (c == NULL)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (tls.n == 0)
		tls_push(h);
	else
		tls.v[tls.n - 1] = h;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) {
	ENTER(cuCtxGetCurrent);
	NEED_INIT();
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)(uintptr_t)tls_top();
	return CUDA_SUCCESS;
}

// with_ctx runs the common prologue of the calls about one context (NULL:
// the current one) and leaves the lock held on success.
static CUresult with_ctx(CUcontext h, struct ctx **c) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	r = ctx_of(h, c);
	if (r != CUDA_SUCCESS)
		unlock();
	return r;
}

static CUresult get_device(CUdevice *dev, CUcontext h) {
	if (dev == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct ctx *c;
	CUresult r = with_ctx(h, &c);
	if (r != CUDA_SUCCESS)
		return r;
	*dev = c->dev;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *dev) {
	ENTER(cuCtxGetDevice);
	return get_device(dev, NULL);
}

EXPORT CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx) {
	ENTER(cuCtxGetDevice);
	return get_device(dev, ctx);
}

static CUresult synchronize(CUcontext h) {
	struct ctx *c;
	CUresult r = with_ctx(h, &c);
	if (r != CUDA_SUCCESS)
		return r;
	r = capture_guard();
	if (r == CUDA_SUCCESS)
		ctx_sync(c);
	if (r == CUDA_SUCCESS)
		r = c->sticky;
	unlock();
	return r;
}

EXPORT CUresult cuCtxSynchronize(void) {
	ENTER(cuCtxSynchronize);
	return synchronize(NULL);
}

EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
	ENTER(cuCtxSynchronize);
	return synchronize(ctx);
}

EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
	ENTER(cuCtxGetStreamPriorityRange);
	struct ctx *c;
	CUresult r = with_ctx(NULL, &c);
	if (r != CUDA_SUCCESS)
		return r;
	unlock();
	if (least != NULL)
		*least = PRIO_LEAST;
	if (greatest != NULL)
		*greatest = PRIO_GREATEST;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetFlags(unsigned int *flags) {
	ENTER(cuCtxGetFlags);
	if (flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct ctx *c;
	CUresult r = with_ctx(NULL, &c);
	if (r != CUDA_SUCCESS)
		return r;
	*flags = c->flags;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
	ENTER(cuCtxGetApiVersion);
	if (version == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct ctx *c;
	CUresult r = with_ctx(ctx, &c);
	if (r != CUDA_SUCCESS)
		return r;
	unlock();
	*version = 3020; // what every driver since 3.2 reports
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id) {
	ENTER(cuCtxGetId);
	if (id == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct ctx *c;
	CUresult r = with_ctx(ctx, &c);
	if (r != CUDA_SUCCESS)
		return r;
	*id = c->id;
	unlock();
	return CUDA_SUCCESS;
}

// ---- primary contexts ----

// primary returns dev's primary context, made on first use; under the lock.
static struct ctx *primary(CUdevice dev) {
	if (g_primary[dev] == NULL)
		g_primary[dev] = ctx_new(dev, 1, 0);
	return g_primary[dev];
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
	ENTER(cuDevicePrimaryCtxRetain);
	NEED_INIT();
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct ctx *c = primary(dev);
	c->retains++;
	c->alive = 1;
	g_live[L_PRIMARY]++;
	*pctx = (CUcontext)(uintptr_t)c->h;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
	ENTER(cuDevicePrimaryCtxRelease);
	NEED_INIT();
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct ctx *c = primary(dev);
	if (c->retains == 0) {
		unlock();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	g_live[L_PRIMARY]--;
	if (--c->retains == 0) {
		// The last release destroys the primary context's contents; its
		// handle stays, inactive, for the next retain.
		c->alive = 0;
		ctx_teardown(c);
	}
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
	ENTER(cuDevicePrimaryCtxGetState);
	NEED_INIT();
	if (flags == NULL || active == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct ctx *c = primary(dev);
	*flags = c->flags;
	*active = c->alive;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
	ENTER(cuDevicePrimaryCtxSetFlags);
	NEED_INIT();
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!flags_valid(flags))
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	primary(dev)->flags = flags;
	unlock();
	return CUDA_SUCCESS;
}

// Reset destroys everything made in the primary context but leaves the
// retains counted: their holders keep a valid (emptied) context.
EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
	ENTER(cuDevicePrimaryCtxReset);
	NEED_INIT();
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct ctx *c = primary(dev);
	if (c->alive)
		ctx_teardown(c);
	c->flags = 0;
	unlock();
	return CUDA_SUCCESS;
}

// ---- peer access ----

// Peer access is recorded per context and peer device: enabling it twice,
// or disabling it when not enabled, fails as with the driver.
static CUresult peer(CUcontext h, unsigned flags, int enable) {
	NEED_INIT();
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c, *p;
	CUresult r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		r = lookup_ctx((uint64_t)(uintptr_t)h, &p);
	if (r == CUDA_SUCCESS && p->dev == c->dev)
		r = CUDA_ERROR_INVALID_DEVICE;
	if (r == CUDA_SUCCESS) {
		unsigned bit = 1u << p->dev;
		if (enable && (c->peers & bit))
			r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
		else if (!enable && !(c->peers & bit))
			r = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
		else
			c->peers ^= bit;
	}
	unlock();
	return r;
}

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int flags) {
	ENTER(cuCtxEnablePeerAccess);
	return peer(peerContext, flags, 1);
}

EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
	ENTER(cuCtxDisablePeerAccess);
	return peer(peerContext, 0, 0);
}
