// Initialization and devices: FAKECUDA_DEVICES identical devices that look
// like an H100 (compute capability 9.0, 132 SMs, 80 GiB).
#include "fake.h"

#include <string.h>

#define TOTAL_MEM (80ull << 30)

// need_init: every call but cuDriverGetVersion and cuGetProcAddress fails
// before cuInit, as with the real driver.
static CUresult need_init(void) {
	return __atomic_load_n(&g_initialized, __ATOMIC_ACQUIRE) ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

int device_valid(CUdevice d) { return d >= 0 && d < g_devices; }

EXPORT CUresult cuInit(unsigned int flags) {
	ENTER(cuInit);
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (g_devices == 0)
		return CUDA_ERROR_NO_DEVICE;
	__atomic_store_n(&g_initialized, 1, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
	ENTER(cuDriverGetVersion);
	if (version == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*version = g_driver_version;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
	ENTER(cuDeviceGetCount);
	CUresult r = need_init();
	if (r != CUDA_SUCCESS)
		return r;
	if (count == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*count = g_devices;
	return CUDA_SUCCESS;
}

// Checks shared by the device queries: the driver is initialized, the
// output pointer is set and the device exists.
#define DEVICE_CALL(out, dev)                     \
	do {                                          \
		CUresult r_ = need_init();                \
		if (r_ != CUDA_SUCCESS)                   \
			return r_;                            \
		if ((out) == NULL)                        \
			return CUDA_ERROR_INVALID_VALUE;      \
		if (!device_valid(dev))                   \
			return CUDA_ERROR_INVALID_DEVICE;     \
	} while (0)

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
	ENTER(cuDeviceGet);
	DEVICE_CALL(device, ordinal);
	*device = ordinal;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
	ENTER(cuDeviceGetName);
	DEVICE_CALL(name, dev);
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	const char *n = "gocuda fake device (host memory)";
	size_t k = strlen(n);
	if (k > (size_t)len - 1)
		k = (size_t)len - 1;
	memcpy(name, n, k);
	name[k] = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
	ENTER(cuDeviceTotalMem);
	DEVICE_CALL(bytes, dev);
	*bytes = TOTAL_MEM;
	return CUDA_SUCCESS;
}

size_t device_total_mem(void) { return TOTAL_MEM; }

static CUresult uuid(CUuuid *u, CUdevice dev) {
	DEVICE_CALL(u, dev);
	// Stable and distinct per device, shaped like a version-4 UUID.
	static const unsigned char base[16] = {'g', 'o', 'c', 'u', 'd', 'a', 0x4f, 'a', 0x80 | 'k', 'e', 0, 0, 0, 0, 0, 0};
	memcpy(u->bytes, base, 16);
	u->bytes[15] = (char)dev;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *u, CUdevice dev) {
	ENTER(cuDeviceGetUuid);
	return uuid(u, dev);
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice dev) {
	ENTER(cuDeviceGetUuid);
	return uuid(u, dev);
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
	ENTER(cuDeviceCanAccessPeer);
	DEVICE_CALL(can, dev);
	if (!device_valid(peer))
		return CUDA_ERROR_INVALID_DEVICE;
	*can = dev != peer; // as the driver: a device is not its own peer
	return CUDA_SUCCESS;
}

// Attribute values of an H100 SXM where they matter to software (limits,
// capabilities); attributes not listed are 0. Numbers are cuda.h's
// CUdevice_attribute values.
static const struct {
	int attr, value;
} attrs[] = {
	{1, 1024},        // MAX_THREADS_PER_BLOCK
	{2, 1024},        // MAX_BLOCK_DIM_X
	{3, 1024},        // MAX_BLOCK_DIM_Y
	{4, 64},          // MAX_BLOCK_DIM_Z
	{5, 2147483647},  // MAX_GRID_DIM_X
	{6, 65535},       // MAX_GRID_DIM_Y
	{7, 65535},       // MAX_GRID_DIM_Z
	{8, 49152},       // MAX_SHARED_MEMORY_PER_BLOCK
	{9, 65536},       // TOTAL_CONSTANT_MEMORY
	{10, 32},         // WARP_SIZE
	{11, 2147483647}, // MAX_PITCH
	{12, 65536},      // MAX_REGISTERS_PER_BLOCK
	{13, 1980000},    // CLOCK_RATE (kHz)
	{14, 512},        // TEXTURE_ALIGNMENT
	{15, 1},          // GPU_OVERLAP
	{16, 132},        // MULTIPROCESSOR_COUNT
	{19, 1},          // CAN_MAP_HOST_MEMORY
	{30, 512},        // SURFACE_ALIGNMENT
	{31, 1},          // CONCURRENT_KERNELS
	{32, 1},          // ECC_ENABLED
	{36, 2619000},    // MEMORY_CLOCK_RATE (kHz)
	{37, 5120},       // GLOBAL_MEMORY_BUS_WIDTH
	{38, 52428800},   // L2_CACHE_SIZE
	{39, 2048},       // MAX_THREADS_PER_MULTIPROCESSOR
	{40, 3},          // ASYNC_ENGINE_COUNT
	{41, 1},          // UNIFIED_ADDRESSING
	{75, 9},          // COMPUTE_CAPABILITY_MAJOR
	{76, 0},          // COMPUTE_CAPABILITY_MINOR
	{78, 1},          // STREAM_PRIORITIES_SUPPORTED
	{79, 1},          // GLOBAL_L1_CACHE_SUPPORTED
	{80, 1},          // LOCAL_L1_CACHE_SUPPORTED
	{81, 233472},     // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
	{82, 65536},      // MAX_REGISTERS_PER_MULTIPROCESSOR
	{83, 1},          // MANAGED_MEMORY
	{87, 2},          // SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
	{89, 1},          // CONCURRENT_MANAGED_ACCESS
	{90, 1},          // COMPUTE_PREEMPTION_SUPPORTED
	{91, 1},          // CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
	{95, 1},          // COOPERATIVE_LAUNCH
	{97, 232448},     // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	{99, 1},          // HOST_REGISTER_SUPPORTED
	{102, 1},         // VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
	{106, 32},        // MAX_BLOCKS_PER_MULTIPROCESSOR
	{108, 52428800 / 4 * 3}, // MAX_PERSISTING_L2_CACHE_SIZE
	{109, 134213632}, // MAX_ACCESS_POLICY_WINDOW_SIZE
	{111, 1024},      // RESERVED_SHARED_MEMORY_PER_BLOCK
	{115, 1},         // MEMORY_POOLS_SUPPORTED
	{120, 1},         // CLUSTER_LAUNCH
	{126, 4},         // MEM_SYNC_DOMAIN_COUNT
};

// One past the last attribute of CUDA 13.0 (CU_DEVICE_ATTRIBUTE_MAX).
#define ATTRIBUTE_MAX 148

EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev) {
	ENTER(cuDeviceGetAttribute);
	DEVICE_CALL(value, dev);
	if (attrib < 1 || attrib >= ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*value = 0;
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
		if (attrs[i].attr == attrib)
			*value = attrs[i].value;
	if (attrib == 33 || attrib == 50) // PCI_BUS_ID, PCI_DOMAIN_ID
		*value = attrib == 33 ? 0x18 + dev : 0;
	return CUDA_SUCCESS;
}

// For context.c and memory.c, which need the same check.
CUresult driver_ready(void) { return need_init(); }
