package main

import (
	"fmt"
	"strings"
)

// The cgo call policy: which bindings' C trampolines get `#cgo noescape`
// and `#cgo nocallback`. It is a reviewed table, read like the //sys and
// //sysnb lines of golang.org/x/sys/unix: a function that is not in it gets
// neither directive, the safe choice.
//
// What the directives do (cmd/cgo, out.go): noescape lets the Go values
// whose addresses are passed stay on the goroutine's stack instead of the
// heap, and cgo honours it only together with nocallback, because a
// callback into Go could move that stack under the pointer. nocallback by
// itself only adds a check (two runtime calls around each call) that makes
// a callback panic. So the one optimised entry is noescape|nocallback, and
// it only pays for a function with a pointer argument: out-parameters such
// as `var ev cu.CUevent; cu.EventCreate(&ev, 0)` then allocate nothing.
//
// An entry may have noescape|nocallback only when, for every argument,
//   - the driver does not use the pointed-to memory after the call returns
//     (not the host memory of an asynchronous copy, nor a registered or
//     loaded image it may keep, nor a userData it hands to a callback), and
//   - the call does not run user code on the calling thread: it takes no
//     function pointer. The driver runs stream host functions
//     (cuLaunchHostFunc, cuStreamAddCallback) on threads of its own, but
//     does not document which, so calls that wait for them (synchronize,
//     destroy) are not marked either.
//
// The libraries' bindings (NVRTC, cuBLAS, …, NCCL) have no entry: NCCL's
// calls in particular may block for long (ncclCommInitRank waits for its
// peers) and start threads of their own, which the default allows.
//
// Entries are keyed by the versioned symbol the binding calls: a new ABI
// of a function (cuFoo_v3) has new arguments, and is safe until reviewed.
// Entries with no flags record a call that was reviewed and left safe.

type cgoFlags uint8

const (
	noescape cgoFlags = 1 << iota
	nocallback
)

type cgoEntry struct {
	symbol string
	flags  cgoFlags
	why    string
}

const (
	outOnly = "writes its out-parameters during the call; takes no callback"
	noPtr   = "handles and integers only: the directives would keep nothing off the heap, and nocallback costs two runtime calls a call"
)

