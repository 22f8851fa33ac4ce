// Streams and events. A stream is a FIFO of operations that a host thread
// of its own (its worker) executes in order, asynchronously to the caller:
// enqueueing returns at once, and Query, Synchronize and events observe the
// worker's progress, as they would a GPU's.
#include "fake.h"

#include <stdlib.h>
#include <string.h>

static uint64_t g_stream_ids;

// Dropped ops, linked by next, for op_new to reuse (under the lock), so
// that queueing work allocates no op. At most FREE_OPS_MAX are kept: a
// burst of queued work does not stay allocated.
enum { FREE_OPS_MAX = 64 };
static struct op *g_free_ops;
static int g_nfree_ops;

struct op *op_new(enum op_kind k) {
	struct op *op = g_free_ops;
	if (op != NULL) {
		g_free_ops = op->next;
		g_nfree_ops--;
		memset(op, 0, sizeof *op);
	} else if ((op = calloc(1, sizeof *op)) == NULL) {
		abort();
	}
	op->kind = k;
	return op;
}

void op_free(struct op *op) {
	if (g_nfree_ops == FREE_OPS_MAX) {
		free(op);
		return;
	}
	op->next = g_free_ops;
	g_free_ops = op;
	g_nfree_ops++;
}

// ---- reference counting (under the lock) ----

// g_streams lists every stream struct alive (under the lock).
static struct stream *g_streams;

static void stream_unref(struct stream *s) {
	if (--s->refs == 0) {
		if (s->all_prev != NULL)
			s->all_prev->all_next = s->all_next;
		else
			g_streams = s->all_next;
		if (s->all_next != NULL)
			s->all_next->all_prev = s->all_prev;
		pthread_cond_destroy(&s->cv);
		free(s->deps);
		free(s);
	}
}

static void event_unref(struct event *e) {
	if (--e->refs == 0) {
		race_event_free(e);
		free(e->deps);
		free(e);
	}
}

static struct stream *stream_new(struct ctx *c, unsigned flags, int prio, int legacy) {
	struct stream *s = calloc(1, sizeof *s);
	if (s == NULL)
		abort();
	pthread_cond_init(&s->cv, NULL);
	s->ctx = c;
	s->flags = flags;
	s->prio = prio;
	s->refs = 1;
	s->id = ++g_stream_ids;
	s->all_next = g_streams;
	if (g_streams != NULL)
		g_streams->all_prev = s;
	g_streams = s;
	if (!legacy)
		s->h = handle_new(K_STREAM, s);
	return s;
}

struct stream *legacy_stream(struct ctx *c) {
	if (c->legacy == NULL)
		c->legacy = stream_new(c, 0, 0, 1);
	return c->legacy;
}

// stream_destroy drops the handle's reference. Work already queued still
// completes: the worker drains the queue before it exits.
void stream_destroy(struct stream *s) {
	race_stream_destroyed(s);
	if (s->cap != NULL)
		capture_leave(s);
	if (s->h != 0) {
		handle_free(s->h);
		s->h = 0;
	}
	s->destroyed = 1;
	pthread_cond_signal(&s->cv);
	stream_unref(s);
}

void event_destroy(struct event *e) {
	handle_free(e->h);
	e->h = 0;
	event_unref(e);
}

CUresult stream_of(CUstream h, struct stream **out) {
	if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		// The per-thread default stream is modeled as the legacy one: it
		// synchronizes more than the driver's, never less.
		struct ctx *c;
		CUresult r = current_ctx(&c);
		if (r != CUDA_SUCCESS)
			return r;
		*out = legacy_stream(c);
		return CUDA_SUCCESS;
	}
	struct stream *s = handle_get((uint64_t)(uintptr_t)h, K_STREAM);
	if (s == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = s;
	return CUDA_SUCCESS;
}

// ---- operations ----

// op_ready reports whether op may start: waits need what they wait for
// done.
int op_ready(const struct op *op) {
	switch (op->kind) {
	case OP_WAIT_EVENT:
		return op->ev->done >= op->target;
	case OP_WAIT_STREAM:
		return op->other->done >= op->target;
	default:
		return 1;
	}
}

