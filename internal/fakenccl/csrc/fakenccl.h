// The fake NCCL's declarations: the ABI of nccl.h as generated/nccl's
// z-files describe it (2.22.3 and 2.28.3 agree on everything here), written
// from those files, and the fake's own structures.
#ifndef FAKENCCL_H
#define FAKENCCL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- nccl.h's ABI ----

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
	ncclNumResults = 8
} ncclResult_t;

// ncclDataType_t: int8 0, uint8 1, int32 2, uint32 3, int64 4, uint64 5,
// float16 6, float32 7, float64 8, bfloat16 9, and fp8 e4m3 10 and e5m2 11,
// which nccl.h declares from NCCL 2.24 on (2.22.3's z-files lack them; the
// fake refuses them where it reports an older version, as NCCL before 2.24
// refuses a type it does not know).
typedef int ncclDataType_t;
enum { T_INT8, T_UINT8, T_INT32, T_UINT32, T_INT64, T_UINT64, T_FLOAT16, T_FLOAT32, T_FLOAT64, T_BFLOAT16, T_FLOAT8E4M3, T_FLOAT8E5M2, T_NUM };

// FP8_VERSION is NCCL_VERSION(2,24,0): the first NCCL with the fp8 types.
#define FP8_VERSION 22400

// ncclRedOp_t: sum 0, prod 1, max 2, min 3, avg 4.
typedef int ncclRedOp_t;
enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_AVG, OP_NUM };

typedef struct {
	char internal[128];
} ncclUniqueId;

// The head of ncclConfig_t, the same in every version: what the fake reads.
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} config_head;

#define CONFIG_MAGIC 0xcafebeefu
#define CONFIG_UNDEF_INT (-2147483647 - 1)

typedef struct comm *ncclComm_t;
typedef void *cudaStream_t; // a CUstream

// ---- the fake ----

// A clique is the ranks of one communicator; struct comm is one rank.
// Everything below is under g_mu; waits are on g_cv, broadcast at every
// change.
struct slot;
struct item;

struct clique {
	int nranks;
	int joined;          // ranks that have joined (init)
	int live;            // ranks not yet freed
	int broken;          // a rank left the init: the others fail
	int in_table;        // in the table of inits in progress
	ncclUniqueId id;     // for ncclCommInitRank*
	struct comm **ranks; // by rank; NULL: not joined yet, or freed
	struct slot *slots;  // collectives some rank has reached
	struct item *msgs;   // sends posted and not yet received
	struct clique *next; // in the table of inits in progress
	struct xhead *shm;   // the id's segment (xproc.c); NULL once unused
};

struct comm {
	struct clique *cl;
	int rank, dev;
	int blocking;
	int ready;      // every rank has joined
	int released;   // ncclCommDestroy or ncclCommAbort called
	int aborted;    // ncclCommAbort called
	int finalizing; // ncclCommFinalize called
	int pending;    // work items queued or in a group, not done
	uint64_t seq;   // collectives reached, in stream order
	ncclResult_t async;
	char err[256]; // the text of async
	struct comm *next; // in g_comms
	// Across processes (xproc.c): xjoined, the rank holds its entry of the
	// segment; xmode, its collectives go through the segment; xfd, the
	// memfd of its send data; xpeer, the peers' (by rank).
	int xjoined, xmode, xfd;
	int *xpeer;
};

enum { K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCESCATTER, K_SEND, K_RECV };

// An item is one call of a collective or of ncclSend/ncclRecv, queued on
// its stream inside a work (one host function: an ungrouped call, or
// the calls of a group on that stream).
struct item {
	int kind;
	const void *send;
	void *recv;
	size_t count; // elements: per rank (AllGather), received (ReduceScatter)
	ncclDataType_t type;
	ncclRedOp_t op;
	int root; // or peer
	struct comm *comm;
	cudaStream_t stream;
	int taken;         // a send: received
	struct item *next; // a send: in the clique's messages
};

struct work {
	int n;
	struct item items[];
};

// A slot is collective number seq of a clique: the items of the ranks
// that have reached it.
struct slot {
	uint64_t seq;
	int arrived, left, done, broken;
	struct item **items; // by rank
	struct slot *next;
};

extern pthread_mutex_t g_mu;
extern pthread_cond_t g_cv;

void lock(void);
void unlock(void);
void wake(void);

// enter starts an entry point: ncclGetLastError tells the errors of the
// thread's last call only.
void enter(void);
// set_error records the text of a failing call on this thread (for
// ncclGetLastError) and returns r.
ncclResult_t set_error(ncclResult_t r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// set_async records an asynchronous error of c, under the lock.
void set_async(struct comm *c, ncclResult_t r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// comm_get checks c is a live communicator, not destroyed or aborted,
// under the lock.
ncclResult_t comm_get(struct comm *c, const char *fn);
// comm_unref drops a pending item of c and frees a released comm whose
// work is done, under the lock.
void comm_unref(struct comm *c);
// rank_gone reports whether rank r of cl can never take part again.
int rank_gone(struct clique *cl, int r);

// The fake CUDA driver's entry points the fake uses, resolved once.
struct cuda {
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*ctx_get_device)(int *);
	int (*device_get_count)(int *);
	int (*stream_is_capturing)(cudaStream_t, int *);
	const char *err;
};
const struct cuda *cuda(void);

// fake_version is the version ncclGetVersion reports: FAKENCCL_VERSION,
// 22803 when it is unset.
int fake_version(void);

// ---- across processes (xproc.c), all under the lock ----

// x_join enters rank c in the id's segment (opened into cl->shm if it is
// not yet); on failure it sets the error and returns it.
ncclResult_t x_join(struct clique *cl, struct comm *c, const ncclUniqueId *id);
// x_check makes the ranks of cl ready across processes once every rank
// of the segment has joined, and breaks cl when a process that joined has
// died.
void x_check(struct clique *cl);
// x_leave ends c's part in the segment: at its release (abort: at once
// for its peers) and at its free.
void x_leave(struct comm *c, int abort);
// x_unmap unmaps the segment of cl, at its free.
void x_unmap(struct clique *cl);
// table_remove takes cl out of the table of inits in progress (comm.c).
void table_remove(struct clique *cl);
// x_done drops the segment of cl (its ranks are all in this process).
void x_done(struct clique *cl);
// x_collective runs a collective item of a comm in xmode; it lets the lock
// go while it waits for the peers.
void x_collective(struct item *it);
// compute_for does the collective of the items of s, one per rank, into
// those whose recv is not NULL.
void compute_for(struct clique *cl, int n, struct slot *s);

size_t type_size(ncclDataType_t t);
void reduce(void *out, const void *const *in, int n, size_t count, ncclDataType_t t, ncclRedOp_t op);
void run_work(void *arg);

#endif
