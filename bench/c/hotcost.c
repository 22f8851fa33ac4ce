// What the hot calls' thread mark costs next to the driver's own calls:
// cuEventRecord, cuStreamQuery and cuLaunchKernel (an empty kernel of one
// 64-bit argument), each bare and inside a mark made four ways (a relaxed
// store then mfence; then a locked add on the stack; an xchg; a compiler
// barrier only, as a membarrier-based grace period would allow). Chunks
// interleaved, medians of the paired differences from the bare call. Then
// cuLaunchKernel of an empty kernel of sixteen 64-bit arguments three
// ways: its kernelParams prepared once (a C program reusing its array),
// values and array written on the stack just before each call (what a
// launch with Go values does), and the same with a fence between the
// writes and the call. Then
// what one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) costs, with 0 and
// with 8 other threads of the process busy.
//
// Build: cc -O2 -o hotcost hotcost.c -ldl -lpthread
// Run:   ./hotcost empty.ptx
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int (*Init)(unsigned);
static int (*DevGet)(int *, int);
static int (*Retain)(void **, int);
static int (*SetCur)(void *);
static int (*StC)(void **, unsigned);
static int (*EvC)(void **, unsigned);
static int (*EvRec)(void *, void *);
static int (*StQ)(void *);
static int (*StSync)(void *);
static int (*ModLoad)(void **, const void *);
static int (*GetFn)(void **, void *, const char *);
static int (*Launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);

static void *ev, *st, *fn, *fn16;
static uint64_t args16[16];
static void *params16[16];
static uint64_t argv0;
static void *params[1] = {&argv0};
static _Atomic uint64_t seq;
static uint64_t ops; // a handle's ops word: never closed here

static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

static int call(int op) {
	switch (op) {
	case 0: return EvRec(ev, st);
	case 1: return StQ(st) == 600 ? 0 : StQ(st); // CUDA_ERROR_NOT_READY is fine
	default: return Launch(fn, 1, 1, 1, 1, 1, 1, 0, st, params, 0);
	}
}

#define MARK(fence)                                                        \
	uint64_t v = atomic_load_explicit(&seq, memory_order_relaxed);           \
	fence;                                                                   \
	int r = (__atomic_load_n(&ops, __ATOMIC_RELAXED) >> 63) ? -1 : call(op); \
	atomic_store_explicit(&seq, v + 2, memory_order_release);                \
	return r;

__attribute__((noinline)) static int bare(int op) { return call(op); }
__attribute__((noinline)) static int m_mfence(int op) {
	MARK(atomic_store_explicit(&seq, v + 1, memory_order_relaxed); __asm__ volatile("mfence" ::: "memory"))
}
__attribute__((noinline)) static int m_lockadd(int op) {
	MARK(atomic_store_explicit(&seq, v + 1, memory_order_relaxed); __asm__ volatile("lock addl $0,-8(%%rsp)" ::: "memory", "cc"))
}
__attribute__((noinline)) static int m_xchg(int op) { MARK(atomic_exchange_explicit(&seq, v + 1, memory_order_seq_cst)) }
__attribute__((noinline)) static int m_none(int op) {
	MARK(atomic_store_explicit(&seq, v + 1, memory_order_relaxed); __asm__ volatile("" ::: "memory"))
}

static int (*variants[])(int) = {bare, m_mfence, m_lockadd, m_xchg, m_none};
static const char *vnames[] = {"bare", "mfence", "lockadd", "xchg", "none"};
static const char *opnames[] = {"event_record", "stream_query", "launch"};
#define NV 5
#define R 300

// The three launches of the sixteen-argument kernel.
__attribute__((noinline)) static int l16_prepared(uint64_t x) { return Launch(fn16, 1, 1, 1, 1, 1, 1, 0, st, params16, 0); }
__attribute__((noinline)) static int l16_fresh(uint64_t x) {
	volatile uint64_t v[16];
	void *p[16];
	for (int i = 0; i < 16; i++) v[i] = x;
	for (int i = 0; i < 16; i++) p[i] = (void *)&v[i];
	return Launch(fn16, 1, 1, 1, 1, 1, 1, 0, st, p, 0);
}
__attribute__((noinline)) static int l16_fresh_fence(uint64_t x) {
	volatile uint64_t v[16];
	void *p[16];
	for (int i = 0; i < 16; i++) v[i] = x;
	for (int i = 0; i < 16; i++) p[i] = (void *)&v[i];
	__asm__ volatile("lock addl $0,-8(%%rsp)" ::: "memory", "cc");
	return Launch(fn16, 1, 1, 1, 1, 1, 1, 0, st, p, 0);
}
static int (*l16[])(uint64_t) = {l16_prepared, l16_fresh, l16_fresh_fence};
static const char *l16names[] = {"prepared", "fresh", "fresh_fence"};

