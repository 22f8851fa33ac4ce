// fakecuda: a stand-in for libcuda.so.1 that runs on the host, for tests on
// machines without a GPU. Shared declarations of the source files.
//
// Nothing here includes cuda.h (NVIDIA's header may not be redistributed,
// and the tests must build without it): the few types and codes the fake
// needs are spelled out below with the values of cuda.h.
#ifndef FAKECUDA_H
#define FAKECUDA_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "abi.h"

// Only the driver's entry points and the fakecuda_* controls are exported;
// the library is built with -fvisibility=hidden.
#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgreenCtx_st *CUgreenCtx;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct { char bytes[16]; } CUuuid;
typedef void (*CUhostFn)(void *userData);
typedef struct {
	void *execAffinityParams;
	int numExecAffinityParams;
	void *cigParams;
} CUctxCreateParams;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_ILLEGAL_STATE = 401,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_FILE_NOT_FOUND = 301,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_MISALIGNED_ADDRESS = 716,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
	CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
	CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
	CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
	CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
	CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
	CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
	CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
	CUDA_ERROR_NOT_PERMITTED = 800,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
	CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
	CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
	CUDA_ERROR_CAPTURED_EVENT = 907,
	CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
	CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
};

// Special stream handles of cuda.h.
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_BLOCKING_SYNC 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_EVENT_INTERPROCESS 0x4

// The stream priorities an H100 or H200 reports.
#define PRIO_LEAST 0
#define PRIO_GREATEST (-5)

// ---- core.c: the big lock, call counting, faults, handles, accounting ----

// One mutex guards every object of the fake. done_cv is broadcast whenever
// an operation completes or an object changes state, and everything that
// waits for the device (synchronize calls, workers blocked on an event)
// waits on it: simple, and cheap enough at test scale.
extern pthread_mutex_t g_mu;
extern pthread_cond_t g_done;
void lock(void);
void unlock(void);

// Settings read from the environment when the library is loaded.
extern int g_driver_version; // FAKECUDA_DRIVER_VERSION, default 13000
extern int g_devices;        // FAKECUDA_DEVICES, default 1
extern uint64_t g_delay_ns;  // FAKECUDA_DELAY_NS: modeled time added to every queued operation
extern double g_bandwidth;   // FAKECUDA_BANDWIDTH: modeled bytes per second of memsets and copies
extern int g_initialized;    // cuInit succeeded

// The functions the fake counts, by API name: a symbol's _vN suffix is not
// part of it (cuMemAlloc_v2 counts as cuMemAlloc).
#define FAKE_FUNCS(X)                                                                               \
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName)        \
	X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetUuid) X(cuDeviceCanAccessPeer)      \
	X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuDevicePrimaryCtxGetState)       \
	X(cuDevicePrimaryCtxSetFlags) X(cuDevicePrimaryCtxReset) X(cuCtxCreate) X(cuCtxDestroy)      \
	X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxGetDevice) \
	X(cuCtxSynchronize) X(cuCtxGetStreamPriorityRange) X(cuCtxGetFlags) X(cuCtxGetApiVersion)    \
	X(cuCtxGetId) X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy)             \
	X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuStreamGetPriority)          \
	X(cuStreamGetFlags) X(cuStreamGetCtx) X(cuStreamGetId) X(cuStreamGetDevice)                  \
	X(cuLaunchHostFunc) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)       \
	X(cuEventSynchronize) X(cuEventElapsedTime) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost)     \
	X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemGetInfo) X(cuMemAllocAsync) X(cuMemFreeAsync)      \
	X(cuMemcpy) X(cuMemcpyAsync) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD)                 \
	X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemcpyPeer)                 \
	X(cuMemcpyPeerAsync) X(cuMemsetD8) X(cuMemsetD16)                                             \
	X(cuMemsetD32) X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async) X(cuMemHostRegister) \
	X(cuMemHostUnregister) X(cuCtxEnablePeerAccess) X(cuCtxDisablePeerAccess)                     \
	X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamIsCapturing) X(cuGraphGetNodes)       \
	X(cuGraphGetEdges) X(cuGraphDestroy) X(cuGraphInstantiate) X(cuGraphInstantiateWithFlags)     \
	X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphExecUpdate) X(cuMemAllocManaged)            \
	X(cuGraphCreate) X(cuGraphAddEmptyNode) X(cuGraphAddKernelNode) X(cuGraphAddMemcpyNode)      \
	X(cuGraphAddMemsetNode) X(cuGraphAddHostNode) X(cuGraphAddEventRecordNode)                   \
	X(cuGraphAddEventWaitNode) X(cuGraphExecKernelNodeSetParams) X(cuGraphExecMemcpyNodeSetParams) \
	X(cuMemPrefetchAsync) X(cuMemAdvise) X(cuMemRangeGetAttribute)                               \
	X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)    \
	X(cuLaunchKernelEx) X(cuLaunchKernel) X(cuLaunchCooperativeKernel) X(cuModuleLoad)             \
	X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)            \
	X(cuLibraryLoadData) X(cuLibraryLoadFromFile) X(cuLibraryUnload) X(cuLibraryGetKernel)        \
	X(cuKernelGetFunction) X(cuFuncGetParamInfo) X(cuFuncGetName) X(cuOccupancyMaxPotentialBlockSize)  \
	X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) X(cuDeviceSetMemPool) X(cuMemPoolCreate)       \
	X(cuMemPoolDestroy) X(cuMemPoolGetAttribute) X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo)         \
	X(cuMemAllocFromPoolAsync) X(cuMemsetD2D32) X(cuMemsetD2D32Async)                              \
	X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemCreate)      \
	X(cuMemRelease) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess) X(cuMemExportToShareableHandle)    \
	X(cuMemImportFromShareableHandle)

