package fakecuda_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// racesOf runs f and returns the races found while it ran, once every
// operation it queued has completed.
func racesOf(t *testing.T, f func()) []fakecuda.Race {
	t.Helper()
	if !lib.RaceDetector() {
		t.Skip("the race detector is off (FAKECUDA_RACE=0)")
	}
	lib.Quiesce(10 * time.Second)
	n0 := lib.RaceCount()
	f()
	if !lib.Quiesce(10 * time.Second) {
		t.Fatal("queued operations did not complete")
	}
	var out []fakecuda.Race
	for i := n0; i < lib.RaceCount(); i++ {
		r, ok := lib.Race(i)
		if !ok {
			t.Fatalf("race %d was not kept", i)
		}
		out = append(out, r)
	}
	return out
}

func event(t *testing.T) cu.CUevent {
	t.Helper()
	var ev cu.CUevent
	must(t, cu.EventCreate(&ev, uint32(cu.CU_EVENT_DISABLE_TIMING)))
	t.Cleanup(func() { must(t, cu.EventDestroy(ev)) })
	return ev
}

func hostAccess(p unsafe.Pointer, n int, write bool) { lib.HostAccess(uintptr(p), n, write) }

const nb = uint32(cu.CU_STREAM_NON_BLOCKING)

// racePattern is a way of ordering work that, with fixed false, leaves
// two accesses unordered (the detector must report them, queued by the
// two functions in apis; "" is the host) and, with fixed true, orders them
// by one of the legal means (the detector must report nothing).
type racePattern struct {
	name, fix string
	apis      [2]string
	run       func(t *testing.T, fixed bool)
}

