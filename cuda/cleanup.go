package cuda

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Handles dropped without Close are released by a cleanup
// (runtime.AddCleanup). Attaching one as each handle is made would cost
// more than the driver call of a short-lived object, an event made and
// closed in a loop, say: the runtime allocates for it and takes and frees
// a special record under a lock. So handles are made without one and
// queued, and the queue is attached in batches, when it grows past
// attachBatch and after every garbage collection while it is not empty.
// A handle closed meanwhile (in a create-and-close loop, all of them) is
// skipped: it never gets a cleanup at all. A dropped handle is kept by the
// queue until its cleanup is attached, so it is released one collection
// later than an immediate cleanup would release it.

// attachBatch bounds the queue, and so the handles it keeps alive.
const attachBatch = 256

// An attacher is a handle (a *handle[T]) that can be given its cleanup.
type attacher interface{ attachCleanup(owner unsafe.Pointer) }

type attachJob struct {
	owner unsafe.Pointer // the *Stream, *Event, ... that embeds the handle
	h     attacher
}

var (
	attachMu    sync.Mutex
	attachQueue []attachJob
	attachSpare []attachJob // the previous queue's array, for reuse
	// attachArmed is set while a collection will flush the queue
	// (armAttach). It is cleared before a flush looks at the queue, so
	// that a handle queued after that look finds it clear and arms again.
	attachArmed atomic.Bool
)

// queueAttach queues the handle h embedded in owner for its cleanup.
func queueAttach(owner unsafe.Pointer, h attacher) {
	attachMu.Lock()
	attachQueue = append(attachQueue, attachJob{owner, h})
	n := len(attachQueue)
	attachMu.Unlock()
	if !attachArmed.Load() {
		armAttach()
	}
	if n >= attachBatch {
		flushAttach()
	}
}

// unqueueAttach takes h off the queue if it is the last handle queued, as
// it is when a handle is closed right after it was made. In a loop that
// makes and closes objects the queue then stays empty, and no flush reads
// the closed handles again: beside driver calls that take microseconds
// each, by then they are out of the caches, one miss per handle.
func unqueueAttach(h attacher) {
	attachMu.Lock()
	if n := len(attachQueue); n > 0 && attachQueue[n-1].h == h {
		attachQueue[n-1] = attachJob{}
		attachQueue = attachQueue[:n-1]
	}
	attachMu.Unlock()
}

// flushAttach attaches the cleanups of the queued handles still open.
func flushAttach() {
	attachMu.Lock()
	q := attachQueue
	attachQueue, attachSpare = attachSpare[:0], nil
	attachMu.Unlock()
	for _, j := range q {
		j.h.attachCleanup(j.owner)
	}
	clear(q)
	attachMu.Lock()
	if attachSpare == nil {
		attachSpare = q[:0]
	}
	attachMu.Unlock()
}

// collectionHook is an object made only to be collected: its cleanup runs
// after the next garbage collection.
type collectionHook struct{ _ *byte }

// armAttach makes the next collection flush the queue, unless that is
// arranged already.
func armAttach() {
	if attachArmed.CompareAndSwap(false, true) {
		runtime.AddCleanup(new(collectionHook), afterCollection, 0)
	}
}

func afterCollection(int) {
	attachArmed.Store(false)
	flushAttach()
	// What was queued since the flush looked arms again, here or where it
	// was queued, which finds attachArmed clear.
	attachMu.Lock()
	again := len(attachQueue) > 0
	attachMu.Unlock()
	if again {
		armAttach()
	}
}
