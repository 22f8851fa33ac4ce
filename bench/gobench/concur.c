// The C side of -impl concur: N pthreads, each with the context current,
// doing one of the scenarios of concur.go for a fixed time. The Go side
// runs the same scenarios with goroutines, in the same process, between
// these runs.

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "concur.h"

typedef int (*fn_ctx)(uintptr_t);
typedef int (*fn_launch)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, uintptr_t, void **, void **);
typedef int (*fn_create)(uintptr_t *, unsigned);
typedef int (*fn_handle)(uintptr_t);
typedef int (*fn_two)(uintptr_t, uintptr_t);
typedef int (*fn_wait)(uintptr_t, uintptr_t, unsigned);
typedef int (*fn_copy)(uintptr_t, const void *, size_t, uintptr_t);
typedef int (*fn_hostfn)(uintptr_t, void (*)(void *), void *);

static struct {
	fn_ctx ctxSetCurrent;
	fn_launch launch;
	fn_create streamCreate, eventCreate;
	fn_handle streamDestroy, eventDestroy, streamSync;
	fn_two eventRecord;
	fn_wait streamWaitEvent;
	fn_copy copyHtoDAsync;
	fn_hostfn launchHostFunc;
} api;

static void *proc(void *gp, const char *name, int version) {
	void *fn = 0;
	int status = 0;
	if (((int (*)(const char *, void **, int, uint64_t, int *))gp)(name, &fn, version, 1, &status) != 0 || status != 0)
		return 0;
	return fn;
}

// gbc_init resolves the entry points from the driver package cu already
// loaded (file: its name or path), at the version of its bindings; 0 on
// success.
int gbc_init(const char *file, int version) {
	void *lib = dlopen(file, RTLD_NOW | RTLD_NOLOAD);
	if (!lib) return 1;
	void *gp = dlsym(lib, "cuGetProcAddress_v2");
	if (!gp) return 2;
	api.ctxSetCurrent = (fn_ctx)proc(gp, "cuCtxSetCurrent", version);
	api.launch = (fn_launch)proc(gp, "cuLaunchKernel", version);
	api.streamCreate = (fn_create)proc(gp, "cuStreamCreate", version);
	api.eventCreate = (fn_create)proc(gp, "cuEventCreate", version);
	api.streamDestroy = (fn_handle)proc(gp, "cuStreamDestroy", version);
	api.eventDestroy = (fn_handle)proc(gp, "cuEventDestroy", version);
	api.streamSync = (fn_handle)proc(gp, "cuStreamSynchronize", version);
	api.eventRecord = (fn_two)proc(gp, "cuEventRecord", version);
	api.streamWaitEvent = (fn_wait)proc(gp, "cuStreamWaitEvent", version);
	api.copyHtoDAsync = (fn_copy)proc(gp, "cuMemcpyHtoDAsync", version);
	api.launchHostFunc = (fn_hostfn)proc(gp, "cuLaunchHostFunc", version);
	void **all = (void **)&api;
	for (size_t i = 0; i < sizeof api / sizeof(void *); i++)
		if (!all[i]) return 3;
	return 0;
}

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

enum { STREAM_NON_BLOCKING = 1, EVENT_DISABLE_TIMING = 2 };

// A completion's slot: when its host function was enqueued, and the
// worker whose window of outstanding completions it holds.
struct worker;
struct slot {
	struct worker *w;
	int64_t enqueued;
};

struct worker {
	struct gbc_run *run;
	int index;
	pthread_t thread;
	uintptr_t s1, s2, ev;
	int64_t ops;
	int64_t *lat;
	int nlat, caplat;
	int err;
	sem_t window;
	struct slot slots[GBC_WINDOW];
	atomic_int next;
};

static void sample(struct worker *w, int64_t ns) {
	if (w->nlat < w->caplat) w->lat[w->nlat++] = ns;
}

static void delivered(void *arg) {
	struct slot *sl = arg;
	struct worker *w = sl->w;
	sample(w, now_ns() - sl->enqueued);
	sem_post(&w->window);
}

// window is how many completions a worker may have outstanding: one
// alone, to time a delivery after its work with nothing queued before it.
static int window(int scenario) {
	switch (scenario) {
	case GBC_COMPLETION: return GBC_WINDOW;
	case GBC_COMPLETION_ALONE: return 1;
	}
	return 0;
}

#define CHECK(call)                  \
	do {                             \
		int r_ = (call);             \
		if (r_) { w->err = r_; goto out; } \
	} while (0)