var racePatterns = []racePattern{
	{"missing event between two streams", "cuStreamWaitEvent", [2]string{"cuMemsetD8Async", "cuMemcpyDtoHAsync"},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			s1, s2, ev := stream(t, nb), stream(t, nb), event(t)
			must(t, cu.MemsetD8Async(p, 1, 4096, s1))
			if fixed {
				must(t, cu.EventRecord(ev, s1))
				must(t, cu.StreamWaitEvent(s2, ev, 0))
			}
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"event recorded on the wrong stream", "the event recorded on the producer's stream", [2]string{"cuMemsetD8Async", "cuMemcpyDtoHAsync"},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			s1, s2, s3, ev := stream(t, nb), stream(t, nb), stream(t, nb), event(t)
			must(t, cu.MemsetD8Async(p, 1, 4096, s1))
			must(t, cu.MemsetD8Async(alloc(t, 64), 1, 64, s2)) // s2 has work of its own
			rec := s2
			if fixed {
				rec = s1
			}
			must(t, cu.EventRecord(ev, rec))
			must(t, cu.StreamWaitEvent(s3, ev, 0))
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s3))
			must(t, cu.CtxSynchronize())
		}},
	{"event recorded before the producer's work", "the event recorded after it", [2]string{"cuMemsetD8Async", "cuMemcpyDtoHAsync"},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			s1, s2, ev := stream(t, nb), stream(t, nb), event(t)
			if !fixed {
				must(t, cu.EventRecord(ev, s1))
			}
			must(t, cu.MemsetD8Async(p, 1, 4096, s1))
			if fixed {
				must(t, cu.EventRecord(ev, s1))
			}
			must(t, cu.StreamWaitEvent(s2, ev, 0))
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"synchronous copy (legacy stream) of a non-blocking stream's result", "cuStreamSynchronize", [2]string{"cuMemsetD8Async", "cuMemcpyDtoH"},
		func(t *testing.T, fixed bool) {
			p, s := alloc(t, 4096), stream(t, nb)
			must(t, cu.MemsetD8Async(p, 1, 4096, s))
			if fixed {
				must(t, cu.StreamSynchronize(s))
			}
			out := make([]byte, 4096)
			must(t, cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, 4096))
			must(t, cu.StreamSynchronize(s))
		}},
	{"host read of page-locked memory before the copy into it is synchronized", "cuEventSynchronize", [2]string{"cuMemcpyDtoHAsync", ""},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			s, ev := stream(t, nb), event(t)
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s))
			must(t, cu.EventRecord(ev, s))
			if fixed {
				must(t, cu.EventSynchronize(ev))
			}
			hostAccess(dst, 4096, false)
			must(t, cu.StreamSynchronize(s))
		}},
	{"host overwrites the page-locked source of an asynchronous copy", "cuStreamQuery until it succeeds", [2]string{"cuMemcpyHtoDAsync", ""},
		func(t *testing.T, fixed bool) {
			p, src := alloc(t, 4096), pinned(t, 4096)
			s := stream(t, nb)
			must(t, cu.MemcpyHtoDAsync(p, src, 4096, s))
			for fixed && cu.StreamQuery(s) != nil {
				runtime.Gosched()
			}
			hostAccess(src, 4096, true)
			must(t, cu.StreamSynchronize(s))
		}},
	{"host read after a host function that ran", "cuStreamSynchronize", [2]string{"cuMemcpyDtoHAsync", ""},
		func(t *testing.T, fixed bool) { copyHostFunctionRead(t, fixed, true) }},
	{"host read while a host function is queued", "cuStreamSynchronize", [2]string{"cuMemcpyDtoHAsync", ""},
		func(t *testing.T, fixed bool) { copyHostFunctionRead(t, fixed, false) }},
	{"memset racing a copy", "cuCtxSynchronize", [2]string{"cuMemcpyHtoDAsync", "cuMemsetD8Async"},
		func(t *testing.T, fixed bool) {
			p, src := alloc(t, 4096), pinned(t, 4096)
			s1, s2 := stream(t, nb), stream(t, nb)
			must(t, cu.MemcpyHtoDAsync(p, src, 4096, s1))
			if fixed {
				must(t, cu.CtxSynchronize())
			}
			must(t, cu.MemsetD8Async(p+100, 0, 10, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"two writers on two streams", "one stream", [2]string{"cuMemsetD32Async", "cuMemsetD32Async"},
		func(t *testing.T, fixed bool) {
			p := alloc(t, 4096)
			s1, s2 := stream(t, nb), stream(t, nb)
			must(t, cu.MemsetD32Async(p, 1, 1024, s1))
			if fixed {
				s2 = s1
			}
			must(t, cu.MemsetD32Async(p, 2, 1024, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"legacy stream then a non-blocking stream", "a blocking stream, which waits for the legacy one", [2]string{"cuMemsetD8", "cuMemcpyDtoHAsync"},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			flags := nb
			if fixed {
				flags = 0
			}
			s := stream(t, flags)
			must(t, cu.MemsetD8(p, 1, 4096)) // the legacy stream; returns at once for device memory
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s))
			must(t, cu.CtxSynchronize())
		}},
	{"non-blocking stream then the legacy stream", "a blocking stream, which the legacy one waits for", [2]string{"cuMemsetD8Async", "cuMemsetD8Async"},
		func(t *testing.T, fixed bool) {
			p := alloc(t, 4096)
			flags := nb
			if fixed {
				flags = 0
			}
			s := stream(t, flags)
			must(t, cu.MemsetD8Async(p, 1, 4096, s))
			must(t, cu.MemsetD8Async(p, 2, 4096, 0)) // the NULL stream
			must(t, cu.CtxSynchronize())
		}},
	{"graph launch racing a copy", "an event recorded after the launch", [2]string{"cuGraphLaunch", "cuMemcpyDtoHAsync"},
		func(t *testing.T, fixed bool) {
			p, dst := alloc(t, 4096), pinned(t, 4096)
			s1, s2, ev := stream(t, nb), stream(t, nb), event(t)
			x := capture(t, s1, func() { must(t, cu.MemsetD8Async(p, 1, 4096, s1)) })
			must(t, cu.GraphLaunch(x, s1))
			if fixed {
				must(t, cu.EventRecord(ev, s1))
				must(t, cu.StreamWaitEvent(s2, ev, 0))
			}
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"graph nodes on forked branches", "an edge between the branches", [2]string{"cuGraphLaunch", "cuGraphLaunch"},
		func(t *testing.T, fixed bool) {
			p := alloc(t, 4096)
			s1, s2, s3 := stream(t, nb), stream(t, nb), stream(t, nb)
			fork, mid, join := event(t), event(t), event(t)
			x := capture(t, s1, func() {
				must(t, cu.EventRecord(fork, s1))
				must(t, cu.StreamWaitEvent(s2, fork, 0))
				must(t, cu.MemsetD8Async(p, 1, 64, s1))
				if fixed {
					must(t, cu.EventRecord(mid, s1))
					must(t, cu.StreamWaitEvent(s2, mid, 0))
				}
				must(t, cu.MemsetD8Async(p+32, 2, 64, s2))
				must(t, cu.EventRecord(join, s2))
				must(t, cu.StreamWaitEvent(s1, join, 0))
			})
			must(t, cu.GraphLaunch(x, s3))
			must(t, cu.StreamSynchronize(s3))
		}},
	{"overlapping ranges", "disjoint ranges", [2]string{"cuMemsetD8Async", "cuMemsetD8Async"},
		func(t *testing.T, fixed bool) {
			p := alloc(t, 4096)
			s1, s2 := stream(t, nb), stream(t, nb)
			must(t, cu.MemsetD8Async(p, 1, 2048, s1))
			start := cu.CUdeviceptr(2047)
			if fixed {
				start = 2048
			}
			must(t, cu.MemsetD8Async(p+start, 2, 1024, s2))
			must(t, cu.CtxSynchronize())
		}},
	{"a read and a write", "two reads", [2]string{"cuMemcpyDtoHAsync", "cuMemsetD8Async"},
		func(t *testing.T, fixed bool) {
			p, a, b := alloc(t, 4096), pinned(t, 4096), pinned(t, 4096)
			s1, s2 := stream(t, nb), stream(t, nb)
			must(t, cu.MemcpyDtoHAsync(a, p, 4096, s1))
			if fixed {
				must(t, cu.MemcpyDtoHAsync(b, p, 4096, s2))
			} else {
				must(t, cu.MemsetD8Async(p, 3, 4096, s2))
			}
			must(t, cu.CtxSynchronize())
		}},
}

// copyHostFunctionRead copies into page-locked memory on a stream, queues
// a host function after the copy that nobody waits for, and reads the
// memory on the host, after a cuStreamSynchronize when fixed. With
// waitRan, the read waits (ordering nothing) until the host function has
// run, and fails the test if it has not; without, the host function may
// still be queued. It reports whether the host function had run when the
// host read.
func copyHostFunctionRead(t *testing.T, fixed, waitRan bool) (ran bool) {
	p, dst, flag := alloc(t, 4096), pinned(t, 4096), (*uint32)(pinned(t, 4))
	s := stream(t, nb)
	must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s))
	must(t, cu.LaunchHostFunc(s, cu.CUhostFn(lib.Symbol("fakecuda_hostfn_store")), unsafe.Pointer(flag)))
	if waitRan {
		lib.Quiesce(10 * time.Second)
		if atomic.LoadUint32(flag) != 1 {
			t.Fatal("the host function has not run after every operation completed")
		}
	}
	if fixed {
		must(t, cu.StreamSynchronize(s))
	}
	ran = atomic.LoadUint32(flag) == 1
	hostAccess(dst, 4096, false)
	must(t, cu.StreamSynchronize(s))
	return ran
}

// capture records fn's work on s into a graph and returns it instantiated.
func capture(t *testing.T, s cu.CUstream, fn func()) cu.CUgraphExec {
	t.Helper()
	must(t, cu.StreamBeginCapture(s, cu.CU_STREAM_CAPTURE_MODE_RELAXED))
	fn()
	var g cu.CUgraph
	must(t, cu.StreamEndCapture(s, &g))
	var x cu.CUgraphExec
	must(t, instantiate(&x, g))
	must(t, cu.GraphDestroy(g))
	t.Cleanup(func() { must(t, cu.GraphExecDestroy(x)) })
	return x
}

func TestRacePatterns(t *testing.T) {
	for _, p := range racePatterns {
		t.Run(p.name, func(t *testing.T) {
			primary(t)
			races := racesOf(t, func() { p.run(t, false) })
			if len(races) == 0 {
				t.Fatal("no race reported")
			}
			r := races[0]
			got := []string{r.Access.API, r.Previous.API}
			want := []string{p.apis[0], p.apis[1]}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the race is between %q, want %q", got, want)
			}
			if !r.Access.Write && !r.Previous.Write {
				t.Errorf("a race of two reads: %+v", r)
			}
			if r.Access.Size == 0 {
				t.Errorf("a race over no bytes: %+v", r)
			}
		})
		t.Run(p.name+", fixed by "+p.fix, func(t *testing.T) {
			primary(t)
			if races := racesOf(t, func() { p.run(t, true) }); len(races) != 0 {
				t.Fatalf("%d races reported, the first between %s and %s", len(races), races[0].Access.API, races[0].Previous.API)
			}
		})
	}
}