var cgoTable = []cgoEntry{
	// Initialisation and errors.
	{"cuInit", 0, noPtr},
	{"cuDriverGetVersion", noescape | nocallback, outOnly},
	{"cuGetErrorName", noescape | nocallback, "stores a pointer to a static string of the driver in *pStr"},
	{"cuGetErrorString", noescape | nocallback, "stores a pointer to a static string of the driver in *pStr"},

	// Devices.
	{"cuDeviceGet", noescape | nocallback, outOnly},
	{"cuDeviceGetCount", noescape | nocallback, outOnly},
	{"cuDeviceGetAttribute", noescape | nocallback, outOnly},
	{"cuDeviceGetName", noescape | nocallback, "fills the caller's buffer of len bytes during the call"},
	{"cuDeviceTotalMem_v2", noescape | nocallback, outOnly},
	{"cuDeviceGetUuid", noescape | nocallback, outOnly},
	{"cuDeviceGetUuid_v2", noescape | nocallback, outOnly},
	{"cuDeviceGetPCIBusId", noescape | nocallback, "fills the caller's buffer of len bytes during the call"},
	{"cuDeviceGetByPCIBusId", noescape | nocallback, "reads the bus id string during the call; writes *dev"},
	{"cuDeviceCanAccessPeer", noescape | nocallback, outOnly},
	{"cuDeviceGetP2PAttribute", noescape | nocallback, outOnly},
	{"cuDevicePrimaryCtxRetain", noescape | nocallback, outOnly},
	{"cuDevicePrimaryCtxGetState", noescape | nocallback, outOnly},
	{"cuDevicePrimaryCtxRelease_v2", 0, noPtr},

	// Contexts.
	{"cuCtxCreate_v2", noescape | nocallback, outOnly},
	{"cuCtxCreate_v3", noescape | nocallback, "reads the affinity parameters during the call; writes *pctx"},
	{"cuCtxCreate_v4", noescape | nocallback, "reads the creation parameters during the call; writes *pctx"},
	{"cuCtxDestroy_v2", 0, "waits for the context's work, whose host functions run on a driver thread it does not name"},
	{"cuCtxGetCurrent", noescape | nocallback, outOnly},
	{"cuCtxSetCurrent", 0, noPtr},
	{"cuCtxPushCurrent_v2", 0, noPtr},
	{"cuCtxPopCurrent_v2", noescape | nocallback, outOnly},
	{"cuCtxGetDevice", noescape | nocallback, outOnly},
	{"cuCtxGetDevice_v2", noescape | nocallback, outOnly},
	{"cuCtxGetApiVersion", noescape | nocallback, outOnly},
	{"cuCtxGetFlags", noescape | nocallback, outOnly},
	{"cuCtxGetLimit", noescape | nocallback, outOnly},
	{"cuCtxGetStreamPriorityRange", noescape | nocallback, outOnly},
	{"cuCtxSynchronize", 0, "waits for host functions, which run on a driver thread it does not name"},

	// Memory.
	{"cuMemAlloc_v2", noescape | nocallback, outOnly},
	{"cuMemAllocPitch_v2", noescape | nocallback, outOnly},
	{"cuMemAllocManaged", noescape | nocallback, outOnly},
	{"cuMemAllocAsync", noescape | nocallback, "returns the address in *dptr before returning; the allocation itself is stream-ordered"},
	{"cuMemAllocHost_v2", noescape | nocallback, "stores the address of driver memory in *pp"},
	{"cuMemHostAlloc", noescape | nocallback, "stores the address of driver memory in *pp"},
	{"cuMemFree_v2", 0, noPtr},
	{"cuMemFreeAsync", 0, noPtr},
	{"cuMemFreeHost", 0, "takes driver memory, not Go memory: nothing to keep off the heap"},
	{"cuMemHostRegister_v2", 0, "the driver uses the registered memory until cuMemHostUnregister"},
	{"cuMemHostGetDevicePointer_v2", noescape | nocallback, "looks up p during the call; writes *pdptr"},
	{"cuMemGetInfo_v2", noescape | nocallback, outOnly},
	{"cuMemGetAddressRange_v2", noescape | nocallback, outOnly},
	{"cuPointerGetAttribute", noescape | nocallback, outOnly},
	{"cuPointerGetAttributes", noescape | nocallback, "reads the attribute list and fills the caller's data array during the call"},

	// Copies and memset. A synchronous copy is done with the host memory
	// when it returns (a pageable source has been staged); an asynchronous
	// one reads or writes it later.
	{"cuMemcpyHtoD_v2", noescape | nocallback, "synchronous: done reading srcHost when it returns"},
	{"cuMemcpyDtoH_v2", noescape | nocallback, "synchronous: done writing dstHost when it returns"},
	{"cuMemcpyHtoA_v2", noescape | nocallback, "synchronous: done reading srcHost when it returns"},
	{"cuMemcpyAtoH_v2", noescape | nocallback, "synchronous: done writing dstHost when it returns"},
	{"cuMemcpy2D_v2", noescape | nocallback, "synchronous: reads the descriptor and is done with its host memory when it returns"},
	{"cuMemcpy2DUnaligned_v2", noescape | nocallback, "synchronous: reads the descriptor and is done with its host memory when it returns"},
	{"cuMemcpy3D_v2", noescape | nocallback, "synchronous: reads the descriptor and is done with its host memory when it returns"},
	{"cuMemcpy", 0, noPtr},
	{"cuMemcpyDtoD_v2", 0, noPtr},
	{"cuMemcpyHtoDAsync_v2", 0, "reads srcHost after it returns"},
	{"cuMemcpyDtoHAsync_v2", 0, "writes dstHost after it returns"},
	{"cuMemcpyDtoDAsync_v2", 0, noPtr},
	{"cuMemsetD8_v2", 0, noPtr},
	{"cuMemsetD16_v2", 0, noPtr},
	{"cuMemsetD32_v2", 0, noPtr},
	{"cuMemsetD8Async", 0, noPtr},
	{"cuMemsetD16Async", 0, noPtr},
	{"cuMemsetD32Async", 0, noPtr},

	// Streams.
	{"cuStreamCreate", noescape | nocallback, outOnly},
	{"cuStreamCreateWithPriority", noescape | nocallback, outOnly},
	{"cuStreamDestroy_v2", 0, "pending host functions of the stream still run, on a driver thread it does not name"},
	{"cuStreamQuery", 0, noPtr},
	{"cuStreamSynchronize", 0, "waits for host functions, which run on a driver thread it does not name"},
	{"cuStreamWaitEvent", 0, noPtr},
	{"cuStreamGetPriority", noescape | nocallback, outOnly},
	{"cuStreamGetFlags", noescape | nocallback, outOnly},
	{"cuStreamGetCtx", noescape | nocallback, outOnly},
	{"cuStreamGetCtx_v2", noescape | nocallback, outOnly},
	{"cuStreamGetId", noescape | nocallback, outOnly},
	{"cuStreamIsCapturing", noescape | nocallback, outOnly},
	{"cuStreamBeginCapture_v2", 0, noPtr},
	{"cuStreamEndCapture", noescape | nocallback, outOnly},
	{"cuStreamAddCallback", 0, "takes a callback and the userData it is given later"},

	// Events.
	{"cuEventCreate", noescape | nocallback, outOnly},
	{"cuEventDestroy_v2", 0, noPtr},
	{"cuEventRecord", 0, noPtr},
	{"cuEventRecordWithFlags", 0, noPtr},
	{"cuEventQuery", 0, noPtr},
	{"cuEventSynchronize", 0, "waits for host functions queued before the event, which run on a driver thread it does not name"},
	{"cuEventElapsedTime", noescape | nocallback, outOnly},
	{"cuEventElapsedTime_v2", noescape | nocallback, outOnly},

	// Modules, libraries, functions.
	{"cuModuleLoadData", 0, "the driver may keep using the image"},
	{"cuModuleLoadDataEx", 0, "the driver may keep using the image"},
	{"cuModuleLoadFatBinary", 0, "the driver may keep using the image"},
	{"cuLibraryLoadData", 0, "CU_LIBRARY_BINARY_IS_PRESERVED lets the driver keep the image"},
	{"cuModuleGetFunction", noescape | nocallback, "looks the name up during the call; writes *hfunc"},
	{"cuModuleGetGlobal_v2", noescape | nocallback, "looks the name up during the call; writes the outs"},
	{"cuLibraryGetKernel", noescape | nocallback, "looks the name up during the call; writes *pKernel"},
	{"cuKernelGetFunction", noescape | nocallback, outOnly},
	{"cuFuncGetAttribute", noescape | nocallback, outOnly},
	{"cuFuncSetAttribute", 0, noPtr},
	{"cuFuncGetName", noescape | nocallback, "stores a pointer to a string of the driver in *name"},
	{"cuFuncGetParamInfo", noescape | nocallback, outOnly},
	{"cuOccupancyMaxActiveBlocksPerMultiprocessor", noescape | nocallback, outOnly},
	{"cuOccupancyMaxPotentialBlockSize", 0, "calls blockSizeToDynamicSMemSize during the call, on the calling thread"},

	// Launches. The driver copies the kernel arguments (kernelParams, or
	// the buffer of extra) and the launch configuration before it returns.
	{"cuLaunchKernel", noescape | nocallback, "copies kernelParams and extra at launch"},
	{"cuLaunchKernelEx", noescape | nocallback, "copies the configuration, its attributes, kernelParams and extra at launch"},
	{"cuLaunchCooperativeKernel", noescape | nocallback, "copies kernelParams at launch"},
	{"cuLaunchHostFunc", 0, "takes a host function and the userData it is given later"},

	// Graphs.
	{"cuGraphCreate", noescape | nocallback, outOnly},
	{"cuGraphGetNodes", noescape | nocallback, "fills the caller's arrays during the call"},
	{"cuGraphGetEdges", noescape | nocallback, "fills the caller's arrays during the call"},
	{"cuGraphGetEdges_v2", noescape | nocallback, "fills the caller's arrays during the call"},
	{"cuGraphInstantiateWithFlags", noescape | nocallback, outOnly},
	{"cuGraphInstantiate_v2", noescape | nocallback, "writes *phGraphExec, *phErrorNode and the log buffer during the call"},
	{"cuGraphExecUpdate", noescape | nocallback, outOnly},
	{"cuGraphExecUpdate_v2", noescape | nocallback, outOnly},
	{"cuGraphLaunch", 0, noPtr},
	{"cuGraphExecDestroy", 0, "may release user objects, whose destructors are user code"},
	{"cuGraphDestroy", 0, "may release user objects, whose destructors are user code"},
}

