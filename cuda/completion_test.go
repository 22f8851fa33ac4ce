package cuda

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// busyStream returns a stream with a memset of size bytes to v enqueued,
// and the memory, both closed when t ends.
func busyStream(t *testing.T, ctx *Context, size int, v uint8) (*Stream, *DeviceMemory) {
	t.Helper()
	s, err := NewStream(ctx)
	must(t, err)
	m, err := Alloc(ctx, size)
	must(t, err)
	t.Cleanup(func() {
		must(t, s.Synchronize())
		must(t, m.Close())
		must(t, s.Close())
	})
	must(t, m.MemsetD8Async(s, v))
	return s, m
}

func TestStreamDoneClosesAfterTheWork(t *testing.T) {
	_, ctx := needGPU(t)
	s, m := busyStream(t, ctx, 64<<20, 7)
	done, err := s.Done()
	must(t, err)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Done's channel not closed 10 s after a memset")
	}
	// The memset is done; the host function that reported it may still be
	// retiring, so Query is not asked.
	got := make([]byte, 64<<20)
	must(t, CopyFromDevice(got, m))
	if got[0] != 7 || got[len(got)-1] != 7 {
		t.Fatalf("Done closed before the memset landed: bytes %d … %d", got[0], got[len(got)-1])
	}
}

// TestStreamThenRunsInStreamOrder: functions run after the work before
// them, in the order they were enqueued.
func TestStreamThenRunsInStreamOrder(t *testing.T) {
	_, ctx := needGPU(t)
	s, m := busyStream(t, ctx, 1<<20, 0)
	var mu sync.Mutex
	var order []int
	const n = 100
	for i := range n {
		must(t, m.MemsetD32Async(s, uint32(i)))
		must(t, s.Then(func() {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		}))
	}
	must(t, s.WaitIdle(t.Context()))
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		k := len(order)
		mu.Unlock()
		if k == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != n {
		t.Fatalf("%d of %d functions ran", len(order), n)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("function %d ran in place %d: %v", v, i, order)
		}
	}
}

// TestWaitIdleDoesNotPoll: waiting on a busy stream asks the driver once,
// then waits for its report.
func TestWaitIdleDoesNotPoll(t *testing.T) {
	_, ctx := needGPU(t)
	if !cudatest.Active() {
		t.Skip("counting driver calls needs the fake driver")
	}
	s, _ := busyStream(t, ctx, 256<<20, 1)
	before := cudatest.Calls("cuStreamQuery")
	must(t, s.WaitIdle(t.Context()))
	if q := cudatest.Calls("cuStreamQuery") - before; q > 2 {
		t.Errorf("WaitIdle made %d cuStreamQuery calls: it polls", q)
	}
}

// TestWaitIdleCancelled: a cancelled wait returns at once, and the
// completion it left behind is delivered and forgotten later.
func TestWaitIdleCancelled(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 256<<20, 1)
	c, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.WaitIdle(c)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitIdle with a cancelled context = %v", err)
	}
	must(t, s.Synchronize())
	noDispatcher(t)
}

// noDispatcher waits until no completion is pending and the dispatcher
// goroutine has exited: an idle program keeps no goroutine of this package.
func noDispatcher(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), "cuda.dispatchCompletions") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the completion dispatcher still runs with nothing pending:\n%s", buf[:n])
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCompletionLeavesNoGoroutine(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 1<<20, 1)
	ran := make(chan struct{})
	must(t, s.Then(func() { close(ran) }))
	done, err := s.Done()
	must(t, err)
	<-done
	<-ran
	noDispatcher(t)
	if _, err := s.Done(); err != nil { // and it starts again
		t.Fatal(err)
	}
	must(t, s.Synchronize())
	noDispatcher(t)
}

func TestThenRefusesNilAndClosed(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	if err := s.Then(nil); err == nil {
		t.Error("Then(nil) = nil")
	}
	must(t, s.Close())
	if err := s.Then(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Then on a closed stream = %v, want ErrClosed", err)
	}
	if _, err := s.Done(); !errors.Is(err, ErrClosed) {
		t.Errorf("Done on a closed stream = %v, want ErrClosed", err)
	}
}

// TestThenGoexitKeepsDelivering: a function that ends its goroutine
// (runtime.Goexit, as t.FailNow does) does not stop later completions.
func TestThenGoexitKeepsDelivering(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 1<<20, 1)
	must(t, s.Then(func() { runtime.Goexit() }))
	ran := make(chan struct{})
	must(t, s.Then(func() { close(ran) }))
	done, err := s.Done()
	must(t, err)
	for _, ch := range []<-chan struct{}{ran, done} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("a completion after a Goexit was never delivered")
		}
	}
	noDispatcher(t)
}

// TestCompletionRefusedInCapture: a completion would become a graph node,
// run once per launch or never: a capturing stream refuses it, and nothing
// is left pending.
func TestCompletionRefusedInCapture(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	var thenErr, doneErr error
	g, err := s.Capture(CaptureThreadLocal, func() error {
		thenErr = s.Then(func() {})
		_, doneErr = s.Done()
		return nil
	})
	must(t, err)
	must(t, g.Close())
	for what, err := range map[string]error{"Then": thenErr, "Done": doneErr} {
		if !errors.Is(err, cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) {
			t.Errorf("%s during a capture = %v, want CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", what, err)
		}
	}
	noDispatcher(t)
}
