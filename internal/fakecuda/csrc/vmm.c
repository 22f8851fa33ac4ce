// Virtual memory management: address ranges reserved, physical memory
// created, mapped into a range and made accessible. A reservation is host
// address space mapped with no access; physical memory is a memory file
// (memfd), so mapping it is an mmap of the file at the reserved address,
// and the same pages can be mapped twice or, through a file descriptor
// (cuMemExportToShareableHandle), into another process. Once
// cuMemSetAccess grants access the mapped range is an entry of the
// allocation table, so copies, memsets and kernels take it as they take
// cuMemAlloc's memory.
//
// Simpler than the driver: one granularity (2 MiB) for every device and
// option, access is all or nothing (read-only access is read-write), every
// device's access is the same host mapping, and cuMemUnmap waits for the
// queued operations that use the range instead of leaving them to fault.
#include "fake.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRANULARITY ((size_t)2 << 20)

enum {
	MEM_ALLOCATION_TYPE_PINNED = 1,
	MEM_LOCATION_TYPE_DEVICE = 1,
	MEM_HANDLE_TYPE_POSIX_FD = 1,
	MEM_ACCESS_READ = 1,
	MEM_ACCESS_READWRITE = 3,
};

// The fields of CUmemAllocationProp the fake reads, at their offsets.
typedef struct {
	int type;
	int requestedHandleTypes;
	struct {
		int type;
		int id;
	} location;
	void *win32HandleMetaData;
	unsigned char allocFlags[8];
} CUmemAllocationProp;

typedef struct {
	struct {
		int type;
		int id;
	} location;
	int flags;
} CUmemAccessDesc;

_Static_assert(sizeof(CUmemAllocationProp) == 32 && sizeof(CUmemAccessDesc) == 12, "VMM structs' layout");

// phys is physical memory: its handle's reference and one per mapping.
struct phys {
	uint64_t h;
	int fd;
	size_t size;
	int refs;
	int counted;  // made here by cuMemCreate: its bytes count against the device
	int handles;  // the handle types it may be exported as
};

// mapping is physical memory mapped into a reservation.
struct mapping {
	struct mapping *next;
	char *base;
	size_t size;
	struct phys *p;
	int access;      // cuMemSetAccess granted access
	struct alloc *a; // the table's entry of its run of accessible mappings
};

struct reservation {
	struct reservation *next;
	char *base;
	size_t size;
	struct mapping *maps;
};

static struct reservation *g_reserved;

static int by_base(const void *x, const void *y) {
	const struct mapping *a = *(struct mapping *const *)x, *b = *(struct mapping *const *)y;
	return a->base < b->base ? -1 : a->base > b->base;
}

// rebuild makes the table's entries of res one per run of adjacent
// accessible mappings, so that a copy or a kernel may cross from one
// mapping into the next, as on a GPU. It waits for the queued operations
// that use the entries it replaces. Under the lock.
static void rebuild(struct reservation *res) {
	size_t n = 0;
	for (struct mapping *m = res->maps; m != NULL; m = m->next) {
		if (m->a != NULL) {
			struct alloc *a = m->a;
			for (struct mapping *o = res->maps; o != NULL; o = o->next)
				if (o->a == a)
					o->a = NULL;
			alloc_remove_mapped(a);
		}
		n++;
	}
	struct mapping **v = xrealloc(NULL, (n ? n : 1) * sizeof *v);
	n = 0;
	for (struct mapping *m = res->maps; m != NULL; m = m->next)
		if (m->access)
			v[n++] = m;
	qsort(v, n, sizeof *v, by_base);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && v[j]->base == v[j - 1]->base + v[j - 1]->size)
			j++;
		struct alloc *a = alloc_add_mapped(v[i]->base, (size_t)(v[j - 1]->base + v[j - 1]->size - v[i]->base));
		for (size_t k = i; k < j; k++)
			v[k]->a = a;
		i = j;
	}
	free(v);
}

static void phys_unref(struct phys *p) {
	if (--p->refs > 0)
		return;
	close(p->fd);
	if (p->counted)
		device_mem_give(p->size);
	free(p);
}

// reservation_of returns the reservation holding [p, p+n), or NULL.
static struct reservation *reservation_of(const char *p, size_t n) {
	for (struct reservation *r = g_reserved; r != NULL; r = r->next)
		if (p >= r->base && p < r->base + r->size && n <= (size_t)(r->base + r->size - p))
			return r;
	return NULL;
}

