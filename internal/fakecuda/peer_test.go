package fakecuda_test

import (
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// Peer copies between two contexts (of the one device these tests have):
// the data, the checks of the contexts named, and the race detector's
// view: cuMemcpyPeerAsync reads its source and writes its destination in
// its stream's order; cuMemcpyPeer is serialized with the work of the
// contexts involved.
func TestMemcpyPeer(t *testing.T) {
	ctx := primary(t)
	var other cu.CUcontext
	must(t, ctxCreate(&other)) // and makes it current
	t.Cleanup(func() { must(t, cu.CtxDestroy(other)) })
	var q cu.CUdeviceptr
	must(t, cu.MemAlloc(&q, 4096))
	t.Cleanup(func() { must(t, cu.MemFree(q)) })
	var c cu.CUcontext
	must(t, cu.CtxPopCurrent(&c))
	p := alloc(t, 4096)

	must(t, cu.MemsetD32(p, 0x01020304, 1024))
	must(t, cu.MemcpyPeer(q, other, p, ctx, 4096))
	if got := words(t, q, 1024); got[0] != 0x01020304 || got[1023] != 0x01020304 {
		t.Fatalf("after cuMemcpyPeer: %#x %#x", got[0], got[1023])
	}
	s := stream(t, nb)
	must(t, cu.MemsetD32Async(q, 7, 1024, s))
	must(t, cu.MemcpyPeerAsync(p, ctx, q, other, 4096, s))
	must(t, cu.StreamSynchronize(s))
	if got := words(t, p, 1024); got[0] != 7 || got[1023] != 7 {
		t.Fatalf("after cuMemcpyPeerAsync: %#x %#x", got[0], got[1023])
	}

	is(t, "cuMemcpyPeer naming the wrong context", cu.MemcpyPeer(q, ctx, p, ctx, 4096), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "cuMemcpyPeerAsync naming the wrong context", cu.MemcpyPeerAsync(q, other, p, other, 4096, s), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "cuMemcpyPeer past the allocation", cu.MemcpyPeer(q, other, p+8, ctx, 4096), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "cuMemcpyPeer of host memory", cu.MemcpyPeer(q, other, cu.CUdeviceptr(uintptr(pinned(t, 64))), ctx, 64), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.MemcpyPeer(q, other, p, ctx, 0))

	if !lib.RaceDetector() {
		return
	}
	// Unordered with a memset of its source on another stream: a race; with
	// an event between them, none.
	for _, fixed := range []bool{false, true} {
		races := racesOf(t, func() {
			s1, s2, ev := stream(t, nb), stream(t, nb), event(t)
			must(t, cu.MemsetD8Async(p, 1, 4096, s1))
			if fixed {
				must(t, cu.EventRecord(ev, s1))
				must(t, cu.StreamWaitEvent(s2, ev, 0))
			}
			must(t, cu.MemcpyPeerAsync(q, other, p, ctx, 4096, s2))
			must(t, cu.CtxSynchronize())
		})
		if fixed && len(races) != 0 {
			t.Errorf("with an event: %d races, the first between %s and %s", len(races), races[0].Access.API, races[0].Previous.API)
		}
		if fixed {
			continue
		}
		if len(races) != 1 {
			t.Fatalf("without an event: %d races, want 1", len(races))
		}
		// Either may have run first.
		r, want := races[0], map[string]bool{"cuMemcpyPeerAsync": false, "cuMemsetD8Async": true}
		if w, ok := want[r.Access.API]; !ok || w != r.Access.Write || r.Previous.API == r.Access.API {
			t.Errorf("without an event: a race between %s and %s, want cuMemcpyPeerAsync's read and cuMemsetD8Async's write", r.Access.API, r.Previous.API)
		}
		if w, ok := want[r.Previous.API]; !ok || w != r.Previous.Write {
			t.Errorf("without an event: a race between %s and %s, want cuMemcpyPeerAsync's read and cuMemsetD8Async's write", r.Access.API, r.Previous.API)
		}
	}
	// cuMemcpyPeer waits for the work of both contexts, a non-blocking
	// stream's included, and what the host queues afterwards follows it.
	races := racesOf(t, func() {
		s1, s2 := stream(t, nb), stream(t, nb)
		must(t, cu.MemsetD8Async(p, 1, 4096, s1))
		must(t, cu.MemsetD8Async(q, 2, 4096, s2))
		must(t, cu.MemcpyPeer(q, other, p, ctx, 4096))
		must(t, cu.MemsetD8Async(p, 3, 4096, s2))
		must(t, cu.CtxSynchronize())
	})
	if len(races) != 0 {
		t.Errorf("around cuMemcpyPeer: %d races, the first between %s and %s", len(races), races[0].Access.API, races[0].Previous.API)
	}
}
