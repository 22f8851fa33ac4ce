// Memory: device memory is host memory, and a CUdeviceptr is its address.
// Every allocation is in a table, so a pointer outside any allocation, or
// a range running past one, is CUDA_ERROR_INVALID_VALUE rather than a
// crash. Copies and memsets run on the stream's worker, in stream order.
#include "fake.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CU_DEVICE_CPU (-1)
#define CU_DEVICE_INVALID (-2)

static struct alloc *g_allocs;
static size_t g_used; // device bytes allocated, against the device's total

// find returns the live allocation holding [p, p+n), or NULL.
struct alloc *alloc_find(const void *p, size_t n) {
	const char *c = p;
	for (struct alloc *a = g_allocs; a != NULL; a = a->next)
		if (c >= a->base && c < a->base + a->size && n <= (size_t)(a->base + a->size - c))
			return a;
	return NULL;
}

// fakecuda_range_valid reports whether [ptr, ptr+n) lies in one live
// allocation (device, managed or page-locked memory): for a library of
// the fake's to refuse memory a GPU would fault on, before it touches it.
EXPORT int fakecuda_range_valid(unsigned long long ptr, size_t n) {
	lock();
	struct alloc *a = alloc_find((const void *)(uintptr_t)ptr, n ? n : 1);
	unlock();
	return a != NULL;
}

