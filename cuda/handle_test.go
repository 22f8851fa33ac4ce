package cuda

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocuda/gocuda/internal/standin"
)

// These tests drive the handle mechanism with a fake destroy: they need no
// driver and run in CI.

type fakeState struct{ id int }

type fake struct{ h handle[fakeState] }

type fakeKind struct {
	live      atomic.Int64
	destroyed atomic.Int64
	done      chan struct{} // closed by the first destroy
	once      sync.Once
}

func newFakeKind() *fakeKind { return &fakeKind{done: make(chan struct{})} }

func (k *fakeKind) newObject() *fake {
	core := newShared(testKind(&k.live, func(*fakeState) error {
		k.destroyed.Add(1)
		k.once.Do(func() { close(k.done) })
		return nil
	}, nil))
	core.val.id = 1
	return k.handle(core)
}

func (k *fakeKind) handle(core *shared[fakeState]) *fake {
	f := &fake{}
	attach(f, &f.h, core)
	return f
}

func (k *fakeKind) clone(f *fake) (*fake, bool) {
	core, ok := f.h.clone()
	if !ok {
		return nil, false
	}
	return k.handle(core), true
}

// nopCore is a core of a fake object, whose destroy does nothing, with the
// state init fills in.
func nopCore[T any](live *atomic.Int64, init func(*T)) *shared[T] {
	c := newShared(testKind(live, func(*T) error { return nil }, nil))
	init(&c.val)
	return c
}

func TestHandleExactCountUnderContention(t *testing.T) {
	k := newFakeKind()
	root := k.newObject()
	const goroutines, iterations = 64, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []*fake
			for i := range iterations {
				// Clone from the root and from clones, close in shifting
				// order, so handles of all ages are closed concurrently.
				src := root
				if len(held) > 0 && i%3 == 0 {
					src = held[len(held)-1]
				}
				c, ok := k.clone(src)
				if !ok {
					t.Errorf("goroutine %d: clone of a live handle failed", g)
					return
				}
				held = append(held, c)
				if len(held) > (g+i)%5 {
					if err := held[0].h.close("test"); err != nil {
						t.Error(err)
					}
					held = held[1:]
				}
			}
			for _, c := range held {
				if err := c.h.close("test"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := root.h.core.refs(); n != 1 {
		t.Fatalf("refs after every clone closed = %d, want 1", n)
	}
	if d := k.destroyed.Load(); d != 0 {
		t.Fatalf("destroyed %d times while the root handle is open", d)
	}
	if err := root.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if d, l := k.destroyed.Load(), k.live.Load(); d != 1 || l != 0 {
		t.Fatalf("after last close: destroyed %d times, live %d; want 1, 0", d, l)
	}
}

func TestHandleCloseTwiceAndUseAfterClose(t *testing.T) {
	k := newFakeKind()
	a := k.newObject()
	b, ok := k.clone(a)
	if !ok {
		t.Fatal("clone failed")
	}
	if err := a.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if err := a.h.close("test"); err != nil {
		t.Fatalf("second close = %v, want nil", err)
	}
	if k.destroyed.Load() != 0 {
		t.Fatal("a double close released the clone's reference")
	}
	if _, ok := a.h.peek(); ok {
		t.Fatal("get on a closed handle succeeded")
	}
	if _, ok := k.clone(a); ok {
		t.Fatal("clone of a closed handle succeeded")
	}
	if _, ok := b.h.peek(); !ok {
		t.Fatal("the clone died with the other handle")
	}
	if err := b.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if k.destroyed.Load() != 1 {
		t.Fatalf("destroyed %d times, want 1", k.destroyed.Load())
	}
	if b.h.core.acquire() {
		t.Fatal("acquire resurrected a destroyed core")
	}
}

// TestHandleCloneRacesClose runs Clone and Close of the same, last handle
// concurrently: the clone either wins (and the object lives until it is
// closed) or fails, and the count never comes back from zero.
func TestHandleCloneRacesClose(t *testing.T) {
	for trial := range 2000 {
		k := newFakeKind()
		f := k.newObject()
		var c *fake
		var ok bool
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); <-start; c, ok = k.clone(f) }()
		go func() { defer wg.Done(); <-start; _ = f.h.close("test") }()
		close(start)
		wg.Wait()
		if ok {
			if k.destroyed.Load() != 0 {
				t.Fatalf("trial %d: a successful clone's object was destroyed", trial)
			}
			_ = c.h.close("test")
		}
		if k.destroyed.Load() != 1 || k.live.Load() != 0 {
			t.Fatalf("trial %d: destroyed %d, live %d; want 1, 0", trial, k.destroyed.Load(), k.live.Load())
		}
	}
}

