package cuda

import (
	"errors"
	"github.com/gocuda/gocuda/internal/standin"
	"testing"
	"time"
)

// The destroy of an object that has seen a hot call waits for the hot
// calls in flight: a grace period does not end while a thread is inside
// one, of one handle or of two.
func TestHotGraceWaitsForCallInside(t *testing.T) {
	for _, c := range []struct {
		name string
		call func(h *handle[fakeState]) int32
	}{
		{"one handle", func(h *handle[fakeState]) int32 { return hotStreamQuery(standin.Hold1(), h, 0) }},
		{"two handles", func(h *handle[fakeState]) int32 { return hotEventRecord(standin.Hold2(), h, h, 0, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newFakeKind()
			x := k.newObject()
			hotReady(&x.h)
			if got := x.h.core.hot.Load(); got == 0 {
				t.Fatal("the core is not marked after hotReady")
			}
			inside := make(chan int32)
			go func() { inside <- c.call(&x.h) }()
			for !standin.Holding() {
				time.Sleep(time.Millisecond)
			}
			graced := make(chan struct{})
			go func() {
				hotGrace()
				close(graced)
			}()
			select {
			case <-graced:
				t.Fatal("the grace period ended while a hot call was inside the driver")
			case <-time.After(50 * time.Millisecond):
			}
			standin.Release()
			if r := <-inside; r != 0 {
				t.Fatalf("hot call = %d, want 0", r)
			}
			select {
			case <-graced:
			case <-time.After(10 * time.Second):
				t.Fatal("the grace period did not end after the hot call returned")
			}
		})
	}
}

// A hot call on a closed handle, or with a closed second handle, never
// reaches the driver and names the closed handle.
func TestHotCallOnClosedHandleSkipsDriver(t *testing.T) {
	k := newFakeKind()
	x, y := k.newObject(), k.newObject()
	hotReady(&x.h)
	hotReady(&y.h)
	if err := y.h.close("test"); err != nil {
		t.Fatal(err)
	}
	before := standin.HoldCalls()
	if r := hotEventRecord(standin.Hold2(), &x.h, &y.h, 0, 0); r != hotClosed2 {
		t.Errorf("a hot call with the second handle closed = %d, want %d", r, hotClosed2)
	}
	if err := x.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if r := hotStreamQuery(standin.Hold1(), &x.h, 0); r != hotClosed1 {
		t.Errorf("a hot call on a closed handle = %d, want %d", r, hotClosed1)
	}
	if n := standin.HoldCalls() - before; n != 0 {
		t.Errorf("closed handles reached the driver %d times", n)
	}
	if err := hotResult("Op", "fn", " (second)", hotClosed2); !errors.Is(err, ErrClosed) || err.Error() == "" {
		t.Errorf("hotResult(closed second) = %v, want ErrClosed", err)
	}
	if k.destroyed.Load() != 2 {
		t.Errorf("%d objects destroyed, want 2", k.destroyed.Load())
	}
}

// BenchmarkHotCall is BenchmarkHandleHold's one- and two-handle cases
// through the hot path: a cgo call to a no-op, with the handles checked
// on the C side after the thread's mark.
func BenchmarkHotCall(b *testing.B) {
	k := newFakeKind()
	x, y := k.newObject(), k.newObject()
	hotReady(&x.h)
	hotReady(&y.h)
	nop1, nop2 := standin.Nop1(), standin.Nop2()
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			if hotStreamQuery(nop1, &x.h, 0) != 0 {
				b.Fatal("closed")
			}
		}
	})
	b.Run("two", func(b *testing.B) {
		for b.Loop() {
			if hotEventRecord(nop2, &x.h, &y.h, 0, 0) != 0 {
				b.Fatal("closed")
			}
		}
	})
}