// frames returns the Go functions of a walk's PCs.
func frames(pcs []uintptr) []string {
	var out []string
	fs := runtime.CallersFrames(pcs)
	for {
		f, more := fs.Next()
		if f.Function != "" {
			out = append(out, f.Function)
		}
		if !more {
			return out
		}
	}
}

//go:noinline
func producer(t *testing.T, p cu.CUdeviceptr, s cu.CUstream) {
	must(t, cu.MemsetD8Async(p, 1, 4096, s))
}

//go:noinline
func consumer(t *testing.T, p cu.CUdeviceptr, s cu.CUstream) {
	out := make([]byte, 4096)
	must(t, cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, 4096)) // nocallback binding: the walk still works
	_ = s
}

// Each side of a report carries where its operation was queued: the walk
// from the fake's frames reaches the Go caller, through bindings marked
// nocallback too.
func TestRaceStacks(t *testing.T) {
	primary(t)
	races := racesOf(t, func() {
		p, s := alloc(t, 4096), stream(t, nb)
		producer(t, p, s)
		consumer(t, p, s)
		must(t, cu.StreamSynchronize(s))
	})
	if len(races) != 1 {
		t.Fatalf("%d races, want 1", len(races))
	}
	for _, a := range []fakecuda.RaceAccess{races[0].Access, races[0].Previous} {
		fs := frames(a.PCs)
		want := "fakecuda_test.producer"
		if a.API == "cuMemcpyDtoH" {
			want = "fakecuda_test.consumer"
		}
		joined := strings.Join(fs, "\n")
		if !strings.Contains(joined, want) || !strings.Contains(joined, "fakecuda_test.TestRaceStacks") {
			t.Errorf("the stack of %s lacks %s or the test:\n%s", a.API, want, joined)
		}
	}
}