// complete retires op, the head of s (or an op that never needed queueing),
// under the lock.
static void complete(struct stream *s, struct op *op) {
	s->done = op->seq;
	race_done(op);
	switch (op->kind) {
	case OP_MARKER:
		if (op->target > op->ev->done)
			op->ev->done = op->target;
		if (op->target == op->ev->rec)
			op->ev->t_ns = now_ns();
		event_unref(op->ev);
		break;
	case OP_WAIT_EVENT:
		event_unref(op->ev);
		break;
	case OP_WAIT_STREAM:
		stream_unref(op->other);
		break;
	case OP_KERNEL:
		kernel_release(op);
		break;
	default:
		break;
	}
	for (int i = 0; i < 2; i++)
		if (op->a[i] != NULL)
			alloc_put(op->a[i]);
	op_free(op);
	pthread_cond_broadcast(&g_done);
}

// covers reports whether memset b writes every byte memset a writes.
static int covers(const struct op *b, const struct op *a) {
	return b->kind == OP_MEMSET && b->dst <= a->dst && b->dst + b->bytes >= a->dst + a->bytes;
}

// run does op's work, unlocked, and then waits out its modeled duration:
// bytes at FAKECUDA_BANDWIDTH plus FAKECUDA_DELAY_NS, counted from its start.
// A memset that the next memset of the queue overwrites entirely is not
// performed, only timed: nothing can observe the bytes in between (another
// stream could only race with it), and it keeps tests that queue hundreds
// of gigabytes of memsets to keep a stream busy from taking minutes. An
// elided host function is not called (its context has faulted).
static void run(struct op *op, int elide) {
	uint64_t start = now_ns();
	switch (op->kind) {
	case OP_MEMSET:
		if (!elide)
			fill(op->dst, op->bytes, op->value, op->elem);
		break;
	case OP_COPY:
		memmove(op->dst, op->src, op->bytes);
		break;
	case OP_HOSTFN:
		if (!elide)
			op->fn(op->arg);
		break;
	case OP_KERNEL:
		kernel_run(op);
		break;
	default:
		break;
	}
	uint64_t cost = g_delay_ns;
	if (op->bytes != 0)
		cost += (uint64_t)((double)op->bytes * 1e9 / g_bandwidth);
	if (cost != 0)
		sleep_until(start + cost);
}

static void *worker(void *arg) {
	struct stream *s = arg;
	lock();
	for (;;) {
		struct op *op = s->head;
		if (op == NULL) {
			if (s->destroyed)
				break;
			pthread_cond_wait(&s->cv, &g_mu);
			continue;
		}
		if (!op_ready(op)) {
			pthread_cond_wait(&g_done, &g_mu);
			continue;
		}
		if (!sched_acquire(s))
			continue;
		// A host function runs outside the turn (it may wait for the host,
		// or for other streams): the turn goes to another stream, never
		// back to this one until the function returns.
		s->in_hostfn = op->kind == OP_HOSTFN;
		if (op->kind == OP_HOSTFN)
			sched_release(s);
		int elide = op->kind == OP_MEMSET && op->next != NULL && covers(op->next, op);
		// cuda.h: a host function "will not be called in the event of an
		// error in the CUDA context", such as a kernel's fault. Not called,
		// it tells the host nothing: the race detector joins no clock.
		int skip_fn = op->kind == OP_HOSTFN && s->ctx->sticky != CUDA_SUCCESS;
		unlock();
		if (!skip_fn)
			race_run(op);
		run(op, elide || skip_fn);
		lock();
		s->in_hostfn = 0;
		s->head = op->next;
		if (s->head == NULL)
			s->tail = NULL;
		complete(s, op);
		sched_release(s);
	}
	sched_remove(s);
	s->has_worker = 0;
	stream_unref(s);
	unlock();
	return NULL;
}

static void start_worker(struct stream *s) {
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_t t;
	if (pthread_create(&t, &attr, worker, s) != 0)
		abort();
	pthread_attr_destroy(&attr);
	s->has_worker = 1;
	s->refs++;
	sched_add(s);
}

