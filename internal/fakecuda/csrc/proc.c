// cuGetProcAddress: entry points by API name and CUDA version, as the real
// driver hands them out, so the loader's preferred path is the one tested.
#include "fake.h"

#include <string.h>

// The implementations, declared only to take their addresses.
#define P(sym) extern void sym(void);
P(cuInit) P(cuDriverGetVersion) P(cuDeviceGet) P(cuDeviceGetCount) P(cuDeviceGetName)
P(cuDeviceGetAttribute) P(cuDeviceTotalMem_v2) P(cuDeviceGetUuid) P(cuDeviceGetUuid_v2)
P(cuDeviceCanAccessPeer) P(cuDevicePrimaryCtxRetain) P(cuDevicePrimaryCtxRelease_v2)
P(cuDevicePrimaryCtxGetState) P(cuDevicePrimaryCtxSetFlags_v2) P(cuDevicePrimaryCtxReset_v2)
P(cuCtxCreate_v2) P(cuCtxCreate_v4) P(cuCtxDestroy_v2) P(cuCtxPushCurrent_v2) P(cuCtxPopCurrent_v2)
P(cuCtxSetCurrent) P(cuCtxGetCurrent) P(cuCtxGetDevice) P(cuCtxGetDevice_v2) P(cuCtxSynchronize)
P(cuCtxSynchronize_v2) P(cuCtxGetStreamPriorityRange) P(cuCtxGetFlags) P(cuCtxGetApiVersion)
P(cuCtxGetId) P(cuStreamCreate) P(cuStreamCreateWithPriority) P(cuStreamDestroy_v2)
P(cuStreamSynchronize) P(cuStreamQuery) P(cuStreamWaitEvent) P(cuStreamGetPriority)
P(cuStreamGetFlags) P(cuStreamGetCtx) P(cuStreamGetCtx_v2) P(cuStreamGetId) P(cuStreamGetDevice)
P(cuLaunchHostFunc) P(cuEventCreate) P(cuEventDestroy_v2) P(cuEventRecord) P(cuEventQuery)
P(cuEventSynchronize) P(cuEventElapsedTime) P(cuEventElapsedTime_v2) P(cuMemAlloc_v2)
P(cuMemFree_v2) P(cuMemAllocHost_v2) P(cuMemHostAlloc) P(cuMemFreeHost) P(cuMemGetInfo_v2)
P(cuMemAllocAsync) P(cuMemFreeAsync) P(cuMemcpy) P(cuMemcpyAsync) P(cuMemcpyHtoD_v2)
P(cuMemcpyDtoH_v2) P(cuMemcpyDtoD_v2) P(cuMemcpyHtoDAsync_v2) P(cuMemcpyDtoHAsync_v2)
P(cuMemcpyDtoDAsync_v2) P(cuMemcpyPeer) P(cuMemcpyPeerAsync) P(cuMemsetD8_v2) P(cuMemsetD16_v2) P(cuMemsetD32_v2) P(cuMemsetD8Async)
P(cuMemsetD16Async) P(cuMemsetD32Async) P(cuMemHostRegister_v2) P(cuMemHostUnregister)
P(cuCtxEnablePeerAccess) P(cuCtxDisablePeerAccess) P(cuStreamBeginCapture_v2) P(cuStreamEndCapture)
P(cuStreamIsCapturing) P(cuGraphGetNodes) P(cuGraphGetEdges) P(cuGraphGetEdges_v2) P(cuGraphDestroy)
P(cuGraphInstantiateWithFlags) P(graph_instantiate_12) P(cuGraphLaunch) P(cuGraphExecDestroy)
P(cuGraphExecUpdate) P(cuGraphExecUpdate_v2) P(cuMemAllocManaged) P(cuMemPrefetchAsync)
P(cuMemPrefetchAsync_v2) P(cuMemAdvise) P(cuMemAdvise_v2) P(cuMemRangeGetAttribute)
P(cuFuncGetAttribute) P(cuFuncSetAttribute) P(cuOccupancyMaxActiveBlocksPerMultiprocessor)
P(cuLaunchKernelEx) P(cuLaunchKernel) P(cuLaunchCooperativeKernel) P(cuModuleLoad) P(cuModuleLoadData)
P(cuModuleLoadDataEx) P(cuModuleUnload) P(cuModuleGetFunction) P(cuLibraryLoadData) P(cuLibraryLoadFromFile)
P(cuLibraryUnload) P(cuLibraryGetKernel) P(cuKernelGetFunction) P(cuFuncGetParamInfo) P(cuFuncGetName)
P(cuOccupancyMaxPotentialBlockSize) P(cuDeviceGetDefaultMemPool) P(cuDeviceGetMemPool) P(cuDeviceSetMemPool)
P(cuMemPoolCreate) P(cuMemPoolDestroy) P(cuMemPoolGetAttribute) P(cuMemPoolSetAttribute) P(cuMemPoolTrimTo)
P(cuMemAllocFromPoolAsync) P(cuMemsetD2D32_v2) P(cuMemsetD2D32Async)
P(cuMemGetAllocationGranularity) P(cuMemAddressReserve) P(cuMemAddressFree) P(cuMemCreate) P(cuMemRelease)
P(cuMemMap) P(cuMemUnmap) P(cuMemSetAccess) P(cuMemExportToShareableHandle) P(cuMemImportFromShareableHandle)
P(cuGraphCreate) P(cuGraphAddEmptyNode) P(cuGraphAddKernelNode) P(cuGraphAddMemcpyNode) P(cuGraphAddMemsetNode)
P(cuGraphAddHostNode) P(cuGraphAddEventRecordNode) P(cuGraphAddEventWaitNode) P(cuGraphExecKernelNodeSetParams)
P(cuGraphExecMemcpyNodeSetParams)
#undef P

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, uint64_t flags);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *symbolStatus);

