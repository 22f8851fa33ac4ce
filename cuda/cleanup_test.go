package cuda

import (
	"runtime"
	"testing"
)

// queued is the number of handles waiting for their cleanup.
func queued() int {
	attachMu.Lock()
	defer attachMu.Unlock()
	return len(attachQueue)
}

// A handle closed while it is the last one queued leaves the queue, so
// that a loop that makes and closes objects does not grow it; one closed
// behind another that is still open stays until the flush, which skips it,
// and a handle dropped without Close is still finished by its cleanup.
func TestClosedHandlesLeaveTheAttachQueue(t *testing.T) {
	_, ctx := needGPU(t)
	flushAttach()
	base := queued()
	for range 3 * attachBatch {
		e, err := NewEvent(ctx)
		must(t, err)
		s, err := NewStream(ctx)
		must(t, err)
		must(t, s.Close())
		must(t, e.Close())
	}
	if n := queued(); n != base {
		t.Fatalf("%d handles wait for their cleanup after making and closing %d events and streams, want %d", n, 3*attachBatch, base)
	}

	// The three are queued in order.
	var evs [3]*Event
	for i := range evs {
		var err error
		evs[i], err = NewEvent(ctx)
		must(t, err)
	}
	if n := queued(); n != base+3 {
		t.Fatalf("%d handles wait for their cleanup, want %d", n, base+3)
	}
	must(t, evs[0].Close()) // not the last queued: it stays
	if n := queued(); n != base+3 {
		t.Fatalf("%d handles wait for their cleanup after closing the first, want %d", n, base+3)
	}
	must(t, evs[2].Close()) // the last queued
	if n := queued(); n != base+2 {
		t.Fatalf("%d handles wait for their cleanup after closing the last, want %d", n, base+2)
	}
	flushAttach()
	if evs[0].h.ops.Load()&attachedBit != 0 {
		t.Fatal("the flush gave a closed handle a cleanup")
	}
	if evs[1].h.ops.Load()&attachedBit == 0 {
		t.Fatal("the flush gave an open queued handle no cleanup")
	}
	must(t, evs[1].Close())

	_, _, e0 := LiveHandles()
	func() {
		_, err := NewEvent(ctx)
		must(t, err)
		if _, _, e := LiveHandles(); e != e0+1 {
			t.Fatalf("live events %d after NewEvent, want %d", e, e0+1)
		}
	}()
	runtime.GC()
	waitLiveEvents(t, e0)
}
