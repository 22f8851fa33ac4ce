// What the fake driver and its Go side (package fakecuda, through cgo)
// exchange: the records the controls fill in or hand over, and the
// numbers in them. The C sources include this header (through fake.h) and
// so do the cgo preambles of the Go files that read the records, so both
// sides compile one declaration of each.
//
// The two sides may still be built by different compilers: the library by
// Build with $CC, the Go files by cgo with its own. The asserts pin the
// layout (LP64) that both must agree on.
#ifndef FAKECUDA_ABI_H
#define FAKECUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

// The kinds of queued operations. A race report's access has one of these,
// or RACE_HOST_ACCESS.
enum op_kind { OP_MEMSET, OP_COPY, OP_MARKER, OP_WAIT_EVENT, OP_WAIT_STREAM, OP_HOSTFN, OP_FREE, OP_PREFETCH, OP_KERNEL };

// ---- kernel launches (launch.c) ----

// The most parameters of a function of fakecuda_function_new, and the most
// attributes of a launch.
enum { MAX_PARAMS = 32, MAX_ATTRS = 32 };

// What fakecuda_last_launch reports: the last launch cuLaunchKernelEx
// accepted.
struct fakecuda_launch {
	uint64_t function, stream; // the CUfunction and CUstream handles
	unsigned grid[3], block[3], shmem;
	unsigned nattrs, nparams;
	int attr_ids[MAX_ATTRS];
	unsigned char attr_values[MAX_ATTRS][64]; // CUlaunchAttributeValue's bytes
	uint64_t params[MAX_PARAMS];              // each in its low bytes
};

_Static_assert(offsetof(struct fakecuda_launch, grid) == 16 && offsetof(struct fakecuda_launch, nattrs) == 44 &&
		offsetof(struct fakecuda_launch, attr_ids) == 52 && offsetof(struct fakecuda_launch, attr_values) == 180 &&
		offsetof(struct fakecuda_launch, params) == 2232 && sizeof(struct fakecuda_launch) == 2488,
	"struct fakecuda_launch's layout");

// ---- Go kernels (module.c) ----

// What the Go side's callback receives for one run of a launch of a Go
// kernel. The pointers are valid during the call only.
struct fakecuda_kernel_call {
	void *op; // the token for fakecuda_kernel_pin and fakecuda_note_access
	const char *name;
	unsigned grid[3], block[3], shmem;
	int params_known;
	unsigned nparams;
	const unsigned *psize, *poff;
	const unsigned char *params;
	size_t bytes;
	uint64_t stream, ctx; // the handles the launch named, and its context's
	// The PTX text of the kernel's module (NULL for a binary image), for
	// the Go side to interpret when no Go kernel is registered under the
	// name; ptx_id names the text (one per module load), so that the Go
	// side parses it once.
	const char *ptx;
	size_t ptx_len;
	uint64_t ptx_id;
	int cooperative; // a cooperative launch: its blocks are resident at once
};

_Static_assert(offsetof(struct fakecuda_kernel_call, grid) == 16 && offsetof(struct fakecuda_kernel_call, params_known) == 44 &&
		offsetof(struct fakecuda_kernel_call, psize) == 56 && offsetof(struct fakecuda_kernel_call, bytes) == 80 &&
		offsetof(struct fakecuda_kernel_call, ctx) == 96 && offsetof(struct fakecuda_kernel_call, ptx_id) == 120 &&
		offsetof(struct fakecuda_kernel_call, cooperative) == 128 && sizeof(struct fakecuda_kernel_call) == 136,
	"struct fakecuda_kernel_call's layout");

// The callback fakecuda_set_kernel_runner installs: it runs the kernel
// and returns CUDA_SUCCESS or the error the launch leaves sticky.
typedef int (*fakecuda_kernel_runner)(struct fakecuda_kernel_call *);

// What the Go side's PTX checker receives: a module's PTX as it loads
// (entry NULL), answered with CUDA_SUCCESS or CUDA_ERROR_INVALID_PTX, or
// an entry of it before its first launch, answered with CUDA_SUCCESS or
// the error the launch returns. The pointers are valid during the call
// only.
struct fakecuda_ptx_check {
	const char *ptx;
	size_t ptx_len;
	uint64_t ptx_id; // as in struct fakecuda_kernel_call
	const char *entry;
};

_Static_assert(offsetof(struct fakecuda_ptx_check, ptx_id) == 16 && sizeof(struct fakecuda_ptx_check) == 32,
	"struct fakecuda_ptx_check's layout");

// The callback fakecuda_set_ptx_checker installs.
typedef int (*fakecuda_ptx_checker)(struct fakecuda_ptx_check *);

// ---- race reports (race.c) ----

// The kind of a host access (fakecuda_race_host_access), beside those of
// enum op_kind.
enum { RACE_HOST_ACCESS = 100 };

// The kinds of allocation an access lies in.
enum { AK_DEVICE, AK_HOST, AK_REGISTERED, AK_MANAGED };

// The bits of a copy's direction: which of its sides is device memory.
enum { COPY_DST_DEVICE = 1, COPY_SRC_DEVICE = 2 };

// The most return addresses kept of where an operation was queued.
#define RACE_PCS 48

// One side of a race, as fakecuda_race_get reports it.
struct fakecuda_race_access {
	uint64_t seq, stream, addr, bytes, alloc_base, alloc_size;
	int32_t kind; // enum op_kind or RACE_HOST_ACCESS
	int32_t write, alloc_kind, legacy;
	int32_t copy_dir; // COPY_* bits
	int32_t api;      // the F_* index of the entry point that queued it, or -1
	int64_t node;     // its graph node's index, or -1
	uint32_t npcs, pad;
	uint64_t pcs[RACE_PCS];
};

struct fakecuda_race {
	struct fakecuda_race_access cur, prev; // cur found the race: it ran second
};

_Static_assert(offsetof(struct fakecuda_race_access, kind) == 48 && offsetof(struct fakecuda_race_access, node) == 72 &&
		offsetof(struct fakecuda_race_access, npcs) == 80 && offsetof(struct fakecuda_race_access, pcs) == 88 &&
		sizeof(struct fakecuda_race_access) == 472 && sizeof(struct fakecuda_race) == 944,
	"struct fakecuda_race's layout");

#endif
