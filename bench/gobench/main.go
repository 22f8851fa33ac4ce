// Command gobench runs bench/c/bench.c's operations from Go, through the raw
// package cu (-impl raw) or through package cuda (-impl cuda), and prints
// lines in the same format. -impl nvrtc compares compiling a kernel with
// NVRTC from C and from Go, needs no GPU and takes no PTX file. -impl gemm
// times cuBLAS and cuBLASLt GEMMs called from C and from Go (gemm.go,
// gemmlt.go, gemmblas.go) and takes no PTX file either; -impl solver
// does the same for cuSOLVER's getrf, potrf and syevd (solver.go), and
// -impl sparse for cuSPARSE's SpMV and SpMM (sparse.go), against the raw
// bindings and packages cuda/solver and cuda/sparse.
//
//	go run ./bench/gobench -impl raw bench/kernels/empty.ptx
//	GOCUDA_LIBNVRTC=/path/to/libnvrtc.so.12 go run ./bench/gobench -impl nvrtc
//	go run -tags cuda13000 ./bench/gobench -impl gemm -gemm-sizes 4096
//	go run -tags cuda13000 ./bench/gobench -impl solver -solver-sizes 1024,4096
//	go run -tags cuda13000 ./bench/gobench -impl sparse -sparse-rows 4096,1048576
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

func must(what string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "gobench: %s: %v\n", what, err)
		os.Exit(1)
	}
}

var errNotDone = errors.New("event not done after synchronize")

var cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the run to this file")

var impl = flag.String("impl", "raw", "raw (package cu), cuda (package cuda), pair (cuda against raw, interleaved), overhead (raw against a C loop in the same process, interleaved), bindcost (what binding a context costs in the driver and in package cuda), alloc (what the one allocation of a new handle adds to a stream's and an event's create+destroy), nvrtc (an NVRTC compile from C, the raw bindings and cuda/nvrtc, interleaved; no PTX file) gocopy (stream-ordered copies of Go slices against a page-locked staging loop and the driver's pageable copy, interleaved; no PTX file) gemm (cuBLAS GEMMs from a C loop and from the raw bindings, interleaved; no PTX file; see the -gemm flags) solver (getrf, potrf and syevd solves from a C loop, the raw bindings and cuda/solver, interleaved; no PTX file; see the -solver flags), sparse (cuSPARSE SpMV and SpMM from a C loop, the raw bindings and cuda/sparse, interleaved; no PTX file; see the -sparse flags) or concur (N pthreads against N goroutines through the raw bindings and package cuda, in rotating turns; see the -concur flags)")

func report(op string, v float64, unit string) {
	fmt.Printf("RESULT impl=go-%s op=%s value=%.3f unit=%s\n", *impl, op, v, unit)
}

var ops = flag.String("ops", "", "-impl raw, cuda and pair: run only the operations whose names match this regular expression")

// selected reports whether -ops picks op.
func selected(op string) bool {
	return opsRe.MatchString(op)
}

var opsRe *regexp.Regexp

func timed(op string, n int, body func(n int)) {
	if !selected(op) {
		return
	}
	t := time.Now()
	body(n)
	report(op, float64(time.Since(t).Nanoseconds())/float64(n), "ns/op")
}

