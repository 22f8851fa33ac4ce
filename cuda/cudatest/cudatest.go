// Package cudatest runs tests of code that uses packages cu and cuda on
// machines without a GPU, against a fake CUDA driver, and checks them for
// leaks and for their handling of driver failures.
//
// The fake driver is a shared library compiled from C at test time with
// the C compiler cgo uses (see internal/fakecuda for what it models:
// devices, contexts, streams that run asynchronously on host threads,
// events, host-backed device memory, modules and kernel launches).
//
// Package cu opens the driver once per process, at its first call, so the
// fake must be chosen before that; in a test, from TestMain:
//
//	func TestMain(m *testing.M) {
//		os.Exit(cudatest.UseFakeDriver(m))
//	}
//
// Then tests use package cu or cuda as usual, and may call CheckNoLeaks,
// FailCall and Live.
//
// Setup also points packages cuda/rand and cuda/fft at a fake cuRAND and
// cuFFT that run on the fake driver, unless GOCUDA_LIBCURAND or
// GOCUDA_LIBCUFFT names a library (fakerandfft.go), package cuda/sparse
// at a fake cuSPARSE unless GOCUDA_LIBCUSPARSE does (fakesparse.go),
// package cuda/solver at a fake cuSOLVER, unless GOCUDA_LIBCUSOLVER names
// one (fakesolver.go), and package cuda/gds at a fake cuFile, unless
// GOCUDA_LIBCUFILE names one (fakecufile.go).
//
// Setup is not tied to a test binary: a plain program (a demo, a tool
// tried out on a laptop) that calls it at the start of main, before any
// use of cu or cuda, runs against the fake driver as a test does. It needs
// what a test needs: the C compiler cgo uses, to build the fake.
//
//	func main() {
//		if _, err := cudatest.Setup(); err != nil {
//			log.Fatal(err)
//		}
//		devs, err := cuda.Devices() // the fake's devices
//		...
//	}
//
// # Kernels
//
// The fake driver loads a module image (PTX, from a file or from NVRTC,
// a cubin, a fatbin) that a driver would accept, and refuses the others
// as the driver does (PTX that does not parse, its .version and .target
// missing, an instruction missing an operand, a stray token:
// CUDA_ERROR_INVALID_PTX, and the parser's message on standard error; a
// malformed ELF or fatbin: CUDA_ERROR_INVALID_IMAGE). A launch of an
// entry of PTX runs that PTX
// on the host, in stream order (or at each launch of a graph that
// captured it), interpreted by internal/ptx: the user's own CUDA C++,
// compiled by NVRTC or nvcc, with its shared memory, barriers, warp
// shuffles and votes, atomics, calls, printf (to SetPrintfOutput's
// writer, standard output by default) and assert. Every access is checked:
// outside the fake's allocations, the block's shared memory or the
// thread's local memory it fails the launch with
// CUDA_ERROR_ILLEGAL_ADDRESS (misaligned: CUDA_ERROR_MISALIGNED_ADDRESS),
// left sticky in the context as on a GPU, and LastKernelError says which
// block and thread, at which PTX instruction and line. An instruction the
// interpreter does not run (tensor-core mma, wgmma, TMA, mbarrier,
// textures: internal/ptx lists what it runs) does not stop its module
// from loading, as a GPU of the module's architecture loads it: the
// entry is compiled before its first launch, and the launch itself
// (Launch, LaunchEx, a cooperative launch, a graph's kernel node) fails
// with CUDA_ERROR_NOT_SUPPORTED, and LastKernelError names the entry, the
// instruction and its PTX line. Nothing is left sticky: the context and
// the module's other entries stay usable. Example_kernelFromPTX is the whole
// story, and package cuda/cudatest/ptxsuite runs thirty kernels of the
// kinds users write on the fake and on a GPU alike.
//
// A kernel may also be written in Go and registered under its entry's
// name with RegisterKernel: for modules the fake cannot run (a cubin or
// fatbin: an entry of one with no Go kernel is not found,
// CUDA_ERROR_NOT_FOUND, and the fake says which on standard error), or
// to replace an entry's PTX. A launch runs the function once per thread
// (Kernel.Thread, with the thread's Thread.BlockIdx and Thread.ThreadIdx)
// or once per launch (Kernel.Launch). Its parameters are read by type
// (Launch.Param) in the layout of the PTX's .param list, and device
// memory through the pointers among them with Load, Store, Slice and
// ReadSlice, which check each access against the fake's allocations. See
// ExampleRegisterKernel. The accesses of both kinds of kernel are
// reported to the race detector below.
//
// # Races between streams
//
// With UseFakeDriver(m, WithRaceDetector()) (or FAKECUDA_RACE=1 in the
// environment), the fake checks device, managed and page-locked memory
// for data races: two operations touching the same bytes, at least one
// writing, that nothing orders. Ordering is what CUDA guarantees, not what
// happened to run first: stream order; an event recorded on one stream and
// waited for on another; Synchronize of a stream, an event or a context,
// and a Query that found the work done; the legacy default stream's
// implicit ordering with blocking streams (not with non-blocking ones,
// which all of package cuda's streams are); a synchronous call that waited
// for its own work; a graph's edges. A host function that has run orders
// nothing: a Stream.Then or Stream.Done that nobody waits for would
// otherwise hide a race, or not, by whether it had run yet. A function of
// Then is ordered after its stream's earlier work: what it reads and
// writes, and the work it queues. The detector cannot see a receive from
// a Done channel, so code that learns of a completion that way
// synchronizes through the driver (Synchronize, which also says whether
// the work succeeded; a Query of the stream or of an event) before it
// touches the results, as WaitIdle does. The host side is one thread for the whole process: what
// any goroutine observed through the driver is ordered before what any
// goroutine queues afterwards, so races between goroutines' own host code
// are left to Go's race detector. A race found is verdict, not luck: it is
// reported whatever order the streams ran in, and whether or not the host
// functions queued meanwhile had run.
//
// Memsets, copies and kernels (through their memory accessors) are
// checked. Go code that reads or writes page-locked or managed memory
// directly (a HostBuffer's Slice) tells the detector with HostRead and
// HostWrite. A report names both operations, their streams and bytes, and
// the Go stack where each was queued. A test calls CheckRaces first to
// fail with the reports of the races found while it ran; races nobody
// took fail the run at its end (UseFakeDriver prints them); TakeRaces
// returns them as values. Example_kernelPipeline is the whole story: a
// function that loads a module, launches a producer and a consumer kernel
// on two streams and forgets the event between them, reported, then fixed.
//
// Within a kernel run from PTX, the detector also finds races on shared
// memory: two threads of a block touching the same bytes, one of them
// writing, with no barrier (__syncthreads; __syncwarp between threads of
// one warp) between them, as compute-sanitizer's racecheck does on a GPU.
// CheckRaces and ReportRaces report them with the others; TakeSharedRaces
// returns them as values.
//
// The detector costs a vector clock per queued operation and a walk of
// the caller's frame pointers: package cuda's own tests run with it on.
// Measured on that suite (one test binary, run three times each way,
// alternating, on a shared 2-core AMD EPYC VM at a load average of about
// 1), leaving out TestCloseRacingCallsGetErrClosed, a contention test
// whose time (4 to 21 s) follows the scheduling more than the detector:
// median wall time 9.6 s with it, 9.3 s without (+3%); CPU time 9.4 s
// against 9.0 s (+4%), where single runs spread over 8.5 to 10.2 s.
//
// With WithSeed(n) (or FAKECUDA_SEED=n), the stream workers run one
// operation at a time in an order drawn from a PRNG seeded with n, while
// the host waits for the device: a program that queues work and then
// synchronizes sees the same order for a seed on every run, and other
// orders for other seeds, so that a result that depends on an unordered
// pair of operations shows up, or not, the same way each time.
//
// Package cudatest does not import package cuda, so cuda's own tests can
// use it.
package cudatest

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/dropped"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

