package cuda

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// These tests hold the package to its safety promises as an adversarial
// user would try them: calls racing Close, nil and zero handles, panics
// inside Context.Do, destroys the driver refuses, sizes that overflow.

// TestCloseWaitsForCopyInFlight: a synchronous copy racing the last Close
// of its destination must either finish before the memory is freed or not
// reach the driver at all. If it could run after the free, a new
// allocation at the same address would receive the old writer's bytes.
func TestCloseWaitsForCopyInFlight(t *testing.T) {
	_, ctx := needGPU(t)
	const size = 64 << 10
	// The window is narrow (a copy must read the address before Close and
	// write after the new allocation's memset), so many rounds, with two
	// writers each.
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	old := make([]byte, size)
	for i := range old {
		old[i] = 0xAA
	}
	got := make([]byte, size)
	for round := range rounds {
		m, err := Alloc(ctx, size)
		must(t, err)
		var wg sync.WaitGroup
		copied := make(chan struct{}, 2)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					err := CopyToDevice(m, old)
					if i == 0 {
						copied <- struct{}{}
					}
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("round %d: a copy racing Close failed with %v, want ErrClosed", round, err)
						}
						return
					}
				}
			}()
		}
		<-copied
		must(t, m.Close())
		fresh, err := Alloc(ctx, size)
		must(t, err)
		must(t, fresh.MemsetD8(0x11))
		wg.Wait()
		must(t, CopyFromDevice(got, fresh))
		must(t, fresh.Close())
		for i, b := range got {
			if b != 0x11 {
				t.Fatalf("round %d: byte %d of a fresh allocation is %#x after its memset to 0x11: a copy into freed memory landed in it", round, i, b)
			}
		}
	}
}

// TestCloseRacingCallsGetErrClosed: goroutines call a method in a loop
// while the object's last handle is closed. Every call either completes
// or returns ErrClosed: none reaches the driver with a destroyed handle.
func TestCloseRacingCallsGetErrClosed(t *testing.T) {
	dev, ctx := needGPU(t)
	type victim struct {
		call  func() error
		close func() error
		done  func()
	}
	cases := map[string]func() victim{
		"Event.Record, event closed": func() victim {
			s, e := newStreamEvent(t, ctx)
			return victim{func() error { return e.Record(s) }, e.Close, func() { must(t, s.Close()) }}
		},
		"Event.Record, stream closed": func() victim {
			s, e := newStreamEvent(t, ctx)
			return victim{func() error { return e.Record(s) }, s.Close, func() { must(t, e.Close()) }}
		},
		"Stream.WaitEvent, stream closed": func() victim {
			s, e := newStreamEvent(t, ctx)
			return victim{func() error { return s.WaitEvent(e) }, s.Close, func() { must(t, e.Close()) }}
		},
		"Stream.WaitEvent, event closed": func() victim {
			s, e := newStreamEvent(t, ctx)
			return victim{func() error { return s.WaitEvent(e) }, e.Close, func() { must(t, s.Close()) }}
		},
		"Stream.Query": func() victim {
			s, e := newStreamEvent(t, ctx)
			must(t, e.Close())
			return victim{func() error { _, err := s.Query(); return err }, s.Close, func() {}}
		},
		"Event.Query": func() victim {
			s, e := newStreamEvent(t, ctx)
			must(t, e.Record(s))
			must(t, s.Close())
			return victim{func() error { _, err := e.Query(); return err }, e.Close, func() {}}
		},
		"DeviceMemory.MemsetD8Async, memory closed": func() victim {
			s, e := newStreamEvent(t, ctx)
			must(t, e.Close())
			m, err := Alloc(ctx, 4096)
			must(t, err)
			return victim{func() error { return m.MemsetD8Async(s, 1) }, m.Close, func() {
				must(t, s.Synchronize())
				must(t, s.Close())
			}}
		},
		"Context.Synchronize, created context closed": func() victim {
			own, err := NewContext(dev)
			must(t, err)
			return victim{own.Synchronize, own.Close, func() {}}
		},
	}
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	for name, newVictim := range cases {
		t.Run(name, func(t *testing.T) {
			n := rounds
			if strings.Contains(name, "Async") {
				// The work enqueued before Close runs at the fake
				// driver's simulated speed.
				n = max(rounds/10, 5)
			}
			for range n {
				v := newVictim()
				var wg sync.WaitGroup
				started := make(chan struct{}, 4)
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; ; i++ {
							err := v.call()
							if i == 0 {
								started <- struct{}{}
							}
							if err != nil {
								if !errors.Is(err, ErrClosed) {
									t.Errorf("a call racing Close failed with %v, want ErrClosed", err)
								}
								return
							}
						}
					}()
				}
				<-started
				must(t, v.close())
				wg.Wait()
				v.done()
			}
		})
	}
}

