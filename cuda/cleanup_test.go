package cuda

import (
	"runtime"
	"testing"
)

// queued is the length of the queue of handles waiting for their cleanup.
func queued() int {
	attachMu.Lock()
	defer attachMu.Unlock()
	return len(attachQueue)
}

// A handle closed while it is the last one queued leaves the queue, so that
// a loop that makes and closes objects does not grow it; one closed behind
// another that is still open stays until the flush, which skips it, and a
// handle dropped without Close is still finished by its cleanup.
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
		t.Fatalf("the attach queue holds %d handles after making and closing %d events and streams, want %d", n, 3*attachBatch, base)
	}

	first, err := NewEvent(ctx)
	must(t, err)
	second, err := NewEvent(ctx)
	must(t, err)
	must(t, first.Close()) // not last: it stays queued
	if n := queued(); n != base+2 {
		t.Fatalf("the attach queue holds %d handles, want %d", n, base+2)
	}
	must(t, second.Close())
	if n := queued(); n != base+1 {
		t.Fatalf("the attach queue holds %d handles after closing the last, want %d", n, base+1)
	}
	flushAttach()
	if first.h.ops.Load()&attachedBit != 0 {
		t.Fatal("the flush gave a closed handle a cleanup")
	}

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
