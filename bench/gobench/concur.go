package main

/*
#include <stdlib.h>
#include "concur.h"
*/
import "C"

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// The scenarios of -impl concur, as concur.h numbers them: what each of N
// workers does in a loop for a fixed time.
var concurScenarios = []struct {
	name string
	id   C.int
}{
	{"own_stream", C.GBC_OWN_STREAM},             // launch an empty kernel on its own stream
	{"shared_stream", C.GBC_SHARED_STREAM},       // the same on one stream all workers share
	{"event_wait", C.GBC_EVENT_WAIT},             // record an event on one stream, make another wait for it
	{"copy64k", C.GBC_COPY},                      // a 64 KiB copy from page-locked memory on its stream, waited for
	{"create_destroy", C.GBC_CREATE_DESTROY},     // create a stream and an event, destroy both
	{"completion", C.GBC_COMPLETION},             // launch, then a host callback after it (Then in package cuda)
	{"completion_alone", C.GBC_COMPLETION_ALONE}, // the same, each waited for before the next: a delivery after an empty kernel
}

var (
	concurN      = flag.String("concur-n", "1,2,4,8,16,32,64", "-impl concur: the numbers of workers")
	concurMs     = flag.Int("concur-ms", 300, "-impl concur: milliseconds each run lasts")
	concurRounds = flag.Int("concur-rounds", 3, "-impl concur: rounds of the three implementations per scenario and number of workers")
	mutexProfile = flag.String("mutexprofile", "", "-impl concur: write a mutex contention profile to this file")
	blockProfile = flag.String("blockprofile", "", "-impl concur: write a blocking profile to this file")
	concurLocked = flag.Bool("concur-locked", false, "-impl concur: also run package cuda's workers each locked to its thread (go-cuda-locked), to tell what moves between threads cost")
)

// concurRun is one measured run: N workers of one implementation.
type concurRun struct {
	ops     int64
	elapsed time.Duration
	lat     []int64 // ns per sampled operation, or from enqueue to delivery
}

func (r concurRun) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// concurEnv is what every run shares: one context, the empty kernel for
// each layer, a shared stream for each, and 64 KiB of page-locked and
// device memory per possible worker for the copies.
type concurEnv struct {
	ctx       *cuda.Context
	rawK      cu.CUfunction
	params    unsafe.Pointer
	rawShared cu.CUstream
	k         *cuda.Kernel
	shared    *cuda.Stream
	host      unsafe.Pointer
	dev       cu.CUdeviceptr
}

const copyBytes = C.GBC_COPY_BYTES