func TestHandleCleanupReleasesUnreachable(t *testing.T) {
	k := newFakeKind()
	func() {
		f := k.newObject()
		_, _ = f.h.peek()
	}()
	waitDestroyed(t, k)
	if d := k.destroyed.Load(); d != 1 {
		t.Fatalf("destroyed %d times, want 1", d)
	}
}

// An unreachable clone gives back only its own reference.
func TestHandleCleanupOfCloneOnly(t *testing.T) {
	k := newFakeKind()
	root := k.newObject()
	func() {
		c, _ := k.clone(root)
		_ = c
	}()
	deadline := time.Now().Add(5 * time.Second)
	for root.h.core.refs() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the unreachable clone's reference was not released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if k.destroyed.Load() != 0 {
		t.Fatal("the cleanup of a clone destroyed the object")
	}
	if err := root.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if k.destroyed.Load() != 1 {
		t.Fatal("not destroyed by the last close")
	}
}

func TestHandleCleanupAfterCloseDoesNothing(t *testing.T) {
	k := newFakeKind()
	func() {
		f := k.newObject()
		_ = f.h.close("test")
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if d := k.destroyed.Load(); d != 1 {
		t.Fatalf("destroyed %d times, want 1", d)
	}
}

// A Context view (what Stream.Context returns) cannot be closed by its
// user, holds no reference, and is closed to calls when its owner lets the
// context go.
func TestContextViewCloseIsNoop(t *testing.T) {
	var live atomic.Int64
	core := newShared(testKind(&live, func(*ctxState) error { return nil }, nil))
	core.val.raw = 0x1000
	owner := newContextHandle(core)
	var r ctxRef
	r.core, _ = owner.ref("test")
	v := r.context()
	if err := v.Close(); err != nil || v.Raw() != 0x1000 {
		t.Fatalf("close of a view: err %v, raw %#x", err, v.Raw())
	}
	if r.context() != v {
		t.Fatal("a second call made another view")
	}
	_ = owner.Close()
	if live.Load() != 1 {
		t.Fatal("destroyed while the owner's reference is held")
	}
	if err := r.release(); err != nil {
		t.Fatal(err)
	}
	if live.Load() != 0 {
		t.Fatal("release did not give the reference back")
	}
	if err := v.Synchronize(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a view after its owner let go: Synchronize = %v, want ErrClosed", err)
	}
}

func waitDestroyed(t *testing.T, k *fakeKind) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-k.done:
			return
		case <-timeout:
			t.Fatal("cleanup did not release the unreachable handle within 5s")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestClosedPublicHandles drives the public types' closed paths over fake
// cores, so the checks that keep closed handles away from the driver are
// tested without one.
func TestClosedPublicHandles(t *testing.T) {
	var live atomic.Int64
	nop := func(*ctxState) error { return nil }
	cc := newShared(testKind(&live, nop, nil))
	cc.val.raw = 0x1000
	ctx := newContextHandle(cc)
	sc := newShared(testKind(&live, func(*streamState) error { return nil }, dropStream))
	sc.val.raw, sc.val.priority = 0x2000, -1
	var err error
	if sc.val.ctx.core, err = ctx.ref("test"); err != nil {
		t.Fatal(err)
	}
	s := newStreamHandle(sc)
	pc := s.Context()
	s2, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if s.Raw() != s2.Raw() || !s.IsSameQueue(s2) || s2.Priority() != -1 {
		t.Fatal("a clone is not the same queue")
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if s2.Context().Raw() != 0x1000 {
		t.Fatal("the stream's context died with the user's context handle")
	}
	if err := s2.Context().Close(); err != nil || s2.Context() == nil || s2.Context().Raw() != 0x1000 {
		t.Fatal("closing a stream's own context handle had an effect")
	}
	_ = s.Close()
	_ = s2.Close()
	if n := live.Load(); n != 0 {
		t.Fatalf("live = %d after every handle closed, want 0", n)
	}
	if pc.Raw() != 0 {
		t.Fatal("the stream's context reference survived the stream")
	}
	evc := newShared(testKind(&live, func(*eventState) error { return nil }, nil))
	evc.val.raw = 0x3000
	ev := newEventHandle(evc)
	_ = ev.Close()

	checks := map[string]error{
		"Stream.Synchronize":    s.Synchronize(),
		"Stream.WaitEvent":      s.WaitEvent(ev),
		"Stream.WaitIdle":       s.WaitIdle(t.Context()),
		"Event.Record":          ev.Record(s),
		"Event.Synchronize":     ev.Synchronize(),
		"Context.Synchronize":   ctx.Synchronize(),
		"Context.Do":            ctx.Do(func() error { return nil }),
		"Stream.Close (again)":  s.Close(),
		"Event.Close (again)":   ev.Close(),
		"Context.Close (again)": ctx.Close(),
	}
	_, qerr := s.Query()
	checks["Stream.Query"] = qerr
	_, qerr = ev.Query()
	checks["Event.Query"] = qerr
	_, cerr := s.Clone()
	checks["Stream.Clone"] = cerr
	_, cerr = ev.Clone()
	checks["Event.Clone"] = cerr
	_, cerr = ctx.Clone()
	checks["Context.Clone"] = cerr
	_, cerr = NewStream(ctx)
	checks["NewStream"] = cerr
	_, cerr = NewStream(nil)
	checks["NewStream (nil)"] = cerr
	_, cerr = NewEvent(ctx)
	checks["NewEvent"] = cerr
	_, _, cerr = ctx.StreamPriorityRange()
	checks["Context.StreamPriorityRange"] = cerr
	_, cerr = Elapsed(ev, ev)
	checks["Elapsed"] = cerr
	for op, err := range checks {
		again := len(op) > 7 && op[len(op)-7:] == "(again)"
		switch {
		case again && err != nil:
			t.Errorf("%s = %v, want nil", op, err)
		case !again && !errors.Is(err, ErrClosed):
			t.Errorf("%s = %v, want ErrClosed", op, err)
		}
	}
	if s.Raw() != 0 || ev.Raw() != 0 || ctx.Raw() != 0 || s.Context().Raw() != 0 || s.IsSameQueue(s) {
		t.Error("a closed handle still exposes its object")
	}
}

func BenchmarkHandleCloneClose(b *testing.B) {
	k := newFakeKind()
	root := k.newObject()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c, _ := k.clone(root)
			_ = c.h.close("test")
		}
	})
}

