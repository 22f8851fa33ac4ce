// The seeded scheduler (FAKECUDA_SEED=N): stream workers run one
// operation at a time, the next drawn by a PRNG seeded with N among the
// streams whose next operation may start, so that an ordering bug shows
// the same way on every run for a seed, and differently for other seeds.
//
// For the draws to be the same from run to run, the set drawn from must
// be too. So device work waits for the host: an operation starts only
// while a host thread waits for the device (a synchronize call, a
// synchronous copy, a query that finds work pending, cudatest's waits),
// or once the host has made no driver call for a grace period (2 ms, or
// FAKECUDA_SEED_GRACE_MS; it keeps a host that waits in Go, for a host
// function say, going).
// A host that queues a batch and then waits thus sees every operation of
// the batch queued before the first draw, and the order they run in is a
// function of the seed. Not deterministic: work the host leaves running
// while it computes for longer than the grace period, programs that call
// the driver from several goroutines at once, and host functions, which
// run outside the turn (they may wait for the host, as a Go test's do).
#include "race.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int g_seeded;
static uint64_t g_rng, g_seed;
static struct stream **g_ws; // streams with a worker, by id
static size_t g_nws;
static struct stream *g_turn; // the stream whose worker may run an op
static int g_host_waiting, g_host_yield;
static uint64_t g_last_host_ns;

static uint64_t g_grace_ns = 2000000; // FAKECUDA_SEED_GRACE_MS

static uint64_t next_rand(void) {
	// splitmix64
	uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void sched_add(struct stream *s) {
	if (!g_seeded)
		return;
	size_t i = 0;
	while (i < g_nws && g_ws[i]->id < s->id)
		i++;
	g_ws = xrealloc(g_ws, (g_nws + 1) * sizeof *g_ws);
	memmove(&g_ws[i + 1], &g_ws[i], (g_nws - i) * sizeof *g_ws);
	g_ws[i] = s;
	g_nws++;
}

void sched_remove(struct stream *s) {
	if (!g_seeded)
		return;
	for (size_t i = 0; i < g_nws; i++) {
		if (g_ws[i] == s) {
			memmove(&g_ws[i], &g_ws[i + 1], (g_nws - i - 1) * sizeof *g_ws);
			g_nws--;
			break;
		}
	}
	if (g_turn == s)
		g_turn = NULL;
}

static int allowed(void) {
	if (g_host_waiting > 0 || __atomic_load_n(&g_host_yield, __ATOMIC_RELAXED))
		return 1;
	// The host stores its clock outside the lock: it can be later than
	// the reading here, and an unsigned difference would then wrap to a
	// huge idle time and let a draw in while the host is still queuing.
	uint64_t now = now_ns(), last = __atomic_load_n(&g_last_host_ns, __ATOMIC_RELAXED);
	return (int64_t)(now - last) >= (int64_t)g_grace_ns;
}

// startable reports whether s's head may start: a stream whose worker
// runs a host function (outside the turn) has none until it returns. A
// turn given to it would wait for that, and a host function that waits
// for another stream's work (the fake NCCL's rendezvous) would wait
// forever.
static int startable(struct stream *s) { return s->head != NULL && !s->in_hostfn && op_ready(s->head); }

// pick gives the turn to one of the streams whose head may start.
static void pick(void) {
	if (g_turn != NULL || !allowed())
		return;
	size_t n = 0;
	for (size_t i = 0; i < g_nws; i++)
		if (startable(g_ws[i]))
			n++;
	if (n == 0)
		return;
	size_t k = (size_t)(next_rand() % n);
	for (size_t i = 0; i < g_nws; i++) {
		struct stream *s = g_ws[i];
		if (startable(s) && k-- == 0) {
			g_turn = s;
			break;
		}
	}
	pthread_cond_broadcast(&g_done);
}

void sched_kick(void) {
	if (g_seeded)
		pick();
}

int sched_acquire(struct stream *s) {
	if (!g_seeded || g_turn == s)
		return 1;
	pick();
	if (g_turn == s)
		return 1;
	// Wait for a turn; wake for the grace period's end.
	struct timespec ts = deadline_in(g_grace_ns);
	pthread_cond_timedwait(&g_done, &g_mu, &ts);
	return 0;
}

void sched_release(struct stream *s) {
	if (!g_seeded || g_turn != s)
		return;
	g_turn = NULL;
	pick();
}

void host_wait(void) {
	if (!g_seeded) {
		pthread_cond_wait(&g_done, &g_mu);
		return;
	}
	g_host_waiting++;
	pick();
	pthread_cond_wait(&g_done, &g_mu);
	g_host_waiting--;
}

void sched_host_enter(void) {
	if (!g_seeded)
		return;
	__atomic_store_n(&g_last_host_ns, now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&g_host_yield, 0, __ATOMIC_RELAXED);
}

void sched_host_yield(void) {
	if (!g_seeded)
		return;
	__atomic_store_n(&g_host_yield, 1, __ATOMIC_RELAXED);
	pick();
}

// fakecuda_seed reports the seed and whether the scheduler is seeded.
EXPORT int fakecuda_seed(unsigned long long *seed) {
	if (seed != NULL)
		*seed = g_seed;
	return g_seeded;
}

__attribute__((constructor)) static void sched_init(void) {
	const char *v = getenv("FAKECUDA_SEED");
	if (v == NULL || *v == 0)
		return;
	char *end;
	unsigned long long n = strtoull(v, &end, 0);
	if (*end != 0) {
		// A seed silently ignored would make a run look reproducible when
		// it is not.
		fprintf(stderr, "fakecuda: FAKECUDA_SEED=%s is not a number\n", v);
		abort();
	}
	g_seeded = 1;
	g_rng = g_seed = n;
	const char *g = getenv("FAKECUDA_SEED_GRACE_MS");
	if (g != NULL && *g != 0) {
		unsigned long ms = strtoul(g, &end, 10);
		if (*end != 0) {
			fprintf(stderr, "fakecuda: FAKECUDA_SEED_GRACE_MS=%s is not a number\n", g);
			abort();
		}
		g_grace_ns = (uint64_t)ms * 1000000u;
	}
}