// One row per ABI of an API name: the CUDA version that introduced it and
// its implementation. A lookup gets the newest ABI not newer than the
// caller's version, as with the real driver (cuCtxCreate is _v2 from 3.2,
// _v4 from 13.0). Older ABIs the fake lacks (cuMemAlloc's 32-bit one) are
// simply not listed: asking for them finds a version too old.
static const struct proc {
	const char *api;
	int since;
	void (*fn)(void);
} procs[] = {
	{"cuInit", 2000, cuInit},
	{"cuDriverGetVersion", 2020, cuDriverGetVersion},
	{"cuDeviceGet", 2000, cuDeviceGet},
	{"cuDeviceGetCount", 2000, cuDeviceGetCount},
	{"cuDeviceGetName", 2000, cuDeviceGetName},
	{"cuDeviceGetAttribute", 2000, cuDeviceGetAttribute},
	{"cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2},
	{"cuDeviceGetUuid", 9020, cuDeviceGetUuid},
	{"cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2},
	{"cuDeviceGetUuid_v2", 11040, cuDeviceGetUuid_v2},
	{"cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer},
	{"cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain},
	{"cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2},
	{"cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState},
	{"cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2},
	{"cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2},
	{"cuCtxCreate", 3020, cuCtxCreate_v2},
	{"cuCtxCreate", 13000, cuCtxCreate_v4},
	{"cuCtxDestroy", 4000, cuCtxDestroy_v2},
	{"cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2},
	{"cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2},
	{"cuCtxSetCurrent", 4000, cuCtxSetCurrent},
	{"cuCtxGetCurrent", 4000, cuCtxGetCurrent},
	{"cuCtxGetDevice", 2000, cuCtxGetDevice},
	{"cuCtxGetDevice_v2", 13000, cuCtxGetDevice_v2},
	{"cuCtxSynchronize", 2000, cuCtxSynchronize},
	{"cuCtxSynchronize_v2", 13000, cuCtxSynchronize_v2},
	{"cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange},
	{"cuCtxGetFlags", 7000, cuCtxGetFlags},
	{"cuCtxGetApiVersion", 3020, cuCtxGetApiVersion},
	{"cuCtxGetId", 12000, cuCtxGetId},
	{"cuStreamCreate", 2000, cuStreamCreate},
	{"cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority},
	{"cuStreamDestroy", 4000, cuStreamDestroy_v2},
	{"cuStreamSynchronize", 2000, cuStreamSynchronize},
	{"cuStreamQuery", 2000, cuStreamQuery},
	{"cuStreamWaitEvent", 3020, cuStreamWaitEvent},
	{"cuStreamGetPriority", 5050, cuStreamGetPriority},
	{"cuStreamGetFlags", 5050, cuStreamGetFlags},
	{"cuStreamGetCtx", 9020, cuStreamGetCtx},
	{"cuStreamGetCtx_v2", 12050, cuStreamGetCtx_v2},
	{"cuStreamGetId", 12000, cuStreamGetId},
	{"cuStreamGetDevice", 12080, cuStreamGetDevice},
	{"cuLaunchHostFunc", 10000, cuLaunchHostFunc},
	{"cuEventCreate", 2000, cuEventCreate},
	{"cuEventDestroy", 4000, cuEventDestroy_v2},
	{"cuEventRecord", 2000, cuEventRecord},
	{"cuEventQuery", 2000, cuEventQuery},
	{"cuEventSynchronize", 2000, cuEventSynchronize},
	{"cuEventElapsedTime", 2000, cuEventElapsedTime},
	{"cuEventElapsedTime", 12080, cuEventElapsedTime_v2},
	{"cuMemAlloc", 3020, cuMemAlloc_v2},
	{"cuMemFree", 3020, cuMemFree_v2},
	{"cuMemAllocHost", 3020, cuMemAllocHost_v2},
	{"cuMemHostAlloc", 2020, cuMemHostAlloc},
	{"cuMemFreeHost", 2000, cuMemFreeHost},
	{"cuMemGetInfo", 3020, cuMemGetInfo_v2},
	{"cuMemAllocAsync", 11020, cuMemAllocAsync},
	{"cuMemFreeAsync", 11020, cuMemFreeAsync},
	{"cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync},
	{"cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool},
	{"cuDeviceGetMemPool", 11020, cuDeviceGetMemPool},
	{"cuDeviceSetMemPool", 11020, cuDeviceSetMemPool},
	{"cuMemPoolCreate", 11020, cuMemPoolCreate},
	{"cuMemPoolDestroy", 11020, cuMemPoolDestroy},
	{"cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute},
	{"cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute},
	{"cuMemPoolTrimTo", 11020, cuMemPoolTrimTo},
	{"cuMemcpy", 4000, cuMemcpy},
	{"cuMemcpyAsync", 4000, cuMemcpyAsync},
	{"cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2},
	{"cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2},
	{"cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2},
	{"cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2},
	{"cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2},
	{"cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2},
	{"cuMemcpyPeer", 4000, cuMemcpyPeer},
	{"cuMemcpyPeerAsync", 4000, cuMemcpyPeerAsync},
	{"cuMemsetD8", 3020, cuMemsetD8_v2},
	{"cuMemsetD16", 3020, cuMemsetD16_v2},
	{"cuMemsetD32", 3020, cuMemsetD32_v2},
	{"cuMemsetD8Async", 3020, cuMemsetD8Async},
	{"cuMemsetD16Async", 3020, cuMemsetD16Async},
	{"cuMemsetD32Async", 3020, cuMemsetD32Async},
	{"cuMemsetD2D32", 3020, cuMemsetD2D32_v2},
	{"cuMemsetD2D32Async", 3020, cuMemsetD2D32Async},
	{"cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity},
	{"cuMemAddressReserve", 10020, cuMemAddressReserve},
	{"cuMemAddressFree", 10020, cuMemAddressFree},
	{"cuMemCreate", 10020, cuMemCreate},
	{"cuMemRelease", 10020, cuMemRelease},
	{"cuMemMap", 10020, cuMemMap},
	{"cuMemUnmap", 10020, cuMemUnmap},
	{"cuMemSetAccess", 10020, cuMemSetAccess},
	{"cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle},
	{"cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle},
	{"cuMemHostRegister", 6050, cuMemHostRegister_v2},
	{"cuMemHostUnregister", 4000, cuMemHostUnregister},
	{"cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess},
	{"cuCtxDisablePeerAccess", 4000, cuCtxDisablePeerAccess},
	{"cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2},
	{"cuStreamEndCapture", 10000, cuStreamEndCapture},
	{"cuStreamIsCapturing", 10000, cuStreamIsCapturing},
	{"cuGraphGetNodes", 10000, cuGraphGetNodes},
	{"cuGraphGetEdges", 10000, cuGraphGetEdges},
	{"cuGraphGetEdges", 12030, cuGraphGetEdges_v2},
	{"cuGraphGetEdges_v2", 12030, cuGraphGetEdges_v2},
	{"cuGraphDestroy", 10000, cuGraphDestroy},
	{"cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags},
	{"cuGraphInstantiate", 12000, graph_instantiate_12},
	{"cuGraphLaunch", 10000, cuGraphLaunch},
	{"cuGraphExecDestroy", 10000, cuGraphExecDestroy},
	{"cuGraphExecUpdate", 10020, cuGraphExecUpdate},
	{"cuGraphExecUpdate", 12000, cuGraphExecUpdate_v2},
	// The kernel node calls' _v2 ABIs (12.0) add fields after those of
	// the first, which the fake does not read: one implementation serves both.
	{"cuGraphCreate", 10000, cuGraphCreate},
	{"cuGraphAddEmptyNode", 10000, cuGraphAddEmptyNode},
	{"cuGraphAddKernelNode", 10000, cuGraphAddKernelNode},
	{"cuGraphAddKernelNode", 12000, cuGraphAddKernelNode},
	{"cuGraphAddKernelNode_v2", 12000, cuGraphAddKernelNode},
	{"cuGraphAddMemcpyNode", 10000, cuGraphAddMemcpyNode},
	{"cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode},
	{"cuGraphAddHostNode", 10000, cuGraphAddHostNode},
	{"cuGraphAddEventRecordNode", 11010, cuGraphAddEventRecordNode},
	{"cuGraphAddEventWaitNode", 11010, cuGraphAddEventWaitNode},
	{"cuGraphExecKernelNodeSetParams", 10010, cuGraphExecKernelNodeSetParams},
	{"cuGraphExecKernelNodeSetParams", 12000, cuGraphExecKernelNodeSetParams},
	{"cuGraphExecKernelNodeSetParams_v2", 12000, cuGraphExecKernelNodeSetParams},
	{"cuGraphExecMemcpyNodeSetParams", 10020, cuGraphExecMemcpyNodeSetParams},
	{"cuMemAllocManaged", 6000, cuMemAllocManaged},
	// 13.0's header binds the names to the CUmemLocation ABIs, which 12.2
	// introduced as the _v2 symbols.
	{"cuMemPrefetchAsync", 8000, cuMemPrefetchAsync},
	{"cuMemPrefetchAsync", 13000, cuMemPrefetchAsync_v2},
	{"cuMemPrefetchAsync_v2", 12020, cuMemPrefetchAsync_v2},
	{"cuMemAdvise", 8000, cuMemAdvise},
	{"cuMemAdvise", 13000, cuMemAdvise_v2},
	{"cuMemAdvise_v2", 12020, cuMemAdvise_v2},
	{"cuMemRangeGetAttribute", 8000, cuMemRangeGetAttribute},
	{"cuFuncGetAttribute", 2020, cuFuncGetAttribute},
	{"cuFuncSetAttribute", 9000, cuFuncSetAttribute},
	{"cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor},
	{"cuLaunchKernelEx", 11080, cuLaunchKernelEx},
	{"cuLaunchKernel", 4000, cuLaunchKernel},
	{"cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel},
	{"cuModuleLoad", 2000, cuModuleLoad},
	{"cuModuleLoadData", 2000, cuModuleLoadData},
	{"cuModuleLoadDataEx", 2010, cuModuleLoadDataEx},
	{"cuModuleUnload", 2000, cuModuleUnload},
	{"cuModuleGetFunction", 2000, cuModuleGetFunction},
	{"cuLibraryLoadData", 12000, cuLibraryLoadData},
	{"cuLibraryLoadFromFile", 12000, cuLibraryLoadFromFile},
	{"cuLibraryUnload", 12000, cuLibraryUnload},
	{"cuLibraryGetKernel", 12000, cuLibraryGetKernel},
	{"cuKernelGetFunction", 12000, cuKernelGetFunction},
	{"cuFuncGetParamInfo", 12040, cuFuncGetParamInfo},
	{"cuFuncGetName", 12030, cuFuncGetName},
	{"cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize},
	{"cuGetProcAddress", 11030, (void (*)(void))cuGetProcAddress},
	{"cuGetProcAddress", 12000, (void (*)(void))cuGetProcAddress_v2},
};

enum { STATUS_SUCCESS = 0, STATUS_NOT_FOUND = 1, STATUS_VERSION_NOT_SUFFICIENT = 2 };

// lookup ignores the flags (legacy or per-thread default stream): the fake
// has one ABI per name and version. ABIs newer than the driver version it
// reports (FAKECUDA_DRIVER_VERSION) do not exist for it.
static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, int *status) {
	if (symbol == NULL || pfn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	const struct proc *best = NULL;
	int named = 0;
	for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
		const struct proc *p = &procs[i];
		if (strcmp(p->api, symbol) != 0 || p->since > g_driver_version)
			continue;
		named = 1;
		if (p->since <= cudaVersion && (best == NULL || p->since > best->since))
			best = p;
	}
	if (best == NULL) {
		*status = named ? STATUS_VERSION_NOT_SUFFICIENT : STATUS_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = (void *)best->fn;
	*status = STATUS_SUCCESS;
	return CUDA_SUCCESS;
}

// Lookups are not counted: the loader makes one per bound function, and
// a fault there is not an error anyone sees (it falls back to dlsym).
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, uint64_t flags) {
	(void)flags;
	int status;
	return lookup(symbol, pfn, cudaVersion, &status);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *symbolStatus) {
	(void)flags;
	int status;
	CUresult r = lookup(symbol, pfn, cudaVersion, &status);
	if (symbolStatus != NULL)
		*symbolStatus = status;
	return r;
}