func newStreamEvent(t *testing.T, ctx *Context) (*Stream, *Event) {
	t.Helper()
	s, err := NewStream(ctx)
	must(t, err)
	e, err := NewEvent(ctx)
	must(t, err)
	return s, e
}

// boundThreads counts the fake driver's threads with a context pushed.
func boundThreads() int { return cudatest.Live().BoundThreads }

// waitBoundThreads waits until the fake driver counts want threads with a
// context pushed: a thread left locked by an exiting goroutine ends a
// little after it.
func waitBoundThreads(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for boundThreads() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads have a context pushed, want %d: a thread was given back with the context stack not restored", boundThreads(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// noStaleContext checks that no goroutine finds a context current that it
// did not bind, on as many threads as the scheduler hands out.
func noStaleContext(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cur cu.CUcontext
			if err := cu.CtxGetCurrent(&cur); err != nil || cur != 0 {
				t.Errorf("a fresh goroutine's thread has context %#x current (err %v)", cur, err)
			}
			time.Sleep(time.Millisecond) // hold the thread so others get other threads
		}()
	}
	wg.Wait()
}

// TestContextStackRestoredOnEveryExit: Context.Do restores the thread's
// context stack when its function panics or calls runtime.Goexit, and when
// the driver refuses the pop the thread is never given to another
// goroutine.
func TestContextStackRestoredOnEveryExit(t *testing.T) {
	_, ctx := needGPU(t)
	fake := cudatest.Active()
	before := 0
	if fake {
		before = boundThreads()
	}
	// restored checks that no thread was given back with a context pushed:
	// on the fake driver by its count of such threads, everywhere by
	// asking the threads the scheduler hands out.
	restored := func(t *testing.T) {
		t.Helper()
		if fake {
			waitBoundThreads(t, before)
		}
		noStaleContext(t)
	}
	run := func(f func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f()
		}()
		<-done
	}
	t.Run("panic", func(t *testing.T) {
		sentinel := errors.New("sentinel")
		var got any
		run(func() {
			defer func() { got = recover() }()
			_ = ctx.Do(func() error { panic(sentinel) })
		})
		if got != sentinel {
			t.Fatalf("recovered %v, want the function's panic", got)
		}
		restored(t)
	})
	t.Run("Goexit", func(t *testing.T) {
		run(func() {
			_ = ctx.Do(func() error { runtime.Goexit(); return nil })
		})
		restored(t)
	})
	t.Run("pop refused in Do", func(t *testing.T) {
		if !fake {
			t.Skip("refusing a pop needs the fake driver's fault injection")
		}
		var err error
		run(func() {
			cudatest.FailCall("cuCtxPopCurrent", 1, cu.CUDA_ERROR_UNKNOWN)
			err = ctx.Do(func() error { return nil })
		})
		if !errors.Is(err, cu.CUDA_ERROR_UNKNOWN) {
			t.Fatalf("Do with the pop refused = %v, want the driver's error", err)
		}
		restored(t)
	})
	t.Run("pop refused in a bound call", func(t *testing.T) {
		if !fake {
			t.Skip("refusing a pop needs the fake driver's fault injection")
		}
		var err error
		run(func() {
			cudatest.FailCall("cuCtxPopCurrent", 1, cu.CUDA_ERROR_UNKNOWN)
			var e *Event
			e, err = NewEvent(ctx)
			if e != nil {
				t.Error("NewEvent returned an event with its error")
			}
		})
		if !errors.Is(err, cu.CUDA_ERROR_UNKNOWN) {
			t.Fatalf("NewEvent with the pop refused = %v, want the driver's error", err)
		}
		restored(t)
	})
	if got := LiveObjects(); got.Events != 0 {
		t.Errorf("LiveObjects().Events = %d: the event made before the refused pop was not destroyed", got.Events)
	}
}