// push queues op on s. An op that costs nothing and can complete now on an
// idle stream (a marker, a satisfied wait) completes at once, which is
// what the device would do anyway, without waking a thread.
static void push(struct stream *s, struct op *op) {
	op->seq = ++s->enq;
	for (int i = 0; i < 2; i++)
		if (op->a[i] != NULL)
			op->a[i]->pending++;
	int free_op = op->kind == OP_MARKER || op->kind == OP_WAIT_EVENT || op->kind == OP_WAIT_STREAM;
	if (s->head == NULL && free_op && g_delay_ns == 0 && op_ready(op)) {
		complete(s, op);
		return;
	}
	if (s->tail != NULL)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	if (!s->has_worker)
		start_worker(s);
	pthread_cond_signal(&s->cv);
	sched_kick();
}

static void wait_stream(struct stream *s, struct stream *other) {
	struct op *w = op_new(OP_WAIT_STREAM);
	w->other = other;
	w->target = other->enq;
	other->refs++;
	push(s, w);
}

static void wait_for_blocking(void *obj, void *arg) {
	struct stream *t = obj;
	struct stream *legacy = arg;
	if (t->ctx == legacy->ctx && !(t->flags & CU_STREAM_NON_BLOCKING) && t->done < t->enq)
		wait_stream(legacy, t);
}

// enqueue adds the legacy default stream's implicit synchronization: work
// on the NULL stream waits for every blocking stream of its context, and
// work on a blocking stream waits for the NULL stream. Streams made
// CU_STREAM_NON_BLOCKING (all of package cuda's) take no part. On a stream
// that is capturing, op becomes a node of the capture's graph instead.
CUresult enqueue(struct stream *s, struct op *op, int sync) {
	if (s->cap != NULL)
		return capture_add(s, op, sync);
	struct ctx *c = s->ctx;
	if (s == c->legacy)
		handle_each(K_STREAM, wait_for_blocking, s);
	else if (!(s->flags & CU_STREAM_NON_BLOCKING) && c->legacy != NULL && c->legacy->done < c->legacy->enq)
		wait_stream(s, c->legacy);
	race_enqueue(s, op, sync);
	push(s, op);
	if (sync) {
		uint64_t seq = s->enq;
		s->refs++;
		while (s->done < seq)
			host_wait();
		stream_unref(s);
	}
	return CUDA_SUCCESS;
}

// wait_idle waits until s has completed everything queued so far.
static void wait_idle(struct stream *s) {
	uint64_t target = s->enq;
	race_host_sync_stream(s);
	s->refs++;
	while (s->done < target)
		host_wait();
	stream_unref(s);
}

struct sync_list {
	struct stream **v;
	uint64_t *target;
	size_t n, cap;
	struct ctx *ctx;
};

static void collect(void *obj, void *arg) {
	struct stream *s = obj;
	struct sync_list *l = arg;
	if (s->ctx != l->ctx || s->done >= s->enq)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		l->target = realloc(l->target, l->cap * sizeof *l->target);
		if (l->v == NULL || l->target == NULL)
			abort();
	}
	s->refs++;
	l->v[l->n] = s;
	l->target[l->n++] = s->enq;
}

void ctx_sync(struct ctx *c) {
	race_host_sync_ctx(c);
	// Every stream of c, the legacy one and destroyed ones still draining
	// included: the driver's context synchronize waits for all its work.
	struct sync_list l = {.ctx = c};
	for (struct stream *s = g_streams; s != NULL; s = s->all_next)
		collect(s, &l);
	for (size_t i = 0; i < l.n; i++) {
		while (l.v[i]->done < l.target[i])
			host_wait();
		stream_unref(l.v[i]);
	}
	free(l.v);
	free(l.target);
}

// ---- stream entry points ----

// locked_stream runs the common prologue: initialized, stream resolved,
// lock held on success.
static CUresult locked_stream(CUstream h, struct stream **s) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	r = stream_of(h, s);
	if (r != CUDA_SUCCESS)
		unlock();
	return r;
}

static CUresult create(CUstream *ps, unsigned flags, int prio) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (ps == NULL || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	// The driver clamps priorities into its range rather than failing.
	if (prio > PRIO_LEAST)
		prio = PRIO_LEAST;
	if (prio < PRIO_GREATEST)
		prio = PRIO_GREATEST;
	lock();
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS) {
		struct stream *s = stream_new(c, flags, prio, 0);
		g_live[L_STREAMS]++;
		*ps = (CUstream)(uintptr_t)s->h;
	}
	unlock();
	return r;
}

EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned int flags) {
	ENTER(cuStreamCreate);
	return create(ps, flags, 0);
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *ps, unsigned int flags, int priority) {
	ENTER(cuStreamCreateWithPriority);
	return create(ps, flags, priority);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream h) {
	ENTER(cuStreamDestroy);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct stream *s = handle_get((uint64_t)(uintptr_t)h, K_STREAM);
	if (s == NULL) {
		unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	g_live[L_STREAMS]--;
	stream_destroy(s);
	unlock();
	return CUDA_SUCCESS;
}

// refuse_capturing: waiting for a capturing stream breaks its capture.
static CUresult refuse_capturing(struct stream *s) {
	if (s->cap == NULL)
		return CUDA_SUCCESS;
	capture_invalidate(s);
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

EXPORT CUresult cuStreamSynchronize(CUstream h) {
	ENTER(cuStreamSynchronize);
	struct stream *s;
	CUresult r = locked_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = refuse_capturing(s);
	if (r == CUDA_SUCCESS)
		wait_idle(s);
	if (r == CUDA_SUCCESS)
		r = s->ctx->sticky;
	unlock();
	return r;
}

EXPORT CUresult cuStreamQuery(CUstream h) {
	ENTER(cuStreamQuery);
	struct stream *s;
	CUresult r = locked_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = refuse_capturing(s);
	if (r == CUDA_SUCCESS && s->done < s->enq) {
		r = CUDA_ERROR_NOT_READY;
		sched_host_yield();
	} else if (r == CUDA_SUCCESS) {
		race_host_sync_stream(s);
	}
	if (r == CUDA_SUCCESS)
		r = s->ctx->sticky;
	unlock();
	return r;
}

EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent ev, unsigned int flags) {
	ENTER(cuStreamWaitEvent);
	if (flags & ~1u) // CU_EVENT_WAIT_DEFAULT or CU_EVENT_WAIT_EXTERNAL
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s;
	CUresult r = locked_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	struct event *e = handle_get((uint64_t)(uintptr_t)ev, K_EVENT);
	if (e == NULL) {
		unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	// The wait is for the event's last record as of now; an event never
	// recorded is complete.
	if (s->cap != NULL || e->cap_id != 0)
		r = capture_wait(s, e);
	else if (e->rec != 0) {
		struct op *op = op_new(OP_WAIT_EVENT);
		op->ev = e;
		op->target = e->rec;
		e->refs++;
		r = enqueue(s, op, 0);
	}
	unlock();
	return r;
}

// stream_query runs a read-only query of a stream with the lock held.
#define STREAM_QUERY(h, out, body)                    \
	do {                                              \
		if ((out) == NULL)                            \
			return CUDA_ERROR_INVALID_VALUE;          \
		struct stream *s;                             \
		CUresult r = locked_stream((h), &s);          \
		if (r != CUDA_SUCCESS)                        \
			return r;                                 \
		body;                                         \
		unlock();                                     \
		return CUDA_SUCCESS;                          \
	} while (0)

EXPORT CUresult cuStreamGetPriority(CUstream h, int *priority) {
	ENTER(cuStreamGetPriority);
	STREAM_QUERY(h, priority, *priority = s->prio);
}

EXPORT CUresult cuStreamGetFlags(CUstream h, unsigned int *flags) {
	ENTER(cuStreamGetFlags);
	STREAM_QUERY(h, flags, *flags = s->flags);
}

EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx) {
	ENTER(cuStreamGetCtx);
	STREAM_QUERY(h, pctx, *pctx = (CUcontext)(uintptr_t)s->ctx->h);
}

EXPORT CUresult cuStreamGetCtx_v2(CUstream h, CUcontext *pctx, CUgreenCtx *pgreen) {
	ENTER(cuStreamGetCtx);
	if (pgreen == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	STREAM_QUERY(h, pctx, (*pctx = (CUcontext)(uintptr_t)s->ctx->h, *pgreen = NULL));
}

EXPORT CUresult cuStreamGetId(CUstream h, unsigned long long *id) {
	ENTER(cuStreamGetId);
	STREAM_QUERY(h, id, *id = s->id);
}

EXPORT CUresult cuStreamGetDevice(CUstream h, CUdevice *dev) {
	ENTER(cuStreamGetDevice);
	STREAM_QUERY(h, dev, *dev = s->ctx->dev);
}

EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *userData) {
	ENTER(cuLaunchHostFunc);
	if (fn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s;
	CUresult r = locked_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	struct op *op = op_new(OP_HOSTFN);
	op->fn = fn;
	op->arg = userData;
	r = enqueue(s, op, 0);
	unlock();
	return r;
}

// ---- events ----

EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int flags) {
	ENTER(cuEventCreate);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (pe == NULL || (flags & ~7u) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS) {
		struct event *e = calloc(1, sizeof *e);
		if (e == NULL)
			abort();
		e->ctx = c;
		e->flags = flags;
		e->refs = 1;
		e->h = handle_new(K_EVENT, e);
		g_live[L_EVENTS]++;
		*pe = (CUevent)(uintptr_t)e->h;
	}
	unlock();
	return r;
}

// locked_event: initialized, event resolved, lock held on success.
static CUresult locked_event(CUevent h, struct event **e) {
	return locked_handle((uint64_t)(uintptr_t)h, K_EVENT, CUDA_ERROR_INVALID_HANDLE, (void **)e);
}

// A pending record still completes after destroy: its op holds a reference.
EXPORT CUresult cuEventDestroy_v2(CUevent h) {
	ENTER(cuEventDestroy);
	struct event *e;
	CUresult r = locked_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	g_live[L_EVENTS]--;
	event_destroy(e);
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent h, CUstream hs) {
	ENTER(cuEventRecord);
	struct event *e;
	CUresult r = locked_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	struct stream *s;
	r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS && s->ctx != e->ctx)
		r = CUDA_ERROR_INVALID_HANDLE; // the driver wants both of one context
	if (r == CUDA_SUCCESS && s->cap != NULL)
		capture_record(e, s);
	else if (r == CUDA_SUCCESS) {
		capture_forget(e);
		struct op *op = op_new(OP_MARKER);
		op->ev = e;
		op->target = ++e->rec;
		e->refs++;
		r = enqueue(s, op, 0);
	}
	unlock();
	return r;
}