#define FAKE_ENUM(n) F_##n,
enum { FAKE_FUNCS(FAKE_ENUM) F_COUNT };
#undef FAKE_ENUM

// enter counts a call of f and returns the result of an injected fault, or
// CUDA_SUCCESS. Every entry point starts with ENTER, before it does
// anything: a failed call has no effect.
CUresult enter(int f);
#define ENTER(f)                              \
	do {                                      \
		CUresult enter_r_ = enter(F_##f);     \
		if (enter_r_ != CUDA_SUCCESS)         \
			return enter_r_;                  \
	} while (0)

// Driver objects are named by handles that encode a kind, a slot and the
// slot's generation, never by pointers: a stale or forged handle is found
// invalid instead of being dereferenced, and a recycled slot does not make
// an old handle valid again.
enum kind { K_CTX = 1, K_STREAM = 2, K_EVENT = 3, K_GRAPH = 4, K_EXEC = 5, K_NODE = 6, K_FUNC = 7, K_MODULE = 8, K_LIBRARY = 9, K_POOL = 10, K_PHYS = 11 };
uint64_t handle_new(enum kind k, void *obj);
void handle_free(uint64_t h);
void *handle_get(uint64_t h, enum kind k);
// locked_handle is the prologue of most entry points: the driver is
// initialized and h names a live object of kind k, which it stores in *obj;
// on success the global lock is held. An unknown handle gives missing.
CUresult locked_handle(uint64_t h, enum kind k, CUresult missing, void **obj);
// handle_each calls fn for every live object of kind k, under the lock.
void handle_each(enum kind k, void (*fn)(void *obj, void *arg), void *arg);

// Live objects, by kind, for the leak checks (see fakecuda_live).
enum live_kind {
	L_CONTEXTS,   // contexts created by cuCtxCreate and not destroyed
	L_PRIMARY,    // outstanding cuDevicePrimaryCtxRetain references
	L_STREAMS,    // streams created and not destroyed
	L_EVENTS,     // events created and not destroyed
	L_DEVICE,     // device allocations not freed
	L_HOST,       // page-locked host allocations and registrations not freed
	L_GRAPHS,     // graphs not destroyed
	L_EXECS,      // executable graphs not destroyed
	L_REAPED,     // streams, events and allocations that were never freed
	              // but went away with their context (counted since reset)
	L_BOUND,      // threads with a context on their stack (context.c)
	L_MANAGED,    // managed allocations not freed (counted in L_DEVICE too)
	L_MODULES,    // modules and libraries loaded and not unloaded (module.c)
	L_COUNT
};
extern long g_live[L_COUNT];

uint64_t now_ns(void);
void sleep_until(uint64_t deadline_ns);
struct timespec deadline_in(uint64_t ns);
void *xrealloc(void *p, size_t n);

// ---- context.c ----

struct stream;

struct ctx {
	uint64_t h;
	CUdevice dev;
	int primary;
	int alive;           // created: not destroyed; primary: retained (active)
	int retains;         // primary only
	unsigned flags;
	uint64_t id;
	CUresult sticky;       // a kernel's fault (module.c): every sync call reports it until the context goes
	struct stream *legacy; // the NULL stream, made on first use
	unsigned peers;        // devices with peer access enabled, a bit each
};

// current_ctx finds the calling thread's current context: INVALID_CONTEXT
// when there is none, CONTEXT_IS_DESTROYED when it is gone. Under the lock.
CUresult current_ctx(struct ctx **out);
// ctx_of checks a context handle (NULL: the current context). Under the lock.
CUresult ctx_of(CUcontext c, struct ctx **out);
// ctx_teardown waits for the context's work and destroys what is left in
// it, as the driver does when a context goes away. Under the lock.
void ctx_teardown(struct ctx *c);
int device_valid(CUdevice d);

// ---- device.c ----

// driver_ready is CUDA_ERROR_NOT_INITIALIZED until cuInit succeeded.
CUresult driver_ready(void);
size_t device_total_mem(void);

// ---- stream.c ----

struct alloc;
struct event;
struct klaunch;

struct op {
	struct op *next;
	enum op_kind kind;
	uint64_t seq;          // position in its stream
	char *dst;             // memset, copy
	const char *src;       // copy
	size_t bytes;          // memset, copy: bytes written
	unsigned elem;         // memset: element size
	uint32_t value;        // memset
	struct event *ev;      // marker, wait for an event (referenced)
	struct stream *other;  // wait for a stream (referenced)
	uint64_t target;       // marker: the event's record number; waits: the number awaited
	CUhostFn fn;           // host function
	void *arg;
	struct alloc *a[2];    // allocations the op touches (pending references)
	struct rop *race;      // the race detector's record (race.c)
	struct klaunch *k;     // kernel: the launch (referenced)
	struct alloc **pins;   // kernel: allocations its Go function reached (pending references)
	size_t npins, cappins;
	// pins' first room: most kernels reach a few allocations, and pinning
	// those then allocates nothing.
	struct alloc *pin_buf[8];
};

struct stream {
	uint64_t h;           // 0 for a context's NULL stream
	uint64_t id;
	struct ctx *ctx;
	unsigned flags;
	int prio;
	int destroyed;        // no handle left; the worker drains the queue and exits
	int refs;             // the handle, the worker, ops and waiters that point here
	struct op *head, *tail;
	uint64_t enq, done;   // ops enqueued and completed, in order
	int has_worker;
	int in_hostfn;        // the worker runs a host function, outside the turn (sched.c)
	pthread_cond_t cv;    // signals the worker: work or destruction
	// Stream capture (graph.c): the capture the stream takes part in, the
	// nodes its next captured operation depends on, the number of nodes
	// it added, and that number when another stream last joined it.
	struct capture *cap;
	struct gnode **deps;
	size_t ndeps;
	uint64_t cap_gen, joined_gen;
	uint32_t race_tid;    // its thread of the race detector's clock, 0 none yet
	// Every stream struct alive, destroyed ones still draining their queue
	// included (ctx_sync waits for those too, as the driver does).
	struct stream *all_prev, *all_next;
};

struct event {
	uint64_t h;
	struct ctx *ctx;
	unsigned flags;
	int refs;
	uint64_t rec;         // number of the last record (0: never recorded)
	uint64_t done;        // highest record number whose marker completed
	uint64_t t_ns;        // when the last record's marker completed
	// A record in a capture (graph.c): the capture's id (0: none), the
	// recording stream's id and node count then, and its dependencies.
	uint64_t cap_id, cap_stream, cap_gen;
	struct gnode **deps;
	size_t ndeps;
	struct vc *race_vc;   // the race detector's clock of the last record
};

// stream_of resolves a stream handle, the special ones included, to a
// stream of the current context or of its own. Under the lock.
CUresult stream_of(CUstream s, struct stream **out);
// enqueue appends op to s (under the lock) and returns once it is queued;
// sync also waits until it has completed.
CUresult enqueue(struct stream *s, struct op *op, int sync);
// op_new and op_free make and drop ops, under the lock; dropped ones are
// kept for reuse.
struct op *op_new(enum op_kind k);
void op_free(struct op *op);
void stream_destroy(struct stream *s);
void event_destroy(struct event *e);
struct stream *legacy_stream(struct ctx *c);
// ctx_sync waits until every operation queued in c so far has completed.
void ctx_sync(struct ctx *c);

// ---- graph.c ----

struct capture;
struct gnode;

// capture_add makes op a node of s's capture instead of queueing it, and
// frees op; sync ops cannot be captured. Under the lock.
CUresult capture_add(struct stream *s, struct op *op, int sync);
// capture_guard refuses a call that is unsafe during the captures active
// in their modes (synchronous copies, allocation), invalidating them.
CUresult capture_guard(void);
void capture_invalidate(struct stream *s);
void capture_record(struct event *e, struct stream *s);
CUresult capture_wait(struct stream *s, struct event *e);
// capture_leave takes a stream being destroyed out of its capture.
void capture_leave(struct stream *s);
void capture_forget(struct event *e);
// exec_reap destroys the executable graphs of c. Under the lock.
void exec_reap(struct ctx *c);

// ---- memory.c ----

struct alloc {
	struct alloc *next;
	char *base;
	size_t size;
	struct ctx *ctx;
	int host;       // page-locked host memory rather than device memory
	int registered; // host memory of the caller's, page-locked by cuMemHostRegister
	int freed;      // unlinked: unmapped once no queued op uses it
	int pending;    // queued ops that touch it
	// Managed memory (cuMemAllocManaged) and what cuMemRangeGetAttribute
	// reports of it: the advice, as CUdevice values (CU_DEVICE_CPU for the
	// host, CU_DEVICE_INVALID for none; accessed_by has bit d for device d
	// and bit 31 for the host), and the last prefetch's destination. The
	// fake keeps them per allocation, where the driver keeps them per page.
	int managed;
	int read_mostly;
	int preferred;
	uint32_t accessed_by;
	int last_prefetch;
	// A stream-ordered allocation's pool (mempool.c), which counts its
	// bytes against the device instead of the allocation.
	struct mempool *pool;
	// A range of virtual memory mapped and made accessible (vmm.c): its
	// physical memory counts against the device, and cuMemUnmap, not the
	// table, takes the pages away.
	int mapped;
};

void alloc_put(struct alloc *a);
// alloc_reap frees every allocation of c, counting it as reaped. Under the lock.
void alloc_reap(struct ctx *c);
// alloc_find returns the live allocation holding [p, p+n), or NULL.
struct alloc *alloc_find(const void *p, size_t n);
// fill writes bytes at dst with the elem-byte pattern value.
void fill(char *dst, size_t bytes, uint32_t value, unsigned elem);
// alloc_async makes a stream-ordered allocation of bytes from pool p on s.
// Under the lock.
CUresult alloc_async(struct stream *s, struct mempool *p, size_t bytes, CUdeviceptr *out);
// device_mem_take counts bytes more of device memory in use, or is
// CUDA_ERROR_OUT_OF_MEMORY when the device has not that much free;
// device_mem_give counts bytes back. Under the lock.
CUresult device_mem_take(size_t bytes);
void device_mem_give(size_t bytes);
// alloc_add_mapped enters [base, base+size) in the table as device memory
// of no context, for a mapping made accessible; alloc_remove_mapped takes
// it out once no queued operation uses it. Under the lock.
struct alloc *alloc_add_mapped(char *base, size_t size);
void alloc_remove_mapped(struct alloc *a);

// ---- mempool.c ----

struct mempool;
// pool_current is the pool cuMemAllocAsync allocates dev's memory from.
// Under the lock.
struct mempool *pool_current(CUdevice dev);
// pool_take counts an allocation of bytes from p, reserving device memory
// when p has not that much unused; pool_give counts it back once freed.
// Under the lock.
CUresult pool_take(struct mempool *p, size_t bytes);
void pool_give(struct mempool *p, size_t bytes);

// ---- launch.c and module.c: functions, modules, kernels written in Go ----

// A function: one of fakecuda_function_new (no code: launches are
// checked and recorded, nothing runs), or an entry of a loaded module or
// library, whose launches run the Go function registered under its name.
struct func {
	uint64_t h;
	int refs;            // one for its handle, one for each launch of it still referenced
	int regs;            // per thread
	int static_shared;   // bytes per block
	int max_dyn_shared;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	int nonportable;     // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
	int go;              // an entry of a module: launches run its Go kernel
	int params_known;    // the parameter layout below is known
	unsigned nparams;
	unsigned *psize, *poff; // nparams each
	char *name;          // go only
	int ptx_version;     // go only: the PTX's .version as major*10+minor, 0 for a binary
	struct ptx_text *ptx; // go only: its module's PTX, which the Go side interprets
	int ptx_ok;           // the Go side's checker accepted the entry (func_ready)
};

// ptx_text is a module's PTX, kept for the functions made from it, which
// outlive an unload of the module. Under the lock.
struct ptx_text {
	int refs;
	uint64_t id;
	size_t len;
	char text[];
};

void ptx_text_unref(struct ptx_text *t);

// func_ready has the Go side check, before the first launch of the
// function h, that it can run the entry's PTX, and returns the error the
// launch returns if not (CUDA_SUCCESS for a handle that is no such
// function: the launch reports it). Not under the lock.
CUresult func_ready(uint64_t h);

// klaunch is one launch of a Go kernel, as cuLaunchKernel* copied it: the
// queued op, a graph node made by capture and the nodes of its executable
// graphs share it by reference (under the lock). Its function's name and
// parameter layout, fixed when the function was made, are the function's,
// which it references: they outlive an unload of the module.
struct klaunch {
	int refs;
	struct klaunch *next_free; // in the launches kept for reuse
	struct func *f;
	struct ctx *ctx;
	uint64_t stream;       // the stream handle the launch named
	unsigned grid[3], block[3], shmem;
	int params_known;
	int cooperative;
	unsigned nparams;
	size_t bytes;          // of params
	size_t cap;            // params' room
	unsigned char params[]; // the parameter buffer
};

struct func *func_new(void);
// func_unref drops a reference to f, under the lock; the last frees it.
void func_unref(struct func *f);
// func_layout sets f's parameters from their sizes, each aligned to
// aligns[i], or without aligns to its size (at most 8); -1 for a size of 0.
int func_layout(struct func *f, unsigned n, const unsigned *sizes, const unsigned *aligns);
void klaunch_unref(struct klaunch *k);
// graph_klaunch makes the launch of a kernel node (graph.c). Under the lock.
CUresult graph_klaunch(uint64_t hfunc, const unsigned grid[3], const unsigned block[3], unsigned shmem, void **params,
	void **extra, struct ctx *c, struct klaunch **out);
// kernel_run runs op's Go kernel on the calling (worker) thread, unlocked.
void kernel_run(struct op *op);
// kernel_release drops what a finished kernel op holds. Under the lock.
void kernel_release(struct op *op);
// module_reap unloads the modules of c, counting them as reaped. Under the lock.
void module_reap(struct ctx *c);

// fakecuda_note_access reports that the operation op (the token a Go
// kernel's launch receives) read or wrote [ptr, ptr+n): the race
// detector's input (race.c). A kernel's accessors call it once per range.
EXPORT void fakecuda_note_access(void *op, unsigned long long ptr, size_t n, int write);
// fakecuda_hostfn_access reports an access of the host function running
// on the calling stream thread (race.c); fakecuda_range_valid whether a
// range lies in one allocation (memory.c). For the fake libraries.
EXPORT void fakecuda_hostfn_access(unsigned long long ptr, size_t n, int write);
EXPORT int fakecuda_range_valid(unsigned long long ptr, size_t n);

#include "race.h"

#endif