func runConcur(ptx []byte) {
	ns, err := parseInts(*concurN)
	must("-concur-n", err)
	maxN := 0
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	devs, err := cuda.Devices()
	must("cuda.Devices", err)
	ctx, err := cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	defer ctx.Close()
	// The driver cu loaded: libcuda.so.1, or the file cu.LibraryEnv names
	// (a fake driver, for a trial run without a GPU).
	file := C.CString(cmp.Or(os.Getenv(cu.LibraryEnv), "libcuda.so.1"))
	defer C.free(unsafe.Pointer(file))
	if r := C.gbc_init(file, C.int(cu.HeaderVersion())); r != 0 {
		must("resolve the driver's entry points for C", fmt.Errorf("gbc_init: %d", r))
	}
	e := &concurEnv{ctx: ctx, params: kernelArgs(1)}
	mod, err := cuda.LoadModule(ctx, ptx)
	must("cuda.LoadModule", err)
	defer mod.Close()
	e.k, err = mod.Function("empty1")
	must("Module.Function", err)
	e.rawK = e.k.Raw()
	e.shared, err = cuda.NewStream(ctx)
	must("cuda.NewStream", err)
	defer e.shared.Close()
	e.rawShared = e.shared.Raw()
	runtime.LockOSThread()
	must("cuCtxSetCurrent", cu.CtxSetCurrent(ctx.Raw()))
	var host unsafe.Pointer
	var dev cu.CUdeviceptr
	must("cuMemAllocHost", cu.MemAllocHost(&host, uint64(maxN*copyBytes)))
	must("cuMemAlloc", cu.MemAlloc(&dev, uint64(maxN*copyBytes)))
	e.host, e.dev = host, dev
	runtime.UnlockOSThread()

	impls := []struct {
		name string
		run  func(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun
	}{{"c", runConcurC}, {"go-raw", runConcurRaw}, {"go-cuda", runConcurCuda}}
	if *concurLocked {
		impls = append(impls, struct {
			name string
			run  func(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun
		}{"go-cuda-locked", func(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun {
			return concurCuda(e, scenario, n, d, true)
		}})
	}
	d := time.Duration(*concurMs) * time.Millisecond
	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
		defer writeProfile("mutex", *mutexProfile)
	}
	if *blockProfile != "" {
		runtime.SetBlockProfileRate(1000)
		defer writeProfile("block", *blockProfile)
	}
	fmt.Printf("CONCURENV gomaxprocs=%d cpus=%d ms=%d rounds=%d\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), *concurMs, *concurRounds)
	for _, sc := range concurScenarios {
		if !selected(sc.name) {
			continue
		}
		for _, n := range ns {
			rates := make([][]float64, len(impls))
			ratios := make([][]float64, len(impls))
			p50s := make([][]float64, len(impls))
			p99s := make([][]float64, len(impls))
			for round := 0; round < *concurRounds; round++ {
				got := make([]concurRun, len(impls))
				// Rotate the order each round, so that drift and warm-up
				// fall on every implementation alike.
				for j := range impls {
					i := (j + round) % len(impls)
					if (sc.id == C.GBC_COMPLETION || sc.id == C.GBC_COMPLETION_ALONE) && impls[i].name == "go-raw" {
						continue // the raw bindings take only C host functions
					}
					got[i] = impls[i].run(e, sc.id, n, d)
				}
				for i, r := range got {
					if r.ops == 0 {
						continue
					}
					p50, p99 := percentile(r.lat, 0.5), percentile(r.lat, 0.99)
					fmt.Printf("CONCUR scenario=%s n=%d impl=%s round=%d ops_per_s=%.0f p50_ns=%.0f p99_ns=%.0f samples=%d\n",
						sc.name, n, impls[i].name, round, r.rate(), p50, p99, len(r.lat))
					rates[i] = append(rates[i], r.rate())
					if got[0].ops > 0 {
						ratios[i] = append(ratios[i], r.rate()/got[0].rate())
					}
					p50s[i], p99s[i] = append(p50s[i], p50), append(p99s[i], p99)
				}
			}
			for i := range impls {
				if len(rates[i]) == 0 || len(ratios[i]) == 0 {
					continue
				}
				fmt.Printf("CONCURSUM scenario=%s n=%d impl=%s ops_per_s=%.0f ratio_c=%.3f ratio_min=%.3f ratio_max=%.3f p50_ns=%.0f p99_ns=%.0f\n",
					sc.name, n, impls[i].name, median(rates[i]), median(ratios[i]), quantile(ratios[i], 0), quantile(ratios[i], 1), median(p50s[i]), median(p99s[i]))
			}
		}
	}
}

func writeProfile(name, file string) {
	f, err := os.Create(file)
	must("create profile", err)
	must("write profile", pprof.Lookup(name).WriteTo(f, 0))
	must("close profile", f.Close())
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func percentile(v []int64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return float64(c[int(q*float64(len(c)-1)+0.5)])
}

// samplesPerRun bounds the latencies kept per run, over all workers.
const samplesPerRun = 1 << 20

func runConcurC(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun {
	r := (*C.struct_gbc_run)(C.calloc(1, C.sizeof_struct_gbc_run))
	defer C.free(unsafe.Pointer(r))
	lat := (*C.int64_t)(C.calloc(samplesPerRun, 8))
	defer C.free(unsafe.Pointer(lat))
	r.scenario, r.threads, r.duration_ns = scenario, C.int(n), C.int64_t(d.Nanoseconds())
	r.ctx, r.kernel, r.shared = C.uintptr_t(e.ctx.Raw()), C.uintptr_t(e.rawK), C.uintptr_t(e.rawShared)
	r.dev, r.host, r.params = C.uintptr_t(e.dev), e.host, (*unsafe.Pointer)(e.params)
	r.lat, r.caplat = lat, samplesPerRun
	if res := C.gbc_run(r); res != 0 {
		must("C workers", cu.CUresult(res))
	}
	out := concurRun{ops: int64(r.ops), elapsed: time.Duration(r.elapsed_ns)}
	out.lat = append(out.lat, unsafe.Slice((*int64)(unsafe.Pointer(lat)), int(r.nlat))...)
	return out
}

// goWorkers runs n goroutines: setup(i) before the window, then op(i, k)
// until it closes, then teardown(i). Every sampleEvery-th operation is
// timed unless op times itself (it returns false).
func goWorkers(n int, d time.Duration, setup, teardown func(i int), op func(i int, k int64, sample func(int64)) bool) concurRun {
	var ready, wg sync.WaitGroup
	var stop atomic.Bool
	start := make(chan struct{})
	ops := make([]int64, n)
	per := samplesPerRun / n
	lat := make([]int64, per*n)
	nlat := make([]atomic.Int64, n)
	ready.Add(n)
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			setup(i)
			sample := func(ns int64) {
				if j := nlat[i].Add(1) - 1; j < int64(per) {
					lat[i*per+int(j)] = ns
				}
			}
			ready.Done()
			<-start
			var k int64
			for !stop.Load() {
				if k&(C.GBC_SAMPLE_EVERY-1) == 0 {
					t := time.Now()
					if op(i, k, sample) {
						sample(int64(time.Since(t)))
					}
				} else {
					op(i, k, sample)
				}
				k++
			}
			ops[i] = k
			teardown(i)
		}()
	}
	ready.Wait()
	t := time.Now()
	close(start)
	time.Sleep(d)
	stop.Store(true)
	elapsed := time.Since(t)
	wg.Wait()
	out := concurRun{elapsed: elapsed}
	for i := 0; i < n; i++ {
		out.ops += ops[i]
		out.lat = append(out.lat, lat[i*per:i*per+int(min(nlat[i].Load(), int64(per)))]...)
	}
	return out
}

const drainEvery = C.GBC_DRAIN_EVERY

func runConcurRaw(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun {
	type w struct {
		s1, s2 cu.CUstream
		ev     cu.CUevent
	}
	ws := make([]w, n)
	params := (*unsafe.Pointer)(e.params)
	nb := uint32(cu.CU_STREAM_NON_BLOCKING)
	setup := func(i int) {
		// The raw bindings bind no context: a worker keeps its thread.
		runtime.LockOSThread()
		must("cuCtxSetCurrent", cu.CtxSetCurrent(e.ctx.Raw()))
		must("cuStreamCreate", cu.StreamCreate(&ws[i].s1, nb))
		must("cuStreamCreate", cu.StreamCreate(&ws[i].s2, nb))
		must("cuEventCreate", cu.EventCreate(&ws[i].ev, uint32(cu.CU_EVENT_DISABLE_TIMING)))
	}
	teardown := func(i int) {
		must("cuStreamSynchronize", cu.StreamSynchronize(ws[i].s1))
		must("cuStreamSynchronize", cu.StreamSynchronize(ws[i].s2))
		must("cuEventDestroy", cu.EventDestroy(ws[i].ev))
		must("cuStreamDestroy", cu.StreamDestroy(ws[i].s2))
		must("cuStreamDestroy", cu.StreamDestroy(ws[i].s1))
		runtime.UnlockOSThread()
	}
	var op func(i int, k int64, sample func(int64)) bool
	switch scenario {
	case C.GBC_OWN_STREAM, C.GBC_SHARED_STREAM:
		op = func(i int, k int64, _ func(int64)) bool {
			s := ws[i].s1
			if scenario == C.GBC_SHARED_STREAM {
				s = e.rawShared
			}
			must("cuLaunchKernel", cu.LaunchKernel(e.rawK, 1, 1, 1, 1, 1, 1, 0, s, params, nil))
			if (k+1)%drainEvery == 0 {
				must("cuStreamSynchronize", cu.StreamSynchronize(s))
			}
			return true
		}
	case C.GBC_EVENT_WAIT:
		op = func(i int, k int64, _ func(int64)) bool {
			must("cuEventRecord", cu.EventRecord(ws[i].ev, ws[i].s1))
			must("cuStreamWaitEvent", cu.StreamWaitEvent(ws[i].s2, ws[i].ev, 0))
			if (k+1)%drainEvery == 0 {
				must("cuStreamSynchronize", cu.StreamSynchronize(ws[i].s1))
				must("cuStreamSynchronize", cu.StreamSynchronize(ws[i].s2))
			}
			return true
		}
	case C.GBC_COPY:
		op = func(i int, _ int64, _ func(int64)) bool {
			host := unsafe.Add(e.host, i*copyBytes)
			must("cuMemcpyHtoDAsync", cu.MemcpyHtoDAsync(e.dev+cu.CUdeviceptr(i*copyBytes), host, copyBytes, ws[i].s1))
			must("cuStreamSynchronize", cu.StreamSynchronize(ws[i].s1))
			return true
		}
	case C.GBC_CREATE_DESTROY:
		op = func(int, int64, func(int64)) bool {
			var s cu.CUstream
			var ev cu.CUevent
			must("cuStreamCreate", cu.StreamCreate(&s, nb))
			must("cuEventCreate", cu.EventCreate(&ev, uint32(cu.CU_EVENT_DISABLE_TIMING)))
			must("cuEventDestroy", cu.EventDestroy(ev))
			must("cuStreamDestroy", cu.StreamDestroy(s))
			return true
		}
	default:
		fmt.Fprintln(os.Stderr, "gobench: no raw scenario", scenario)
		os.Exit(2)
	}
	return goWorkers(n, d, setup, teardown, op)
}

func runConcurCuda(e *concurEnv, scenario C.int, n int, d time.Duration) concurRun {
	return concurCuda(e, scenario, n, d, false)
}

// concurCuda runs package cuda's workers, each locked to its thread if
// locked (which package cuda does not need: the variant tells what a
// goroutine's moves between threads cost in the driver).
func concurCuda(e *concurEnv, scenario C.int, n int, d time.Duration, locked bool) concurRun {
	type w struct {
		s1, s2 *cuda.Stream
		ev     *cuda.Event
		dev    *cuda.Slice[byte]
		host   *cuda.HostBuffer[byte]
		window chan struct{}
	}
	ws := make([]w, n)
	one := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	window := C.GBC_WINDOW
	if scenario == C.GBC_COMPLETION_ALONE {
		window = 1
	}
	setup := func(i int) {
		if locked {
			runtime.LockOSThread()
		}
		var err error
		x := &ws[i]
		x.s1, err = cuda.NewStream(e.ctx)
		must("cuda.NewStream", err)
		x.s2, err = cuda.NewStream(e.ctx)
		must("cuda.NewStream", err)
		x.ev, err = cuda.NewEvent(e.ctx)
		must("cuda.NewEvent", err)
		if scenario == C.GBC_COPY {
			x.dev, err = cuda.AllocSlice[byte](e.ctx, copyBytes)
			must("cuda.AllocSlice", err)
			x.host, err = cuda.AllocHost[byte](e.ctx, copyBytes)
			must("cuda.AllocHost", err)
		}
		x.window = make(chan struct{}, window)
	}
	teardown := func(i int) {
		x := &ws[i]
		for range window {
			x.window <- struct{}{}
		}
		must("Stream.Synchronize", x.s1.Synchronize())
		must("Stream.Synchronize", x.s2.Synchronize())
		if x.dev != nil {
			must("Slice.Close", x.dev.Close())
			must("HostBuffer.Close", x.host.Close())
		}
		must("Event.Close", x.ev.Close())
		must("Stream.Close", x.s2.Close())
		must("Stream.Close", x.s1.Close())
		if locked {
			runtime.UnlockOSThread()
		}
	}
	var op func(i int, k int64, sample func(int64)) bool
	switch scenario {
	case C.GBC_OWN_STREAM, C.GBC_SHARED_STREAM:
		op = func(i int, k int64, _ func(int64)) bool {
			s := ws[i].s1
			if scenario == C.GBC_SHARED_STREAM {
				s = e.shared
			}
			must("Kernel.Launch", e.k.Launch(s, one, uint64(0)))
			if (k+1)%drainEvery == 0 {
				must("Stream.Synchronize", s.Synchronize())
			}
			return true
		}
	case C.GBC_EVENT_WAIT:
		op = func(i int, k int64, _ func(int64)) bool {
			x := &ws[i]
			must("Event.Record", x.ev.Record(x.s1))
			must("Stream.WaitEvent", x.s2.WaitEvent(x.ev))
			if (k+1)%drainEvery == 0 {
				must("Stream.Synchronize", x.s1.Synchronize())
				must("Stream.Synchronize", x.s2.Synchronize())
			}
			return true
		}
	case C.GBC_COPY:
		op = func(i int, _ int64, _ func(int64)) bool {
			x := &ws[i]
			must("Slice.CopyFromAsync", x.dev.CopyFromAsync(x.s1, x.host))
			must("Stream.Synchronize", x.s1.Synchronize())
			return true
		}
	case C.GBC_CREATE_DESTROY:
		op = func(int, int64, func(int64)) bool {
			s, err := cuda.NewStream(e.ctx)
			must("cuda.NewStream", err)
			ev, err := cuda.NewEvent(e.ctx)
			must("cuda.NewEvent", err)
			must("Event.Close", ev.Close())
			must("Stream.Close", s.Close())
			return true
		}
	case C.GBC_COMPLETION, C.GBC_COMPLETION_ALONE:
		op = func(i int, _ int64, sample func(int64)) bool {
			x := &ws[i]
			x.window <- struct{}{}
			must("Kernel.Launch", e.k.Launch(x.s1, one, uint64(0)))
			t := time.Now()
			must("Stream.Then", x.s1.Then(func() {
				sample(int64(time.Since(t)))
				<-x.window
			}))
			return false
		}
	}
	return goWorkers(n, d, setup, teardown, op)
}
