// Communicators: ids, the init of ranks that meet in a process-global
// table, InitAll, finalize, destroy, abort, the queries and the errors.
//
// Only one process takes part: a unique id names a communicator of this
// process, and its ranks meet here. A rank's device is the current
// context's (ncclCommInitRank*) or its entry of the list (InitAll); two
// ranks of one communicator on one device are refused, as NCCL does.
#include "fakenccl.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

void lock(void) { pthread_mutex_lock(&g_mu); }
void unlock(void) { pthread_mutex_unlock(&g_mu); }
void wake(void) { pthread_cond_broadcast(&g_cv); }

static struct comm *g_comms;      // every comm not freed
static struct clique *g_table;    // inits in progress, by id
static uint64_t g_ids;            // ids made
static __thread char t_err[512];  // the last error of this thread's calls

void enter(void) { t_err[0] = 0; }

ncclResult_t set_error(ncclResult_t r, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t_err, sizeof t_err, fmt, ap);
	va_end(ap);
	return r;
}

void set_async(struct comm *c, ncclResult_t r, const char *fmt, ...) {
	if (c->async != ncclSuccess)
		return; // the first error sticks
	c->async = r;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
}

// ---- the fake CUDA driver ----

static struct cuda g_cuda;
static pthread_once_t g_cuda_once = PTHREAD_ONCE_INIT;

// resolve finds the driver package cu loaded: GOCUDA_LIBCUDA's path (or
// libcuda.so.1), already open in the process, so dlopen returns that
// instance. It must be the fake: its device memory is host memory, which
// the host functions here read and write; on a real driver they would
// fault.
static void resolve(void) {
	const char *path = getenv("GOCUDA_LIBCUDA");
	if (path == NULL || *path == 0)
		path = "libcuda.so.1";
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		h = dlopen(path, RTLD_NOW);
	if (h == NULL) {
		g_cuda.err = "the fake NCCL cannot open the CUDA driver (GOCUDA_LIBCUDA)";
		return;
	}
	if (dlsym(h, "fakecuda_live") == NULL) {
		g_cuda.err = "the fake NCCL runs only on the fake CUDA driver (internal/fakecuda)";
		return;
	}
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.ctx_get_device = dlsym(h, "cuCtxGetDevice");
	*(void **)&g_cuda.device_get_count = dlsym(h, "cuDeviceGetCount");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	if (!g_cuda.launch_host_func || !g_cuda.ctx_get_device || !g_cuda.device_get_count || !g_cuda.stream_is_capturing)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake NCCL needs";
}

const struct cuda *cuda(void) {
	pthread_once(&g_cuda_once, resolve);
	return &g_cuda;
}

// device_count is the driver's number of devices, or -1 with the error set.
static int device_count(void) {
	const struct cuda *cu = cuda();
	int n = 0;
	if (cu->err != NULL) {
		set_error(ncclSystemError, "%s", cu->err);
		return -1;
	}
	if (cu->device_get_count(&n) != 0) {
		set_error(ncclUnhandledCudaError, "cuDeviceGetCount failed");
		return -1;
	}
	return n;
}

// ---- communicators ----

static int live(struct comm *c) {
	for (struct comm *p = g_comms; p != NULL; p = p->next)
		if (p == c)
			return 1;
	return 0;
}

ncclResult_t comm_get(struct comm *c, const char *fn) {
	if (c == NULL)
		return set_error(ncclInvalidArgument, "%s: NULL communicator", fn);
	if (!live(c) || c->released)
		return set_error(ncclInvalidArgument, "%s: %p is not a live communicator (destroyed or aborted?)", fn, (void *)c);
	return ncclSuccess;
}

int rank_gone(struct clique *cl, int r) {
	struct comm *c = cl->ranks[r];
	return c == NULL || c->aborted || (c->released && c->pending == 0);
}

void table_remove(struct clique *cl) {
	if (!cl->in_table)
		return;
	for (struct clique **p = &g_table; *p != NULL; p = &(*p)->next)
		if (*p == cl) {
			*p = cl->next;
			break;
		}
	cl->in_table = 0;
}

static void clique_free(struct clique *cl) {
	table_remove(cl);
	x_unmap(cl);
	while (cl->slots != NULL) {
		struct slot *s = cl->slots;
		cl->slots = s->next;
		free(s->items);
		free(s);
	}
	free(cl->ranks);
	free(cl);
}

