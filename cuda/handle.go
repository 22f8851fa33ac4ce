package cuda

import (
	"runtime"
	"sync/atomic"
)

// shared is the one reference-counted core behind every handle of one driver
// object (a context, a stream or an event). Each handle owns exactly one
// reference; the last release runs destroy.
type shared[T any] struct {
	// val is first so that the hot paths reach the raw driver handle, the
	// first field of every T, with one load from the core pointer.
	val     T
	refs    atomic.Int64
	destroy func(*T) error
	live    *atomic.Int64 // objects of this kind not yet destroyed
}

func newShared[T any](val T, live *atomic.Int64, destroy func(*T) error) *shared[T] {
	c := &shared[T]{val: val, destroy: destroy, live: live}
	c.refs.Store(1)
	live.Add(1)
	return c
}

// acquire adds a reference unless the count already reached zero: once
// destroy has been decided, a racing Clone must fail rather than resurrect
// the object, which a plain Add(1) would do.
func (c *shared[T]) acquire() bool {
	for {
		n := c.refs.Load()
		if n <= 0 {
			return false
		}
		if c.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops one reference and destroys the object with the last one.
func (c *shared[T]) release() error {
	n := c.refs.Add(-1)
	switch {
	case n > 0:
		return nil
	case n < 0:
		// Only reachable through a bug in this package: every path that
		// releases first wins a closed flag's CompareAndSwap.
		panic("cuda: reference count below zero")
	}
	err := c.destroy(&c.val)
	c.live.Add(-1)
	return err
}

// handle is what a Context, Stream or Event holds: one reference on a core,
// given back at most once.
type handle[T any] struct {
	core   *shared[T]
	closed atomic.Bool
	// pinned marks a handle owned by another object's core (a stream's
	// context, say): the user's Close must not drop the owner's reference.
	pinned  bool
	cleanup runtime.Cleanup
}

// attach makes h, embedded in *owner, the holder of one reference on core.
// If owner becomes unreachable without Close, the cleanup releases that
// reference. The cleanup's argument is the core, never the owner, so it
// does not keep the owner alive.
func attach[P any, T any](owner *P, h *handle[T], core *shared[T]) {
	h.core = core
	h.cleanup = runtime.AddCleanup(owner, releaseUnclosed[T], core)
}

func releaseUnclosed[T any](c *shared[T]) {
	// Nobody is left to report the error to: the handle was dropped.
	_ = c.release()
}

// pin makes h the holder of one reference on core that only its owner's
// destroy gives back, through closeOwned.
func pin[T any](h *handle[T], core *shared[T]) {
	h.core = core
	h.pinned = true
}

// get returns the object's state, or false once this handle is closed. The
// state's fields are written only before the core is shared, so reading them
// races with nothing; using the raw driver handle concurrently with the
// object's last Close is the caller's misuse, as it is in C.
func (h *handle[T]) get() (*T, bool) {
	if h.closed.Load() {
		return nil, false
	}
	return &h.core.val, true
}

// clone takes another reference for a new handle.
func (h *handle[T]) clone() (*shared[T], bool) {
	ok := !h.closed.Load() && h.core.acquire()
	// The owner must stay reachable until acquire is done, or its cleanup
	// could release the last reference in between.
	runtime.KeepAlive(h)
	return h.core, ok
}

// close gives this handle's reference back once; later calls return nil.
func (h *handle[T]) close() error {
	if h.pinned || !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	h.cleanup.Stop()
	return h.core.release()
}

// closeOwned is close for a pinned handle, called by its owner's destroy.
func (h *handle[T]) closeOwned() error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	return h.core.release()
}

// live counts the driver objects this package holds, per kind.
var liveContexts, liveStreams, liveEvents atomic.Int64

// LiveHandles reports how many driver objects of each kind this package
// holds now: every one created, retained or wrapped and not yet released by
// its last handle's Close (or by the cleanup of unreachable handles). It
// exists for leak tests; the numbers count driver objects, not handles.
func LiveHandles() (contexts, streams, events int) {
	return int(liveContexts.Load()), int(liveStreams.Load()), int(liveEvents.Load())
}
