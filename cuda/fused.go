package cuda

// The fused table: the C calls of this package that do more in one cgo
// crossing than call a driver entry point. The generator (go run ./gen -all,
// make generate) reads the lines below and writes zfused.h, the prototypes
// and wrappers these calls use, from cuda.h of the manifest's default
// version; it fails when a version of the matrix whose header is cached
// gives an entry another ABI, so that one header serves the bindings of
// every version. Each line is
//
//	//fused KIND NAME [OPTION...]
//
// where NAME is a function's API name, as C code calls it (cuMemAlloc, the
// header's macros selecting cuMemAlloc_v2), or a struct's type name, and
// KIND one of:
//
//	bound   gocuda_bound_NAME(fn, ctx, params...) pushes ctx unless it is
//	        current, calls fn, pops what it pushed, and returns the three
//	        results in a gocuda_res. Options: out=PARAM, the parameter the
//	        call stores its result through, which the wrapper takes in a
//	        local and returns in gocuda_res.out instead of taking it as a
//	        parameter; sync, to synchronize the legacy default stream after
//	        a successful call (the driver returns from some synchronous
//	        copies and memsets before the device is done).
//	hot     gocuda_hot_NAME(fn, ops1, ops2, params...) calls fn inside the
//	        thread's hot-call mark unless the handle whose ops word is at
//	        ops1 or ops2 is closed (fused.h's GOCUDA_HOT_CALL).
//	type    only gocuda_NAME_fn, the entry point's pointer type, for the
//	        calls written by hand (fused.h's context binding).
//	struct  gocuda_NAME, a copy of the struct with its members as the C
//	        calls pass them, held to the header's layout by _Static_assert.
//
// Every bound, hot and type entry also gets gocuda_NAME_fn. Parameters
// cross as the generated bindings pass them: handles and function pointers
// as uintptr_t, other pointers as void*, CUresult as int.

//go:generate go run ../gen -all

//fused bound cuEventCreate out=phEvent
//fused bound cuStreamCreate out=phStream
//fused bound cuStreamCreateWithPriority out=phStream
//fused bound cuMemAlloc out=dptr
//fused bound cuEventDestroy
//fused bound cuStreamDestroy
//fused bound cuMemFree
//fused bound cuMemHostRegister
//fused bound cuMemHostUnregister
//fused bound cuMemcpyHtoD sync
//fused bound cuMemcpyDtoH
//fused bound cuMemcpyDtoD sync
//fused bound cuMemsetD8 sync
//fused bound cuMemsetD16 sync
//fused bound cuMemsetD32 sync

//fused hot cuEventRecord
//fused hot cuEventQuery
//fused hot cuStreamQuery
//fused hot cuStreamWaitEvent
//fused hot cuGraphLaunch
//fused hot cuLaunchKernel
//fused hot cuLaunchKernelEx

//fused type cuCtxGetCurrent
//fused type cuCtxPushCurrent
//fused type cuCtxPopCurrent
//fused type cuStreamSynchronize
//fused type cuLaunchHostFunc
//fused type cuMemImportFromShareableHandle
//fused type cuMemPoolImportFromShareableHandle

//fused struct CUlaunchConfig