EXPORT CUresult cuEventQuery(CUevent h) {
	ENTER(cuEventQuery);
	struct event *e;
	CUresult r = locked_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	if (e->cap_id != 0)
		r = CUDA_ERROR_CAPTURED_EVENT;
	else if (e->done < e->rec) {
		r = CUDA_ERROR_NOT_READY;
		sched_host_yield();
	} else {
		race_host_sync_event(e);
		r = e->ctx->sticky;
	}
	unlock();
	return r;
}

EXPORT CUresult cuEventSynchronize(CUevent h) {
	ENTER(cuEventSynchronize);
	struct event *e;
	CUresult r = locked_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	if (e->cap_id != 0) {
		unlock();
		return CUDA_ERROR_CAPTURED_EVENT;
	}
	uint64_t target = e->rec;
	race_host_sync_event(e);
	e->refs++;
	while (e->done < target)
		host_wait();
	r = e->ctx->sticky;
	event_unref(e);
	unlock();
	return r;
}

static CUresult elapsed(float *ms, CUevent start, CUevent end) {
	if (ms == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct event *a;
	CUresult r = locked_event(start, &a);
	if (r != CUDA_SUCCESS)
		return r;
	struct event *b = handle_get((uint64_t)(uintptr_t)end, K_EVENT);
	if (b == NULL || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) || a->rec == 0 || b->rec == 0)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (a->cap_id != 0 || b->cap_id != 0)
		r = CUDA_ERROR_CAPTURED_EVENT;
	else if (a->done < a->rec || b->done < b->rec)
		r = CUDA_ERROR_NOT_READY;
	else {
		// The driver's resolution is about half a microsecond.
		double d = ((double)b->t_ns - (double)a->t_ns) / 500.0;
		*ms = (float)((double)(long long)d * 0.0005);
	}
	unlock();
	return r;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
	ENTER(cuEventElapsedTime);
	return elapsed(ms, start, end);
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
	ENTER(cuEventElapsedTime);
	return elapsed(ms, start, end);
}

// fakecuda_hostfn_store is a host function for tests that cannot write C
// (Go test files): given to cuLaunchHostFunc, it stores 1 in the uint32 at
// userData when the stream reaches it.
EXPORT void fakecuda_hostfn_store(void *userData) { __atomic_store_n((uint32_t *)userData, 1, __ATOMIC_RELEASE); }
