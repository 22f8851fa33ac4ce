// The race detector (FAKECUDA_RACE=1): which operation read or wrote each
// byte range of device, managed and page-locked host memory, and whether
// two accesses to the same bytes, one of them a write, are ordered by
// happens-before. Reports are kept for fakecuda_race_get.
//
// Happens-before is kept with vector clocks. Each stream is a thread of
// the clock, and so is the host: one host thread for the whole process,
// not one per OS thread or per context. Goroutines move between OS
// threads and order their work among themselves (channels, WaitGroups)
// where the driver cannot see it, so a clock per OS thread would report
// races that the Go program rules out; a clock per context would report a
// copy on device 1 of what device 0's stream made, after a synchronize of
// device 0, which is correct CUDA. With one host thread, whatever any
// goroutine observed completed is ordered before everything the host
// queues afterwards: races between goroutines' own host code are the Go
// race detector's.
//
// Edges, all fixed when an operation is queued (so the verdict does not
// depend on how the workers happen to run): stream order; the host's
// clock into every operation it queues; an event record takes the
// stream's clock and cuStreamWaitEvent joins it; the legacy stream joins
// every blocking stream of its context and a blocking stream the legacy
// one; synchronizing calls (cuStreamSynchronize, cuEventSynchronize,
// cuCtxSynchronize, a query that succeeds, a call that waits for its own
// operation: synchronous copies, memsets of host memory) join into the
// host's clock; a graph launch orders its nodes by the graph's edges only.
//
// A host function's completion orders nothing by itself. The host learns
// of it in ways the driver cannot see (cuda.Stream.Done closes a channel,
// the function sets a flag) or never (a Done channel nobody reads), and an
// edge taken when it ran would make the verdict depend on whether it had
// run by the time of the host's access. The host is ordered after it by a
// call that observes completion through the driver, which covers it in
// stream order, or by fakecuda_race_observe_hostfn: code that runs because
// the function completed (a Go function of cuda.Stream.Then) orders what
// its own thread does after the function's clock, and no other thread.
//
// The check runs as operations execute (memsets and copies as they
// start, kernels as their accessors report). Every edge above is one the
// fake's execution also honours, so execution order is consistent with
// happens-before and one pass over the accesses, FastTrack-style (a last
// write and the last read of each thread per byte range), finds a race
// whenever one exists, whatever the interleaving.
//
// Stacks: where each operation was queued is a walk of frame pointers
// from the entry point, made when it is queued. A cgo call keeps the
// goroutine's frame pointer in the register (asmcgocall), so the walk
// goes on from the fake's frames into the Go frames of the caller; reads
// go through process_vm_readv, which fails instead of faulting on a bad
// frame. The Go side (fakecuda.Lib.Races) turns the PCs into frames. A
// callback into Go at enqueue would be simpler, but the bindings of
// cuMemcpyHtoD, cuMemcpyDtoH and the kernel launches are marked
// `#cgo nocallback` (gen/cgopolicy.go), where a callback panics.
#include "race.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int g_race;
__thread int t_api = -1;

#define MAX_RACES 256
#define HOST_TID 0

// ---- vector clocks ----

struct vc {
	uint32_t n;
	uint64_t *v;
};

static uint64_t vc_get(const struct vc *c, uint32_t t) { return t < c->n ? c->v[t] : 0; }

static void vc_grow(struct vc *c, uint32_t n) {
	if (n <= c->n)
		return;
	c->v = xrealloc(c->v, n * sizeof *c->v);
	memset(c->v + c->n, 0, (n - c->n) * sizeof *c->v);
	c->n = n;
}

static void vc_set(struct vc *c, uint32_t t, uint64_t x) {
	vc_grow(c, t + 1);
	c->v[t] = x;
}

static void vc_join(struct vc *c, const struct vc *o) {
	vc_grow(c, o->n);
	for (uint32_t i = 0; i < o->n; i++)
		if (o->v[i] > c->v[i])
			c->v[i] = o->v[i];
}

static struct vc vc_copy(const struct vc *o) {
	struct vc c = {0, NULL};
	vc_join(&c, o);
	return c;
}

