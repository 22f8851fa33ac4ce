package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Test 1: clones are one queue; the queue lives until its last handle.
func TestStreamCloneSharesQueue(t *testing.T) {
	_, ctx := needGPU(t)
	_, base, _ := LiveHandles()
	s, err := NewStream(ctx)
	must(t, err)
	other, err := NewStream(ctx)
	must(t, err)
	defer other.Close()
	handles := []*Stream{s}
	for range 3 {
		c, err := handles[len(handles)-1].Clone()
		must(t, err)
		handles = append(handles, c)
	}
	for _, h := range handles {
		if h.Raw() != s.Raw() || !h.IsSameQueue(s) || !s.IsSameQueue(h) {
			t.Fatal("a clone is not the same queue")
		}
	}
	if s.IsSameQueue(other) || s.Raw() == other.Raw() {
		t.Fatal("two streams are the same queue")
	}
	sameContext(t, s, ctx)

	for _, h := range handles[:len(handles)-1] {
		must(t, h.Close())
	}
	last := handles[len(handles)-1]
	if _, n, _ := LiveHandles(); n != base+2 {
		t.Fatalf("live streams = %d, want %d", n, base+2)
	}
	// The queue still takes work through the last handle.
	buf := deviceBuffer(t, ctx, 4096)
	host := pinnedWords(t, ctx, 1024)
	must(t, ctx.Do(func() error {
		if err := cu.MemsetD32Async(buf, 7, 1024, last.Raw()); err != nil {
			return err
		}
		return cu.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), buf, 4096, last.Raw())
	}))
	must(t, last.Synchronize())
	checkWords(t, "through the last handle", host, 7)

	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	must(t, last.Close())
	if _, n, _ := LiveHandles(); n != base+1 {
		t.Fatalf("live streams after the last close = %d, want %d", n, base+1)
	}
	for _, h := range handles {
		_, qerr := h.Query()
		_, cerr := h.Clone()
		for name, err := range map[string]error{
			"Synchronize": h.Synchronize(), "WaitEvent": h.WaitEvent(ev), "Query": qerr,
			"Clone": cerr, "WaitIdle": h.WaitIdle(t.Context()), "Event.Record": ev.Record(h),
		} {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s on a closed handle = %v, want ErrClosed", name, err)
			}
		}
		if h.Raw() != 0 || h.IsSameQueue(other) {
			t.Error("a closed handle still exposes the queue")
		}
		must(t, h.Close()) // twice is harmless
	}
}

// Test 2: work enqueued through two handles of one queue runs in enqueue
// order, checked on the data.
func TestStreamClonesKeepOrder(t *testing.T) {
	_, ctx := needGPU(t)
	s1, err := NewStream(ctx)
	must(t, err)
	defer s1.Close()
	s2, err := s1.Clone()
	must(t, err)
	defer s2.Close()

	const words = 16 << 20 // 64 MiB
	const bytes = words * 4
	d := deviceBuffer(t, ctx, bytes)
	e := deviceBuffer(t, ctx, bytes)
	copied := pinnedWords(t, ctx, words)
	final := pinnedWords(t, ctx, 1024)
	must(t, ctx.Do(func() error {
		// Slow work first, so a copy that jumped the queue would see it
		// unfinished.
		for i := range 8 {
			if err := cu.MemsetD8Async(d, uint8(i), bytes, s1.Raw()); err != nil {
				return err
			}
		}
		for _, err := range []error{
			cu.MemsetD32Async(d, 0x11111111, words, s1.Raw()),
			cu.MemcpyDtoDAsync(e, d, bytes, s2.Raw()),
			cu.MemsetD32Async(d, 0x22222222, words, s1.Raw()),
			cu.MemcpyDtoHAsync(unsafe.Pointer(&copied[0]), e, bytes, s2.Raw()),
			cu.MemcpyDtoHAsync(unsafe.Pointer(&final[0]), d+bytes-4096, 4096, s1.Raw()),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, s2.Synchronize())
	checkWords(t, "copy made through the clone", copied, 0x11111111)
	checkWords(t, "buffer after the last memset", final, 0x22222222)
}

// Test 3: WaitEvent orders work across two streams, checked on the data.
func TestStreamWaitEventOrdersStreams(t *testing.T) {
	_, ctx := needGPU(t)
	a, err := NewStream(ctx)
	must(t, err)
	defer a.Close()
	b, err := NewStream(ctx)
	must(t, err)
	defer b.Close()
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()

	const bytes = 256 << 20
	const words = bytes / 4
	d := deviceBuffer(t, ctx, bytes)
	e := deviceBuffer(t, ctx, bytes)
	host := pinnedWords(t, ctx, words)
	must(t, ctx.Do(func() error { return cu.MemsetD32Async(e, 0, words, b.Raw()) }))
	must(t, b.Synchronize())

	must(t, ctx.Do(func() error {
		for i := range 16 {
			if err := cu.MemsetD8Async(d, uint8(i), bytes, a.Raw()); err != nil {
				return err
			}
		}
		return cu.MemsetD32Async(d, 0xCAFEBABE, words, a.Raw())
	}))
	must(t, ev.Record(a))
	must(t, b.WaitEvent(ev))
	must(t, ctx.Do(func() error {
		if err := cu.MemcpyDtoDAsync(e, d, bytes, b.Raw()); err != nil {
			return err
		}
		return cu.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), e, bytes, b.Raw())
	}))
	must(t, b.Synchronize())
	checkWords(t, "copy on the waiting stream", host, 0xCAFEBABE)
}

// Test 4: priorities are kept, and an out-of-range one names the range.
func TestStreamPriority(t *testing.T) {
	_, ctx := needGPU(t)
	least, greatest, err := ctx.StreamPriorityRange()
	must(t, err)
	t.Logf("priority range: %d (highest) to %d (lowest)", greatest, least)
	for p := greatest; p <= least; p++ {
		s, err := NewStreamWithPriority(ctx, p)
		must(t, err)
		var raw int32
		must(t, cu.StreamGetPriority(s.Raw(), &raw))
		if s.Priority() != p || int(raw) != p {
			t.Errorf("stream made with priority %d: Priority() %d, driver %d", p, s.Priority(), raw)
		}
		must(t, s.Close())
	}
	for _, p := range []int{greatest - 1, least + 1} {
		s, err := NewStreamWithPriority(ctx, p)
		if err == nil {
			s.Close()
			t.Fatalf("priority %d outside [%d, %d] was accepted", p, greatest, least)
		}
		msg := err.Error()
		if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) ||
			!strings.Contains(msg, fmt.Sprint(greatest)) || !strings.Contains(msg, fmt.Sprint(least)) {
			t.Errorf("priority %d: %v; want CUDA_ERROR_INVALID_VALUE naming %d and %d", p, err, greatest, least)
		}
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	if s.Priority() != 0 {
		t.Errorf("NewStream priority = %d, want 0", s.Priority())
	}
}

// Test 6: the context outlives its streams, whatever the close order.
func TestContextOutlivesStream(t *testing.T) {
	dev, _ := needGPU(t)
	before, _, _ := LiveHandles()
	// Registered first, so it runs after the buffers' cleanups.
	t.Cleanup(func() {
		if n, _, _ := LiveHandles(); n != before {
			t.Errorf("live contexts after every handle closed = %d, want %d", n, before)
		}
	})
	ctx, err := NewContext(dev)
	must(t, err)
	raw := ctx.Raw()
	base, _, _ := LiveHandles()
	s, err := NewStream(ctx)
	must(t, err)
	must(t, ctx.Close())
	if n, _, _ := LiveHandles(); n != base {
		t.Fatalf("live contexts = %d after closing the context handle, want %d: the stream lost it", n, base)
	}
	if s.Context().Raw() != raw {
		t.Fatal("the stream's context changed")
	}
	sameContext(t, s, s.Context())
	buf := deviceBuffer(t, s.Context(), 4096)
	host := pinnedWords(t, s.Context(), 1024)
	must(t, s.Context().Do(func() error {
		if err := cu.MemsetD32Async(buf, 9, 1024, s.Raw()); err != nil {
			return err
		}
		return cu.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), buf, 4096, s.Raw())
	}))
	must(t, s.Synchronize())
	checkWords(t, "work after the context handle closed", host, 9)
	must(t, s.Close())
	// deviceBuffer and pinnedWords hold clones until the test's cleanups.
	if n, _, _ := LiveHandles(); n != base {
		t.Fatalf("live contexts = %d, want %d", n, base)
	}
}

