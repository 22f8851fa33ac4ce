// cuBLAS handles and their settings, the version and the status strings.
#include "fakecublas.h"

#include <stdlib.h>

cublasStatus_t handle_get(cublasHandle_t h, const char *fn) {
	if (!reg_has(K_HANDLE, h))
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "%s: %p is not a live cuBLAS handle", fn, (void *)h);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *out) {
	if (out == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate_v2: NULL handle pointer");
	if (cuda()->err != NULL)
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate_v2: %s", cuda()->err);
	struct handle *h = calloc(1, sizeof *h);
	if (h == NULL)
		return set_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate_v2: out of host memory");
	reg_add(K_HANDLE, h);
	*out = h;
	return CUBLAS_STATUS_SUCCESS;
}

// cublasDestroy_v2 waits for the handle's stream, as cuBLAS waits for the
// device's work before it frees what that work may use.
EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
	if (!reg_del(K_HANDLE, h))
		return set_error(CUBLAS_STATUS_NOT_INITIALIZED, "cublasDestroy_v2: %p is not a live cuBLAS handle", (void *)h);
	(void)cuda()->stream_synchronize(h->stream);
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
	cublasStatus_t r = handle_get(h, "cublasSetStream_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	h->stream = s;
	// Back to cuBLAS's own workspace pool, as cublasSetStream does.
	h->workspace = NULL;
	h->workspace_size = 0;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s) {
	cublasStatus_t r = handle_get(h, "cublasGetStream_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (s == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasGetStream_v2: NULL stream pointer");
	*s = h->stream;
	return CUBLAS_STATUS_SUCCESS;
}

// cublasSetWorkspace_v2 keeps the workspace for the record only: the
// fake's products need none. cuBLAS wants it 256-byte aligned.
EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *p, size_t size) {
	cublasStatus_t r = handle_get(h, "cublasSetWorkspace_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (size > 0 && (p == NULL || (uintptr_t)p % 256 != 0))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasSetWorkspace_v2: workspace %p of %zu bytes is not 256-byte aligned", p, size);
	if (size > 0 && (r = check_range("cublasSetWorkspace_v2", "the workspace", p, size)) != CUBLAS_STATUS_SUCCESS)
		return r;
	h->workspace = p;
	h->workspace_size = size;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, int mode) {
	cublasStatus_t r = handle_get(h, "cublasSetMathMode");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	int base = mode & ~MATH_DISALLOW_REDUCED;
	if (base != MATH_DEFAULT && base != MATH_TENSOR_OP && base != MATH_PEDANTIC && base != MATH_TF32)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasSetMathMode: unknown mode %d", mode);
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t h, int *mode) {
	cublasStatus_t r = handle_get(h, "cublasGetMathMode");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (mode == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasGetMathMode: NULL mode pointer");
	*mode = h->math;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, int mode) {
	cublasStatus_t r = handle_get(h, "cublasSetPointerMode_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (mode != POINTER_HOST && mode != POINTER_DEVICE)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasSetPointerMode_v2: unknown mode %d", mode);
	h->pointer_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, int *mode) {
	cublasStatus_t r = handle_get(h, "cublasGetPointerMode_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (mode == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasGetPointerMode_v2: NULL mode pointer");
	*mode = h->pointer_mode;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *v) {
	cublasStatus_t r = handle_get(h, "cublasGetVersion_v2");
	if (r != CUBLAS_STATUS_SUCCESS)
		return r;
	if (v == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "cublasGetVersion_v2: NULL pointer");
	*v = fake_version();
	return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t property(const char *fn, int type, int *value) {
	int v = fake_version();
	if (value == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL pointer", fn);
	switch (type) {
	case MAJOR_VERSION:
		*value = v / 10000;
		return CUBLAS_STATUS_SUCCESS;
	case MINOR_VERSION:
		*value = v / 100 % 100;
		return CUBLAS_STATUS_SUCCESS;
	case PATCH_LEVEL:
		*value = v % 100;
		return CUBLAS_STATUS_SUCCESS;
	}
	return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: unknown property %d", fn, type);
}

EXPORT cublasStatus_t cublasGetProperty(int type, int *value) { return property("cublasGetProperty", type, value); }
EXPORT cublasStatus_t cublasLtGetProperty(int type, int *value) { return property("cublasLtGetProperty", type, value); }
EXPORT size_t cublasLtGetVersion(void) { return (size_t)fake_version(); }

static const char *status_name(cublasStatus_t r) {
	switch (r) {
	case CUBLAS_STATUS_SUCCESS:
		return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED:
		return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED:
		return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE:
		return "CUBLAS_STATUS_INVALID_VALUE";
	case CUBLAS_STATUS_ARCH_MISMATCH:
		return "CUBLAS_STATUS_ARCH_MISMATCH";
	case CUBLAS_STATUS_MAPPING_ERROR:
		return "CUBLAS_STATUS_MAPPING_ERROR";
	case CUBLAS_STATUS_EXECUTION_FAILED:
		return "CUBLAS_STATUS_EXECUTION_FAILED";
	case CUBLAS_STATUS_INTERNAL_ERROR:
		return "CUBLAS_STATUS_INTERNAL_ERROR";
	case CUBLAS_STATUS_NOT_SUPPORTED:
		return "CUBLAS_STATUS_NOT_SUPPORTED";
	case CUBLAS_STATUS_LICENSE_ERROR:
		return "CUBLAS_STATUS_LICENSE_ERROR";
	}
	return "CUBLAS_STATUS_UNKNOWN";
}

static const char *status_string(cublasStatus_t r) {
	switch (r) {
	case CUBLAS_STATUS_SUCCESS:
		return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED:
		return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED:
		return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE:
		return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_ARCH_MISMATCH:
		return "an absent device architectural feature is required";
	case CUBLAS_STATUS_MAPPING_ERROR:
		return "an access to GPU memory space failed";
	case CUBLAS_STATUS_EXECUTION_FAILED:
		return "the GPU program failed to execute";
	case CUBLAS_STATUS_INTERNAL_ERROR:
		return "an internal operation failed";
	case CUBLAS_STATUS_NOT_SUPPORTED:
		return "the functionality requested is not supported";
	case CUBLAS_STATUS_LICENSE_ERROR:
		return "an error was detected when checking the current licensing";
	}
	return "unknown error";
}

EXPORT const char *cublasGetStatusName(cublasStatus_t r) { return status_name(r); }
EXPORT const char *cublasGetStatusString(cublasStatus_t r) { return status_string(r); }
EXPORT const char *cublasLtGetStatusName(cublasStatus_t r) { return status_name(r); }
EXPORT const char *cublasLtGetStatusString(cublasStatus_t r) { return status_string(r); }
