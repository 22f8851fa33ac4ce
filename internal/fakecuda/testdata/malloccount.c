// malloccount counts the C allocator calls (malloc, calloc, realloc) of
// a process it is preloaded into, in a uint64 at the start of the file
// FAKECUDA_MALLOC_COUNT names, which BenchmarkKernelLaunch maps to report
// C-allocs/op: testing's allocation counts see only Go's heap, and the
// fake driver allocates with malloc. Only for measurements:
//
//	gcc -shared -fPIC -O2 -o /tmp/malloccount.so internal/fakecuda/testdata/malloccount.c
//	go test -c -tags cuda13000 -o /tmp/fakecuda.test ./internal/fakecuda
//	cd internal/fakecuda && FAKECUDA_MALLOC_COUNT=/tmp/mallocs LD_PRELOAD=/tmp/malloccount.so /tmp/fakecuda.test -test.run '^$' -test.bench KernelLaunch
//
// It calls glibc's own entry points (__libc_malloc and the rest) rather
// than dlsym(RTLD_NEXT), which may allocate itself.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static uint64_t *g_count; // NULL until the constructor mapped the file

static void count(void) {
	uint64_t *c = __atomic_load_n(&g_count, __ATOMIC_ACQUIRE);
	if (c != NULL)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
	count();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
	count();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
	count();
	return __libc_realloc(p, n);
}

__attribute__((constructor)) static void malloccount_init(void) {
	const char *path = getenv("FAKECUDA_MALLOC_COUNT");
	if (path == NULL || *path == 0)
		return;
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return;
	if (ftruncate(fd, 4096) == 0) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED)
			__atomic_store_n(&g_count, (uint64_t *)m, __ATOMIC_RELEASE);
	}
	close(fd);
}