// Test 7: WaitIdle returns promptly on cancel while the stream is busy,
// and nil once it is idle.
func TestStreamWaitIdle(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const bytes = 1 << 30
	d := deviceBuffer(t, ctx, bytes)
	// About 200 GB of writes: tens of milliseconds even on an H200.
	busy := func() {
		must(t, ctx.Do(func() error {
			for i := range 200 {
				if err := cu.MemsetD8Async(d, uint8(i), bytes, s.Raw()); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	busy()
	goroutines := runtime.NumGoroutine()

	cctx, cancel := context.WithCancel(t.Context())
	var cancelled time.Time
	time.AfterFunc(2*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	err = s.WaitIdle(cctx)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitIdle after cancel = %v, want context.Canceled", err)
	}
	if idle, err := s.Query(); err != nil || idle {
		t.Fatalf("stream idle=%v err=%v when the wait was cancelled: the test's work was too short", idle, err)
	}
	if lag := returned.Sub(cancelled); lag > 20*time.Millisecond {
		t.Errorf("WaitIdle returned %v after cancel", lag)
	}

	tctx, cancel2 := context.WithTimeout(t.Context(), 3*time.Millisecond)
	defer cancel2()
	if err := s.WaitIdle(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitIdle past its deadline = %v, want context.DeadlineExceeded", err)
	}

	lctx, cancel3 := context.WithTimeout(t.Context(), time.Minute)
	defer cancel3()
	start := time.Now()
	must(t, s.WaitIdle(lctx))
	t.Logf("stream idle after another %v", time.Since(start))
	if idle, err := s.Query(); err != nil || !idle {
		t.Fatalf("after WaitIdle returned nil: idle=%v err=%v", idle, err)
	}
	must(t, s.WaitIdle(context.Background()))
	// Only the AfterFunc's goroutine may still be finishing.
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > goroutines; {
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d before the waits, %d after", goroutines, runtime.NumGoroutine())
			break
		}
		time.Sleep(time.Millisecond)
	}
}

// An unreachable stream is destroyed by its cleanup and gives back its
// context reference.
func TestStreamCleanup(t *testing.T) {
	_, ctx := needGPU(t)
	c0, s0, _ := LiveHandles()
	func() {
		s, err := NewStream(ctx)
		must(t, err)
		c, err := s.Clone()
		must(t, err)
		_ = c
	}()
	if _, s, _ := LiveHandles(); s != s0+1 {
		t.Fatalf("live streams = %d, want %d", s, s0+1)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		c, s, _ := LiveHandles()
		if c == c0 && s == s0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live contexts %d, streams %d; want %d, %d", c, s, c0, s0)
		}
		time.Sleep(time.Millisecond)
	}
}
