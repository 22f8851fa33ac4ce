// The fake's machinery: the lock, settings, call counting and injected
// faults, handles, and the accounting that leak checks read.
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;

void lock(void) { pthread_mutex_lock(&g_mu); }
void unlock(void) { pthread_mutex_unlock(&g_mu); }

int g_driver_version = 13000;
int g_devices = 1;
uint64_t g_delay_ns = 0;
// 500 GB/s: slow enough that a test's gigabytes of memsets keep a stream
// visibly busy for tens of milliseconds, fast enough that the suite stays
// quick. The real work (memset, memcpy) may take longer; then it counts.
double g_bandwidth = 500e9;
int g_initialized = 0;
long g_live[L_COUNT];

uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// deadline_in returns the CLOCK_REALTIME time ns nanoseconds from now, the
// deadline of a pthread_cond_timedwait that waits up to ns.
struct timespec deadline_in(uint64_t ns) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec += (long)(ns % 1000000000u);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

void sleep_until(uint64_t deadline_ns) {
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
	}
}

// xrealloc is realloc that aborts when memory runs out; a size of 0
// allocates one byte, so the result is never NULL.
void *xrealloc(void *p, size_t n) {
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		abort();
	return p;
}

// ---- call counting and faults ----

#define FAKE_NAME(n) #n,
static const char *const fn_names[F_COUNT] = {FAKE_FUNCS(FAKE_NAME)};
#undef FAKE_NAME

// Counters are atomics rather than under g_mu so that counting does not
// change which calls contend for the lock.
static unsigned long g_calls[F_COUNT];

// An armed fault: the call of f whose count reaches `at` fails with r.
struct arm {
	int f;
	unsigned long at;
	CUresult r;
};
#define MAX_ARMS 64
static pthread_mutex_t g_fault_mu = PTHREAD_MUTEX_INITIALIZER;
static struct arm g_arms[MAX_ARMS];
static int g_narms;
static int g_armed[F_COUNT]; // arms per function, read without the lock first