// TestDeferredDestroyDuringCapture: a free refused during another
// goroutine's global-mode capture is kept, reported, and retried when the
// capture ends; LiveObjects never counts less than the driver holds.
func TestDeferredDestroyDuringCapture(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := LiveObjects()
	m, err := Alloc(ctx, 1<<20)
	must(t, err)
	started, finish := make(chan error), make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		started <- s.BeginCapture(CaptureGlobal)
		<-finish
		if g, _ := s.EndCapture(); g != nil { // the refused free invalidated it
			_ = g.Close()
		}
	}()
	must(t, <-started)
	err = m.Close()
	if !errors.Is(err, ErrDeferred) || !errors.Is(err, cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) {
		close(finish)
		<-ended
		t.Fatalf("Close during a global capture = %v, want ErrDeferred and CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", err)
	}
	mid := LiveObjects()
	if mid.DeviceMemory != before.DeviceMemory+1 || mid.Deferred != before.Deferred+1 {
		t.Errorf("after the refused free: DeviceMemory %d, Deferred %d; want %d, %d",
			mid.DeviceMemory, mid.Deferred, before.DeviceMemory+1, before.Deferred+1)
	}
	if again := m.Close(); !errors.Is(again, ErrDeferred) {
		t.Errorf("second Close while the free waits = %v, want the same ErrDeferred error", again)
	}
	close(finish)
	<-ended
	after := LiveObjects()
	if after.DeviceMemory != before.DeviceMemory || after.Deferred != before.Deferred {
		t.Errorf("after the capture ended: DeviceMemory %d, Deferred %d; want %d, %d (the free was not retried)",
			after.DeviceMemory, after.Deferred, before.DeviceMemory, before.Deferred)
	}
	if again := m.Close(); again != nil {
		t.Errorf("Close after the retried free = %v, want nil", again)
	}
}

// TestDeferredDestroyInThreadLocalCapture: the same from the capturing
// goroutine itself, in thread-local mode.
func TestDeferredDestroyInThreadLocalCapture(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := LiveObjects()
	m, err := Alloc(ctx, 4096)
	must(t, err)
	var cerr error
	g, _ := s.Capture(CaptureThreadLocal, func() error {
		cerr = m.Close()
		return nil
	})
	if g != nil {
		_ = g.Close()
	}
	if !errors.Is(cerr, ErrDeferred) {
		t.Fatalf("Close inside a thread-local capture = %v, want ErrDeferred", cerr)
	}
	if after := LiveObjects(); after.DeviceMemory != before.DeviceMemory || after.Deferred != before.Deferred {
		t.Errorf("after the capture: %+v, want the counts of before %+v", after, before)
	}
}

