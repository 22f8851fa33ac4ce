// What the pieces of a lifecycle call cost in the driver: cuCtxGetCurrent
// alone, event and stream create+destroy, and the same with a
// cuCtxGetCurrent before each of the two calls (what a bound call adds);
// interleaved in chunks, medians. Build: cc -O2 -o lifecost lifecost.c -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef int (*f_i)(unsigned);
static int (*Init)(unsigned);
static int (*DevGet)(int *, int);
static int (*Retain)(void **, int);
static int (*SetCur)(void *);
static int (*GetCur)(void **);
static int (*EvC)(void **, unsigned);
static int (*EvD)(void *);
static int (*StC)(void **, unsigned);
static int (*StD)(void *);
static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
#define R 400
#define C 256
int main(void) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) { puts("no libcuda"); return 1; }
	Init = dlsym(h, "cuInit"); DevGet = dlsym(h, "cuDeviceGet"); Retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	SetCur = dlsym(h, "cuCtxSetCurrent"); GetCur = dlsym(h, "cuCtxGetCurrent");
	EvC = dlsym(h, "cuEventCreate"); EvD = dlsym(h, "cuEventDestroy_v2");
	StC = dlsym(h, "cuStreamCreate"); StD = dlsym(h, "cuStreamDestroy_v2");
	int dev; void *ctx;
	if (Init(0) || DevGet(&dev, 0) || Retain(&ctx, dev) || SetCur(ctx)) { puts("setup"); return 1; }
	static double t[5][R];
	const char *names[5] = {"get_current", "event_cd", "event_cd_get2", "stream_cd", "stream_cd_get2"};
	for (int r = 0; r < R; r++) {
		for (int k = 0; k < 5; k++) {
			int n = k >= 3 ? C / 8 : C;
			uint64_t t0 = now();
			for (int i = 0; i < n; i++) {
				void *c, *e;
				switch (k) {
				case 0: GetCur(&c); break;
				case 1: EvC(&e, 2); EvD(e); break;
				case 2: GetCur(&c); EvC(&e, 2); GetCur(&c); EvD(e); break;
				case 3: StC(&e, 1); StD(e); break;
				case 4: GetCur(&c); StC(&e, 1); GetCur(&c); StD(e); break;
				}
			}
			t[k][r] = (double)(now() - t0) / n;
		}
	}
	for (int k = 0; k < 5; k++) { qsort(t[k], R, sizeof(double), cmp); printf("LIFECOST %s median %.1f ns p25 %.1f p75 %.1f\n", names[k], t[k][R/2], t[k][R/4], t[k][3*R/4]); }
	return 0;
}
