// Memory pools, the driver's stream-ordered allocator (CUDA 11.2):
// cuDeviceGetDefaultMemPool, cuDeviceGetMemPool, cuDeviceSetMemPool,
// cuMemPoolCreate, cuMemPoolDestroy, cuMemPoolGetAttribute,
// cuMemPoolSetAttribute, cuMemPoolTrimTo and cuMemAllocFromPoolAsync;
// cuMemAllocAsync (memory.c) allocates from the current pool of the
// stream's device.
//
// What the fake models is the accounting the attributes report, kept
// simple:
//
//   - A pool reserves device memory, which counts against the device as
//     plain allocations do (cuMemGetInfo), and its live allocations use
//     part of it. An allocation that does not fit in the unused reserve
//     grows the reserve by exactly the missing bytes (the driver reserves
//     in chunks of its own choosing, so its figures are rounded up), or is
//     CUDA_ERROR_OUT_OF_MEMORY when the device has not that much free.
//     Each allocation is still a mapping of its own (memory.c), so that
//     every access stays checked against its bounds.
//   - An allocation's bytes return to the unused reserve once its free has
//     run: in stream order for cuMemFreeAsync (that is when the memory can
//     be reused), at once for cuMemFree.
//   - Unused reserve beyond the release threshold is given back to the
//     device right then. The driver gives it back at the next stream, event
//     or context synchronize instead; the fake's moment is never later than
//     a synchronize that waits for the free, so what a program reads after
//     synchronizing is what the driver reports, while between the free and
//     a synchronize the fake may already report less reserved.
//   - cuMemPoolTrimTo gives back unused reserve down to what it is told to
//     keep; memory in use is never given back.
//   - The REUSE_* attributes are kept and read back; they change nothing,
//     as the fake never hands out freed memory to another allocation.
//   - Pools belong to a device, not to a context, and live until
//     cuMemPoolDestroy (a device's default pool, for the process): no
//     context's end takes them. A pool destroyed while allocations from it
//     are outstanding, or their frees queued, goes when the last is freed,
//     as the driver documents.
//   - Pools of device memory only: pinned allocations located on a device,
//     without IPC handle types. Other properties the driver has (host and
//     managed pools, IPC) are CUDA_ERROR_NOT_SUPPORTED here, malformed ones
//     CUDA_ERROR_INVALID_VALUE. Access control (cuMemPoolSetAccess) and
//     export are absent, as in a driver without them.
#include "fake.h"

#include <stdlib.h>
#include <string.h>

// CUmemPool_attribute of cuda.h.
enum {
	ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
	ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
	ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
	ATTR_RELEASE_THRESHOLD = 4,
	ATTR_RESERVED_MEM_CURRENT = 5,
	ATTR_RESERVED_MEM_HIGH = 6,
	ATTR_USED_MEM_CURRENT = 7,
	ATTR_USED_MEM_HIGH = 8,
};

// CUmemPoolProps of cuda.h: the fields every version has at these offsets
// (later versions use part of the reserved bytes, for maxSize and usage).
typedef struct {
	int allocType;   // CUmemAllocationType
	int handleTypes; // CUmemAllocationHandleType
	struct {
		int type; // CUmemLocationType
		int id;
	} location;
	void *win32SecurityAttributes;
	unsigned char reserved[64];
} CUmemPoolProps;

enum { ALLOC_INVALID = 0, ALLOC_PINNED = 1, ALLOC_MANAGED = 2 };
enum { LOC_INVALID = 0, LOC_DEVICE = 1, LOC_HOST = 2, LOC_HOST_NUMA = 3, LOC_HOST_NUMA_CURRENT = 4 };

typedef struct CUmemPoolHandle_st *CUmemoryPool;

struct mempool {
	uint64_t h;
	CUdevice dev;
	int is_default;
	int destroyed;     // its handle is gone; it goes with its last allocation
	size_t nallocs;    // allocations not yet given back
	uint64_t reserved, reserved_high;
	uint64_t used, used_high;
	uint64_t threshold;
	int reuse[3];      // the REUSE_* attributes
};

// Per device: the default pool, made on first use, and the current pool
// when cuDeviceSetMemPool chose another (NULL: the default).
static struct mempool *g_default[8], *g_current[8];

static struct mempool *pool_new(CUdevice dev, int is_default) {
	struct mempool *p = calloc(1, sizeof *p);
	if (p == NULL)
		abort();
	p->dev = dev;
	p->is_default = is_default;
	for (int i = 0; i < 3; i++)
		p->reuse[i] = 1;
	p->h = handle_new(K_POOL, p);
	return p;
}

static struct mempool *default_pool(CUdevice dev) {
	if (g_default[dev] == NULL)
		g_default[dev] = pool_new(dev, 1);
	return g_default[dev];
}

struct mempool *pool_current(CUdevice dev) { return g_current[dev] != NULL ? g_current[dev] : default_pool(dev); }

// trim gives back the unused reserve beyond keep bytes.
static void trim(struct mempool *p, uint64_t keep) {
	if (p->reserved <= keep)
		return;
	uint64_t to = p->used > keep ? p->used : keep;
	device_mem_give(p->reserved - to);
	p->reserved = to;
}

CUresult pool_take(struct mempool *p, size_t bytes) {
	uint64_t need = p->used + bytes;
	if (need > p->reserved) {
		CUresult r = device_mem_take(need - p->reserved);
		if (r != CUDA_SUCCESS)
			return r;
		p->reserved = need;
		if (need > p->reserved_high)
			p->reserved_high = need;
	}
	p->used = need;
	if (need > p->used_high)
		p->used_high = need;
	p->nallocs++;
	return CUDA_SUCCESS;
}