// A race is reported whatever order the workers run in: the verdict
// depends on how work was queued, not on timing. Each seed runs every
// pattern, racy and fixed, in a child process.
func TestRaceVerdictUnderSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	for seed := range 4 {
		out, err := child(t, "TestRaceSeedChild", fmt.Sprintf("%s=%d", fakecuda.SeedEnv, seed), fakecuda.RaceEnv+"=1")
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, out)
		}
		if !strings.Contains(out, "--- PASS: TestRaceSeedChild") {
			t.Fatalf("seed %d: the child did not run the patterns:\n%s", seed, out)
		}
	}
}

func TestRaceSeedChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestRaceVerdictUnderSeeds")
	}
	primary(t)
	for _, p := range racePatterns {
		if n := len(racesOf(t, func() { p.run(t, false) })); n == 0 {
			t.Errorf("%s: not reported", p.name)
		}
		if n := len(racesOf(t, func() { p.run(t, true) })); n != 0 {
			t.Errorf("%s, fixed: %d races", p.name, n)
		}
	}
}

// A host function that nobody waits for orders nothing: the same racy
// read is reported whether the host function had already run or was still
// queued, under every seed. The long grace period keeps the seeded
// scheduler from running anything until the host waits, so the host
// function is still queued at the read unless the test waits for it.
func TestHostFunctionVerdictUnderSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	for seed := range 4 {
		out, err := child(t, "TestHostFunctionSeedChild", fmt.Sprintf("%s=%d", fakecuda.SeedEnv, seed), "FAKECUDA_SEED_GRACE_MS=60000", fakecuda.RaceEnv+"=1")
		if err != nil || !strings.Contains(out, "--- PASS: TestHostFunctionSeedChild") {
			t.Fatalf("seed %d: %v\n%s", seed, err, out)
		}
	}
}

func TestHostFunctionSeedChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestHostFunctionVerdictUnderSeeds")
	}
	primary(t)
	for _, waitRan := range []bool{false, true} {
		var ran bool
		if n := len(racesOf(t, func() { ran = copyHostFunctionRead(t, false, waitRan) })); n != 1 {
			t.Errorf("host function run before the read %v: %d races, want 1", ran, n)
		}
		if ran != waitRan {
			t.Errorf("the host function had run at the read: %v, want %v (the schedule was not forced)", ran, waitRan)
		}
		if n := len(racesOf(t, func() { copyHostFunctionRead(t, true, waitRan) })); n != 0 {
			t.Errorf("synchronized, host function waited for %v: %d races", waitRan, n)
		}
	}
}

