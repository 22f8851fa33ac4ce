// Communicators whose ranks are in several processes of one machine.
//
// Every rank of ncclCommInitRank* enters the id's segment: a file of
// /dev/shm named from the id's bytes, mapped shared, with an entry per
// rank (its process, device and the memfd that carries its send data).
// A rank cannot tell at first whether its peers are in its own process:
// when they all are, the process-global table of comm.c completes the
// communicator as before and the segment is dropped; when every entry of
// the segment is taken but not all by this process, the ranks of this
// process go across processes (xmode) and the file is unlinked (the
// mappings stay). Entering a taken entry is refused (a rank joined twice),
// as is a number of ranks other than the first rank's.
//
// A collective across processes, number k of the rank, in stream order on
// its stream's thread: wait until every rank has read the data of
// collective k-1 (consumed), write the send data into the rank's memfd
// and its arguments into its entry, then mark it posted; wait until every
// rank has posted k, check that they agree as in the process (kind,
// count, type, op, root), read every rank's data (through
// /proc/<pid>/fd/<fd>, opened once at the init, so the data outlives its
// process) and compute this rank's result; last mark k consumed. A rank's
// data of k is not overwritten before every rank has consumed k.
//
// Nothing waits forever: a wait ends when the comm is aborted, when a
// peer it needs is gone (aborted, or destroyed with collectives still to
// come) or its process has died (kill(pid, 0)), and after FAKENCCL_TIMEOUT
// seconds (default 300); the comm then has the asynchronous error
// ncclRemoteError, naming the rank. Send and receive are refused across
// processes (ncclInvalidUsage), as are more than X_MAX ranks.
#define _GNU_SOURCE // memfd_create
#include "fakenccl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define X_MAX 256
#define X_MAGIC 0x66616b656e63636cull // "fakenccl"

enum { X_FREE, X_CLAIMED, X_JOINED };

// xrank is a rank's entry; the fields after state are written before
// state (X_JOINED) or posted are stored, and read after they are loaded.
struct xrank {
	int state, gone;
	int pid, dev, fd;
	int kind, type, op, root;
	uint64_t count;
	uint64_t posted, consumed;
};

struct xhead {
	uint64_t magic;
	int nranks;
	struct xrank ranks[X_MAX];
};

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

// x_name is the segment's file, from a hash of the whole id.
static void x_name(char *out, size_t n, const ncclUniqueId *id) {
	uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
	for (size_t i = 0; i < sizeof id->internal; i++) {
		h1 = (h1 ^ (unsigned char)id->internal[i]) * 0x100000001b3ull;
		h2 = (h2 ^ (unsigned char)id->internal[i]) * 0x100000001b3ull + i;
	}
	snprintf(out, n, "/dev/shm/fakenccl-%u-%016llx%016llx", (unsigned)getuid(), (unsigned long long)h1, (unsigned long long)h2);
}

// alive reports whether process pid is there and not a zombie (its
// launcher may not have reaped it yet).
static int alive(int pid) {
	if (pid == getpid())
		return 1;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); // the name may hold spaces
	return p == NULL || p[1] == 0 || p[2] != 'Z';
}