static CUresult check_prop(const CUmemAllocationProp *prop) {
	if (prop == NULL || prop->type != MEM_ALLOCATION_TYPE_PINNED || prop->location.type != MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_valid(prop->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	if (prop->requestedHandleTypes & ~MEM_HANDLE_TYPE_POSIX_FD)
		return CUDA_ERROR_NOT_SUPPORTED; // Win32 and fabric handles
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop, int option) {
	ENTER(cuMemGetAllocationGranularity);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (granularity == NULL || (option != 0 && option != 1))
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = check_prop(prop)) != CUDA_SUCCESS)
		return r;
	*granularity = GRANULARITY;
	return CUDA_SUCCESS;
}

// cuMemAddressReserve ignores a requested address, as the driver may.
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags) {
	ENTER(cuMemAddressReserve);
	(void)addr;
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (ptr == NULL || size == 0 || size % GRANULARITY != 0 || flags != 0 || (alignment & (alignment - 1)) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < GRANULARITY)
		alignment = GRANULARITY;
	if (size > ((size_t)1 << 46) || alignment > ((size_t)1 << 40))
		return CUDA_ERROR_OUT_OF_MEMORY;
	// Reserve more and trim, for the alignment.
	size_t span = size + alignment;
	char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	char *base = (char *)(((uintptr_t)p + alignment - 1) & ~(uintptr_t)(alignment - 1));
	if (base > p)
		munmap(p, (size_t)(base - p));
	if (base + size < p + span)
		munmap(base + size, (size_t)(p + span - (base + size)));
	struct reservation *res = calloc(1, sizeof *res);
	if (res == NULL)
		abort();
	res->base = base;
	res->size = size;
	lock();
	res->next = g_reserved;
	g_reserved = res;
	unlock();
	*ptr = (CUdeviceptr)(uintptr_t)base;
	return CUDA_SUCCESS;
}

// cuMemAddressFree takes a whole reservation with nothing mapped in it.
EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
	ENTER(cuMemAddressFree);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct reservation **pp = &g_reserved;
	while (*pp != NULL && ((*pp)->base != (char *)(uintptr_t)ptr || (*pp)->size != size))
		pp = &(*pp)->next;
	struct reservation *res = *pp;
	if (res == NULL || res->maps != NULL) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pp = res->next;
	unlock();
	munmap(res->base, res->size);
	free(res);
	return CUDA_SUCCESS;
}