// cgoPolicies indexes cgoTable by symbol.
var cgoPolicies = func() map[string]cgoFlags {
	m := map[string]cgoFlags{}
	for _, e := range cgoTable {
		m[e.symbol] = e.flags
	}
	return m
}()

// checkCgoTable reports entries that cannot be right whatever the header:
// a symbol listed twice, noescape without nocallback (which cgo ignores),
// an entry without a reason.
func checkCgoTable() error {
	seen := map[string]bool{}
	var errs []string
	for _, e := range cgoTable {
		switch {
		case seen[e.symbol]:
			errs = append(errs, e.symbol+": listed twice")
		case e.flags&noescape != 0 && e.flags&nocallback == 0:
			errs = append(errs, e.symbol+": noescape without nocallback, which cgo ignores")
		case strings.TrimSpace(e.why) == "":
			errs = append(errs, e.symbol+": no reason given")
		}
		seen[e.symbol] = true
	}
	if len(errs) > 0 {
		return fmt.Errorf("cgo policy table: %s", strings.Join(errs, "; "))
	}
	return nil
}

// cgoPolicy returns the directives for the binding of symbol.
func cgoPolicy(symbol string) cgoFlags { return cgoPolicies[symbol] }

// cgoDirectives renders the preamble lines for a trampoline.
func cgoDirectives(tramp string, f cgoFlags) string {
	var b strings.Builder
	if f&noescape != 0 {
		fmt.Fprintf(&b, "#cgo noescape %s\n", tramp)
	}
	if f&nocallback != 0 {
		fmt.Fprintf(&b, "#cgo nocallback %s\n", tramp)
	}
	return b.String()
}