void pool_give(struct mempool *p, size_t bytes) {
	p->used -= bytes;
	p->nallocs--;
	trim(p, p->destroyed ? 0 : p->threshold);
	if (p->destroyed && p->nallocs == 0)
		free(p);
}

// pool_of finds a live pool by handle; the lock is held on success.
static CUresult pool_of(CUmemoryPool h, struct mempool **p) {
	return locked_handle((uint64_t)(uintptr_t)h, K_POOL, CUDA_ERROR_INVALID_VALUE, (void **)p);
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice dev) {
	ENTER(cuDeviceGetDefaultMemPool);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	*out = (CUmemoryPool)(uintptr_t)default_pool(dev)->h;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *out, CUdevice dev) {
	ENTER(cuDeviceGetMemPool);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	lock();
	*out = (CUmemoryPool)(uintptr_t)pool_current(dev)->h;
	unlock();
	return CUDA_SUCCESS;
}

// cuDeviceSetMemPool takes only a pool of dev's own memory, as the driver
// says it must be.
EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool h) {
	ENTER(cuDeviceSetMemPool);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (!device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	struct mempool *p;
	if ((r = pool_of(h, &p)) != CUDA_SUCCESS)
		return r;
	if (p->dev != dev)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		g_current[dev] = p->is_default ? NULL : p;
	unlock();
	return r;
}

EXPORT CUresult cuMemPoolCreate(CUmemoryPool *out, const CUmemPoolProps *props) {
	ENTER(cuMemPoolCreate);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || props == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (props->allocType != ALLOC_PINNED && props->allocType != ALLOC_MANAGED)
		return CUDA_ERROR_INVALID_VALUE;
	switch (props->location.type) {
	case LOC_DEVICE:
		if (!device_valid(props->location.id))
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case LOC_HOST:
	case LOC_HOST_NUMA:
		return CUDA_ERROR_NOT_SUPPORTED; // not modeled
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (props->allocType == ALLOC_MANAGED || props->handleTypes != 0)
		return CUDA_ERROR_NOT_SUPPORTED; // not modeled
	lock();
	*out = (CUmemoryPool)(uintptr_t)pool_new(props->location.id, 0)->h;
	unlock();
	return CUDA_SUCCESS;
}

// cuMemPoolDestroy returns at once; the pool goes with its last
// allocation. A device's default pool cannot be destroyed.
EXPORT CUresult cuMemPoolDestroy(CUmemoryPool h) {
	ENTER(cuMemPoolDestroy);
	struct mempool *p;
	CUresult r = pool_of(h, &p);
	if (r != CUDA_SUCCESS)
		return r;
	if (p->is_default) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	handle_free(p->h);
	if (g_current[p->dev] == p)
		g_current[p->dev] = NULL;
	p->destroyed = 1;
	trim(p, 0);
	if (p->nallocs == 0)
		free(p);
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool h, int attr, void *value) {
	ENTER(cuMemPoolGetAttribute);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (value == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct mempool *p;
	if ((r = pool_of(h, &p)) != CUDA_SUCCESS)
		return r;
	uint64_t v = 0;
	switch (attr) {
	case ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->reuse[attr - ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		unlock();
		return CUDA_SUCCESS;
	case ATTR_RELEASE_THRESHOLD:
		v = p->threshold;
		break;
	case ATTR_RESERVED_MEM_CURRENT:
		v = p->reserved;
		break;
	case ATTR_RESERVED_MEM_HIGH:
		v = p->reserved_high;
		break;
	case ATTR_USED_MEM_CURRENT:
		v = p->used;
		break;
	case ATTR_USED_MEM_HIGH:
		v = p->used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
	if (r == CUDA_SUCCESS)
		memcpy(value, &v, sizeof v); // a cuuint64_t
	unlock();
	return r;
}

// cuMemPoolSetAttribute: the current figures are read-only, and the high
// watermarks can only be reset (to the current figure) by setting 0.
EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool h, int attr, void *value) {
	ENTER(cuMemPoolSetAttribute);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (value == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct mempool *p;
	if ((r = pool_of(h, &p)) != CUDA_SUCCESS)
		return r;
	// The REUSE_* values are ints, the others cuuint64_t.
	uint64_t v = 0;
	if (attr >= ATTR_RELEASE_THRESHOLD && attr <= ATTR_USED_MEM_HIGH)
		memcpy(&v, value, sizeof v);
	switch (attr) {
	case ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(const int *)value != 0;
		break;
	case ATTR_RELEASE_THRESHOLD:
		p->threshold = v;
		break;
	case ATTR_RESERVED_MEM_HIGH:
		if (v != 0)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			p->reserved_high = p->reserved;
		break;
	case ATTR_USED_MEM_HIGH:
		if (v != 0)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			p->used_high = p->used;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
	unlock();
	return r;
}

EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool h, size_t keep) {
	ENTER(cuMemPoolTrimTo);
	struct mempool *p;
	CUresult r = pool_of(h, &p);
	if (r != CUDA_SUCCESS)
		return r;
	trim(p, keep);
	unlock();
	return CUDA_SUCCESS;
}

// cuMemAllocFromPoolAsync takes any live pool, whatever the stream's
// device: the driver allows allocating another device's memory this way.
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool h, CUstream hs) {
	ENTER(cuMemAllocFromPoolAsync);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (dptr == NULL || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct mempool *p;
	if ((r = pool_of(h, &p)) != CUDA_SUCCESS)
		return r;
	struct stream *s;
	r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS)
		r = alloc_async(s, p, bytes, dptr);
	unlock();
	return r;
}
