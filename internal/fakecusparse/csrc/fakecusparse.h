// The fake cuSPARSE's declarations: the ABI of cusparse.h's generic API as
// generated/cusparse's z-files describe it (11.8 to 13.0 agree on
// everything here: the const descriptors of 12.x are the same pointers),
// and the fake's own structures.
#ifndef FAKECUSPARSE_H
#define FAKECUSPARSE_H

#include <complex.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- cusparse.h's ABI ----

typedef int cusparseStatus_t;
enum {
	CUSPARSE_STATUS_SUCCESS = 0,
	CUSPARSE_STATUS_NOT_INITIALIZED = 1,
	CUSPARSE_STATUS_ALLOC_FAILED = 2,
	CUSPARSE_STATUS_INVALID_VALUE = 3,
	CUSPARSE_STATUS_EXECUTION_FAILED = 6,
	CUSPARSE_STATUS_INTERNAL_ERROR = 7,
	CUSPARSE_STATUS_NOT_SUPPORTED = 10,
};

enum { OP_N = 0, OP_T = 1, OP_C = 2 };
enum { FMT_CSR = 1, FMT_CSC = 2, FMT_COO = 3, FMT_BSR = 6 };
enum { IDX_32I = 2, IDX_64I = 3 };
enum { BASE_ZERO = 0, BASE_ONE = 1 };
enum { ORDER_COL = 1, ORDER_ROW = 2 };
enum { FILL_LOWER = 0, FILL_UPPER = 1 };
enum { DIAG_NON_UNIT = 0, DIAG_UNIT = 1 };
enum { ATTR_FILL_MODE = 0, ATTR_DIAG_TYPE = 1 };

// cudaDataType: the value types the fake reads and writes.
enum { R_32F = 0, R_64F = 1, C_32F = 4, C_64F = 5 };

// libraryPropertyType.
enum { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };

typedef void *cudaStream_t; // a CUstream

// ---- the fake's objects ----

struct handle {
	cudaStream_t stream;
};

// A sparse matrix descriptor. For CSR p is the row offsets and q the
// column indices; for CSC p the column offsets and q the row indices; for
// COO p the row indices and q the column indices; for BSR p the block
// row offsets and q the block column indices, nnz counting blocks of
// rbs×cbs values each in border (ORDER_ROW or ORDER_COL), rows and cols
// counting elements.
struct spmat {
	int format;
	int64_t rows, cols, nnz;
	void *p, *q, *values;
	int ptype, qtype; // index types
	int base, vtype;
	int fill, diag;
	int64_t rbs, cbs;
	int border;
};

// spmat_values is how many values m's values array holds.
int64_t spmat_values(const struct spmat *m);

struct dnvec {
	int64_t size;
	void *values;
	int vtype;
};

struct dnmat {
	int64_t rows, cols, ld;
	void *values;
	int vtype, order;
};

// ---- exports.c ----

// The objects the fake hands out, by kind, so that a pointer that is none
// of them is refused rather than followed.
enum { K_HANDLE, K_SPMAT, K_DNVEC, K_DNMAT, K_SPGEMM, K_SPSV, K_SPSM, K_KINDS };
#include "objects.h" // internal/fakelib's registry of live objects

// fail records why a call failed on this thread (FAKECUSPARSE_VERBOSE
// prints it too) and returns r.
cusparseStatus_t fail(cusparseStatus_t r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// run_error reports a failure found while a job runs: on standard error.
void run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// ---- numbers (numeric.c) ----

typedef double complex cplx;

size_t type_size(int vtype);  // 0: not a type the fake models
size_t index_size(int itype); // 0: not an index type the fake models
cplx load(const void *p, int vtype, int64_t i);
void store(void *p, int vtype, int64_t i, cplx v);
int64_t load_index(const void *p, int itype, int64_t i);
void store_index(void *p, int itype, int64_t i, int64_t v);

// ---- the driver (queue.c) ----

struct cuda {
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*stream_synchronize)(cudaStream_t);
	int (*stream_is_capturing)(cudaStream_t, int *);
	int (*range_valid)(unsigned long long, size_t);
	void (*note_access)(unsigned long long, size_t, int);
	const char *err;
};
const struct cuda *cuda(void);

// A job is work queued in stream order, run on the stream's thread and
// then destroyed, unless the stream was capturing (a graph may launch it
// again: it lives as long as the process).
struct job {
	void (*run)(struct job *);
	void (*destroy)(struct job *);
	int keep;
};
// enqueue queues j on s; on an error j is destroyed.
cusparseStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j);
// capturing reports whether s is being captured (-1: the driver failed).
int capturing(cudaStream_t s);
// check_range refuses memory that lies in no allocation of the fake
// driver: name is the argument, for the message.
cusparseStatus_t check_range(const char *fn, const char *name, const void *p, size_t bytes);
// note reports an access of the running job to the race detector.
void note(const void *p, size_t bytes, int write);
cusparseStatus_t sync_stream(const char *fn, cudaStream_t s);
// handle_stream checks h and returns its stream in *s.
cusparseStatus_t handle_stream(const char *fn, struct handle *h, cudaStream_t *s);

// ---- matrices (descr.c) ----

// spmat_check checks a live descriptor's arrays against the fake
// driver's memory.
cusparseStatus_t spmat_check(const char *fn, const char *name, const struct spmat *m);
// spmat_note reports the reads of m's arrays to the race detector.
void spmat_note(const struct spmat *m);
// A triplet form of a matrix: row, column and value of every entry.
struct triplets {
	int64_t n;
	int64_t *r, *c;
	cplx *v;
};
// triplets_of reads m (zero-based entries); 0 on success.
int triplets_of(const struct spmat *m, struct triplets *t);
void triplets_free(struct triplets *t);
// transpose_op applies op to the entries of t: swapping rows and columns,
// and conjugating for OP_C.
void transpose_op(struct triplets *t, int op);
// scalar reads the host scalar of vtype at p.
cplx scalar(const void *p, int vtype);
// op_shape is the shape of op(m).
void op_shape(int op, int64_t rows, int64_t cols, int64_t *orows, int64_t *ocols);
// dnmat_bytes is how many bytes the dense matrix spans.
size_t dnmat_bytes(const struct dnmat *d);

#endif
