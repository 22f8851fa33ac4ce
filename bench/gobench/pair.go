package main

/*
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>

static int gb_nop(int x) { return x + 1; }
static int gb_cpu(void) { return sched_getcpu(); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// hostSpeed prints what the CPU the process runs on does without the GPU: a
// cgo crossing to a C function that does nothing, and a Go loop of a
// thousand dependent additions. The host has a slow mode in which the
// driver's calls and package cuda's work both take longer; these tell it
// apart from the driver.
func hostSpeed(when string) {
	const n = 200000
	t := time.Now()
	x := C.int(0)
	for i := 0; i < n; i++ {
		x = C.gb_nop(x)
	}
	nop := float64(time.Since(t).Nanoseconds()) / n
	t = time.Now()
	y := uint64(x)
	for i := 0; i < n; i++ {
		for j := 0; j < 1000; j++ {
			y = y*2862933555777941757 + 3037000493
		}
	}
	spin := float64(time.Since(t).Nanoseconds()) / n
	fmt.Printf("HOST when=%s cpu=%d cgo_nop_ns=%.1f go_1000_muladds_ns=%.1f sink=%d\n", when, C.gb_cpu(), nop, spin, y&1)
}

// runPair measures what package cuda adds to the raw calls by alternating
// short chunks of raw and cuda calls on the same objects, so that the
// machine's drift (large on a VM) hits both alike, and reporting the median
// of the paired differences. The raw side runs as a C program would: on one
// locked thread with the context current; the cuda side binds its context
// itself, on the same thread.
func runPair(ptx []byte) {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()
	rs, rev := s.Raw(), ev.Raw()
	runtime.LockOSThread()
	hostSpeed("start")
	defer hostSpeed("end")
	must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw()))

	// bare runs the cuda chunks with no context current on the thread, as
	// in a Go program that only uses package cuda; otherwise they run with
	// the context current, as the raw ones do.
	bare := false
	pair := func(op string, chunks, per int, raw, layer func() error) {
		if !selected(op) {
			return
		}
		var diffs, raws, layers []float64
		chunk := func(f func() error, isLayer bool) float64 {
			if isLayer && bare {
				var c cu.CUcontext
				must("cuCtxPopCurrent", cu.CtxPopCurrent(&c))
				defer func() { must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw())) }()
			}
			t := time.Now()
			for i := 0; i < per; i++ {
				must(op, f())
			}
			d := float64(time.Since(t).Nanoseconds()) / float64(per)
			must("Stream.Synchronize", s.Synchronize())
			return d
		}
		for c := 0; c < chunks; c++ {
			var r, l float64
			if c%2 == 0 {
				r, l = chunk(raw, false), chunk(layer, true)
			} else {
				l, r = chunk(layer, true), chunk(raw, false)
			}
			raws, layers, diffs = append(raws, r), append(layers, l), append(diffs, l-r)
		}
		if bare {
			op += "_bare"
		}
		fmt.Printf("PAIR op=%s raw_median=%.1f cuda_median=%.1f delta_median=%+.1f delta_p25=%+.1f delta_p75=%+.1f ratio=%.3f unit=ns/op chunks=%d calls_per_chunk=%d\n",
			op, median(raws), median(layers), median(diffs), quantile(diffs, 0.25), quantile(diffs, 0.75),
			median(layers)/median(raws), chunks, per)
	}

	// The hot calls.
	pair("event_record", 400, 2000, func() error { return cu.EventRecord(rev, rs) }, func() error { return ev.Record(s) })
	pair("event_query", 400, 2000, func() error { return cu.EventQuery(rev) }, func() error { _, err := ev.Query(); return err })
	pair("stream_wait_event", 400, 2000, func() error { return cu.StreamWaitEvent(rs, rev, 0) }, func() error { return s.WaitEvent(ev) })
	pair("stream_query", 400, 2000, func() error { return cu.StreamQuery(rs) }, func() error { _, err := s.Query(); return err })

	mod, err := cuda.LoadModule(ctx, ptx)
	must("cuda.LoadModule", err)
	defer mod.Close()
	k, err := mod.Function("empty1")
	must("Module.Function", err)
	args, err := k.NewArgs(uint64(0))
	must("Kernel.NewArgs", err)
	defer args.Close()
	params := (*unsafe.Pointer)(kernelArgs(1))
	one := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	rk := k.Raw()
	// The driver's launch varies by ±100 ns from chunk to chunk: enough
	// chunks that the median difference moves by a few ns at most.
	const launchChunks = 400
	pair("launch_args", launchChunks, 500, func() error { return cu.LaunchKernel(rk, 1, 1, 1, 1, 1, 1, 0, rs, params, nil) },
		func() error { return k.LaunchArgs(s, one, args) })
	pair("launch_values_1arg", launchChunks, 500, func() error { return cu.LaunchKernel(rk, 1, 1, 1, 1, 1, 1, 0, rs, params, nil) },
		func() error { return k.Launch(s, one, uint64(0)) })
	k16, err := mod.Function("empty16")
	must("Module.Function", err)
	rk16 := k16.Raw()
	params16 := (*unsafe.Pointer)(kernelArgs(16))
	var z uint64
	pair("launch_values_16arg", launchChunks, 500, func() error { return cu.LaunchKernel(rk16, 1, 1, 1, 1, 1, 1, 0, rs, params16, nil) },
		func() error {
			return k16.Launch(s, one, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
		})
	// LaunchEx against cuLaunchKernelEx, with no attribute and with one
	// cluster dimension (2 blocks, on a grid of 2). The raw side's launch
	// configuration and attribute are in C memory, made once, as a C
	// program would keep them.
	two := cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 1}}
	cluster := cuda.LaunchAttributes{Cluster: cuda.Dim3{X: 2}}
	exNone := launchExConfig(rs, 1, false)
	exCluster := launchExConfig(rs, 2, true)
	defer C.free(unsafe.Pointer(exNone))
	defer C.free(unsafe.Pointer(exCluster))
	pair("launch_ex_noattr_1arg", launchChunks, 500, func() error { return cu.LaunchKernelEx(exNone, rk, params, nil) },
		func() error { return k.LaunchEx(s, one, cuda.LaunchAttributes{}, z) })
	pair("launch_ex_cluster_1arg", launchChunks, 500, func() error { return cu.LaunchKernelEx(exCluster, rk, params, nil) },
		func() error { return k.LaunchEx(s, two, cluster, z) })
	pair("launch_ex_cluster_16arg", launchChunks, 500, func() error { return cu.LaunchKernelEx(exCluster, rk16, params16, nil) },
		func() error {
			return k16.LaunchEx(s, two, cluster, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
		})
	g, err := s.Capture(cuda.CaptureThreadLocal, func() error { return k.LaunchArgs(s, one, args) })
	must("Stream.Capture", err)
	defer g.Close()
	exec, err := g.Instantiate()
	must("Graph.Instantiate", err)
	defer exec.Close()
	rexec := exec.Raw()
	pair("graph_launch", launchChunks, 500, func() error { return cu.GraphLaunch(rexec, rs) }, func() error { return exec.Launch(s) })

	lifecycle := func() {
		// The lifecycle calls: create and destroy, allocate and free, a
		// synchronous copy (which waits for the legacy stream, as
		// CopyToDevice does: cuMemcpyHtoD from pageable memory may return
		// before the data is in device memory).
		noTiming := uint32(cu.CU_EVENT_DISABLE_TIMING)
		rawEvent := func() (cu.CUevent, error) {
			var e cu.CUevent
			return e, cu.EventCreate(&e, noTiming)
		}
		rawStream := func() (cu.CUstream, error) {
			var x cu.CUstream
			return x, cu.StreamCreate(&x, uint32(cu.CU_STREAM_NON_BLOCKING))
		}
		cudaEvent := func() (*cuda.Event, error) { return cuda.NewEvent(ctx) }
		cudaStream := func() (*cuda.Stream, error) { return cuda.NewStream(ctx) }
		pair("event_create_destroy", 600, 500, cycle(rawEvent, nil, cu.EventDestroy), cycle(cudaEvent, nil, (*cuda.Event).Close))
		pair("stream_create_destroy", 400, 200, cycle(rawStream, nil, cu.StreamDestroy), cycle(cudaStream, nil, (*cuda.Stream).Close))
		// The same, used once in between: a destroy after a hot call waits
		// for a grace period (cuda/hot.go).
		pair("event_create_record_destroy", 400, 500,
			cycle(rawEvent, func(e cu.CUevent) error { return cu.EventRecord(e, rs) }, cu.EventDestroy),
			cycle(cudaEvent, func(e *cuda.Event) error { return e.Record(s) }, (*cuda.Event).Close))
		pair("stream_create_query_destroy", 400, 200,
			cycle(rawStream, cu.StreamQuery, cu.StreamDestroy),
			cycle(cudaStream, func(x *cuda.Stream) error { _, err := x.Query(); return err }, (*cuda.Stream).Close))
		pair("alloc_free_1mib", 60, 40, func() error {
			var p cu.CUdeviceptr
			if err := cu.MemAlloc(&p, 1<<20); err != nil {
				return err
			}
			return cu.MemFree(p)
		}, func() error {
			m, err := cuda.Alloc(ctx, 1<<20)
			if err != nil {
				return err
			}
			return m.Close()
		})
		const copyBytes = 64 << 10
		host := make([]byte, copyBytes)
		dev, err := cuda.Alloc(ctx, copyBytes)
		must("cuda.Alloc", err)
		defer dev.Close()
		dptr := dev.Raw()
		legacy := cu.CUstream(cu.CU_STREAM_LEGACY)
		pair("copy_htod_64kib_sync", 100, 200, func() error {
			if err := cu.MemcpyHtoD(dptr, unsafe.Pointer(&host[0]), copyBytes); err != nil {
				return err
			}
			return cu.StreamSynchronize(legacy)
		}, func() error { return cuda.CopyToDevice(dev, host) })
		pair("copy_htod_64kib_nosync_raw", 100, 200, func() error {
			return cu.MemcpyHtoD(dptr, unsafe.Pointer(&host[0]), copyBytes)
		}, func() error { return cuda.CopyToDevice(dev, host) })
		pair("copy_dtoh_64kib", 100, 200, func() error {
			return cu.MemcpyDtoH(unsafe.Pointer(&host[0]), dptr, copyBytes)
		}, func() error { return cuda.CopyFromDevice(host, dev) })

	}
	lifecycle()
	bare = true
	lifecycle()

	var popped cu.CUcontext
	must("cuCtxPopCurrent", cu.CtxPopCurrent(&popped))
}

// launchExConfig returns a cuLaunchKernelEx configuration in C memory for
// a grid of gridX blocks of one thread on s, with the attribute array
// after it: one cluster dimension of gridX blocks, or none. Free it with
// C.free.
func launchExConfig(s cu.CUstream, gridX uint32, cluster bool) *cu.CUlaunchConfig {
	size := unsafe.Sizeof(cu.CUlaunchConfig{}) + unsafe.Sizeof(cu.CUlaunchAttribute{})
	mem := C.calloc(1, C.size_t(size))
	cfg := (*cu.CUlaunchConfig)(mem)
	*cfg = cu.CUlaunchConfig{GridDimX: gridX, GridDimY: 1, GridDimZ: 1, BlockDimX: 1, BlockDimY: 1, BlockDimZ: 1, HStream: s}
	if cluster {
		attr := (*cu.CUlaunchAttribute)(unsafe.Add(mem, unsafe.Sizeof(cu.CUlaunchConfig{})))
		attr.Id = cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
		*attr.Value.ClusterDim() = cu.CUlaunchAttributeValue_clusterDim{X: gridX, Y: 1, Z: 1}
		cfg.Attrs, cfg.NumAttrs = attr, 1
	}
	return cfg
}

// cycle returns a function that makes an object, uses it (unless use is
// nil) and destroys it.
func cycle[T any](create func() (T, error), use, destroy func(T) error) func() error {
	return func() error {
		x, err := create()
		if err != nil {
			return err
		}
		if use != nil {
			if err := use(x); err != nil {
				return err
			}
		}
		return destroy(x)
	}
}

func median(v []float64) float64 { return quantile(v, 0.5) }

func quantile(v []float64, q float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[int(q*float64(len(c)-1)+0.5)]
}