static volatile int spin_stop;
static void *spinner(void *p) { while (!spin_stop) __asm__ volatile("pause"); return p; }

static void membarrier_cost(int threads) {
	pthread_t t[16];
	spin_stop = 0;
	for (int i = 0; i < threads; i++) pthread_create(&t[i], 0, spinner, 0);
	usleep(10000);
	static double d[R];
	for (int r = 0; r < R; r++) {
		uint64_t t0 = now();
		for (int i = 0; i < 10; i++) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		d[r] = (double)(now() - t0) / 10;
	}
	spin_stop = 1;
	for (int i = 0; i < threads; i++) pthread_join(t[i], 0);
	qsort(d, R, sizeof(double), cmp);
	printf("HOTCOST membarrier_private_expedited threads=%d median %.0f ns p25 %.0f p75 %.0f\n", threads, d[R / 2], d[R / 4], d[3 * R / 4]);
}

int main(int argc, char **argv) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h || argc < 2) { puts("usage: hotcost empty.ptx (needs libcuda.so.1)"); return 1; }
	Init = dlsym(h, "cuInit"); DevGet = dlsym(h, "cuDeviceGet"); Retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	SetCur = dlsym(h, "cuCtxSetCurrent"); StC = dlsym(h, "cuStreamCreate"); EvC = dlsym(h, "cuEventCreate");
	EvRec = dlsym(h, "cuEventRecord"); StQ = dlsym(h, "cuStreamQuery"); StSync = dlsym(h, "cuStreamSynchronize");
	ModLoad = dlsym(h, "cuModuleLoadData"); GetFn = dlsym(h, "cuModuleGetFunction"); Launch = dlsym(h, "cuLaunchKernel");
	FILE *f = fopen(argv[1], "rb");
	if (!f) { perror(argv[1]); return 1; }
	static char ptx[1 << 16];
	ptx[fread(ptx, 1, sizeof ptx - 1, f)] = 0;
	fclose(f);
	int dev; void *ctx, *mod;
	if (Init(0) || DevGet(&dev, 0) || Retain(&ctx, dev) || SetCur(ctx) || StC(&st, 1) || EvC(&ev, 2) ||
	    ModLoad(&mod, ptx) || GetFn(&fn, mod, "empty1") || GetFn(&fn16, mod, "empty16")) { puts("setup failed"); return 1; }
	for (int op = 0; op < 3; op++) {
		int per = op == 2 ? 500 : 2000;
		static double t[NV][R], d[NV][R];
		for (int r = 0; r < R; r++) {
			for (int k = 0; k < NV; k++) {
				int v = (k + r) % NV; // rotate the order
				uint64_t t0 = now();
				for (int i = 0; i < per; i++)
					if (variants[v](op) != 0) { printf("%s failed\n", opnames[op]); return 1; }
				t[v][r] = (double)(now() - t0) / per;
				StSync(st);
			}
			for (int v = 0; v < NV; v++) d[v][r] = t[v][r] - t[0][r];
		}
		for (int v = 0; v < NV; v++) {
			qsort(t[v], R, sizeof(double), cmp);
			qsort(d[v], R, sizeof(double), cmp);
			printf("HOTCOST %s %s median %.1f ns delta_median %+.1f p25 %+.1f p75 %+.1f\n", opnames[op], vnames[v],
			       t[v][R / 2], d[v][R / 2], d[v][R / 4], d[v][3 * R / 4]);
		}
	}
	for (int i = 0; i < 16; i++) params16[i] = &args16[i];
	{
		static double t[3][R], d[3][R];
		for (int r = 0; r < R; r++) {
			for (int k = 0; k < 3; k++) {
				int v = (k + r) % 3;
				uint64_t t0 = now();
				for (int i = 0; i < 500; i++)
					if (l16[v](i) != 0) { puts("launch16 failed"); return 1; }
				t[v][r] = (double)(now() - t0) / 500;
				StSync(st);
			}
			for (int v = 0; v < 3; v++) d[v][r] = t[v][r] - t[0][r];
		}
		for (int v = 0; v < 3; v++) {
			qsort(t[v], R, sizeof(double), cmp);
			qsort(d[v], R, sizeof(double), cmp);
			printf("HOTCOST launch16 %s median %.1f ns delta_median %+.1f p25 %+.1f p75 %+.1f\n", l16names[v],
			       t[v][R / 2], d[v][R / 2], d[v][R / 4], d[v][3 * R / 4]);
		}
	}
	int q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	printf("HOTCOST membarrier query %#x (private expedited %s)\n", q, q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ? "yes" : "no");
	if (q > 0 && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
		membarrier_cost(0);
		membarrier_cost(8);
	}
	return 0;
}