CUresult device_mem_take(size_t bytes) {
	if (bytes > device_total_mem() - g_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g_used += bytes;
	return CUDA_SUCCESS;
}

void device_mem_give(size_t bytes) { g_used -= bytes; }

// destroy gives a pool allocation back to its pool here rather than when
// it is unlinked: a stream-ordered free has run by now.
static void destroy(struct alloc *a) {
	race_alloc_remove(a);
	if (a->pool != NULL)
		pool_give(a->pool, a->size);
	if (!a->registered && !a->mapped) // registered and mapped memory is not the table's to unmap
		munmap(a->base, a->size);
	free(a);
}

void alloc_put(struct alloc *a) {
	if (--a->pending == 0 && a->freed)
		destroy(a);
}

// unlink takes a out of the table at once, so that no new operation can
// use it, and unmaps it when no queued operation still does.
static void unlink_alloc(struct alloc *a) {
	for (struct alloc **p = &g_allocs; *p != NULL; p = &(*p)->next) {
		if (*p == a) {
			*p = a->next;
			break;
		}
	}
	a->freed = 1;
	if (!a->host && !a->managed && a->pool == NULL && !a->mapped)
		g_used -= a->size;
	if (a->managed)
		g_live[L_MANAGED]--;
	if (a->pending == 0)
		destroy(a);
}

// new_alloc maps lazily (MAP_NORESERVE): a test may allocate a gigabyte
// and touch little of it. Managed memory is device memory that does not
// count against the device's (see cuMemAllocManaged), and memory from a
// pool counts through the pool's reserve.
static CUresult new_alloc(struct ctx *c, size_t bytes, int host, int managed, struct mempool *pool, struct alloc **out) {
	int counted = !host && !managed && pool == NULL;
	if (counted && bytes > device_total_mem() - g_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = pool != NULL ? pool_take(pool, bytes) : CUDA_SUCCESS;
	if (r != CUDA_SUCCESS)
		return r;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		if (pool != NULL)
			pool_give(pool, bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct alloc *a = calloc(1, sizeof *a);
	if (a == NULL)
		abort();
	a->base = p;
	a->size = bytes;
	a->ctx = c;
	a->host = host;
	a->pool = pool;
	a->next = g_allocs;
	g_allocs = a;
	if (counted)
		g_used += bytes;
	g_live[host ? L_HOST : L_DEVICE]++;
	if (managed) {
		a->managed = 1;
		a->preferred = CU_DEVICE_INVALID;
		a->last_prefetch = CU_DEVICE_INVALID;
		g_live[L_MANAGED]++;
	}
	race_alloc_add(a);
	*out = a;
	return CUDA_SUCCESS;
}

struct alloc *alloc_add_mapped(char *base, size_t size) {
	struct alloc *a = calloc(1, sizeof *a);
	if (a == NULL)
		abort();
	a->base = base;
	a->size = size;
	a->mapped = 1;
	a->next = g_allocs;
	g_allocs = a;
	race_alloc_add(a);
	return a;
}

void alloc_remove_mapped(struct alloc *a) {
	while (a->pending != 0)
		pthread_cond_wait(&g_done, &g_mu);
	unlink_alloc(a);
}

void alloc_reap(struct ctx *c) {
	struct alloc *a = g_allocs;
	while (a != NULL) {
		struct alloc *next = a->next;
		if (a->ctx == c) {
			g_live[a->host ? L_HOST : L_DEVICE]--;
			g_live[L_REAPED]++;
			unlink_alloc(a);
		}
		a = next;
	}
}

void fill(char *dst, size_t bytes, uint32_t value, unsigned elem) {
	if (elem == 1 || bytes == 0) {
		memset(dst, (int)(value & 0xFF), bytes);
		return;
	}
	if (elem > 4) { // a column of cuMemsetD2D32 (set2d): a value every elem bytes
		for (size_t off = 0; off + 4 <= bytes; off += elem)
			memcpy(dst + off, &value, 4);
		return;
	}
	// Write one element, then double the filled prefix: memcpy speed,
	// whatever the element size.
	memcpy(dst, &value, elem); // little-endian: the low bytes are the element
	size_t done = elem;
	while (done < bytes) {
		size_t n = done < bytes - done ? done : bytes - done;
		if (n > (1u << 20))
			n = 1u << 20;
		memcpy(dst + done, dst, n);
		done += n;
	}
}

// ---- allocation entry points ----

static CUresult alloc_in_current(void **out, size_t bytes, int host) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c;
	struct alloc *a;
	r = capture_guard();
	if (r == CUDA_SUCCESS)
		r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		r = new_alloc(c, bytes, host, 0, NULL, &a);
	if (r == CUDA_SUCCESS)
		*out = a->base;
	unlock();
	return r;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
	ENTER(cuMemAlloc);
	void *p = NULL;
	CUresult r = alloc_in_current(dptr ? &p : NULL, bytes, 0);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytes) {
	ENTER(cuMemAllocHost);
	return alloc_in_current(pp, bytes, 1);
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) {
	ENTER(cuMemHostAlloc);
	if (flags & ~0xFu) // PORTABLE, DEVICEMAP, WRITECOMBINED (and 0x8 reserved)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_in_current(pp, bytes, 1);
}

// free_at frees the allocation that starts at p, of the given kind.
static CUresult free_at(const void *p, int host) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct alloc *a = alloc_find(p, 0);
	if (a == NULL || a->base != p || a->host != host || a->registered || a->mapped) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	r = capture_guard();
	if (r != CUDA_SUCCESS) {
		unlock();
		return r;
	}
	// The driver's cuMemFree and cuMemFreeHost wait for the work already
	// queued in the context (an implicit synchronization), so that a
	// kernel launched before the free never sees the memory go: code that
	// relies on it is right on a GPU and must be here too.
	ctx_sync(a->ctx);
	g_live[host ? L_HOST : L_DEVICE]--;
	unlink_alloc(a);
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
	ENTER(cuMemFree);
	return free_at((void *)(uintptr_t)dptr, 0);
}

EXPORT CUresult cuMemFreeHost(void *p) {
	ENTER(cuMemFreeHost);
	return free_at(p, 1);
}

// cuMemHostRegister page-locks the caller's memory: it becomes an entry of
// the table, so asynchronous copies from it are asynchronous, and it is
// left mapped when unregistered.
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags) {
	ENTER(cuMemHostRegister);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (p == NULL || bytes == 0 || (flags & ~0xFu)) // PORTABLE, DEVICEMAP, IOMEMORY, READ_ONLY
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c;
	r = current_ctx(&c);
	for (struct alloc *a = g_allocs; r == CUDA_SUCCESS && a != NULL; a = a->next)
		if ((char *)p < a->base + a->size && a->base < (char *)p + bytes)
			r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	if (r == CUDA_SUCCESS) {
		struct alloc *a = calloc(1, sizeof *a);
		if (a == NULL)
			abort();
		a->base = p;
		a->size = bytes;
		a->ctx = c;
		a->host = 1;
		a->registered = 1;
		a->next = g_allocs;
		g_allocs = a;
		g_live[L_HOST]++;
		race_alloc_add(a);
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemHostUnregister(void *p) {
	ENTER(cuMemHostUnregister);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct alloc *a = alloc_find(p, 0);
	if (a == NULL || a->base != p || !a->registered)
		r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	else {
		g_live[L_HOST]--;
		unlink_alloc(a);
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
	ENTER(cuMemGetInfo);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (free == NULL || total == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS) {
		*total = device_total_mem();
		*free = *total - g_used;
	}
	unlock();
	return r;
}

// Stream-ordered allocation: the memory exists at once (earlier than the
// driver promises, which no correct program can tell), and its free runs
// in stream order. It comes from a pool (mempool.c): cuMemAllocAsync's is
// the current pool of the stream's device.
CUresult alloc_async(struct stream *s, struct mempool *p, size_t bytes, CUdeviceptr *out) {
	if (s->cap != NULL) { // not modeled: memory nodes
		capture_invalidate(s);
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	struct alloc *a;
	CUresult r = new_alloc(s->ctx, bytes, 0, 0, p, &a);
	if (r == CUDA_SUCCESS)
		*out = (CUdeviceptr)(uintptr_t)a->base;
	return r;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream hs) {
	ENTER(cuMemAllocAsync);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct stream *s;
	r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS)
		r = alloc_async(s, pool_current(s->ctx->dev), bytes, dptr);
	unlock();
	return r;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hs) {
	ENTER(cuMemFreeAsync);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	void *p = (void *)(uintptr_t)dptr;
	lock();
	struct stream *s;
	struct alloc *a = alloc_find(p, 0);
	if (a == NULL || a->base != p || a->host)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS && s->cap != NULL) { // not modeled: memory nodes
		capture_invalidate(s);
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (r == CUDA_SUCCESS) {
		struct op *op = op_new(OP_FREE);
		op->a[0] = a; // its pending reference keeps the memory until the op runs
		enqueue(s, op, 0);
		g_live[L_DEVICE]--;
		unlink_alloc(a);
	}
	unlock();
	return r;
}

// ---- copies and memsets ----

// target_stream resolves the stream of an async call, or the current
// context's NULL stream for a synchronous one. Under the lock.
static CUresult target_stream(CUstream hs, int async, struct stream **s) {
	if (async)
		return stream_of(hs, s);
	struct ctx *c;
	CUresult r = capture_guard();
	if (r == CUDA_SUCCESS)
		r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		*s = legacy_stream(c);
	return r;
}

enum side { ANY, DEV };

// queue_copy queues a checked copy of n > 0 bytes on s; da and sa are the
// allocations holding its two sides (NULL for pageable host memory), and
// wait says whether the call returns only once the copy is done. Under
// the lock.
static CUresult queue_copy(struct stream *s, void *dst, struct alloc *da, const void *src, struct alloc *sa, size_t n, int wait) {
	struct op *op = op_new(OP_COPY);
	op->dst = dst;
	op->src = src;
	op->bytes = n;
	op->a[0] = da;
	op->a[1] = sa;
	return enqueue(s, op, wait);
}

// copy checks and queues a copy. Which calls return only once it is done
// follows the driver's documented behaviour: synchronous copies do, but
// device to device; asynchronous ones do when a host side is pageable
// (not from cuMemAllocHost), which also keeps the worker from touching
// memory the caller (Go's garbage collector, say) may reuse.
static CUresult copy(void *dst, enum side ds, const void *src, enum side ss, size_t n, CUstream hs, int async) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dst == NULL || src == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct alloc *da = alloc_find(dst, n), *sa = alloc_find(src, n);
	struct stream *s;
	if ((ds == DEV && da == NULL) || (ss == DEV && sa == NULL))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = target_stream(hs, async, &s);
	if (r == CUDA_SUCCESS && n > 0) {
		int pageable = da == NULL || sa == NULL;
		int dtod = da != NULL && !da->host && sa != NULL && !sa->host;
		r = queue_copy(s, dst, da, src, sa, n, async ? pageable : !dtod);
	}
	unlock();
	return r;
}

#define DPTR(p) ((void *)(uintptr_t)(p))

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	ENTER(cuMemcpy);
	return copy(DPTR(dst), ANY, DPTR(src), ANY, n, NULL, 0);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) {
	ENTER(cuMemcpyAsync);
	return copy(DPTR(dst), ANY, DPTR(src), ANY, n, hs, 1);
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	ENTER(cuMemcpyHtoD);
	return copy(DPTR(dst), DEV, src, ANY, n, NULL, 0);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	ENTER(cuMemcpyDtoH);
	return copy(dst, ANY, DPTR(src), DEV, n, NULL, 0);
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	ENTER(cuMemcpyDtoD);
	return copy(DPTR(dst), DEV, DPTR(src), DEV, n, NULL, 0);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream hs) {
	ENTER(cuMemcpyHtoDAsync);
	return copy(DPTR(dst), DEV, src, ANY, n, hs, 1);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream hs) {
	ENTER(cuMemcpyDtoHAsync);
	return copy(dst, ANY, DPTR(src), DEV, n, hs, 1);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) {
	ENTER(cuMemcpyDtoDAsync);
	return copy(DPTR(dst), DEV, DPTR(src), DEV, n, hs, 1);
}

// ---- peer copies ----

// peer_ends checks a peer copy's contexts and memory: both pointers in
// device (or managed) memory of the context named with them. It gives the
// contexts and the allocations found, for the copy to use. Under the lock.
static CUresult peer_ends(void *dst, CUcontext dctx, const void *src, CUcontext sctx, size_t n, struct ctx **dc,
	struct ctx **sc, struct alloc **da, struct alloc **sa) {
	CUresult r = ctx_of(dctx, dc);
	if (r == CUDA_SUCCESS)
		r = ctx_of(sctx, sc);
	if (r != CUDA_SUCCESS)
		return r;
	*da = alloc_find(dst, n);
	*sa = alloc_find(src, n);
	if (*da == NULL || *sa == NULL || (*da)->host || (*sa)->host || (*da)->ctx != *dc || (*sa)->ctx != *sc)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

// cuMemcpyPeer is serialized, the driver documents, with all pending and
// future work of the current context and of both contexts named, though
// asynchronous to the host. The fake waits for that work and then for the
// copy, queued on the current context's NULL stream: the ordering the
// driver promises, and more. The detector orders the host after all of it
// too, as after cuCtxSynchronize of each context (so a race of the host
// with that work goes unreported); package cuda synchronizes after the
// call anyway.
EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n) {
	ENTER(cuMemcpyPeer);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dst == 0 || src == 0)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *dc, *sc, *cur;
	struct alloc *da, *sa;
	struct stream *s;
	r = peer_ends(DPTR(dst), dctx, DPTR(src), sctx, n, &dc, &sc, &da, &sa);
	if (r == CUDA_SUCCESS)
		r = target_stream(NULL, 0, &s);
	if (r == CUDA_SUCCESS && n > 0) {
		cur = s->ctx;
		ctx_sync(cur);
		if (dc != cur)
			ctx_sync(dc);
		if (sc != cur && sc != dc)
			ctx_sync(sc);
		// Found again: the waits let go of the lock, and the memory or
		// the contexts may have gone meanwhile.
		r = peer_ends(DPTR(dst), dctx, DPTR(src), sctx, n, &dc, &sc, &da, &sa);
		if (r == CUDA_SUCCESS)
			r = target_stream(NULL, 0, &s);
	}
	if (r == CUDA_SUCCESS && n > 0)
		r = queue_copy(s, DPTR(dst), da, DPTR(src), sa, n, 1);
	unlock();
	return r;
}