var (
	mu     sync.Mutex
	lib    *fakecuda.Lib
	probed bool // driver looked for the fake where cu.LibraryEnv points
)

// Setup builds the fake driver (once; later processes reuse the build),
// points cu.LibraryEnv (GOCUDA_LIBCUDA) at it and loads it with the
// options (WithRaceDetector, WithSeed). Call it before anything in the
// process calls package cu or cuda: it fails if cu has already loaded
// another driver, or failed to load one, or if a later call asks for
// options the loaded driver lacks.
func Setup(opts ...Option) (libPath string, err error) {
	mu.Lock()
	defer mu.Unlock()
	if lib != nil {
		return lib.Path(), checkOptions(lib, opts)
	}
	if err := applyOptions(opts); err != nil {
		return "", err
	}
	path, err := fakecuda.Build("")
	if err != nil {
		return "", err
	}
	if err := os.Setenv(cu.LibraryEnv, path); err != nil {
		return "", err
	}
	if err := cu.Load(); err != nil {
		return "", fmt.Errorf("cudatest: %w", err)
	}
	l, err := fakecuda.Open(path)
	if err != nil {
		return "", err
	}
	// The loader asks for the driver's version when it opens a library: if
	// the fake was never asked, cu had opened something else.
	if l.Calls("cuDriverGetVersion") == 0 {
		return "", fmt.Errorf("cudatest: package cu loaded its driver before Setup; call Setup (or UseFakeDriver) from TestMain, before any use of cu or cuda")
	}
	if err := attachKernels(l); err != nil {
		return "", err
	}
	attachHostOrder(l)
	setupFakeRandFFT()
	setupFakeSolver()
	setupFakeCuFile()
	setupFakeBLAS()
	setupFakeSparse()
	lib = l
	return path, nil
}