ncclResult_t x_join(struct clique *cl, struct comm *c, const ncclUniqueId *id) {
	if (cl->nranks > X_MAX)
		return ncclSuccess; // in this process only
	if (cl->shm == NULL) {
		char name[128];
		x_name(name, sizeof name, id);
		int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return set_error(ncclSystemError, "ncclCommInitRank: %s: %s", name, strerror(errno));
		struct stat st;
		if (fstat(fd, &st) != 0 || (st.st_size < (off_t)sizeof(struct xhead) && ftruncate(fd, sizeof(struct xhead)) != 0)) {
			close(fd);
			return set_error(ncclSystemError, "ncclCommInitRank: %s: %s", name, strerror(errno));
		}
		void *p = mmap(NULL, sizeof(struct xhead), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			return set_error(ncclSystemError, "ncclCommInitRank: mmap %s: %s", name, strerror(errno));
		cl->shm = p;
		uint64_t zero = 0;
		__atomic_compare_exchange_n(&cl->shm->magic, &zero, X_MAGIC, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	struct xhead *h = cl->shm;
	int want = 0;
	if (!__atomic_compare_exchange_n(&h->nranks, &want, cl->nranks, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && want != cl->nranks)
		return set_error(ncclInvalidArgument, "ncclCommInitRank: %d ranks, but the ranks that joined before said %d", cl->nranks, want);
	struct xrank *e = &h->ranks[c->rank];
	int state = X_FREE;
	if (!__atomic_compare_exchange_n(&e->state, &state, X_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return set_error(ncclInvalidUsage, "ncclCommInitRank: rank %d joined twice (process %d has it)", c->rank, LOAD(&e->pid));
	int fd = memfd_create("fakenccl", MFD_CLOEXEC);
	if (fd < 0) {
		STORE(&e->state, X_FREE);
		return set_error(ncclSystemError, "ncclCommInitRank: memfd_create: %s", strerror(errno));
	}
	c->xfd = fd;
	e->pid = getpid();
	e->dev = c->dev;
	e->fd = fd;
	e->gone = 0;
	e->posted = e->consumed = 0;
	STORE(&e->state, X_JOINED);
	c->xjoined = 1;
	return ncclSuccess;
}

void x_unmap(struct clique *cl) {
	if (cl->shm == NULL)
		return;
	munmap(cl->shm, sizeof(struct xhead));
	cl->shm = NULL;
}

void x_done(struct clique *cl) {
	if (cl->shm == NULL)
		return;
	char name[128];
	x_name(name, sizeof name, &cl->id);
	unlink(name);
	for (int r = 0; r < cl->nranks; r++) {
		struct comm *c = cl->ranks[r];
		if (c != NULL && c->xjoined) {
			close(c->xfd);
			c->xjoined = 0;
		}
	}
	x_unmap(cl);
}

void x_check(struct clique *cl) {
	struct xhead *h = cl->shm;
	if (h == NULL || cl->broken)
		return;
	int joined = 0, mine = 0, dead = 0, pid = getpid();
	for (int r = 0; r < cl->nranks; r++) {
		struct xrank *e = &h->ranks[r];
		if (LOAD(&e->state) != X_JOINED)
			continue;
		joined++;
		if (e->pid == pid)
			mine++;
		else if (!alive(e->pid))
			dead = 1;
	}
	// Once every rank has joined, the init is done, whatever became of
	// them since: the collectives see a dead one.
	if (joined < cl->nranks && dead) {
		cl->broken = 1;
		wake();
		return;
	}
	if (joined < cl->nranks || mine == cl->nranks)
		return;
	// Every rank is in: this process's go across processes.
	char name[128];
	x_name(name, sizeof name, &cl->id);
	unlink(name);
	for (int r = 0; r < cl->nranks; r++) {
		struct comm *c = cl->ranks[r];
		if (c == NULL || c->ready || c->released)
			continue;
		c->xpeer = calloc((size_t)cl->nranks, sizeof *c->xpeer);
		if (c->xpeer == NULL)
			abort();
		for (int q = 0; q < cl->nranks; q++) {
			struct xrank *e = &h->ranks[q];
			if (q == r) {
				c->xpeer[q] = -1;
				continue;
			}
			char path[64];
			snprintf(path, sizeof path, "/proc/%d/fd/%d", e->pid, e->fd);
			// -1 where the peer died since it joined: its collectives
			// fail (x_wait sees it dead).
			c->xpeer[q] = open(path, O_RDONLY | O_CLOEXEC);
		}
		c->xmode = 1;
		c->ready = 1;
	}
	table_remove(cl);
	wake();
}

void x_leave(struct comm *c, int abort) {
	struct xhead *h = c->cl->shm;
	if (!c->xjoined || h == NULL)
		return;
	struct xrank *e = &h->ranks[c->rank];
	if (!c->xmode) {
		// Left during the init: the entry is free again, and the file goes
		// with the last rank that held one.
		STORE(&e->state, X_FREE);
		close(c->xfd);
		c->xjoined = 0;
		int held = 0;
		for (int r = 0; r < c->cl->nranks; r++)
			held |= LOAD(&h->ranks[r].state) != X_FREE;
		if (!held) {
			char name[128];
			x_name(name, sizeof name, &c->cl->id);
			unlink(name);
		}
		return;
	}
	// Peers stop waiting for an aborted rank at once, for a destroyed one
	// once its queued work is done.
	if (abort)
		STORE(&e->gone, 1);
	if (c->released && c->pending == 0) {
		STORE(&e->gone, 1);
		close(c->xfd);
		for (int q = 0; q < c->cl->nranks; q++)
			if (c->xpeer[q] >= 0)
				close(c->xpeer[q]);
		free(c->xpeer);
		c->xpeer = NULL;
		c->xjoined = 0;
	}
}

// ---- collectives ----

static double timeout_s(void) {
	const char *v = getenv("FAKENCCL_TIMEOUT");
	double t = v != NULL && *v != 0 ? atof(v) : 0;
	return t > 0 ? t : 300;
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int is_aborted(struct comm *c) { return __atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE); }

// x_wait waits, without the lock, until field (posted or consumed, by its
// offset) of every rank is at least k. It returns X_ALL, or X_ABORTED when
// c is aborted, or the rank that will never get there (its process or
// comm is gone, or the time is up: *late is set).
enum { X_ALL = -1, X_ABORTED = -2 };

static int x_wait(struct comm *c, size_t field, uint64_t k, int *late) {
	struct xhead *h = c->cl->shm;
	int n = c->cl->nranks;
	double end = now() + timeout_s();
	long ns = 20000;
	*late = 0;
	for (;;) {
		int missing = -1;
		for (int q = 0; q < n && missing < 0; q++) {
			struct xrank *e = &h->ranks[q];
			if (LOAD((uint64_t *)((char *)e + field)) < k)
				missing = q;
		}
		if (missing < 0)
			return X_ALL;
		if (is_aborted(c))
			return X_ABORTED;
		struct xrank *e = &h->ranks[missing];
		if (LOAD(&e->gone) || !alive(e->pid)) {
			// It might have got there just before it went.
			if (LOAD((uint64_t *)((char *)e + field)) >= k)
				continue;
			return missing;
		}
		if (now() > end) {
			*late = 1;
			return missing;
		}
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		if (ns < 1000000)
			ns *= 2;
	}
}

static int reduces(int kind) { return kind == K_ALLREDUCE || kind == K_REDUCE || kind == K_REDUCESCATTER; }

// sent is the number of bytes rank r sends in a collective described by e.
static size_t sent(const struct xrank *e, int r, int n) {
	size_t bytes = (size_t)e->count * type_size(e->type);
	if (e->kind == K_REDUCESCATTER)
		return bytes * (size_t)n;
	if (e->kind == K_BROADCAST && r != e->root)
		return 0;
	return bytes;
}

static int x_io(int fd, void *buf, size_t n, int write) {
	size_t done = 0;
	while (done < n) {
		ssize_t m = write ? pwrite(fd, (char *)buf + done, n - done, (off_t)done) : pread(fd, (char *)buf + done, n - done, (off_t)done);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			return -1;
		done += (size_t)m;
	}
	return 0;
}

static void x_fail(struct comm *c, int q, int late, const char *what) {
	struct xrank *e = &c->cl->shm->ranks[q];
	lock();
	if (late)
		set_async(c, ncclRemoteError, "%s: rank %d (process %d) did not answer in %g s (FAKENCCL_TIMEOUT)", what, q, e->pid, timeout_s());
	else
		set_async(c, ncclRemoteError, "%s: rank %d (process %d) will never take part (aborted, destroyed or dead)", what, q, e->pid);
	unlock();
}

void x_collective(struct item *it) {
	struct comm *c = it->comm;
	struct clique *cl = c->cl;
	struct xhead *h = cl->shm;
	int n = cl->nranks, me = c->rank;
	uint64_t k = ++c->seq;
	struct xrank *mine = &h->ranks[me];
	unlock();
	int late, q;
	const char *what = "collective across processes";
	if ((q = x_wait(c, offsetof(struct xrank, consumed), k - 1, &late)) != X_ALL) {
		if (q >= 0)
			x_fail(c, q, late, what);
		STORE(&mine->consumed, k);
		goto out;
	}
	struct xrank d = {.kind = it->kind, .type = it->type, .op = reduces(it->kind) ? it->op : 0, .root = it->root, .count = it->count};
	if (it->kind != K_BROADCAST && it->kind != K_REDUCE)
		d.root = 0;
	if (x_io(c->xfd, (void *)it->send, sent(&d, me, n), 1) != 0) {
		lock();
		set_async(c, ncclSystemError, "%s: writing the send data: %s", what, strerror(errno));
		unlock();
		STORE(&mine->consumed, k);
		goto out;
	}
	mine->kind = d.kind;
	mine->type = d.type;
	mine->op = d.op;
	mine->root = d.root;
	mine->count = d.count;
	STORE(&mine->posted, k);
	if ((q = x_wait(c, offsetof(struct xrank, posted), k, &late)) != X_ALL) {
		if (q >= 0)
			x_fail(c, q, late, what);
		STORE(&mine->consumed, k);
		goto out;
	}
	// Every rank's arguments and data, as the items of a slot.
	struct item *items = calloc((size_t)n, sizeof *items);
	struct item **ptrs = calloc((size_t)n, sizeof *ptrs);
	void **bufs = calloc((size_t)n, sizeof *bufs);
	if (items == NULL || ptrs == NULL || bufs == NULL)
		abort();
	int bad = 0;
	for (int r = 0; r < n; r++) {
		struct xrank *e = &h->ranks[r];
		items[r] = (struct item){.kind = e->kind, .count = e->count, .type = e->type, .op = e->op, .root = e->root, .comm = c};
		ptrs[r] = &items[r];
		if (r == me) {
			items[r].send = it->send;
			items[r].recv = it->recv;
			continue;
		}
		size_t bytes = e->kind == d.kind && e->type == d.type && e->count == d.count ? sent(e, r, n) : 0;
		bufs[r] = malloc(bytes ? bytes : 1);
		if (bufs[r] == NULL)
			abort();
		if (bytes > 0 && (c->xpeer[r] < 0 || x_io(c->xpeer[r], bufs[r], bytes, 0) != 0) && !bad) {
			bad = 1;
			lock();
			set_async(c, ncclRemoteError, "%s: rank %d's data cannot be read (its process died?): %s", what, r, strerror(errno));
			unlock();
		}
		items[r].send = bufs[r];
	}
	if (!bad) {
		struct slot s = {.seq = k, .items = ptrs};
		lock();
		compute_for(cl, n, &s);
		unlock();
	}
	for (int r = 0; r < n; r++)
		free(bufs[r]);
	free(bufs);
	free(ptrs);
	free(items);
	STORE(&mine->consumed, k);
out:
	lock();
}