// func_index maps an API name, with or without its _vN suffix, to its
// counter; -1 if the fake does not implement it.
static int func_index(const char *name) {
	size_t n = strlen(name);
	const char *v = strrchr(name, '_');
	if (v != NULL && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
		n = (size_t)(v - name);
	for (int i = 0; i < F_COUNT; i++)
		if (strlen(fn_names[i]) == n && strncmp(fn_names[i], name, n) == 0)
			return i;
	return -1;
}

static int arm(int f, unsigned long at, CUresult r) {
	int ok = 0;
	pthread_mutex_lock(&g_fault_mu);
	if (g_narms < MAX_ARMS) {
		g_arms[g_narms++] = (struct arm){f, at, r};
		__atomic_add_fetch(&g_armed[f], 1, __ATOMIC_RELEASE);
		ok = 1;
	}
	pthread_mutex_unlock(&g_fault_mu);
	return ok;
}

CUresult enter(int f) {
	unsigned long n = __atomic_add_fetch(&g_calls[f], 1, __ATOMIC_RELAXED);
	// The hooks are called only when their feature is on: this runs at
	// every driver call, and t_api is a thread-local of a shared library.
	if (g_race)
		t_api = f;
	if (g_seeded)
		sched_host_enter();
	if (__atomic_load_n(&g_armed[f], __ATOMIC_ACQUIRE) == 0)
		return CUDA_SUCCESS;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&g_fault_mu);
	for (int i = 0; i < g_narms; i++) {
		if (g_arms[i].f == f && g_arms[i].at == n) {
			r = g_arms[i].r;
			g_arms[i] = g_arms[--g_narms];
			__atomic_sub_fetch(&g_armed[f], 1, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&g_fault_mu);
	return r;
}

// parse_faults reads FAKECUDA_FAIL: "name:nth:result" entries separated by
// commas, nth counted from the library's load. A malformed entry stops the
// process: a fault silently not injected would make a test pass for the
// wrong reason.
static void parse_faults(const char *spec) {
	char *copy = strdup(spec), *save = NULL;
	for (char *e = strtok_r(copy, ",", &save); e != NULL; e = strtok_r(NULL, ",", &save)) {
		char name[128];
		unsigned long nth;
		int r;
		int f = -1;
		if (sscanf(e, " %127[^:]:%lu:%d", name, &nth, &r) == 3)
			f = func_index(name);
		if (f < 0 || nth == 0 || !arm(f, nth, r)) {
			fprintf(stderr, "fakecuda: bad FAKECUDA_FAIL entry \"%s\" (want name:nth:result, nth >= 1, a function the fake implements)\n", e);
			abort();
		}
	}
	free(copy);
}

static long env_long(const char *name, long def) {
	const char *v = getenv(name);
	if (v == NULL || *v == 0)
		return def;
	char *end;
	long n = strtol(v, &end, 10);
	if (*end != 0 || n < 0) {
		fprintf(stderr, "fakecuda: %s=%s is not a number\n", name, v);
		abort();
	}
	return n;
}

__attribute__((constructor)) static void fake_init(void) {
	g_driver_version = (int)env_long("FAKECUDA_DRIVER_VERSION", 13000);
	g_devices = (int)env_long("FAKECUDA_DEVICES", 1);
	if (g_devices > 8)
		g_devices = 8;
	g_delay_ns = (uint64_t)env_long("FAKECUDA_DELAY_NS", 0);
	long bw = env_long("FAKECUDA_BANDWIDTH", 0);
	if (bw > 0)
		g_bandwidth = (double)bw;
	const char *spec = getenv("FAKECUDA_FAIL");
	if (spec != NULL && *spec != 0)
		parse_faults(spec);
}

// ---- handles ----

struct slot {
	void *obj; // NULL: free
	uint32_t gen;
	uint8_t kind;
	uint32_t next_free; // index + 1 of the next free slot; 0 ends the list
};
static struct slot *g_slots;
static uint32_t g_nslots, g_capslots, g_free;

#define H_KIND(h) ((unsigned)((h) >> 56))
#define H_GEN(h) ((uint32_t)((h) >> 24))
#define H_IDX(h) ((uint32_t)((h) & 0xFFFFFF))

uint64_t handle_new(enum kind k, void *obj) {
	uint32_t i;
	if (g_free != 0) {
		i = g_free - 1;
		g_free = g_slots[i].next_free;
	} else {
		if (g_nslots == g_capslots) {
			g_capslots = g_capslots ? 2 * g_capslots : 256;
			g_slots = realloc(g_slots, g_capslots * sizeof *g_slots);
			if (g_slots == NULL || g_capslots >= 0xFFFFFF)
				abort();
		}
		i = g_nslots++;
		g_slots[i].gen = 1;
	}
	g_slots[i].obj = obj;
	g_slots[i].kind = (uint8_t)k;
	// Index + 1 and a generation from 1 keep every handle far above the
	// special stream values 0, 1 and 2.
	return (uint64_t)k << 56 | (uint64_t)g_slots[i].gen << 24 | (i + 1);
}

static struct slot *slot_of(uint64_t h, enum kind k) {
	uint32_t i = H_IDX(h);
	if (H_KIND(h) != (unsigned)k || i == 0 || i > g_nslots)
		return NULL;
	struct slot *s = &g_slots[i - 1];
	if (s->obj == NULL || s->kind != k || s->gen != H_GEN(h))
		return NULL;
	return s;
}

void *handle_get(uint64_t h, enum kind k) {
	struct slot *s = slot_of(h, k);
	return s ? s->obj : NULL;
}

CUresult locked_handle(uint64_t h, enum kind k, CUresult missing, void **obj) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	*obj = handle_get(h, k);
	if (*obj == NULL) {
		unlock();
		return missing;
	}
	return CUDA_SUCCESS;
}

void handle_free(uint64_t h) {
	struct slot *s = slot_of(h, H_KIND(h));
	if (s == NULL)
		return;
	s->obj = NULL;
	s->gen++;
	if (s->gen >= 0xFFFFFFFF)
		s->gen = 1;
	s->next_free = g_free;
	g_free = (uint32_t)(s - g_slots) + 1;
}

void handle_each(enum kind k, void (*fn)(void *obj, void *arg), void *arg) {
	for (uint32_t i = 0; i < g_nslots; i++)
		if (g_slots[i].obj != NULL && g_slots[i].kind == k)
			fn(g_slots[i].obj, arg);
}

// ---- controls for tests (fakecuda_*) ----

static const char *const live_names[L_COUNT] = {"contexts", "primary", "streams", "events", "device", "host", "graphs", "graph_execs", "reaped", "bound_threads", "managed", "modules"};

// fakecuda_live returns the number of live objects of a kind: "contexts",
// "primary" (outstanding primary retains), "streams", "events", "device" and
// "host" (allocations), "graphs", "graph_execs", "reaped" (objects never
// freed that went away with their context, since the last reset),
// "bound_threads" (threads with a context on their stack), "managed"
// (managed allocations, also counted in "device") or "modules" (modules
// and libraries loaded); -1 for an unknown kind.
EXPORT long fakecuda_live(const char *kind) {
	for (int i = 0; i < L_COUNT; i++) {
		if (strcmp(kind, live_names[i]) == 0) {
			lock();
			long n = g_live[i];
			unlock();
			return n;
		}
	}
	return -1;
}

// fakecuda_calls returns how many times a function was called (by API name;
// a _vN suffix is ignored), or -1 if the fake does not implement it.
EXPORT long fakecuda_calls(const char *name) {
	int f = func_index(name);
	return f < 0 ? -1 : (long)__atomic_load_n(&g_calls[f], __ATOMIC_RELAXED);
}

// fakecuda_function returns the API name of the i-th function the fake
// implements, or NULL past the last: with fakecuda_calls it lists what was
// called.
EXPORT const char *fakecuda_function(int i) { return i >= 0 && i < F_COUNT ? fn_names[i] : NULL; }

// fakecuda_fail makes the nth call of a function from now on (1: the next
// one) fail with result, without effect. It returns 0, or -1 for an unknown
// function, nth < 1 or too many armed faults.
EXPORT int fakecuda_fail(const char *name, long nth, int result) {
	int f = func_index(name);
	if (f < 0 || nth < 1)
		return -1;
	unsigned long at = __atomic_load_n(&g_calls[f], __ATOMIC_RELAXED) + (unsigned long)nth;
	return arm(f, at, result) ? 0 : -1;
}

// fakecuda_reset_counts zeroes the call counters and the reaped count and
// disarms every fault. Live objects stay counted: they still exist.
EXPORT void fakecuda_reset_counts(void) {
	pthread_mutex_lock(&g_fault_mu);
	for (int i = 0; i < F_COUNT; i++) {
		__atomic_store_n(&g_calls[i], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&g_armed[i], 0, __ATOMIC_RELEASE);
	}
	g_narms = 0;
	pthread_mutex_unlock(&g_fault_mu);
	lock();
	g_live[L_REAPED] = 0;
	unlock();
}