// UseFakeDriver is TestMain's body for tests that run against the fake
// driver: Setup with the options, then m.Run. It returns the exit code for
// os.Exit. With the race detector on (WithRaceDetector, FAKECUDA_RACE=1),
// races that no CheckRaces or TakeRaces took are reported after the
// tests, and fail the run.
func UseFakeDriver(m *testing.M, opts ...Option) int {
	if _, err := Setup(opts...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if n := ReportRaces(os.Stderr); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: cudatest: %d CUDA data race(s) detected during execution of the tests\n", n)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// SetupIfNoDriver is for tests that run on a GPU where there is one and
// against the fake driver elsewhere: it sets the fake up (Setup, with the
// options) when no
// libcuda.so.1 can be opened and GOCUDA_LIBCUDA names no driver (a child
// process inherits its parent's choice through it). It reports whether
// this process uses the fake; a fake that cannot be built (no C compiler)
// leaves the tests that need a driver to skip.
func SetupIfNoDriver(opts ...Option) bool {
	if os.Getenv(cu.LibraryEnv) == "" && fakecuda.CanOpen("libcuda.so.1") != nil {
		_, _ = Setup(opts...)
	}
	return Active()
}

// driver returns the fake driver this process uses, or nil for another
// driver. Besides Setup, the fake is found where cu.LibraryEnv names it, as
// in a child process started with that variable set.
func driver() *fakecuda.Lib {
	mu.Lock()
	defer mu.Unlock()
	if lib == nil && !probed {
		probed = true
		if p := os.Getenv(cu.LibraryEnv); p != "" && cu.Load() == nil {
			if l, err := fakecuda.Open(p); err == nil && attachKernels(l) == nil {
				attachHostOrder(l)
				lib = l
			}
		}
	}
	return lib
}

// Active reports whether this process uses the fake driver.
func Active() bool { return driver() != nil }

// mustDriver returns the fake driver or panics: a fault that cannot be
// injected, or counts that cannot be read, must not pass silently.
func mustDriver(what string) *fakecuda.Lib {
	l := driver()
	if l == nil {
		panic("cudatest: " + what + " needs the fake driver (call cudatest.Setup from TestMain)")
	}
	return l
}

// Counts are the fake driver's live objects.
type Counts struct {
	Contexts       int // made with cuCtxCreate and not destroyed
	PrimaryRetains int // cuDevicePrimaryCtxRetain references not released
	Streams        int
	Events         int
	DeviceAllocs   int // cuMemAlloc, cuMemAllocAsync, cuMemAllocManaged
	ManagedAllocs  int // cuMemAllocManaged (counted in DeviceAllocs too)
	HostAllocs     int // cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister
	Graphs         int // captured (cuStreamEndCapture) and not destroyed
	GraphExecs     int // instantiated and not destroyed
	Modules        int // modules and libraries loaded and not unloaded
	// Reaped counts streams, events, allocations, executable graphs and
	// modules that were never destroyed, freed or unloaded but went away with their context:
	// leaks that a context's end hid. It counts since the last ResetCalls.
	Reaped int
	// BoundThreads counts the threads left with a context on their stack
	// (cuCtxPushCurrent, cuCtxSetCurrent without the matching pop): code
	// that binds a context and does not restore the thread.
	BoundThreads int
}

// IsZero reports whether nothing is alive and nothing was reaped.
func (c Counts) IsZero() bool { return c == Counts{} }

func (c Counts) String() string {
	return fmt.Sprintf("contexts %d, primary retains %d, streams %d, events %d, device allocations %d, host allocations %d, graphs %d, graph execs %d, modules %d, reaped %d, threads with a context bound %d",
		c.Contexts, c.PrimaryRetains, c.Streams, c.Events, c.DeviceAllocs, c.HostAllocs, c.Graphs, c.GraphExecs, c.Modules, c.Reaped, c.BoundThreads)
}

// Live returns the fake driver's live objects. It panics if the process
// does not use the fake driver.
func Live() Counts {
	l := mustDriver("Live")
	return Counts{
		Contexts:       l.Live("contexts"),
		PrimaryRetains: l.Live("primary"),
		Streams:        l.Live("streams"),
		Events:         l.Live("events"),
		DeviceAllocs:   l.Live("device"),
		ManagedAllocs:  l.Live("managed"),
		HostAllocs:     l.Live("host"),
		Graphs:         l.Live("graphs"),
		GraphExecs:     l.Live("graph_execs"),
		Modules:        l.Live("modules"),
		Reaped:         l.Live("reaped"),
		BoundThreads:   l.Live("bound_threads"),
	}
}

// FailCall makes the nth call of a driver function from now on (1: the
// next one) fail with result and have no effect. name is the C API name
// (cuStreamCreate; a _v2 suffix is ignored). It panics if the fake driver
// is not in use or does not implement the function.
func FailCall(name string, nth int, result cu.CUresult) {
	if err := mustDriver("FailCall").Fail(name, nth, int(result)); err != nil {
		panic(err)
	}
}

// Calls returns how many times a driver function was called since the
// process started or the last ResetCalls; -1 if the fake lacks it.
func Calls(name string) int { return mustDriver("Calls").Calls(name) }

// CalledFunctions returns the call count of every driver function called
// since the process started or the last ResetCalls, by API name.
func CalledFunctions() map[string]int {
	l := mustDriver("CalledFunctions")
	m := map[string]int{}
	for _, f := range l.Functions() {
		if n := l.Calls(f); n > 0 {
			m[f] = n
		}
	}
	return m
}

// ResetCalls zeroes the call counts and the reaped count and disarms every
// fault FailCall or FAKECUDA_FAIL armed.
func ResetCalls() { mustDriver("ResetCalls").Reset() }

// CheckNoLeaks makes tb fail if, when it ends, the fake driver holds more
// of any kind of object than now, or reaped any, or if a handle of package
// cuda made meanwhile was never closed and the garbage collector released
// it (a forgotten Close, which a program would leak until a collection).
// Call it first in a test: the check is a cleanup, and cleanups run
// last-registered first, so it runs after those the test registers later.
// Handles left to the garbage collector get a few collections to be
// released. Handles that tests running in parallel drop are counted too.
// Against a real driver it checks nothing.
func CheckNoLeaks(tb testing.TB, opts ...LeakOption) {
	tb.Helper()
	if !Active() {
		return
	}
	var o leakOptions
	for _, opt := range opts {
		opt(&o)
	}
	before, collected := Live(), dropped.Counts()
	tb.Cleanup(func() {
		if diff := WaitNoLeaks(before); diff != "" {
			tb.Errorf("cudatest: driver objects leaked: %s", diff)
		}
		if d := dropped.Since(collected); d != "" && !o.allowDropped {
			tb.Errorf("cudatest: handles never closed, released by the garbage collector: %s", d)
		}
	})
}

// A LeakOption changes what CheckNoLeaks reports.
type LeakOption func(*leakOptions)

type leakOptions struct{ allowDropped bool }

// AllowDropped makes CheckNoLeaks accept handles that the garbage
// collector released because nothing closed them: for code that relies on
// the collector on purpose.
func AllowDropped() LeakOption { return func(o *leakOptions) { o.allowDropped = true } }

// WaitNoLeaks waits (collecting garbage, a few hundred milliseconds) until
// the fake driver holds no more objects of any kind than in before and has
// reaped none since, and returns "" or what is left over.
func WaitNoLeaks(before Counts) string {
	var diff string
	for range 30 {
		if diff = excess(before, Live()); diff == "" {
			return ""
		}
		collect()
	}
	return diff
}

func excess(before, now Counts) string {
	var out []string
	add := func(what string, b, n int) {
		if n > b {
			out = append(out, fmt.Sprintf("%s %d (was %d)", what, n, b))
		}
	}
	add("contexts", before.Contexts, now.Contexts)
	add("primary retains", before.PrimaryRetains, now.PrimaryRetains)
	add("streams", before.Streams, now.Streams)
	add("events", before.Events, now.Events)
	add("device allocations", before.DeviceAllocs, now.DeviceAllocs)
	add("managed allocations", before.ManagedAllocs, now.ManagedAllocs)
	add("host allocations", before.HostAllocs, now.HostAllocs)
	add("graphs", before.Graphs, now.Graphs)
	add("graph execs", before.GraphExecs, now.GraphExecs)
	add("modules", before.Modules, now.Modules)
	add("reaped (never freed, gone with their context)", before.Reaped, now.Reaped)
	add("threads with a context bound", before.BoundThreads, now.BoundThreads)
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// collect gives handles that became unreachable a chance to be released
// by their cleanups, which run on a goroutine of the runtime's after a GC.
func collect() {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
}