func main() {
	flag.Parse()
	var err error
	if opsRe, err = regexp.Compile(*ops); err != nil {
		fmt.Fprintln(os.Stderr, "gobench: -ops:", err)
		os.Exit(2)
	}
	noPTX := *impl == "nvrtc" || *impl == "gemm" || *impl == "gocopy" || *impl == "solver" || *impl == "sparse"
	if flag.NArg() != 1 && !noPTX {
		fmt.Fprintln(os.Stderr, "usage: gobench [-impl raw|cuda|pair|overhead|bindcost|alloc] empty.ptx | gobench -impl nvrtc | gobench -impl gemm [-gemm-sizes 4096,8192] [-gemm-types f32,tf32,bf16,bf16lt,fp8] [-gemm-samples n] [-gemm-ms ms] | gobench -impl solver [-solver-sizes 256,1024,4096] [-solver-ops getrf,potrf,syevd] [-solver-samples n] [-solver-ms ms] | gobench -impl sparse [-sparse-rows 4096,1048576] [-sparse-nnz-per-row 16] [-sparse-spmm-cols 32]")
		os.Exit(2)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		must("create profile", err)
		must("start profile", pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	switch *impl {
	case "nvrtc":
		runNVRTC()
		return
	case "gocopy":
		runGoCopy()
		return
	case "gemm":
		runGEMM()
		return
	case "solver":
		runSolver()
		return
	case "sparse":
		runSparse()
		return
	}
	ptx, err := os.ReadFile(flag.Arg(0))
	must("read PTX", err)
	switch *impl {
	case "raw":
		runRaw(append(ptx, 0))
	case "cuda":
		runCuda(append(ptx, 0))
	case "pair":
		runPair(append(ptx, 0))
	case "overhead":
		runOverhead(append(ptx, 0))
	case "bindcost":
		runBindCost()
	case "alloc":
		runAllocProbe()
	case "concur":
		runConcur(append(ptx, 0))
	default:
		must("flag -impl", fmt.Errorf("unknown %q", *impl))
	}
}

// kernelArgs holds n zeroed 64-bit arguments and the pointer array the
// driver reads them through, in C memory as cgo's rules require.
func kernelArgs(n int) unsafe.Pointer {
	args := (*[16]uint64)(C.calloc(16, 8))
	params := (*[16]unsafe.Pointer)(C.calloc(16, 8))
	for i := 0; i < n; i++ {
		params[i] = unsafe.Pointer(&args[i])
	}
	return unsafe.Pointer(params)
}

// rawSetup is what the raw benchmarks run on: the primary context current on
// this locked thread, a stream, an event and the two empty kernels.
type rawSetup struct {
	stream  cu.CUstream
	event   cu.CUevent
	k1, k16 cu.CUfunction
}

func newRawSetup(ptx []byte) rawSetup {
	// The raw layer binds no context itself: stay on one thread.
	runtime.LockOSThread()
	var r rawSetup
	var dev cu.CUdevice
	var ctx cu.CUcontext
	var mod cu.CUmodule
	must("cuInit", cu.Init(0))
	must("cuDeviceGet", cu.DeviceGet(&dev, 0))
	must("cuDevicePrimaryCtxRetain", cu.DevicePrimaryCtxRetain(&ctx, dev))
	must("cuCtxSetCurrent", cu.CtxSetCurrent(ctx))
	must("cuStreamCreate", cu.StreamCreate(&r.stream, uint32(cu.CU_STREAM_NON_BLOCKING)))
	must("cuEventCreate", cu.EventCreate(&r.event, uint32(cu.CU_EVENT_DISABLE_TIMING)))
	must("cuModuleLoadData", cu.ModuleLoadData(&mod, C.CBytes(ptx)))
	n1, n16 := C.CString("empty1"), C.CString("empty16")
	must("cuModuleGetFunction", cu.ModuleGetFunction(&r.k1, mod, (*byte)(unsafe.Pointer(n1))))
	must("cuModuleGetFunction", cu.ModuleGetFunction(&r.k16, mod, (*byte)(unsafe.Pointer(n16))))
	return r
}

func runRaw(ptx []byte) {
	r := newRawSetup(ptx)
	s, ev, k1, k16 := r.stream, r.event, r.k1, r.k16
	var cur cu.CUcontext

	timed("ctx_get_current", 1000000, func(n int) {
		for i := 0; i < n; i++ {
			must("cuCtxGetCurrent", cu.CtxGetCurrent(&cur))
		}
	})
	timed("event_record", 200000, func(n int) {
		for i := 0; i < n; i++ {
			must("cuEventRecord", cu.EventRecord(ev, s))
		}
	})
	must("cuStreamSynchronize", cu.StreamSynchronize(s))
	timed("event_query", 200000, func(n int) {
		for i := 0; i < n; i++ {
			must("cuEventQuery", cu.EventQuery(ev))
		}
	})
	params := (*unsafe.Pointer)(kernelArgs(16))
	launch := func(k cu.CUfunction) func(int) {
		return func(n int) {
			for i := 0; i < n; i++ {
				must("cuLaunchKernel", cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, params, nil))
			}
			must("cuStreamSynchronize", cu.StreamSynchronize(s))
		}
	}
	timed("launch_1arg", 100000, launch(k1))
	timed("launch_16arg", 100000, launch(k16))
	timed("launch_sync", 20000, func(n int) {
		for i := 0; i < n; i++ {
			must("cuLaunchKernel", cu.LaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, params, nil))
			must("cuStreamSynchronize", cu.StreamSynchronize(s))
		}
	})
	timed("stream_create_destroy", 20000, func(n int) {
		for i := 0; i < n; i++ {
			var x cu.CUstream
			must("cuStreamCreate", cu.StreamCreate(&x, uint32(cu.CU_STREAM_NON_BLOCKING)))
			must("cuStreamDestroy", cu.StreamDestroy(x))
		}
	})
	timed("alloc_free_1mib", 2000, func(n int) {
		for i := 0; i < n; i++ {
			var p cu.CUdeviceptr
			must("cuMemAlloc", cu.MemAlloc(&p, 1<<20))
			must("cuMemFree", cu.MemFree(p))
		}
	})
	const size = 64 << 20
	var host unsafe.Pointer
	var dptr cu.CUdeviceptr
	must("cuMemAllocHost", cu.MemAllocHost(&host, size))
	must("cuMemAlloc", cu.MemAlloc(&dptr, size))
	clear(unsafe.Slice((*byte)(host), size))
	copies := func(op string, copy func() error) {
		const n = 50
		must(op, copy())
		must("cuStreamSynchronize", cu.StreamSynchronize(s))
		t := time.Now()
		for i := 0; i < n; i++ {
			must(op, copy())
		}
		must("cuStreamSynchronize", cu.StreamSynchronize(s))
		report(op, float64(size*n)/float64(time.Since(t).Nanoseconds()), "GB/s")
	}
	copies("h2d_64mib", func() error { return cu.MemcpyHtoDAsync(dptr, host, size, s) })
	copies("d2h_64mib", func() error { return cu.MemcpyDtoHAsync(host, dptr, size, s) })
}