static void comm_free(struct comm *c) {
	x_leave(c, 0);
	for (struct comm **p = &g_comms; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	struct clique *cl = c->cl;
	cl->ranks[c->rank] = NULL;
	if (--cl->live == 0)
		clique_free(cl);
	free(c);
	wake();
}

void comm_unref(struct comm *c) {
	c->pending--;
	if (c->released && c->pending == 0)
		comm_free(c);
	wake();
}

// release ends the user's hold of c (destroy, abort).
static void release(struct comm *c, int abort) {
	c->released = 1;
	__atomic_store_n(&c->aborted, c->aborted | abort, __ATOMIC_RELEASE);
	x_leave(c, abort);
	if (!c->ready) {
		// Left during its init: the ranks that joined fail, and a later
		// init with the id starts anew.
		c->cl->broken = 1;
		table_remove(c->cl);
	}
	if (c->pending == 0)
		comm_free(c);
	wake();
}

static struct clique *clique_new(int nranks) {
	struct clique *cl = calloc(1, sizeof *cl);
	if (cl == NULL || (cl->ranks = calloc((size_t)nranks, sizeof *cl->ranks)) == NULL)
		abort();
	cl->nranks = nranks;
	return cl;
}

static struct comm *comm_new(struct clique *cl, int rank, int dev, int blocking) {
	struct comm *c = calloc(1, sizeof *c);
	if (c == NULL)
		abort();
	c->cl = cl;
	c->rank = rank;
	c->dev = dev;
	c->blocking = blocking;
	cl->ranks[rank] = c;
	cl->joined++;
	cl->live++;
	c->next = g_comms;
	g_comms = c;
	return c;
}

// ---- entry points ----

int fake_version(void) {
	const char *v = getenv("FAKENCCL_VERSION");
	return v != NULL && *v != 0 ? atoi(v) : 22803;
}

EXPORT ncclResult_t ncclGetVersion(int *version) {
	enter();
	if (version == NULL)
		return set_error(ncclInvalidArgument, "ncclGetVersion: NULL version");
	*version = fake_version();
	return ncclSuccess;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
	enter();
	if (id == NULL)
		return set_error(ncclInvalidArgument, "ncclGetUniqueId: NULL id");
	memset(id, 0, sizeof *id);
	memcpy(id->internal, "fakenccl", 8);
	uint32_t pid = (uint32_t)getpid();
	lock();
	uint64_t n = ++g_ids;
	unlock();
	memcpy(id->internal + 8, &pid, sizeof pid);
	memcpy(id->internal + 16, &n, sizeof n);
	// The id names a segment in /dev/shm too (xproc.c): unique across
	// processes and boots, not only within this process.
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	memcpy(id->internal + 24, &t, sizeof t);
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank, const config_head *config) {
	if (out == NULL)
		return set_error(ncclInvalidArgument, "ncclCommInitRank: NULL comm");
	*out = NULL;
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return set_error(ncclInvalidArgument, "ncclCommInitRank: rank %d of %d ranks", rank, nranks);
	int blocking = 1;
	if (config != NULL) {
		if (config->magic != CONFIG_MAGIC || config->size < sizeof *config)
			return set_error(ncclInvalidArgument, "ncclCommInitRankConfig: the config is not NCCL_CONFIG_INITIALIZER's (magic %#x, size %zu)", config->magic, config->size);
		if (config->blocking != CONFIG_UNDEF_INT)
			blocking = config->blocking != 0;
	}
	const struct cuda *cu = cuda();
	if (cu->err != NULL)
		return set_error(ncclSystemError, "%s", cu->err);
	int dev = 0; // cudaGetDevice's default without a current context
	if (cu->ctx_get_device(&dev) != 0)
		dev = 0;
	lock();
	struct clique *cl = g_table;
	while (cl != NULL && memcmp(&cl->id, &id, sizeof id) != 0)
		cl = cl->next;
	if (cl == NULL) {
		cl = clique_new(nranks);
		cl->id = id;
		cl->in_table = 1;
		cl->next = g_table;
		g_table = cl;
	} else if (cl->nranks != nranks) {
		unlock();
		return set_error(ncclInvalidArgument, "ncclCommInitRank: %d ranks, but the ranks that joined before said %d", nranks, cl->nranks);
	} else if (cl->ranks[rank] != NULL) {
		unlock();
		return set_error(ncclInvalidUsage, "ncclCommInitRank: rank %d joined twice", rank);
	}
	for (int r = 0; r < nranks; r++)
		if (cl->ranks[r] != NULL && cl->ranks[r]->dev == dev) {
			unlock();
			return set_error(ncclInvalidUsage, "ncclCommInitRank: Duplicate GPU detected: rank %d and rank %d both on device %d", rank, r, dev);
		}
	struct comm *c = comm_new(cl, rank, dev, blocking);
	ncclResult_t xr = x_join(cl, c, &id);
	if (xr != ncclSuccess) {
		cl->joined--;
		c->released = 1;
		comm_free(c);
		unlock();
		return xr;
	}
	if (cl->joined == nranks) {
		// Every rank is in this process: no segment.
		x_done(cl);
		table_remove(cl);
		for (int r = 0; r < nranks; r++)
			cl->ranks[r]->ready = 1;
		wake();
	}
	*out = c;
	ncclResult_t res = ncclSuccess;
	if (blocking) {
		// NCCL waits for every peer, forever; those of other processes
		// are polled for.
		while (!c->ready && !cl->broken) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 2000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&g_cv, &g_mu, &ts);
			x_check(cl);
		}
		if (!c->ready) {
			*out = NULL;
			release(c, 1);
			res = set_error(ncclRemoteError, "ncclCommInitRank: a peer left the communicator during its init");
		}
	} else if (!c->ready)
		res = ncclInProgress; // ncclCommGetAsyncError says when it is done
	unlock();
	return res;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
	enter();
	return init_rank(comm, nranks, id, rank, NULL);
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, void *config) {
	enter();
	return init_rank(comm, nranks, id, rank, config);
}

EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
	enter();
	if (comms == NULL || ndev < 1)
		return set_error(ncclInvalidArgument, "ncclCommInitAll: %d devices", ndev);
	int n = device_count();
	if (n < 0)
		return cuda()->err != NULL ? ncclSystemError : ncclUnhandledCudaError;
	for (int i = 0; i < ndev; i++) {
		int d = devlist != NULL ? devlist[i] : i;
		if (d < 0 || d >= n)
			return set_error(ncclInvalidArgument, "ncclCommInitAll: device %d of %d", d, n);
		for (int j = 0; j < i; j++)
			if (devlist != NULL && devlist[j] == d)
				return set_error(ncclInvalidUsage, "ncclCommInitAll: Duplicate GPU detected: device %d twice", d);
	}
	lock();
	struct clique *cl = clique_new(ndev);
	for (int i = 0; i < ndev; i++) {
		comms[i] = comm_new(cl, i, devlist != NULL ? devlist[i] : i, 1);
		comms[i]->ready = 1;
	}
	unlock();
	return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *res) {
	enter();
	lock();
	ncclResult_t r = comm_get(c, "ncclCommGetAsyncError");
	if (r == ncclSuccess && res == NULL)
		r = set_error(ncclInvalidArgument, "ncclCommGetAsyncError: NULL result");
	if (r == ncclSuccess) {
		if (!c->ready)
			x_check(c->cl);
		if (!c->ready && c->cl->broken)
			set_async(c, ncclRemoteError, "a peer left the communicator during its init");
		if (c->async != ncclSuccess)
			*res = c->async;
		else if (!c->ready || (c->finalizing && c->pending > 0))
			*res = ncclInProgress;
		else
			*res = ncclSuccess;
	}
	unlock();
	return r;
}

EXPORT ncclResult_t ncclCommFinalize(ncclComm_t c) {
	enter();
	lock();
	ncclResult_t r = comm_get(c, "ncclCommFinalize");
	if (r == ncclSuccess) {
		c->finalizing = 1;
		if (c->blocking)
			while (c->pending > 0 && !c->aborted)
				pthread_cond_wait(&g_cv, &g_mu);
		else if (c->pending > 0)
			r = ncclInProgress;
	}
	unlock();
	return r;
}

// ncclCommDestroy frees the rank once the work queued on it is done; the
// caller does not wait for it.
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t c) {
	enter();
	lock();
	ncclResult_t r = comm_get(c, "ncclCommDestroy");
	if (r == ncclSuccess)
		release(c, 0);
	unlock();
	return r;
}

// ncclCommAbort ends the rank at once: its host functions waiting for
// peers return, its queued work does nothing, and its peers' collectives
// that wait for it fail with ncclRemoteError.
EXPORT ncclResult_t ncclCommAbort(ncclComm_t c) {
	enter();
	lock();
	ncclResult_t r = comm_get(c, "ncclCommAbort");
	if (r == ncclSuccess)
		release(c, 1);
	unlock();
	return r;
}

#define QUERY(fn, out, val)                                     \
	do {                                                        \
		enter();                                                \
		lock();                                                 \
		ncclResult_t r = comm_get(c, fn);                       \
		if (r == ncclSuccess && out == NULL)                    \
			r = set_error(ncclInvalidArgument, fn ": NULL out"); \
		if (r == ncclSuccess)                                   \
			*out = val;                                         \
		unlock();                                               \
		return r;                                               \
	} while (0)

EXPORT ncclResult_t ncclCommCount(ncclComm_t c, int *count) { QUERY("ncclCommCount", count, c->cl->nranks); }
EXPORT ncclResult_t ncclCommCuDevice(ncclComm_t c, int *dev) { QUERY("ncclCommCuDevice", dev, c->dev); }
EXPORT ncclResult_t ncclCommUserRank(ncclComm_t c, int *rank) { QUERY("ncclCommUserRank", rank, c->rank); }

EXPORT const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ncclSuccess:
		return "no error";
	case ncclUnhandledCudaError:
		return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError:
		return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError:
		return "remote process exited or there was a network error";
	case ncclInProgress:
		return "NCCL operation in progress";
	default:
		return "unknown result code";
	}
}

// ncclGetLastError is the text of this thread's last failed call, else
// the asynchronous error of comm; "" when there is none.
EXPORT const char *ncclGetLastError(ncclComm_t c) {
	if (t_err[0] != 0 || c == NULL)
		return t_err;
	const char *s = t_err;
	lock();
	if (live(c) && c->err[0] != 0)
		s = c->err;
	unlock();
	return s;
}

// fakenccl_marker tells the Go side (fakenccl.Is) that a library is the fake.
EXPORT int fakenccl_marker(void) { return 1; }