static void vc_free(struct vc *c) {
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

// ---- threads of the clock (under g_mu) ----

// A thread is the host (0), a stream, or a lane of a stream's graph
// launches. A slot is reused once its owner is gone and the host's clock
// covers every epoch it had: then everything queued later is ordered after
// the old owner's accesses anyway, and the new owner continues its epochs.
struct rthr {
	int dead, lane;
	const struct ctx *ctx;
	int blocking, legacy;
	uint64_t clk;       // the last epoch it gave
	struct vc vc;       // its clock (not lanes': their nodes keep their own)
	uint32_t *lanes;    // a stream's graph lanes
	uint32_t nlanes;
};

// The table holds pointers, so that a thread's entry stays where it is
// when the table grows (thr_new): callers keep pointers to entries, and
// to their clocks, across calls that may add a thread.
static struct rthr **g_thr;
static uint32_t g_nthr, g_capthr;

static struct vc *host_vc(void) { return &g_thr[HOST_TID]->vc; }

static uint32_t thr_new(void) {
	for (uint32_t t = 1; t < g_nthr; t++) {
		struct rthr *r = g_thr[t];
		if (r->dead && vc_get(host_vc(), t) >= r->clk) {
			free(r->lanes);
			vc_free(&r->vc);
			uint64_t clk = r->clk;
			memset(r, 0, sizeof *r);
			r->clk = clk;
			vc_set(&r->vc, t, clk);
			return t;
		}
	}
	if (g_nthr == g_capthr) {
		g_capthr = g_capthr ? 2 * g_capthr : 64;
		g_thr = xrealloc(g_thr, g_capthr * sizeof *g_thr);
	}
	struct rthr *r = xrealloc(NULL, sizeof *r);
	memset(r, 0, sizeof *r);
	g_thr[g_nthr] = r;
	return g_nthr++;
}

static uint32_t tid_of(struct stream *s) {
	if (s->race_tid == 0) {
		uint32_t t = thr_new();
		struct rthr *r = g_thr[t];
		r->ctx = s->ctx;
		r->legacy = s == s->ctx->legacy;
		r->blocking = !r->legacy && !(s->flags & CU_STREAM_NON_BLOCKING);
		s->race_tid = t;
	}
	return s->race_tid;
}

// ---- operations' records ----

// rop is what the shadow memory keeps of an access: the operation, its
// epoch on its thread, and what a report says of it.
struct rop {
	int refs;
	uint32_t tid;
	uint64_t epoch;
	uint64_t seq;    // in the order operations were queued, process-wide
	uint64_t stream; // the stream's id; 0 for the host
	int legacy;      // on a legacy (NULL) stream
	int kind;        // enum op_kind, or RACE_HOST_ACCESS
	int api;         // F_* of the entry point that queued it, or -1
	long node;       // graph node index, or -1
	int copy_dir;    // copies: COPY_* bits
	struct vc vc;    // while it runs (rop_clock); its room, vcap entries, stays with the record
	uint32_t vcap;
	struct rop *next_free; // in the records kept for reuse
	uint32_t npcs;
	uint64_t pcs[RACE_PCS];
};

// none marks queued operations that touch no memory (markers, waits, host
// functions): counted in flight, nothing to check.
static struct rop none;

// t_hostfn is the host function running on this stream thread, from
// race_run to race_done, whose accesses fakecuda_hostfn_access records.
static __thread struct rop *t_hostfn;

static long g_inflight; // queued operations not completed (under g_mu)
static uint64_t g_seq;

static pthread_mutex_t g_rmu = PTHREAD_MUTEX_INITIALIZER; // the shadow memory and the reports

// Records no longer referenced, for rop_new to reuse with their clocks'
// room, so that queueing an operation allocates nothing. rop_new runs
// under g_mu and the last rop_unref under g_rmu: the list has a lock of
// its own, taken last.
enum { FREE_ROPS_MAX = 64 };
static pthread_mutex_t g_ropmu = PTHREAD_MUTEX_INITIALIZER;
static struct rop *g_free_rops;
static int g_nfree_rops;

static void rop_unref(struct rop *r) {
	if (r == NULL || --r->refs > 0)
		return;
	pthread_mutex_lock(&g_ropmu);
	int keep = g_nfree_rops < FREE_ROPS_MAX;
	if (keep) {
		r->next_free = g_free_rops;
		g_free_rops = r;
		g_nfree_rops++;
	}
	pthread_mutex_unlock(&g_ropmu);
	if (!keep) {
		free(r->vc.v);
		free(r);
	}
}

// rop_clock sets x's clock to a copy of o.
static void rop_clock(struct rop *x, const struct vc *o) {
	if (x->vcap < o->n) {
		x->vc.v = xrealloc(x->vc.v, o->n * sizeof *x->vc.v);
		x->vcap = o->n;
	}
	if (o->n > 0)
		memcpy(x->vc.v, o->v, o->n * sizeof *o->v);
	x->vc.n = o->n;
}

// rop_clock_done drops x's clock once its operation is over: only a
// running operation's clock is read (hb takes the other side's epoch).
static void rop_clock_done(struct rop *x) { x->vc.n = 0; }

// ---- stacks ----

static int g_pvr_broken;

// read_mem copies n bytes at addr into buf without faulting; the count read.
static size_t read_mem(uintptr_t addr, void *buf, size_t n) {
	if (g_pvr_broken)
		return 0;
	struct iovec l = {buf, n}, r = {(void *)addr, n};
	ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (got < 0) {
		if (errno == ENOSYS || errno == EPERM)
			g_pvr_broken = 1;
		return 0;
	}
	return (size_t)got;
}

// walk stores the return addresses of the frame-pointer chain that starts
// at the caller's frame: the fake's frames, then the goroutine's.
static __attribute__((noinline)) uint32_t walk(uint64_t *pcs, uint32_t max) {
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	unsigned char buf[4096];
	uintptr_t lo = 0;
	size_t have = 0;
	uint32_t n = 0;
	for (int depth = 0; depth < 256 && n < max && fp != 0 && (fp & 7) == 0; depth++) {
		if (fp < lo || fp + 16 > lo + have) {
			// Read up to the end of fp's page and a page more: frames are
			// close together, and a short read stops at unmapped memory.
			size_t want = 4096 - (fp & 2047);
			lo = fp;
			have = read_mem(fp, buf, want);
			if (have < 16)
				break;
		}
		uint64_t frame[2];
		memcpy(frame, buf + (fp - lo), 16);
		if (frame[1] == 0)
			break;
		pcs[n++] = frame[1];
		fp = (uintptr_t)frame[0];
	}
	return n;
}

static struct rop *rop_new(int kind, uint32_t tid, uint64_t epoch, struct stream *s, int stack) {
	pthread_mutex_lock(&g_ropmu);
	struct rop *r = g_free_rops;
	if (r != NULL) {
		g_free_rops = r->next_free;
		g_nfree_rops--;
	}
	pthread_mutex_unlock(&g_ropmu);
	uint64_t *clk = NULL;
	uint32_t clkcap = 0;
	if (r != NULL) {
		clk = r->vc.v;
		clkcap = r->vcap;
	} else {
		r = xrealloc(NULL, sizeof *r);
	}
	memset(r, 0, sizeof *r);
	r->vc.v = clk;
	r->vcap = clkcap;
	r->refs = 1;
	r->tid = tid;
	r->epoch = epoch;
	r->seq = ++g_seq;
	r->kind = kind;
	r->api = t_api;
	r->node = -1;
	if (s != NULL) {
		r->stream = s->id;
		r->legacy = s == s->ctx->legacy;
	}
	if (stack)
		r->npcs = walk(r->pcs, RACE_PCS);
	return r;
}

// ---- queueing (under g_mu) ----

static int touches_memory(const struct op *op) {
	switch (op->kind) {
	case OP_MARKER:
	case OP_WAIT_EVENT:
	case OP_WAIT_STREAM:
	case OP_HOSTFN:
	case OP_FREE:
	case OP_PREFETCH:
		return 0;
	default: // memsets, copies, kernels
		return 1;
	}
}

// t_obs is what the calling thread observed of host functions'
// completions (fakecuda_race_observe_hostfn), beyond the host's clock.
static __thread struct vc t_obs;

// order_before joins into s's clock what precedes anything queued on s
// now: the host, what this thread observed, and the legacy stream's
// implicit ordering.
static void order_before(struct stream *s, uint32_t t) {
	struct rthr *r = g_thr[t];
	vc_join(&r->vc, host_vc());
	vc_join(&r->vc, &t_obs);
	const struct ctx *c = s->ctx;
	if (r->legacy) {
		for (uint32_t u = 1; u < g_nthr; u++)
			if (g_thr[u]->blocking && g_thr[u]->ctx == c)
				vc_join(&g_thr[t]->vc, &g_thr[u]->vc);
	} else if (r->blocking && c->legacy != NULL && c->legacy->race_tid != 0) {
		vc_join(&r->vc, &g_thr[c->legacy->race_tid]->vc);
	}
}

static int copy_dir(const struct op *op) {
	int d = 0;
	if (op->a[0] != NULL && !op->a[0]->host)
		d |= COPY_DST_DEVICE;
	if (op->a[1] != NULL && !op->a[1]->host)
		d |= COPY_SRC_DEVICE;
	return d;
}

void race_enqueue(struct stream *s, struct op *op, int sync) {
	if (!g_race)
		return;
	g_inflight++;
	if (op->race != NULL) // a graph node: race_graph_node gave its clock
		return;
	op->race = &none;
	uint32_t t = tid_of(s);
	order_before(s, t);
	struct rthr *r = g_thr[t];
	if (op->kind == OP_WAIT_EVENT && op->ev->race_vc != NULL)
		vc_join(&r->vc, op->ev->race_vc);
	if (touches_memory(op)) {
		uint64_t e = ++r->clk;
		vc_set(&r->vc, t, e);
		struct rop *x = rop_new(op->kind, t, e, s, 1);
		x->copy_dir = copy_dir(op);
		rop_clock(x, &r->vc);
		op->race = x;
	} else if (op->kind == OP_HOSTFN) {
		// Kept when it runs, for those who observe its completion; an
		// event of its stream's, for the memory a library's host function
		// reports it touched (fakecuda_hostfn_access).
		uint64_t e = ++r->clk;
		vc_set(&r->vc, t, e);
		struct rop *x = rop_new(op->kind, t, e, s, 1);
		rop_clock(x, &r->vc);
		op->race = x;
	}
	if (op->kind == OP_MARKER) {
		if (op->ev->race_vc == NULL) {
			op->ev->race_vc = xrealloc(NULL, sizeof(struct vc));
			memset(op->ev->race_vc, 0, sizeof(struct vc));
		}
		vc_free(op->ev->race_vc);
		*op->ev->race_vc = vc_copy(&r->vc);
	}
	if (sync)
		vc_join(host_vc(), &r->vc);
}

void race_done(struct op *op) {
	if (op->race == NULL)
		return;
	if (t_hostfn == op->race)
		t_hostfn = NULL;
	g_inflight--;
	if (op->race != &none) {
		pthread_mutex_lock(&g_rmu);
		rop_clock_done(op->race);
		rop_unref(op->race);
		pthread_mutex_unlock(&g_rmu);
	}
	op->race = NULL;
}

void race_host_sync_stream(struct stream *s) {
	// A stream without a thread yet has had nothing queued: nothing to
	// join, and no thread to make for it here.
	if (g_race && s->race_tid != 0)
		vc_join(host_vc(), &g_thr[s->race_tid]->vc);
}

void race_host_sync_event(struct event *e) {
	if (g_race && e->race_vc != NULL)
		vc_join(host_vc(), e->race_vc);
}

void race_host_sync_ctx(struct ctx *c) {
	if (!g_race)
		return;
	for (uint32_t u = 1; u < g_nthr; u++)
		if (!g_thr[u]->lane && g_thr[u]->ctx == c)
			vc_join(host_vc(), &g_thr[u]->vc);
}

void race_stream_destroyed(struct stream *s) {
	if (!g_race || s->race_tid == 0)
		return;
	struct rthr *r = g_thr[s->race_tid];
	r->dead = 1;
	for (uint32_t i = 0; i < r->nlanes; i++)
		g_thr[r->lanes[i]]->dead = 1;
	s->race_tid = 0;
}

void race_event_free(struct event *e) {
	if (e->race_vc != NULL) {
		vc_free(e->race_vc);
		free(e->race_vc);
		e->race_vc = NULL;
	}
}

// ---- graph launches (under g_mu) ----

// The nodes go to lanes, threads of the launching stream's own: a node
// continues the lane of a dependency whose last node it is, or takes a
// new lane. Launches on one stream are ordered, so they reuse its lanes.
struct race_graph {
	uint32_t tid;
	struct vc base;
	size_t n;
	struct vc *node_vc;
	uint32_t *lane_of;   // per node: an index into the stream's lanes
	long *tail;          // per lane: its last node, -1 none
	uint32_t nl;         // lanes in use
	size_t *deps;
	size_t ndeps;
	uint64_t stream; // the launching stream, for reports
	int legacy;
};

struct race_graph *race_graph_begin(struct stream *s, size_t n) {
	if (!g_race)
		return NULL;
	struct race_graph *g = xrealloc(NULL, sizeof *g);
	memset(g, 0, sizeof *g);
	g->tid = tid_of(s);
	g->stream = s->id;
	g->legacy = s == s->ctx->legacy;
	order_before(s, g->tid);
	g->base = vc_copy(&g_thr[g->tid]->vc);
	g->n = n;
	g->node_vc = xrealloc(NULL, n * sizeof *g->node_vc);
	memset(g->node_vc, 0, n * sizeof *g->node_vc);
	g->lane_of = xrealloc(NULL, n * sizeof *g->lane_of);
	g->tail = xrealloc(NULL, n * sizeof *g->tail);
	g->deps = xrealloc(NULL, sizeof *g->deps);
	return g;
}

void race_graph_dep(struct race_graph *g, size_t from) {
	if (g == NULL)
		return;
	g->deps = xrealloc(g->deps, (g->ndeps + 1) * sizeof *g->deps);
	g->deps[g->ndeps++] = from;
}

void race_graph_node(struct race_graph *g, struct op *op, size_t i) {
	if (g == NULL)
		return;
	struct vc v = vc_copy(&g->base);
	long lane = -1;
	for (size_t j = 0; j < g->ndeps; j++) {
		size_t d = g->deps[j];
		vc_join(&v, &g->node_vc[d]);
		if (lane < 0 && g->tail[g->lane_of[d]] == (long)d)
			lane = g->lane_of[d];
	}
	g->ndeps = 0;
	// An event wait node orders the node after the record it waits for,
	// and a record node passes on what its dependencies saw, as their
	// stream operations do.
	if (op->kind == OP_WAIT_EVENT && op->ev->race_vc != NULL)
		vc_join(&v, op->ev->race_vc);
	if (lane < 0) {
		lane = g->nl++;
		g->tail[lane] = -1;
	}
	struct rthr *owner = g_thr[g->tid];
	if ((uint32_t)lane >= owner->nlanes) {
		uint32_t lt = thr_new();
		g_thr[lt]->lane = 1;
		g_thr[lt]->ctx = owner->ctx;
		owner->lanes = xrealloc(owner->lanes, (owner->nlanes + 1) * sizeof *owner->lanes);
		owner->lanes[owner->nlanes++] = lt;
	}
	uint32_t lt = owner->lanes[lane];
	uint64_t e = ++g_thr[lt]->clk;
	vc_set(&v, lt, e);
	g->lane_of[i] = (uint32_t)lane;
	g->tail[lane] = (long)i;
	g->node_vc[i] = v;
	if (op->kind == OP_MARKER) {
		if (op->ev->race_vc == NULL) {
			op->ev->race_vc = xrealloc(NULL, sizeof(struct vc));
			memset(op->ev->race_vc, 0, sizeof(struct vc));
		}
		vc_free(op->ev->race_vc);
		*op->ev->race_vc = vc_copy(&v);
	}
	struct rop *x = NULL;
	if (touches_memory(op) || op->kind == OP_HOSTFN) {
		x = rop_new(op->kind, lt, e, NULL, op->kind != OP_HOSTFN);
		x->stream = g->stream;
		x->legacy = g->legacy;
		x->copy_dir = copy_dir(op);
		rop_clock(x, &v);
		x->node = (long)i;
	}
	op->race = x != NULL ? x : &none;
}

void race_graph_end(struct race_graph *g) {
	if (g == NULL)
		return;
	struct rthr *r = g_thr[g->tid];
	for (size_t i = 0; i < g->n; i++) {
		vc_join(&r->vc, &g->node_vc[i]);
		vc_free(&g->node_vc[i]);
	}
	vc_free(&g->base);
	free(g->node_vc);
	free(g->lane_of);
	free(g->tail);
	free(g->deps);
	free(g);
}

// ---- shadow memory (under g_rmu) ----

// A segment is a byte range whose accesses are the same: the last write
// and, per thread, the last read since it.
struct seg {
	uint64_t lo, hi;
	struct rop *w;
	struct rop **r;
	uint32_t nr, rcap; // rcap: r's room, kept while reads replace reads
};

struct shadow {
	uint64_t base, size;
	int kind;
	struct seg *v;
	size_t n, cap;
};

static struct shadow **g_sh; // sorted by base
static size_t g_nsh;

static void seg_clear(struct seg *s) {
	rop_unref(s->w);
	for (uint32_t i = 0; i < s->nr; i++)
		rop_unref(s->r[i]);
	free(s->r);
	s->w = NULL;
	s->r = NULL;
	s->nr = s->rcap = 0;
}

static void shadow_free(struct shadow *sh) {
	for (size_t i = 0; i < sh->n; i++)
		seg_clear(&sh->v[i]);
	free(sh->v);
	free(sh);
}

// sh_find returns the index of the first shadow whose end is above p.
static size_t sh_find(uint64_t p) {
	size_t lo = 0, hi = g_nsh;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (g_sh[m]->base + g_sh[m]->size <= p)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static void sh_remove_at(size_t i) {
	shadow_free(g_sh[i]);
	memmove(&g_sh[i], &g_sh[i + 1], (g_nsh - i - 1) * sizeof *g_sh);
	g_nsh--;
}

void race_alloc_add(struct alloc *a) {
	if (!g_race)
		return;
	uint64_t base = (uint64_t)(uintptr_t)a->base;
	pthread_mutex_lock(&g_rmu);
	// Memory registered again while an old registration of it drains.
	size_t i = sh_find(base);
	while (i < g_nsh && g_sh[i]->base < base + a->size)
		sh_remove_at(i);
	struct shadow *sh = xrealloc(NULL, sizeof *sh);
	memset(sh, 0, sizeof *sh);
	sh->base = base;
	sh->size = a->size;
	sh->kind = a->managed ? AK_MANAGED : a->registered ? AK_REGISTERED : a->host ? AK_HOST : AK_DEVICE;
	g_sh = xrealloc(g_sh, (g_nsh + 1) * sizeof *g_sh);
	memmove(&g_sh[i + 1], &g_sh[i], (g_nsh - i) * sizeof *g_sh);
	g_sh[i] = sh;
	g_nsh++;
	pthread_mutex_unlock(&g_rmu);
}

void race_alloc_remove(struct alloc *a) {
	if (!g_race)
		return;
	uint64_t base = (uint64_t)(uintptr_t)a->base;
	pthread_mutex_lock(&g_rmu);
	size_t i = sh_find(base);
	if (i < g_nsh && g_sh[i]->base == base && g_sh[i]->size == a->size)
		sh_remove_at(i);
	pthread_mutex_unlock(&g_rmu);
}

// ---- reports (under g_rmu) ----

static struct fakecuda_race g_races[MAX_RACES];
static long g_nraces;       // found, reported or not
static uint64_t g_pairs[1024][2]; // op pairs reported, to report each once
static size_t g_npairs;

static void fill_access(struct fakecuda_race_access *a, const struct rop *x, int write, const struct shadow *sh, uint64_t lo, uint64_t hi) {
	memset(a, 0, sizeof *a);
	a->seq = x->seq;
	a->stream = x->stream;
	a->legacy = x->legacy;
	a->addr = lo;
	a->bytes = hi - lo;
	a->alloc_base = sh->base;
	a->alloc_size = sh->size;
	a->alloc_kind = sh->kind;
	a->kind = x->kind;
	a->write = write;
	a->copy_dir = x->copy_dir;
	a->api = x->api;
	a->node = x->node;
	a->npcs = x->npcs;
	memcpy(a->pcs, x->pcs, x->npcs * sizeof *x->pcs);
}

static void report(const struct shadow *sh, uint64_t lo, uint64_t hi, const struct rop *cur, int cw, const struct rop *prev, int pw) {
	uint64_t a = cur->seq < prev->seq ? cur->seq : prev->seq, b = cur->seq ^ prev->seq ^ a;
	for (size_t i = 0; i < g_npairs; i++)
		if (g_pairs[i][0] == a && g_pairs[i][1] == b)
			return;
	if (g_npairs < 1024) {
		g_pairs[g_npairs][0] = a;
		g_pairs[g_npairs][1] = b;
		g_npairs++;
	}
	if (g_nraces < MAX_RACES) {
		fill_access(&g_races[g_nraces].cur, cur, cw, sh, lo, hi);
		fill_access(&g_races[g_nraces].prev, prev, pw, sh, lo, hi);
	}
	g_nraces++;
}

// hb reports whether access a happens before anything whose clock is v.
static int hb(const struct rop *a, const struct vc *v) { return a->epoch <= vc_get(v, a->tid); }

static void seg_insert(struct shadow *sh, size_t i, struct seg s) {
	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? 2 * sh->cap : 8;
		sh->v = xrealloc(sh->v, sh->cap * sizeof *sh->v);
	}
	memmove(&sh->v[i + 1], &sh->v[i], (sh->n - i) * sizeof *sh->v);
	sh->v[i] = s;
	sh->n++;
}

// split makes segment i end at p, with a copy of it from p.
static void split(struct shadow *sh, size_t i, uint64_t p) {
	struct seg c = sh->v[i];
	c.lo = p;
	if (c.w != NULL)
		c.w->refs++;
	if (c.nr > 0) {
		c.r = xrealloc(NULL, c.nr * sizeof *c.r);
		memcpy(c.r, sh->v[i].r, c.nr * sizeof *c.r);
		for (uint32_t k = 0; k < c.nr; k++)
			c.r[k]->refs++;
	} else {
		c.r = NULL;
	}
	c.rcap = c.nr;
	sh->v[i].hi = p;
	seg_insert(sh, i + 1, c);
}

static void apply(struct shadow *sh, struct seg *s, struct rop *x, int write) {
	const struct vc *v = &x->vc;
	if (s->w != NULL && s->w != x && !hb(s->w, v))
		report(sh, s->lo, s->hi, x, write, s->w, 1);
	if (write)
		for (uint32_t k = 0; k < s->nr; k++)
			if (s->r[k] != x && !hb(s->r[k], v))
				report(sh, s->lo, s->hi, x, 1, s->r[k], 0);
	if (write) {
		if (s->w == x && s->nr == 0)
			return;
		seg_clear(s);
		x->refs++;
		s->w = x;
		return;
	}
	// A read replaces the reads it comes after (its thread's, and any it
	// is ordered after): a later write unordered with those is unordered
	// with it too.
	uint32_t keep = 0;
	int have = 0;
	for (uint32_t k = 0; k < s->nr; k++) {
		struct rop *r = s->r[k];
		if (r == x)
			have = 1;
		if (r == x || (r->tid != x->tid && !hb(r, v)))
			s->r[keep++] = r;
		else
			rop_unref(r);
	}
	s->nr = keep;
	if (!have) {
		if (s->nr == s->rcap) {
			s->rcap = s->rcap ? 2 * s->rcap : 1;
			s->r = xrealloc(s->r, s->rcap * sizeof *s->r);
		}
		x->refs++;
		s->r[s->nr++] = x;
	}
}

static int same_state(const struct seg *a, const struct seg *b) {
	if (a->hi != b->lo || a->w != b->w || a->nr != b->nr)
		return 0;
	for (uint32_t i = 0; i < a->nr; i++) {
		uint32_t j = 0;
		while (j < b->nr && b->r[j] != a->r[i])
			j++;
		if (j == b->nr)
			return 0;
	}
	return 1;
}

// merge joins equal neighbours among segments [from, to].
static void merge(struct shadow *sh, size_t from, size_t to) {
	if (from > 0)
		from--;
	if (to >= sh->n)
		to = sh->n - 1;
	size_t i = from;
	while (i < to && i + 1 < sh->n) {
		if (same_state(&sh->v[i], &sh->v[i + 1])) {
			sh->v[i].hi = sh->v[i + 1].hi;
			seg_clear(&sh->v[i + 1]);
			memmove(&sh->v[i + 1], &sh->v[i + 2], (sh->n - i - 2) * sizeof *sh->v);
			sh->n--;
			to--;
		} else {
			i++;
		}
	}
}

static void access_in(struct shadow *sh, struct rop *x, uint64_t lo, uint64_t hi, int write) {
	// The first segment ending above lo.
	size_t a = 0, b = sh->n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (sh->v[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	size_t first = a, i = a;
	uint64_t p = lo;
	while (p < hi) {
		if (i == sh->n || sh->v[i].lo > p) {
			uint64_t end = i == sh->n || sh->v[i].lo > hi ? hi : sh->v[i].lo;
			seg_insert(sh, i, (struct seg){p, end, NULL, NULL, 0, 0});
		} else if (sh->v[i].lo < p) {
			split(sh, i, p);
			i++;
			continue;
		}
		if (sh->v[i].hi > hi)
			split(sh, i, hi);
		apply(sh, &sh->v[i], x, write);
		p = sh->v[i].hi;
		i++;
	}
	merge(sh, first, i);
}

static void access_range(struct rop *x, uint64_t lo, uint64_t n, int write) {
	uint64_t hi = lo + n;
	for (size_t i = sh_find(lo); i < g_nsh && lo < hi; i++) {
		struct shadow *sh = g_sh[i];
		if (sh->base >= hi)
			break;
		uint64_t a = lo > sh->base ? lo : sh->base;
		uint64_t b = hi < sh->base + sh->size ? hi : sh->base + sh->size;
		if (a < b)
			access_in(sh, x, a, b, write);
	}
}

// The clocks of the host functions that ran last, for
// fakecuda_race_observe_hostfn to find by function and argument. An
// observation follows the run closely (cuda's dispatcher delivers
// completions as they come); one of a function older than the ring finds
// nothing, and orders nothing.
enum { HOSTFN_RAN_MAX = 1024 };
static struct hostfn_ran {
	CUhostFn fn;
	void *arg;
	struct vc vc;
} g_ran[HOSTFN_RAN_MAX];
static uint64_t g_nran;

void race_run(struct op *op) {
	struct rop *x = op->race;
	if (x == NULL || x == &none)
		return;
	if (op->kind == OP_HOSTFN) {
		t_hostfn = x;
		lock();
		struct hostfn_ran *h = &g_ran[g_nran++ % HOSTFN_RAN_MAX];
		h->fn = op->fn;
		h->arg = op->arg;
		h->vc.n = 0; // its room is reused
		vc_join(&h->vc, &x->vc);
		unlock();
		return;
	}
	pthread_mutex_lock(&g_rmu);
	switch (op->kind) {
	case OP_MEMSET:
		access_range(x, (uint64_t)(uintptr_t)op->dst, op->bytes, 1);
		break;
	case OP_COPY:
		access_range(x, (uint64_t)(uintptr_t)op->src, op->bytes, 0);
		access_range(x, (uint64_t)(uintptr_t)op->dst, op->bytes, 1);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&g_rmu);
}

EXPORT void fakecuda_note_access(void *opp, unsigned long long ptr, size_t n, int write) {
	if (!g_race || opp == NULL || n == 0)
		return;
	struct rop *x = ((struct op *)opp)->race;
	if (x == NULL || x == &none)
		return;
	pthread_mutex_lock(&g_rmu);
	access_range(x, ptr, n, write != 0);
	pthread_mutex_unlock(&g_rmu);
}

// fakecuda_hostfn_access records that the host function running on the
// calling thread read or wrote [ptr, ptr+n) of device memory: for a
// library that works in stream order through host functions (the fake
// cuBLAS), whose accesses are then checked as a kernel's are. Elsewhere
// than in a host function of a stream, it records nothing.
EXPORT void fakecuda_hostfn_access(unsigned long long ptr, size_t n, int write) {
	struct rop *x = t_hostfn;
	if (!g_race || x == NULL || n == 0)
		return;
	pthread_mutex_lock(&g_rmu);
	access_range(x, ptr, n, write != 0);
	pthread_mutex_unlock(&g_rmu);
}

// ---- controls (fakecuda_race_*) ----

// fakecuda_race_enabled reports whether FAKECUDA_RACE turned the detector on.
EXPORT int fakecuda_race_enabled(void) { return g_race; }

// fakecuda_race_host_access records that the host read or wrote
// [ptr, ptr+n) (of page-locked or managed memory, which Go code reaches
// without the driver): ordered after what the host synchronized with.
EXPORT void fakecuda_race_host_access(unsigned long long ptr, size_t n, int write) {
	if (!g_race || n == 0)
		return;
	lock();
	struct vc *h = host_vc();
	uint64_t e = ++g_thr[HOST_TID]->clk;
	vc_set(h, HOST_TID, e);
	struct rop *x = rop_new(RACE_HOST_ACCESS, HOST_TID, e, NULL, 1);
	x->api = -1; // t_api names the thread's last driver call, not this
	if (t_obs.n > 0) {
		struct vc v = vc_copy(h);
		vc_join(&v, &t_obs);
		rop_clock(x, &v);
		vc_free(&v);
	} else {
		rop_clock(x, h);
	}
	unlock();
	pthread_mutex_lock(&g_rmu);
	access_range(x, ptr, n, write != 0);
	rop_clock_done(x);
	rop_unref(x);
	pthread_mutex_unlock(&g_rmu);
}

// fakecuda_race_observe_hostfn orders what the calling thread does from
// now on (the host accesses it reports, the operations it queues) after
// the completion of the host function fn(arg) that ran last, until
// fakecuda_race_observe_end: for code that runs because that function
// completed, such as a Go function that cuda.Stream.Then delivers, whose
// goroutine keeps the thread meanwhile. Other threads stay unordered with
// it. It reports whether such a completion was found: 0 for a function
// that has not run, or with the detector off.
EXPORT int fakecuda_race_observe_hostfn(CUhostFn fn, void *arg) {
	if (!g_race)
		return 0;
	lock();
	int found = 0;
	uint64_t n = g_nran < HOSTFN_RAN_MAX ? g_nran : HOSTFN_RAN_MAX;
	for (uint64_t k = 1; k <= n && !found; k++) {
		struct hostfn_ran *h = &g_ran[(g_nran - k) % HOSTFN_RAN_MAX];
		if (h->fn == fn && h->arg == arg) {
			vc_join(&t_obs, &h->vc);
			found = 1;
		}
	}
	unlock();
	return found;
}

// fakecuda_race_observe_end ends the calling thread's observations.
EXPORT void fakecuda_race_observe_end(void) { vc_free(&t_obs); }

// fakecuda_race_count returns the number of races found since the library
// was loaded; the first MAX_RACES are kept.
EXPORT long fakecuda_race_count(void) {
	pthread_mutex_lock(&g_rmu);
	long n = g_nraces;
	pthread_mutex_unlock(&g_rmu);
	return n;
}

// fakecuda_race_get copies report i into out; -1 if it was not kept.
EXPORT int fakecuda_race_get(long i, struct fakecuda_race *out) {
	int r = -1;
	pthread_mutex_lock(&g_rmu);
	if (i >= 0 && i < g_nraces && i < MAX_RACES) {
		*out = g_races[i];
		r = 0;
	}
	pthread_mutex_unlock(&g_rmu);
	return r;
}

// fakecuda_race_quiesce waits up to ms milliseconds until every queued
// operation has completed, without ordering anything after it (it is not
// a synchronization of the program's), and reports whether they have.
EXPORT int fakecuda_race_quiesce(long ms) {
	if (!g_race)
		return 1;
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;
	lock();
	while (g_inflight > 0 && now_ns() < deadline) {
		struct timespec ts = deadline_in(2000000);
		sched_host_yield();
		pthread_cond_timedwait(&g_done, &g_mu, &ts);
	}
	int idle = g_inflight == 0;
	unlock();
	return idle;
}

__attribute__((constructor)) static void race_init(void) {
	const char *v = getenv("FAKECUDA_RACE");
	g_race = v != NULL && *v != 0 && strcmp(v, "0") != 0;
	if (g_race)
		(void)thr_new();
}