// sink keeps the benchmarks' driver stand-in from being optimised away.
var sink uintptr

// standInCall is one cgo crossing to a C function that does nothing, in
// place of a driver call: an atomic operation next to a cgo transition can
// cost more than one in a tight Go loop.
func standInCall(a, b int) { sink += uintptr(standin.RawCall1(standin.Nop1(), uintptr(a^b))) }

// BenchmarkHandleHold is the floor of the handle discipline on a machine:
// what holding one or two handles around a call costs, with a cgo call to
// a no-op in place of the driver. Each hold is two atomic read-modify-
// writes (enter, exit); a two-handle call such as Event.Record does four.
func BenchmarkHandleHold(b *testing.B) {
	k := newFakeKind()
	x, y := k.newObject(), k.newObject()
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			standInCall(1, 2)
		}
	})
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			st, ok := x.h.enter()
			if !ok {
				b.Fatal("closed")
			}
			standInCall(st.id, 2)
			x.h.exit()
		}
	})
	b.Run("two", func(b *testing.B) {
		for b.Loop() {
			st, ok := x.h.enter()
			if !ok {
				b.Fatal("closed")
			}
			st2, ok := y.h.enter()
			if !ok {
				x.h.exit()
				b.Fatal("closed")
			}
			standInCall(st.id, st2.id)
			y.h.exit()
			x.h.exit()
		}
	})
}

// testKind is a kind of object for the cores of tests, whose objects may
// take hot calls. It has no name, so the objects these tests drop on
// purpose are not counted against the leak checks of later tests.
func testKind[T any](live *atomic.Int64, destroy, drop func(*T) error) *objectKind[T] {
	return &objectKind[T]{destroy: destroy, drop: drop, live: live, grace: hotGrace}
}