// cuMemcpyPeerAsync is a copy on hs like cuMemcpyDtoDAsync, with the
// contexts of its two sides checked.
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hs) {
	ENTER(cuMemcpyPeerAsync);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dst == 0 || src == 0)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *dc, *sc;
	struct alloc *da, *sa;
	struct stream *s;
	r = peer_ends(DPTR(dst), dctx, DPTR(src), sctx, n, &dc, &sc, &da, &sa);
	if (r == CUDA_SUCCESS)
		r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS && n > 0)
		r = queue_copy(s, DPTR(dst), da, DPTR(src), sa, n, 0);
	unlock();
	return r;
}

// set checks and queues a memset of count elements of elem bytes. A
// synchronous memset returns at once unless it writes host memory, as the
// driver documents.
static CUresult set(CUdeviceptr d, uint32_t value, unsigned elem, size_t count, CUstream hs, int async) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	char *dst = DPTR(d);
	if (dst == NULL || d % elem != 0 || count > SIZE_MAX / elem)
		return CUDA_ERROR_INVALID_VALUE;
	size_t n = count * elem;
	lock();
	struct alloc *a = alloc_find(dst, n);
	struct stream *s;
	r = a == NULL ? CUDA_ERROR_INVALID_VALUE : target_stream(hs, async, &s);
	if (r == CUDA_SUCCESS && n > 0) {
		struct op *op = op_new(OP_MEMSET);
		op->dst = dst;
		op->bytes = n;
		op->elem = elem;
		op->value = value;
		op->a[0] = a;
		r = enqueue(s, op, !async && a->host);
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
	ENTER(cuMemsetD8);
	return set(d, v, 1, n, NULL, 0);
}

EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) {
	ENTER(cuMemsetD16);
	return set(d, v, 2, n, NULL, 0);
}

EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) {
	ENTER(cuMemsetD32);
	return set(d, v, 4, n, NULL, 0);
}

// set2d checks and queues cuMemsetD2D32's height rows of width 32-bit
// values, pitch bytes apart (the pitch matters only with more than one
// row), as memsets like set's: whole rows when there are no more rows
// than columns, else columns, each a memset whose elem is the pitch (see
// fill). A column's range spans the bytes between its values too, which
// the race detector counts as written. A memset that the next one in its
// stream covers is skipped (stream.c), so no memset here may cover the
// one before it without writing all of it: the columns go from the last
// to the first, and the first value is a memset of its own, the one that
// follows whatever was queued before.
static CUresult set2d(CUdeviceptr d, size_t pitch, uint32_t value, size_t width, size_t height, CUstream hs, int async) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	char *dst = DPTR(d);
	if (dst == NULL || d % 4 != 0 || width > SIZE_MAX / 4)
		return CUDA_ERROR_INVALID_VALUE;
	size_t row = width * 4;
	if (height > 1 && (pitch % 4 != 0 || pitch < row || (pitch != 0 && (height - 1) > (SIZE_MAX - row) / pitch)))
		return CUDA_ERROR_INVALID_VALUE;
	if (height <= 1 || pitch == row) // contiguous
		return set(d, value, 4, width * height, hs, async);
	size_t span = width == 0 ? 0 : (height - 1) * pitch + row;
	int columns = height > width && pitch <= UINT32_MAX;
	size_t count = columns ? width + 1 : height;
	lock();
	struct alloc *a = alloc_find(dst, span);
	struct stream *s;
	r = a == NULL ? CUDA_ERROR_INVALID_VALUE : target_stream(hs, async, &s);
	for (size_t i = 0; r == CUDA_SUCCESS && span > 0 && i < count; i++) {
		struct op *op = op_new(OP_MEMSET);
		op->value = value;
		op->a[0] = a;
		op->elem = 4;
		if (!columns) { // row i
			op->dst = dst + i * pitch;
			op->bytes = row;
		} else if (i == 0) { // the last column's first value
			op->dst = dst + row - 4;
			op->bytes = 4;
		} else if (i == 1) { // the rest of the last column
			op->dst = dst + row - 4 + pitch;
			op->bytes = (height - 2) * pitch + 4;
			op->elem = (unsigned)pitch;
		} else { // column width - i
			op->dst = dst + 4 * (width - i);
			op->bytes = (height - 1) * pitch + 4;
			op->elem = (unsigned)pitch;
		}
		// A synchronous memset of host memory waits for its last op:
		// the others are before it in the stream.
		r = enqueue(s, op, !async && a->host && i == count - 1);
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int v, size_t width, size_t height) {
	ENTER(cuMemsetD2D32);
	return set2d(d, pitch, v, width, height, NULL, 0);
}

EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t width, size_t height, CUstream hs) {
	ENTER(cuMemsetD2D32Async);
	return set2d(d, pitch, v, width, height, hs, 1);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream hs) {
	ENTER(cuMemsetD8Async);
	return set(d, v, 1, n, hs, 1);
}

EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream hs) {
	ENTER(cuMemsetD16Async);
	return set(d, v, 2, n, hs, 1);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream hs) {
	ENTER(cuMemsetD32Async);
	return set(d, v, 4, n, hs, 1);
}

// ---- managed memory ----

// Managed memory is host memory like the rest, so the host and "kernels"
// see the same bytes whatever was prefetched where. What the fake models
// is the interface: the attach flags, prefetches queued in stream order
// and taking the modeled time of the bytes they move, advice and the last
// prefetch's destination kept for cuMemRangeGetAttribute. Managed memory
// does not count against the device's free memory (cuMemGetInfo), as with
// the driver, which counts it only once it is resident on the device.
// Stream capture of a prefetch is not modeled: it invalidates the capture.

#define CU_MEM_ATTACH_GLOBAL 0x1
#define CU_MEM_ATTACH_HOST 0x2

enum {
	ADVISE_SET_READ_MOSTLY = 1,
	ADVISE_UNSET_READ_MOSTLY,
	ADVISE_SET_PREFERRED_LOCATION,
	ADVISE_UNSET_PREFERRED_LOCATION,
	ADVISE_SET_ACCESSED_BY,
	ADVISE_UNSET_ACCESSED_BY,
};