static CUresult phys_new(int fd, size_t size, int counted, int handles, uint64_t *h) {
	struct phys *p = calloc(1, sizeof *p);
	if (p == NULL)
		abort();
	p->fd = fd;
	p->size = size;
	p->refs = 1;
	p->counted = counted;
	p->handles = handles;
	p->h = handle_new(K_PHYS, p);
	*h = p->h;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemCreate(uint64_t *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags) {
	ENTER(cuMemCreate);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (handle == NULL || size == 0 || size % GRANULARITY != 0 || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = check_prop(prop)) != CUDA_SUCCESS)
		return r;
	int fd = memfd_create("fakecuda-physical", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	lock();
	r = device_mem_take(size);
	if (r == CUDA_SUCCESS)
		r = phys_new(fd, size, 1, prop->requestedHandleTypes, handle);
	unlock();
	if (r != CUDA_SUCCESS)
		close(fd);
	return r;
}

// cuMemRelease drops the handle; mappings keep the memory until unmapped.
EXPORT CUresult cuMemRelease(uint64_t handle) {
	ENTER(cuMemRelease);
	struct phys *p;
	CUresult r = locked_handle(handle, K_PHYS, CUDA_ERROR_INVALID_VALUE, (void **)&p);
	if (r != CUDA_SUCCESS)
		return r;
	handle_free(handle);
	phys_unref(p);
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, uint64_t handle, unsigned long long flags) {
	ENTER(cuMemMap);
	struct phys *p;
	CUresult r = locked_handle(handle, K_PHYS, CUDA_ERROR_INVALID_HANDLE, (void **)&p);
	if (r != CUDA_SUCCESS)
		return r;
	char *base = (char *)(uintptr_t)ptr;
	struct reservation *res = reservation_of(base, size);
	if (flags != 0 || size == 0 || size % GRANULARITY != 0 || offset % GRANULARITY != 0 || offset > p->size ||
	    size > p->size - offset || (uintptr_t)base % GRANULARITY != 0 || res == NULL) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (struct mapping *m = res->maps; m != NULL; m = m->next)
		if (base < m->base + m->size && m->base < base + size) {
			unlock();
			return CUDA_ERROR_INVALID_VALUE;
		}
	if (mmap(base, size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset) == MAP_FAILED) {
		unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct mapping *m = calloc(1, sizeof *m);
	if (m == NULL)
		abort();
	m->base = base;
	m->size = size;
	m->p = p;
	p->refs++;
	m->next = res->maps;
	res->maps = m;
	unlock();
	return CUDA_SUCCESS;
}

// cuMemUnmap takes whole mappings: [ptr, ptr+size) must be covered by
// mappings that lie inside it.
EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
	ENTER(cuMemUnmap);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	char *base = (char *)(uintptr_t)ptr;
	lock();
	struct reservation *res = reservation_of(base, size);
	size_t covered = 0;
	for (struct mapping *m = res != NULL ? res->maps : NULL; m != NULL; m = m->next) {
		if (m->base >= base && m->base + m->size <= base + size)
			covered += m->size;
		else if (base < m->base + m->size && m->base < base + size)
			covered = (size_t)-1 / 2; // cuts a mapping in two: refused
	}
	if (size == 0 || res == NULL || covered != size) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (struct mapping *m = res->maps; m != NULL; m = m->next)
		if (m->base >= base && m->base + m->size <= base + size)
			m->access = 0;
	rebuild(res);
	struct mapping **pm = &res->maps;
	while (*pm != NULL) {
		struct mapping *m = *pm;
		if (m->base < base || m->base + m->size > base + size) {
			pm = &m->next;
			continue;
		}
		*pm = m->next;
		mmap(m->base, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		phys_unref(m->p);
		free(m);
	}
	unlock();
	return CUDA_SUCCESS;
}

// cuMemSetAccess grants access to whole mappings covering the range.
EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
	ENTER(cuMemSetAccess);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (desc == NULL || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	int access = 0;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (!device_valid(desc[i].location.id))
			return CUDA_ERROR_INVALID_DEVICE;
		if (desc[i].flags != 0 && desc[i].flags != MEM_ACCESS_READ && desc[i].flags != MEM_ACCESS_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
		access |= desc[i].flags;
	}
	char *base = (char *)(uintptr_t)ptr;
	lock();
	struct reservation *res = reservation_of(base, size);
	size_t covered = 0;
	for (struct mapping *m = res != NULL ? res->maps : NULL; m != NULL; m = m->next)
		if (m->base >= base && m->base + m->size <= base + size)
			covered += m->size;
	if (size == 0 || res == NULL || covered != size) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (struct mapping *m = res->maps; m != NULL; m = m->next) {
		if (m->base < base || m->base + m->size > base + size)
			continue;
		if (access != 0 && !m->access)
			mprotect(m->base, m->size, PROT_READ | PROT_WRITE);
		m->access = access != 0;
	}
	rebuild(res);
	for (struct mapping *m = res->maps; m != NULL; m = m->next)
		if (!m->access && m->base >= base && m->base + m->size <= base + size)
			mprotect(m->base, m->size, PROT_NONE);
	unlock();
	return CUDA_SUCCESS;
}

// The shareable handle of a POSIX file descriptor is the descriptor, an
// int written at shareableHandle; on import it is passed as the pointer's
// value.
EXPORT CUresult cuMemExportToShareableHandle(void *shareableHandle, uint64_t handle, int handleType, unsigned long long flags) {
	ENTER(cuMemExportToShareableHandle);
	struct phys *p;
	CUresult r = locked_handle(handle, K_PHYS, CUDA_ERROR_INVALID_VALUE, (void **)&p);
	if (r != CUDA_SUCCESS)
		return r;
	if (shareableHandle == NULL || flags != 0 || handleType != MEM_HANDLE_TYPE_POSIX_FD)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(p->handles & MEM_HANDLE_TYPE_POSIX_FD))
		r = CUDA_ERROR_NOT_PERMITTED;
	else {
		int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else
			*(int *)shareableHandle = fd;
	}
	unlock();
	return r;
}

// An imported handle's memory counts where it was made, not here.
EXPORT CUresult cuMemImportFromShareableHandle(uint64_t *handle, void *osHandle, int handleType) {
	ENTER(cuMemImportFromShareableHandle);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	if (handle == NULL || handleType != MEM_HANDLE_TYPE_POSIX_FD)
		return CUDA_ERROR_INVALID_VALUE;
	int fd = (int)(intptr_t)osHandle;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size % GRANULARITY != 0)
		return CUDA_ERROR_INVALID_VALUE;
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	lock();
	r = phys_new(own, (size_t)st.st_size, 0, MEM_HANDLE_TYPE_POSIX_FD, handle);
	unlock();
	return r;
}
