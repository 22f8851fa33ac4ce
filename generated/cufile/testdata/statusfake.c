/* A stand-in libcufile whose functions return known CUfileError_t values,
 * for the test that the bindings carry cuFile's struct status intact. Only
 * the layout of the struct comes from cufile.h: two ints. */
#include <stdint.h>

typedef struct { int err; int cu_err; } status;

static int opened;

status cuFileDriverOpen(void) { opened = 1; status s = {0, 0}; return s; }

/* Not opened: CU_FILE_DRIVER_NOT_INITIALIZED. */
status cuFileDriverClose(void) {
	status s = {opened ? 0 : 5001, 0};
	opened = 0;
	return s;
}

/* CU_FILE_CUDA_DRIVER_ERROR carrying CUDA_ERROR_INVALID_CONTEXT (201). */
status cuFileBufDeregister(const void *p) { (void)p; status s = {5011, 201}; return s; }
