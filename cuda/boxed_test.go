package cuda

import (
	"runtime"
	"testing"
	"time"
)

// waitLive collects garbage until count reports want live objects of the
// kind named what, or fails after a few seconds.
func waitLive(t *testing.T, what string, count func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if count() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("live %s %d, want %d", what, count(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitLiveEvents is waitLive for events.
func waitLiveEvents(t *testing.T, want int) {
	t.Helper()
	waitLive(t, "events", func() int { return LiveObjects().Events }, want)
}

// A new event's first handle shares its allocation with the core
// (attachBoxed). Dropped without Close while a clone is open, it must not
// take the event with it: the clone keeps working, and the event goes only
// once the clone is closed and unreachable too.
func TestBoxedFirstHandleDroppedWhileCloneOpen(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	_, _, e0 := LiveHandles()
	clone := func() *Event {
		e, err := NewEvent(ctx)
		must(t, err)
		c, err := e.Clone()
		must(t, err)
		return c // e is dropped here
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if _, _, e := LiveHandles(); e != e0+1 {
		t.Fatalf("live events %d with the clone open, want %d", e, e0+1)
	}
	must(t, clone.Record(s))
	must(t, s.Synchronize())
	if done, err := clone.Query(); err != nil || !done {
		t.Fatalf("the clone's Query after the first handle was dropped = %v, %v; want true, nil", done, err)
	}
	must(t, clone.Close())
	clone = nil
	waitLiveEvents(t, e0)
}

// Dropped alone, the first handle's cleanup destroys the event and gives
// back its context reference.
func TestBoxedFirstHandleDropped(t *testing.T) {
	_, ctx := needGPU(t)
	c0, _, e0 := LiveHandles()
	func() {
		_, err := NewEvent(ctx)
		must(t, err)
	}()
	waitLiveEvents(t, e0)
	if c, _, _ := LiveHandles(); c != c0 {
		t.Fatalf("live contexts %d after the event's cleanup, want %d", c, c0)
	}
}

// A view of the context (Stream.Context) keeps a boxed stream whose first
// handle was dropped: that handle's cleanup could not close the view, which
// holds no reference of its own on the context.
func TestBoxedStreamKeptByItsContextView(t *testing.T) {
	_, ctx := needGPU(t)
	_, s0, _ := LiveHandles()
	view := func() *Context {
		s, err := NewStream(ctx)
		must(t, err)
		return s.Context() // s is dropped here
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if _, s, _ := LiveHandles(); s != s0+1 {
		t.Fatalf("live streams %d while its context view is held, want %d", s, s0+1)
	}
	if view.Raw() == 0 {
		t.Fatal("the view is closed while the stream lives")
	}
	must(t, view.Synchronize())
	view = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if _, s, _ := LiveHandles(); s == s0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream outlived its dropped handle and view")
		}
		time.Sleep(time.Millisecond)
	}
}

// An executable graph's first handle is boxed with its core too: dropped
// while a clone is open, the clone keeps launching it; dropped alone or
// after the clone's Close, the cleanup destroys it.
func TestBoxedGraphExecDropped(t *testing.T) {
	_, ctx := needGPU(t)
	s, ev := newStreamEvent(t, ctx)
	defer s.Close()
	defer ev.Close()
	g, err := s.Capture(CaptureGlobal, func() error { return ev.Record(s) })
	must(t, err)
	defer g.Close()
	execs := func() int { return LiveObjects().GraphExecs }
	waitExecs := func(want int) {
		t.Helper()
		waitLive(t, "executable graphs", execs, want)
	}
	before := execs()
	clone := func() *GraphExec {
		e, err := g.Instantiate()
		must(t, err)
		c, err := e.Clone()
		must(t, err)
		return c // e is dropped here
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := execs(); n != before+1 {
		t.Fatalf("live executable graphs %d with the clone open, want %d", n, before+1)
	}
	must(t, clone.Launch(s))
	must(t, s.Synchronize())
	must(t, clone.Close())
	clone = nil
	waitExecs(before)

	func() {
		_, err := g.Instantiate()
		must(t, err)
	}()
	waitExecs(before)
}
