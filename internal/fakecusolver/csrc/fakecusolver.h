// The fake cuSOLVER's declarations: the ABI of cusolverDn.h as
// generated/cusolver describes it (11.8 to 13.0 agree on everything here),
// and the fake's own structures.
#ifndef FAKECUSOLVER_H
#define FAKECUSOLVER_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- the ABI ----

typedef int cusolverStatus_t;
enum {
	CUSOLVER_STATUS_SUCCESS = 0,
	CUSOLVER_STATUS_NOT_INITIALIZED = 1,
	CUSOLVER_STATUS_ALLOC_FAILED = 2,
	CUSOLVER_STATUS_INVALID_VALUE = 3,
	CUSOLVER_STATUS_EXECUTION_FAILED = 6,
	CUSOLVER_STATUS_INTERNAL_ERROR = 7,
	CUSOLVER_STATUS_NOT_SUPPORTED = 9,
};

// cuBLAS's enums, which cuSOLVER takes.
enum { FILL_LOWER = 0, FILL_UPPER = 1 };
enum { OP_N = 0, OP_T = 1, OP_C = 2 };
enum { SIDE_LEFT = 0, SIDE_RIGHT = 1 };
// cusolverEigMode_t.
enum { EIG_NOVECTOR = 0, EIG_VECTOR = 1 };
// libraryPropertyType.
enum { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };

typedef void *cudaStream_t; // a CUstream

struct handle {
	cudaStream_t stream;
};
typedef struct handle *cusolverDnHandle_t;

// ---- the driver and the queue (queue.c) ----

// handle_get checks that h is a live handle.
int handle_live(cusolverDnHandle_t h);

// A job is work queued in stream order: run is called on the stream's
// thread, then the job is freed.
struct job {
	void (*run)(struct job *);
};
// enqueue queues j (malloc'd) on s, freeing it on an error; fn names
// the entry point for the message.
cusolverStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j);
// in_memory reports whether [p, p+bytes) lies in one allocation of the
// fake driver (an empty range always does).
int in_memory(const void *p, size_t bytes);
// note reports an access of the running job to the race detector.
void note(const void *p, size_t bytes, int write);
// say writes the fake's reason for refusing a call on standard error
// when FAKECUSOLVER_VERBOSE is set.
void say(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// ---- matrix arguments (dense.c) ----

// A matrix argument: rows×cols elements of size bytes (4 or 8: float or
// double), column j from element j·ld.
struct mat {
	void *p;
	int rows, cols, ld;
};

// extent is how many elements x spans, 0 for an empty matrix.
size_t extent(const struct mat *x);
// load copies x into doubles with x's leading dimension (NULL when out of
// host memory); store writes its elements back, the gaps between columns
// left as they are.
double *load(const struct mat *x, int size);
void store(const struct mat *x, int size, const double *d);
// note_mat reports x's extent to the race detector.
void note_mat(const struct mat *x, int size, int write);
static inline int max1(int v) { return v > 1 ? v : 1; }
static inline int imin(int a, int b) { return a < b ? a : b; }

// get and put read and write element i of an array of float (size 4) or
// double (size 8).
double get(const void *p, int size, size_t i);
void put(void *p, int size, size_t i, double v);

// ---- calls (call.c) ----

enum { GETRF, GETRS, POTRF, POTRS, GEQRF, ORMQR, SYEVD, GESVD, GESVDJ };

// A call is a dense entry point's arguments (a, b and vt its matrices:
// A, then B, C or U, then VT or V) and the job that does its work.
struct call {
	struct job job;
	int op, size;
	int illegal; // -i: the job only writes info
	int m, n, k;
	int f1, f2; // uplo, trans, side, jobz, jobu/jobvt as the call has them
	struct mat a, b, vt;
	void *vec; // ipiv, tau, W or S
	int vlen;  // its elements
	int *info;
	void *work;
	size_t work_bytes;
};

// new_call returns a zeroed call of op on elements of size bytes, info
// its info word, or NULL when out of host memory.
struct call *new_call(int op, int size, int *info);
// NEW starts an entry point: c, its call, from the entry point's op, size
// and info.
#define NEW(op)                                \
	struct call *c = new_call(op, size, info); \
	if (c == NULL)                             \
		return CUSOLVER_STATUS_ALLOC_FAILED;
// submit checks what the entry point's own checks left (the handle, the
// memory) and queues c, which it takes. illegal is the 1-based position
// of an illegal argument, 0 for none.
cusolverStatus_t submit(const char *fn, cusolverDnHandle_t h, struct call *c, int illegal);
// size_out is a _bufferSize call's end: v into *lwork where the handle
// is live and the arguments ok.
cusolverStatus_t size_out(cusolverDnHandle_t h, int ok, int v, int *lwork);
// run_gesvdj is a gesvdj call's work (gesvdj.c), its info returned.
int run_gesvdj(struct call *c, const double *a, double *s);

// ---- the algorithms (lapack.c), column-major doubles ----

int lu(int m, int n, double *a, int lda, int *ipiv);
void lu_solve(int trans, int n, int nrhs, const double *a, int lda, const int *ipiv, double *b, int ldb);
int chol(int upper, int n, double *a, int lda);
void chol_solve(int upper, int n, int nrhs, const double *a, int lda, double *b, int ldb);
void qr(int m, int n, double *a, int lda, double *tau);
void apply_q(int left, int trans, int m, int n, int k, const double *a, int lda, const double *tau, double *c, int ldc);
// sym_eig diagonalizes the symmetric n×n a (both triangles set): w
// ascending, the eigenvectors in a's columns when vectors. It returns
// the number of off-diagonal elements left above the tolerance.
int sym_eig(int n, double *a, int lda, double *w, int vectors);
// svd decomposes the m×n a, m ≥ n: s descending, U's first ucols
// columns (n or m; 0 for none) into u, Vᵀ into vt (NULL for none). It
// returns the number of column pairs left unconverged.
int svd(int m, int n, const double *a, int lda, double *s, double *u, int ldu, int ucols, double *vt, int ldvt);

#endif