// Code that runs because a host function completed (a Go function of
// cuda.Stream.Then) is ordered after it through ObserveHostFunc: its host
// accesses and the work it queues. The same code unobserved, and other
// goroutines meanwhile, stay unordered; a host function that has not run
// is not found.
func TestObserveHostFunc(t *testing.T) {
	store := lib.Symbol("fakecuda_hostfn_store")
	// run copies on one stream, queues a host function after the copy,
	// waits (ordering nothing) until it has run, and calls observe with
	// the host function's argument and use: a host read of what was copied
	// and an overwrite of the copy's source on another stream.
	run := func(t *testing.T, observe func(flag unsafe.Pointer, use func() error)) []fakecuda.Race {
		return racesOf(t, func() {
			p, dst, flag := alloc(t, 4096), pinned(t, 4096), pinned(t, 4)
			s1, s2 := stream(t, nb), stream(t, nb)
			must(t, cu.MemcpyDtoHAsync(dst, p, 4096, s1))
			must(t, cu.LaunchHostFunc(s1, cu.CUhostFn(store), flag))
			lib.Quiesce(10 * time.Second)
			observe(flag, func() error {
				hostAccess(dst, 4096, false)
				return cu.MemsetD8Async(p, 2, 4096, s2)
			})
			must(t, cu.CtxSynchronize())
		})
	}
	t.Run("observed", func(t *testing.T) {
		primary(t)
		races := run(t, func(flag unsafe.Pointer, use func() error) {
			if !lib.ObserveHostFunc(store, uintptr(flag), func() { must(t, use()) }) {
				t.Error("the host function that ran was not found")
			}
		})
		if len(races) != 0 {
			t.Errorf("%d races, the first between %s and %q", len(races), races[0].Access.API, races[0].Previous.API)
		}
	})
	t.Run("unobserved", func(t *testing.T) {
		primary(t)
		races := run(t, func(_ unsafe.Pointer, use func() error) { must(t, use()) })
		if len(races) != 2 {
			t.Errorf("%d races, want the host read's and the memset's", len(races))
		}
	})
	t.Run("another goroutine", func(t *testing.T) {
		ctx := primary(t)
		races := run(t, func(flag unsafe.Pointer, use func() error) {
			lib.ObserveHostFunc(store, uintptr(flag), func() {
				errs := make(chan error, 1)
				go func() {
					// On a thread of its own: not the observer's.
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					if err := cu.CtxPushCurrent(ctx); err != nil {
						errs <- err
						return
					}
					err := use()
					var c cu.CUcontext
					if perr := cu.CtxPopCurrent(&c); err == nil {
						err = perr
					}
					errs <- err
				}()
				must(t, <-errs)
			})
		})
		if len(races) != 2 {
			t.Errorf("%d races, want the host read's and the memset's", len(races))
		}
	})
	t.Run("not run", func(t *testing.T) {
		primary(t)
		var flag uint32
		if lib.ObserveHostFunc(store, uintptr(unsafe.Pointer(&flag)), func() {}) {
			t.Error("found the completion of a host function never queued")
		}
	})
}

// child runs one test of this binary in a child process with env added.
func child(t *testing.T, test string, env ...string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1", fakecuda.QuickRaceExit())...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// With a seed, the order in which streams' operations run is the seed's:
// two streams writing the same word, unordered, leave the same winner on
// every run for a seed, and different ones across seeds.
func TestSeededOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	outcome := func(seed int) string {
		out, err := child(t, "TestSeedOrderChild", fmt.Sprintf("%s=%d", fakecuda.SeedEnv, seed), "FAKECUDA_SEED_GRACE_MS=60000")
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, out)
		}
		i := strings.Index(out, "winners ")
		if i < 0 {
			t.Fatalf("seed %d: no outcome in\n%s", seed, out)
		}
		return strings.Fields(out[i:])[1]
	}
	seen := map[string]bool{}
	for seed := range 4 {
		a, b := outcome(seed), outcome(seed)
		if a != b {
			t.Errorf("seed %d: %s, then %s", seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 2 {
		t.Errorf("every seed gave the same order: %v", seen)
	}
}

func TestSeedOrderChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestSeededOrder")
	}
	if _, ok := lib.Seed(); !ok {
		t.Fatal("the scheduler is not seeded")
	}
	primary(t)
	p := alloc(t, 4)
	s1, s2, s3 := stream(t, nb), stream(t, nb), stream(t, nb)
	var winners strings.Builder
	for range 24 {
		must(t, cu.MemsetD32Async(p, 1, 1, s1))
		must(t, cu.MemsetD32Async(p, 2, 1, s2))
		must(t, cu.MemsetD32Async(p, 3, 1, s3))
		must(t, cu.CtxSynchronize())
		fmt.Fprint(&winners, words(t, p, 1)[0])
	}
	fmt.Printf("winners %s\n", winners.String())
}
