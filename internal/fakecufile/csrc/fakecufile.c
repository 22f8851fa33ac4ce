// A fake cuFile for tests on the fake CUDA driver, whose device memory is
// host memory: reads and writes go through a host buffer with pread and
// pwrite and the driver's synchronous copies, as cuFile's compatibility
// mode goes through the page cache. Written from the ABI of cufile.h as
// the generated bindings describe it: CUfileError_t is two ints, the
// descriptor a type, an 8-byte union (the fd first) and a pointer.
#define _GNU_SOURCE
#include <dlfcn.h>
#include "driver.h" // internal/fakelib
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct { int err; int cu_err; } status;

enum {
	SUCCESS = 0,
	DRIVER_NOT_INITIALIZED = 5001,
	CUDA_DRIVER_ERROR = 5011,
	INVALID_FILE_TYPE = 5018,
	INVALID_VALUE = 5022,
	HANDLE_NOT_REGISTERED = 5027,
	HANDLE_ALREADY_REGISTERED = 5028,
	INTERNAL_ERROR = 5030,
};

typedef struct {
	int type;
	int pad;
	union { int fd; void *handle; } h;
	const void *fs_ops;
} descr;

struct handle {
	int fd;
	struct handle *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int opened;
static struct handle *handles;

struct cuda {
	int (*htod)(unsigned long long, const void *, size_t);
	int (*dtoh)(void *, unsigned long long, size_t);
	const char *err;
};
static struct cuda g_cuda;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

// resolve finds the copies of the fake driver that the fake uses.
static void resolve(void) {
	void *h = fake_driver("the fake cuFile", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.htod = dlsym(h, "cuMemcpyHtoD_v2");
	*(void **)&g_cuda.dtoh = dlsym(h, "cuMemcpyDtoH_v2");
	if (!g_cuda.htod || !g_cuda.dtoh)
		g_cuda.err = "the fake CUDA driver lacks the copies the fake cuFile needs";
}

static const struct cuda *cuda(void) {
	pthread_once(&g_once, resolve);
	return &g_cuda;
}

static status st(int err, int cu_err) {
	status s = {err, cu_err};
	return s;
}

EXPORT int fakecufile_marker;

EXPORT status cuFileDriverOpen(void) {
	if (cuda()->err != NULL) {
		fprintf(stderr, "fakecufile: %s\n", cuda()->err);
		return st(INTERNAL_ERROR, 0);
	}
	pthread_mutex_lock(&mu);
	opened = 1;
	pthread_mutex_unlock(&mu);
	return st(SUCCESS, 0);
}

EXPORT status cuFileDriverClose(void) {
	pthread_mutex_lock(&mu);
	int was = opened;
	opened = 0;
	pthread_mutex_unlock(&mu);
	return st(was ? SUCCESS : DRIVER_NOT_INITIALIZED, 0);
}

// udev_recorded reports whether udev's record of the block device under
// fd has the filesystem's usage, which cuFile reads through libudev and
// registers no file without. Only where FAKECUFILE_UDEV_DATA names a
// directory of such records, which tests fill; otherwise every device
// counts as recorded.
static int udev_recorded(int fd) {
	const char *dir = getenv("FAKECUFILE_UDEV_DATA");
	struct stat sb;
	if (dir == NULL || fstat(fd, &sb) != 0)
		return 1;
	char path[4096];
	snprintf(path, sizeof path, "%s/b%u:%u", dir, major(sb.st_dev), minor(sb.st_dev));
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	char line[512];
	int found = 0;
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = strncmp(line, "E:ID_FS_USAGE=", 14) == 0;
	fclose(f);
	return found;
}

EXPORT status cuFileHandleRegister(void **fh, descr *d) {
	if (fh == NULL || d == NULL)
		return st(INVALID_VALUE, 0);
	if (d->type != 1) // CU_FILE_HANDLE_TYPE_OPAQUE_FD
		return st(INVALID_FILE_TYPE, 0);
	if (fcntl(d->h.fd, F_GETFD) < 0)
		return st(INVALID_VALUE, 0);
	// cuFile registers no file on tmpfs or overlay, compatibility mode
	// or not.
	struct statfs fs;
	if (fstatfs(d->h.fd, &fs) == 0 && (fs.f_type == 0x01021994 || fs.f_type == 0x794c7630))
		return st(HANDLE_NOT_REGISTERED, 0);
	if (!udev_recorded(d->h.fd))
		return st(HANDLE_NOT_REGISTERED, 0);
	pthread_mutex_lock(&mu);
	status s = st(SUCCESS, 0);
	if (!opened)
		s = st(DRIVER_NOT_INITIALIZED, 0);
	for (struct handle *p = handles; s.err == SUCCESS && p != NULL; p = p->next)
		if (p->fd == d->h.fd)
			s = st(HANDLE_ALREADY_REGISTERED, 0);
	if (s.err == SUCCESS) {
		struct handle *n = calloc(1, sizeof *n);
		if (n == NULL) {
			s = st(INTERNAL_ERROR, 0);
		} else {
			n->fd = d->h.fd;
			n->next = handles;
			handles = n;
			*fh = n;
		}
	}
	pthread_mutex_unlock(&mu);
	return s;
}

// live reports whether fh is a registered handle, and its fd.
static int live(void *fh, int *fd) {
	pthread_mutex_lock(&mu);
	int ok = 0;
	for (struct handle *p = handles; p != NULL; p = p->next)
		if ((void *)p == fh) {
			ok = 1;
			*fd = p->fd;
		}
	pthread_mutex_unlock(&mu);
	return ok;
}

EXPORT void cuFileHandleDeregister(void *fh) {
	pthread_mutex_lock(&mu);
	for (struct handle **pp = &handles; *pp != NULL; pp = &(*pp)->next)
		if ((void *)*pp == fh) {
			struct handle *p = *pp;
			*pp = p->next;
			free(p);
			break;
		}
	pthread_mutex_unlock(&mu);
}

EXPORT ssize_t cuFileRead(void *fh, void *dev, size_t size, off_t file_off, off_t dev_off) {
	int fd;
	if (!live(fh, &fd))
		return -HANDLE_NOT_REGISTERED;
	if (file_off < 0 || dev_off < 0)
		return -INVALID_VALUE;
	char *buf = malloc(size ? size : 1);
	if (buf == NULL)
		return -INTERNAL_ERROR;
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, file_off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -1; // errno says why, as cuFile's compatibility mode
		}
		if (n == 0)
			break; // end of file: a short read
		got += (size_t)n;
	}
	if (got > 0 && cuda()->htod((unsigned long long)(uintptr_t)dev + (unsigned long long)dev_off, buf, got) != 0) {
		free(buf);
		return -CUDA_DRIVER_ERROR;
	}
	free(buf);
	return (ssize_t)got;
}

EXPORT ssize_t cuFileWrite(void *fh, const void *dev, size_t size, off_t file_off, off_t dev_off) {
	int fd;
	if (!live(fh, &fd))
		return -HANDLE_NOT_REGISTERED;
	if (file_off < 0 || dev_off < 0)
		return -INVALID_VALUE;
	char *buf = malloc(size ? size : 1);
	if (buf == NULL)
		return -INTERNAL_ERROR;
	if (size > 0 && cuda()->dtoh(buf, (unsigned long long)(uintptr_t)dev + (unsigned long long)dev_off, size) != 0) {
		free(buf);
		return -CUDA_DRIVER_ERROR;
	}
	size_t put = 0;
	while (put < size) {
		ssize_t n = pwrite(fd, buf + put, size - put, file_off + (off_t)put);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -1;
		}
		put += (size_t)n;
	}
	free(buf);
	return (ssize_t)put;
}