// TestDeferredRetryLeavesOtherCapturesAlone: a destroy deferred by one
// goroutine's thread-local capture is not retried by the Close another
// goroutine makes inside a capture of its own, which would break it.
func TestDeferredRetryLeavesOtherCapturesAlone(t *testing.T) {
	_, ctx := needGPU(t)
	a, err := NewStream(ctx)
	must(t, err)
	defer a.Close()
	b, err := NewStream(ctx)
	must(t, err)
	defer b.Close()
	m, err := Alloc(ctx, 4096)
	must(t, err)
	before := LiveObjects()
	deferredIn, other := make(chan struct{}), make(chan struct{})
	var aErr error
	go func() {
		ga, err := a.Capture(CaptureThreadLocal, func() error {
			aErr = m.Close() // refused: kept for a retry
			close(deferredIn)
			<-other
			return nil
		})
		if ga != nil {
			_ = ga.Close()
		}
		if err != nil && aErr == nil {
			aErr = err
		}
	}()
	<-deferredIn
	e, err := NewEvent(ctx)
	must(t, err)
	gb, err := b.Capture(CaptureThreadLocal, func() error { return e.Close() })
	close(other)
	if err != nil {
		t.Fatalf("a capture closing an event while another goroutine's free waits: %v", err)
	}
	must(t, gb.Close())
	if !errors.Is(aErr, ErrDeferred) {
		t.Fatalf("Close inside the first capture = %v, want ErrDeferred", aErr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for LiveObjects().Deferred != before.Deferred && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the first capture's EndCapture retries it
	}
	if got := LiveObjects(); got.Deferred != 0 || got.DeviceMemory != before.DeviceMemory-1 {
		t.Fatalf("after both captures: %+v (before %+v)", got, before)
	}
}

func TestBlocksNeverWrong(t *testing.T) {
	for _, c := range []struct {
		n, size int
		want    uint32
	}{
		{1, 256, 1}, {256, 256, 1}, {257, 256, 2}, {1 << 20, 256, 4096},
		{math.MaxUint32, 1, math.MaxUint32},
		{0, 256, 0}, {-1, 256, 0}, {1, 0, 0}, {1, -1, 0},
		{1 << 32, 1, 0}, {1 << 40, 256, 0}, {math.MaxInt, 256, 0}, {math.MaxInt, 1, 0},
		{math.MaxInt, math.MaxInt, 1},
	} {
		if got := Blocks(c.n, c.size); got != c.want {
			t.Errorf("Blocks(%d, %d) = %d, want %d", c.n, c.size, got, c.want)
		}
	}
}

// TestLaunchRefusesEmptyGrid: what Blocks returns for an impossible size
// never reaches the driver as a one-block launch.
func TestLaunchRefusesEmptyGrid(t *testing.T) {
	k, _ := fakeKernel(t, false)
	var live atomic.Int64
	s := newStreamHandle(nopCore(&live, func(st *streamState) { st.raw = 0x3 }))
	defer s.Close()
	args, err := k.NewArgs(cu.CUdeviceptr(0), cu.CUdeviceptr(0), cu.CUdeviceptr(0), uint32(0))
	must(t, err)
	defer args.Close()
	for _, cfg := range []LaunchConfig{
		{Grid: Dim3{X: Blocks(0, 256)}, Block: Dim3{X: 256}},
		{Grid: Dim3{X: Blocks(1<<40, 256)}, Block: Dim3{X: 256}},
		{Grid: Dim3{X: 1}},
	} {
		if err := k.LaunchArgs(s, cfg, args); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("LaunchArgs %+v = %v, want CUDA_ERROR_INVALID_VALUE before the driver", cfg, err)
		}
		if err := k.Launch(s, cfg, cu.CUdeviceptr(0), cu.CUdeviceptr(0), cu.CUdeviceptr(0), uint32(0)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("Launch %+v = %v, want CUDA_ERROR_INVALID_VALUE before the driver", cfg, err)
		}
	}
}

// TestAllocHostSizes: sizes that overflow, or that no machine has, are
// errors before anything is allocated.
func TestAllocHostSizes(t *testing.T) {
	for _, n := range []int{-1, 1<<61 + 1, 1 << 61, math.MaxInt} {
		if b, err := AllocHost[float64](nil, n); b != nil || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("AllocHost[float64](%d) = %v, %v; want CUDA_ERROR_INVALID_VALUE", n, b, err)
		}
	}
	if b, err := AllocHost[byte](nil, 1<<55); b != nil || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("AllocHost[byte](1<<55) = %v, %v; want CUDA_ERROR_INVALID_VALUE (more than the machine's memory)", b, err)
	}
	for _, n := range []int{-1} {
		if m, err := Alloc(nil, n); m != nil || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("Alloc(%d) = %v, %v; want CUDA_ERROR_INVALID_VALUE", n, m, err)
		}
	}
}

// TestHostBufferViewOutlivesBuffer: a view of a buffer that was dropped
// (and cleaned up) or closed is still memory the program may use.
func TestHostBufferViewOutlivesBuffer(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects().HostBuffers
	const n = 1 << 20 // 4 MiB: memory a C allocator would give back to the system
	view := func() []float32 {
		b, err := AllocHost[float32](ctx, n)
		must(t, err)
		return b.Slice()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for LiveObjects().HostBuffers != before {
		if time.Now().After(deadline) {
			t.Fatal("the dropped buffer was not released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	for i := range view {
		view[i] = float32(i)
	}
	runtime.GC()
	for i, v := range view {
		if v != float32(i) {
			t.Fatalf("view[%d] = %v after a GC, want %d", i, v, i)
		}
	}

	b, err := AllocHost[uint32](ctx, 1000)
	must(t, err)
	closed := b.Slice()
	must(t, b.Close())
	for i := range closed {
		closed[i] = uint32(i)
	}
	if closed[999] != 999 || b.Slice() != nil {
		t.Fatal("a view after Close is not plain memory, or the closed handle still gives one")
	}
}
