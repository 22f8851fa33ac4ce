// Handles: creation, destruction, the stream, and the version.
#include "fakecusparse.h"

#include <stdlib.h>

EXPORT cusparseStatus_t cusparseCreate(struct handle **out) {
	if (out == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseCreate: NULL pointer");
	struct handle *h = calloc(1, sizeof *h);
	if (h == NULL)
		return fail(CUSPARSE_STATUS_ALLOC_FAILED, "cusparseCreate: out of host memory");
	reg_add(K_HANDLE, h);
	*out = h;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseDestroy(struct handle *h) {
	if (!reg_del(K_HANDLE, h))
		return fail(CUSPARSE_STATUS_NOT_INITIALIZED, "cusparseDestroy: %p is not a live handle", (void *)h);
	free(h);
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t handle_stream(const char *fn, struct handle *h, cudaStream_t *s) {
	if (!reg_has(K_HANDLE, h))
		return fail(CUSPARSE_STATUS_NOT_INITIALIZED, "%s: %p is not a live handle", fn, (void *)h);
	*s = h->stream;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseSetStream(struct handle *h, cudaStream_t s) {
	if (!reg_has(K_HANDLE, h))
		return fail(CUSPARSE_STATUS_NOT_INITIALIZED, "cusparseSetStream: %p is not a live handle", (void *)h);
	h->stream = s;
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseGetStream(struct handle *h, cudaStream_t *s) {
	if (!reg_has(K_HANDLE, h))
		return fail(CUSPARSE_STATUS_NOT_INITIALIZED, "cusparseGetStream: %p is not a live handle", (void *)h);
	if (s == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseGetStream: NULL pointer");
	*s = h->stream;
	return CUSPARSE_STATUS_SUCCESS;
}

// fake_version is FAKECUSPARSE_VERSION, as CUSPARSE_VERSION spells it
// (1000·major + 100·minor + patch); 12603 when unset.
static int fake_version(void) {
	const char *v = getenv("FAKECUSPARSE_VERSION");
	if (v == NULL || *v == 0)
		return 12603;
	return atoi(v);
}

EXPORT cusparseStatus_t cusparseGetVersion(struct handle *h, int *version) {
	if (!reg_has(K_HANDLE, h))
		return fail(CUSPARSE_STATUS_NOT_INITIALIZED, "cusparseGetVersion: %p is not a live handle", (void *)h);
	if (version == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseGetVersion: NULL pointer");
	*version = fake_version();
	return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseGetProperty(int type, int *value) {
	int v = fake_version();
	if (value == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseGetProperty: NULL pointer");
	switch (type) {
	case MAJOR_VERSION:
		*value = v / 1000;
		return CUSPARSE_STATUS_SUCCESS;
	case MINOR_VERSION:
		*value = v / 100 % 10;
		return CUSPARSE_STATUS_SUCCESS;
	case PATCH_LEVEL:
		*value = v % 100;
		return CUSPARSE_STATUS_SUCCESS;
	}
	return fail(CUSPARSE_STATUS_INVALID_VALUE, "cusparseGetProperty: unknown property %d", type);
}