enum {
	RANGE_READ_MOSTLY = 1,
	RANGE_PREFERRED_LOCATION,
	RANGE_ACCESSED_BY,
	RANGE_LAST_PREFETCH_LOCATION,
};

// CUmemLocation of cuda.h (12.2 and later) and its types.
typedef struct {
	int type;
	int id;
} CUmemLocation;
enum { LOC_INVALID, LOC_DEVICE, LOC_HOST, LOC_HOST_NUMA, LOC_HOST_NUMA_CURRENT };

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags) {
	ENTER(cuMemAllocManaged);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytes == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct ctx *c;
	struct alloc *a;
	r = capture_guard();
	if (r == CUDA_SUCCESS)
		r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		r = new_alloc(c, bytes, 0, 1, NULL, &a);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)a->base;
	unlock();
	return r;
}

// location_device turns a CUmemLocation into the CUdevice of the older
// calls: a device, or CU_DEVICE_CPU for every host location.
static CUresult location_device(CUmemLocation loc, CUdevice *dev) {
	switch (loc.type) {
	case LOC_DEVICE:
		*dev = loc.id;
		return CUDA_SUCCESS;
	case LOC_HOST:
	case LOC_HOST_NUMA_CURRENT:
		*dev = CU_DEVICE_CPU;
		return CUDA_SUCCESS;
	case LOC_HOST_NUMA:
		*dev = CU_DEVICE_CPU;
		return loc.id >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

// managed_range finds the managed allocation holding [p, p+n), n > 0.
// Under the lock.
static CUresult managed_range(CUdeviceptr d, size_t n, struct alloc **out) {
	struct alloc *a = n == 0 ? NULL : alloc_find(DPTR(d), n);
	if (a == NULL || !a->managed)
		return CUDA_ERROR_INVALID_VALUE;
	*out = a;
	return CUDA_SUCCESS;
}

// prefetch queues a prefetch of [d, d+n) to dev on hs; devr is the result
// of finding dev (cuMemPrefetchAsync_v2's location).
static CUresult prefetch(CUdeviceptr d, size_t n, CUdevice dev, CUresult devr, unsigned flags, CUstream hs) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (devr != CUDA_SUCCESS || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != CU_DEVICE_CPU && !device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct alloc *a;
	struct stream *s;
	r = managed_range(d, n, &a);
	if (r == CUDA_SUCCESS)
		r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS) {
		struct op *op = op_new(OP_PREFETCH);
		op->dst = DPTR(d);
		op->bytes = n;
		op->a[0] = a;
		r = enqueue(s, op, 0);
	}
	if (r == CUDA_SUCCESS)
		a->last_prefetch = dev;
	unlock();
	return r;
}

EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr d, size_t n, CUdevice dev, CUstream hs) {
	ENTER(cuMemPrefetchAsync);
	return prefetch(d, n, dev, CUDA_SUCCESS, 0, hs);
}

EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr d, size_t n, CUmemLocation loc, unsigned int flags, CUstream hs) {
	ENTER(cuMemPrefetchAsync);
	CUdevice dev = CU_DEVICE_INVALID;
	CUresult devr = location_device(loc, &dev);
	return prefetch(d, n, dev, devr, flags, hs);
}

static uint32_t device_bit(CUdevice dev) { return dev == CU_DEVICE_CPU ? 1u << 31 : 1u << dev; }

// advise applies advice to [d, d+n); dev is its device, where it has one,
// and devr the result of finding it (cuMemAdvise_v2's location).
static CUresult advise(CUdeviceptr d, size_t n, int advice, CUdevice dev, CUresult devr) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (advice < ADVISE_SET_READ_MOSTLY || advice > ADVISE_UNSET_ACCESSED_BY)
		return CUDA_ERROR_INVALID_VALUE;
	int needs_device = advice == ADVISE_SET_PREFERRED_LOCATION || advice == ADVISE_SET_ACCESSED_BY ||
	                   advice == ADVISE_UNSET_ACCESSED_BY;
	if (needs_device && devr != CUDA_SUCCESS)
		return devr;
	if (needs_device && dev != CU_DEVICE_CPU && !device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	struct alloc *a;
	r = managed_range(d, n, &a);
	if (r == CUDA_SUCCESS) {
		switch (advice) {
		case ADVISE_SET_READ_MOSTLY:
			a->read_mostly = 1;
			break;
		case ADVISE_UNSET_READ_MOSTLY:
			a->read_mostly = 0;
			break;
		case ADVISE_SET_PREFERRED_LOCATION:
			a->preferred = dev;
			break;
		case ADVISE_UNSET_PREFERRED_LOCATION:
			a->preferred = CU_DEVICE_INVALID;
			break;
		case ADVISE_SET_ACCESSED_BY:
			a->accessed_by |= device_bit(dev);
			break;
		case ADVISE_UNSET_ACCESSED_BY:
			a->accessed_by &= ~device_bit(dev);
			break;
		}
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemAdvise(CUdeviceptr d, size_t n, int advice, CUdevice dev) {
	ENTER(cuMemAdvise);
	return advise(d, n, advice, dev, CUDA_SUCCESS);
}

EXPORT CUresult cuMemAdvise_v2(CUdeviceptr d, size_t n, int advice, CUmemLocation loc) {
	ENTER(cuMemAdvise);
	CUdevice dev = CU_DEVICE_INVALID;
	CUresult devr = location_device(loc, &dev);
	return advise(d, n, advice, dev, devr);
}

// cuMemRangeGetAttribute reports the four attributes every version has;
// 13.0's location type and id attributes are not modeled.
EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t size, int attribute, CUdeviceptr d, size_t n) {
	ENTER(cuMemRangeGetAttribute);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (data == NULL || size == 0 || size % 4 != 0 || attribute < RANGE_READ_MOSTLY || attribute > RANGE_LAST_PREFETCH_LOCATION)
		return CUDA_ERROR_INVALID_VALUE;
	if (attribute != RANGE_ACCESSED_BY && size != 4)
		return CUDA_ERROR_INVALID_VALUE;
	lock();
	struct alloc *a;
	r = managed_range(d, n, &a);
	if (r == CUDA_SUCCESS) {
		int *out = data;
		switch (attribute) {
		case RANGE_READ_MOSTLY:
			*out = a->read_mostly;
			break;
		case RANGE_PREFERRED_LOCATION:
			*out = a->preferred;
			break;
		case RANGE_LAST_PREFETCH_LOCATION:
			*out = a->last_prefetch;
			break;
		case RANGE_ACCESSED_BY: {
			size_t k = 0, max = size / 4;
			for (int dev = 0; dev < g_devices && k < max; dev++)
				if (a->accessed_by & device_bit(dev))
					out[k++] = dev;
			if (k < max && (a->accessed_by & device_bit(CU_DEVICE_CPU)))
				out[k++] = CU_DEVICE_CPU;
			while (k < max)
				out[k++] = CU_DEVICE_INVALID;
			break;
		}
		}
	}
	unlock();
	return r;
}