static void *work(void *arg) {
	struct worker *w = arg;
	struct gbc_run *r = w->run;
	int64_t n = 0;
	CHECK(api.ctxSetCurrent(r->ctx));
	CHECK(api.streamCreate(&w->s1, STREAM_NON_BLOCKING));
	CHECK(api.streamCreate(&w->s2, STREAM_NON_BLOCKING));
	CHECK(api.eventCreate(&w->ev, EVENT_DISABLE_TIMING));
	uintptr_t launchOn = r->scenario == GBC_SHARED_STREAM ? r->shared : w->s1;
	void *host = (char *)r->host + (size_t)w->index * GBC_COPY_BYTES;
	uintptr_t dev = r->dev + (uintptr_t)w->index * GBC_COPY_BYTES;

	atomic_fetch_add(&r->ready, 1);
	while (!atomic_load(&r->go)) sched_yield();
	while (!atomic_load(&r->stop)) {
		int timed = (n & (GBC_SAMPLE_EVERY - 1)) == 0;
		int64_t t0 = timed ? now_ns() : 0;
		switch (r->scenario) {
		case GBC_OWN_STREAM:
		case GBC_SHARED_STREAM:
			CHECK(api.launch(r->kernel, 1, 1, 1, 1, 1, 1, 0, launchOn, r->params, 0));
			break;
		case GBC_EVENT_WAIT:
			CHECK(api.eventRecord(w->ev, w->s1));
			CHECK(api.streamWaitEvent(w->s2, w->ev, 0));
			break;
		case GBC_COPY:
			CHECK(api.copyHtoDAsync(dev, host, GBC_COPY_BYTES, w->s1));
			CHECK(api.streamSync(w->s1));
			break;
		case GBC_CREATE_DESTROY: {
			uintptr_t s, e;
			CHECK(api.streamCreate(&s, STREAM_NON_BLOCKING));
			CHECK(api.eventCreate(&e, EVENT_DISABLE_TIMING));
			CHECK(api.eventDestroy(e));
			CHECK(api.streamDestroy(s));
			break;
		}
		case GBC_COMPLETION:
		case GBC_COMPLETION_ALONE: {
			sem_wait(&w->window);
			struct slot *sl = &w->slots[atomic_fetch_add(&w->next, 1) % GBC_WINDOW];
			sl->w = w;
			CHECK(api.launch(r->kernel, 1, 1, 1, 1, 1, 1, 0, w->s1, r->params, 0));
			sl->enqueued = now_ns();
			CHECK(api.launchHostFunc(w->s1, delivered, sl));
			timed = 0; // its sample is the delivery, taken by the host function
			break;
		}
		}
		if (timed) sample(w, now_ns() - t0);
		n++;
		// Launches and waits queue up in the driver: drain the worker's
		// streams now and then, as a program that waits for its work does.
		if ((n & (GBC_DRAIN_EVERY - 1)) == 0 && r->scenario != GBC_COPY && r->scenario != GBC_CREATE_DESTROY) {
			CHECK(api.streamSync(launchOn));
			if (r->scenario == GBC_EVENT_WAIT) CHECK(api.streamSync(w->s2));
		}
	}
out:
	if (w->s1) api.streamSync(w->s1);
	for (int i = 0; i < window(r->scenario); i++) sem_wait(&w->window);
	w->ops = n;
	if (w->ev) api.eventDestroy(w->ev);
	if (w->s2) api.streamDestroy(w->s2);
	if (w->s1) api.streamDestroy(w->s1);
	if (w->err) atomic_store(&r->stop, 1);
	return 0;
}

// gbc_run runs r->threads workers for r->duration_ns and fills r->ops
// (those begun in the window), r->elapsed_ns (the window) and r->lat
// (r->nlat samples); it returns the first driver error a worker met, or 0.
int gbc_run(struct gbc_run *r) {
	struct worker *ws = calloc(r->threads, sizeof *ws);
	if (!ws) return -1;
	int per = r->caplat / r->threads;
	for (int i = 0; i < r->threads; i++) {
		ws[i].run = r;
		ws[i].index = i;
		ws[i].lat = r->lat + (size_t)i * per;
		ws[i].caplat = per;
		sem_init(&ws[i].window, 0, window(r->scenario));
		pthread_create(&ws[i].thread, 0, work, &ws[i]);
	}
	while (atomic_load(&r->ready) < r->threads) sched_yield();
	int64_t t0 = now_ns();
	atomic_store(&r->go, 1);
	struct timespec d = {r->duration_ns / 1000000000, r->duration_ns % 1000000000};
	nanosleep(&d, 0);
	atomic_store(&r->stop, 1);
	r->elapsed_ns = now_ns() - t0;
	int err = 0;
	r->ops = 0;
	r->nlat = 0;
	for (int i = 0; i < r->threads; i++) {
		pthread_join(ws[i].thread, 0);
		if (ws[i].err && !err) err = ws[i].err;
		r->ops += ws[i].ops;
	}
	// Pack the workers' samples at the front.
	for (int i = 0; i < r->threads; i++) {
		memmove(r->lat + r->nlat, ws[i].lat, (size_t)ws[i].nlat * sizeof(int64_t));
		r->nlat += ws[i].nlat;
		sem_destroy(&ws[i].window);
	}
	free(ws);
	return err;
}
