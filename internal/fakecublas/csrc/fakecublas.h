// The fake cuBLAS's declarations: the ABI of cublas_api.h and cublasLt.h
// as generated/cublas and generated/cublaslt describe it (11.8 to 13.0
// agree on everything here), and the fake's own structures.
#ifndef FAKECUBLAS_H
#define FAKECUBLAS_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

// ---- the ABI ----

typedef int cublasStatus_t;
enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_ALLOC_FAILED = 3,
	CUBLAS_STATUS_INVALID_VALUE = 7,
	CUBLAS_STATUS_ARCH_MISMATCH = 8,
	CUBLAS_STATUS_MAPPING_ERROR = 11,
	CUBLAS_STATUS_EXECUTION_FAILED = 13,
	CUBLAS_STATUS_INTERNAL_ERROR = 14,
	CUBLAS_STATUS_NOT_SUPPORTED = 15,
	CUBLAS_STATUS_LICENSE_ERROR = 16,
};

enum { OP_N = 0, OP_T = 1, OP_C = 2 };
enum { POINTER_HOST = 0, POINTER_DEVICE = 1 };

// cublasMath_t: the low bits are the mode, 16 a flag.
enum { MATH_DEFAULT = 0, MATH_TENSOR_OP = 1, MATH_PEDANTIC = 2, MATH_TF32 = 3, MATH_DISALLOW_REDUCED = 16 };

// cublasComputeType_t.
enum {
	COMPUTE_16F = 64,
	COMPUTE_16F_PEDANTIC = 65,
	COMPUTE_32F = 68,
	COMPUTE_32F_PEDANTIC = 69,
	COMPUTE_64F = 70,
	COMPUTE_64F_PEDANTIC = 71,
	COMPUTE_32I = 72,
	COMPUTE_32I_PEDANTIC = 73,
	COMPUTE_32F_FAST_16F = 74,
	COMPUTE_32F_FAST_16BF = 75,
	COMPUTE_32F_FAST_TF32 = 77,
};

// cudaDataType_t, the real types the fake reads and writes.
enum { R_32F = 0, R_64F = 1, R_16F = 2, R_16BF = 14, R_8F_E4M3 = 28, R_8F_E5M2 = 29 };

typedef void *cudaStream_t; // a CUstream

// libraryPropertyType.
enum { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };

// ---- the fake ----

// A handle of cuBLAS: its settings.
struct handle {
	cudaStream_t stream;
	int math, pointer_mode;
	void *workspace;
	size_t workspace_size;
};
typedef struct handle *cublasHandle_t;

// set_error records the text of a failing call on this thread (the fake's
// own fakecublas_last_error, and standard error when FAKECUBLAS_VERBOSE is
// set) and returns r.
cublasStatus_t set_error(cublasStatus_t r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// not_supported is set_error of CUBLAS_STATUS_NOT_SUPPORTED naming fn.
cublasStatus_t not_supported(const char *fn, const char *what);

// fake_version is the version the fake reports: FAKECUBLAS_VERSION,
// 10000*major + 100*minor + patch, 130000 when unset.
int fake_version(void);

// handle_get checks h is a live cuBLAS handle.
cublasStatus_t handle_get(cublasHandle_t h, const char *fn);

// The objects the fake hands out, by kind, so that a pointer that is none
// of them is refused rather than followed.
enum { K_HANDLE, K_LTHANDLE, K_DESC, K_LAYOUT, K_PREF };
#include "objects.h" // internal/fakelib's registry of live objects
// run_error reports a failure found while a job runs, when no call can
// return it: on standard error.
void run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// ---- numbers (numeric.c) ----

// type_size is the size of an element of t, 0 for a type the fake does
// not model.
size_t type_size(int t);
const char *type_name(int t);
double load(const void *p, int t, int64_t i);
void store(void *p, int t, int64_t i, double v);
float tf32(float x);

// ---- the driver (queue.c) ----

// The fake CUDA driver's entry points the fake uses, resolved once.
struct cuda {
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*stream_synchronize)(cudaStream_t);
	int (*stream_is_capturing)(cudaStream_t, int *);
	// Optional controls of the fake driver: NULL where it lacks them.
	int (*range_valid)(unsigned long long, size_t);
	void (*note_access)(unsigned long long, size_t, int);
	const char *err;
};
const struct cuda *cuda(void);

// A job is work queued in stream order: run is called on the stream's
// thread with the job, which is freed after it unless the stream was
// capturing (a graph may launch it again: it lives as long as the process).
struct job {
	void (*run)(struct job *);
	void (*destroy)(struct job *);
	int keep;
};
// enqueue queues j on s (fn names the entry point, for errors). On an
// error j is destroyed.
cublasStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j);
// check_range refuses a device range that lies in no allocation of the
// fake driver: name is the argument, for the message.
cublasStatus_t check_range(const char *fn, const char *name, const void *p, size_t bytes);
// note reports an access of the running job to the race detector.
void note(const void *p, size_t bytes, int write);
// sync_stream waits for s, for a result written to host memory.
cublasStatus_t sync_stream(const char *fn, cudaStream_t s);

// ---- the product (gemm.c) ----

// A matrix operand: element (i, j) of the matrix as stored lies at
// i + j*ld (column order) or i*ld + j (row order), in matrix b of the
// batch at p + b*stride elements, or at arr[b] when arr is given.
struct operand {
	const void *p;
	void *const *arr;
	int type;
	int row_order;
	int64_t rows, cols, ld, stride;
};

// A GEMM: D = alpha·op(A)·op(B) + beta·C, then the epilogue, for each of
// batch products; D may be C.
struct gemm {
	struct job job;
	int64_t m, n, k, batch;
	int opa, opb;
	struct operand a, b, c, d;
	int tf32;       // round float32 inputs to TF32
	int scale_type; // of alpha and beta
	// alpha and beta: the values (host pointer mode), or where the
	// device holds them.
	double alpha, beta;
	const void *dalpha, *dbeta;
	int epilogue; // CUBLASLT_EPILOGUE_*: 1 none
	const void *bias;
	int bias_type;
	int64_t bias_stride;
	const float *ascale, *bscale; // NULL: 1
};

// gemm_queue checks g (shapes against the operands' and memory) and
// queues it on s; it takes g, destroying it on an error.
cublasStatus_t gemm_queue(const char *fn, cudaStream_t s, struct gemm *g);
// gemm_new returns a zeroed gemm with the defaults.
struct gemm *gemm_new(void);
// scalar reads a host scalar of type t.
double scalar(const void *p, int t);

#endif
