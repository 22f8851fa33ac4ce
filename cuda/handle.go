package cuda

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/internal/dropped"
)

// shared is the one reference-counted core behind every handle of one driver
// object. Each handle owns one reference, and so does every object made from
// this one (a stream holds one on its context); the last release destroys.
//
// A boxed core and its first handle (attachBoxed) are one allocation: an
// allocation is most of what a create and destroy add to the driver's
// calls (BenchmarkLifecycleParts), so what all objects of a kind share is
// in their objectKind, and a refused destroy's error waits in deferred.go.
type shared[T any] struct {
	// hot is set by the first call on the object that holds no reference
	// (a hot call): its destroy must wait for its kind's grace first. It
	// and extra come before val, whose first field is the raw driver
	// handle, so that a call on a boxed handle finds them next to the
	// handle's words.
	hot atomic.Uint32
	// extra is the number of references less one, so that a new core
	// holds its first reference without an atomic store (an exchange on
	// amd64): -1 once the last is gone.
	extra atomic.Int32
	val   T
	kind  *objectKind[T]
}

// objectKind is what the cores of one kind of object share.
type objectKind[T any] struct {
	// destroy asks the driver to destroy the object; drop then gives back
	// what the object holds (its context's reference, say). drop runs only
	// once the driver no longer holds the object.
	destroy func(*T) error
	drop    func(*T) error
	live    *atomic.Int64 // objects of this kind the driver still holds
	// grace returns once no call that holds no reference (a hot call) and
	// that began before it is still in the driver. Only the kinds whose
	// objects take such calls set it: the destroy of an object marked hot
	// waits for it.
	grace func()
	// name names the kind as a user knows it ("event"), for the count of
	// handles left to the garbage collector. Kinds without one, the fake
	// cores of this package's own tests, are not counted: those tests drop
	// objects on purpose, and the collector may release them during any
	// later test.
	name string
}

// newShared returns a core of kind k holding one reference, for the caller
// to fill in before it is shared.
func newShared[T any](k *objectKind[T]) *shared[T] {
	c := &shared[T]{}
	c.init(k)
	return c
}

// init is newShared for a core allocated with its first handle (boxed).
func (c *shared[T]) init(k *objectKind[T]) {
	c.kind = k
	k.live.Add(1)
}

// acquire adds a reference unless the count already reached zero: once
// destroy has been decided, a racing Clone must fail rather than resurrect
// the object, which a plain Add(1) would do.
func (c *shared[T]) acquire() bool {
	for {
		n := c.extra.Load()
		if n < 0 {
			return false
		}
		if c.extra.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// refs is the number of references held (for tests).
func (c *shared[T]) refs() int64 { return int64(c.extra.Load()) + 1 }

// release drops one reference and destroys the object with the last one.
func (c *shared[T]) release() error {
	n := c.extra.Add(-1)
	switch {
	case n >= 0:
		return nil
	case n < -1:
		// Only reachable through a bug in this package: every reference
		// is given back once (a handle's after winning its closed bit).
		panic("cuda: reference count below zero")
	}
	return c.finish()
}

// finish destroys the object whose last reference is gone, after its
// kind's grace when a hot call has marked it. A destroy the driver refused
// while the object still exists (during a stream capture, say) is not
// forgotten: the object stays counted and waits for a retry.
func (c *shared[T]) finish() error {
	if c.hot.Load() != 0 {
		c.kind.grace()
	}
	err := c.kind.destroy(&c.val)
	if err != nil && stillHeld(err) {
		return deferDestroy(c, err)
	}
	return c.gone(err)
}

// retry is finish for an object waiting in the deferred list: it reports
// whether the object is gone now. What its drop reports (a context's own
// destroy) has nobody to go to.
func (c *shared[T]) retry() bool {
	err := c.kind.destroy(&c.val)
	if err != nil && stillHeld(err) {
		return false
	}
	_ = c.gone(err)
	return true
}

// gone accounts for an object the driver no longer holds and gives back
// what it held; it returns err, or drop's error if err is nil.
func (c *shared[T]) gone(err error) error {
	if deferredCount.Load() != 0 {
		forgetRefused(c)
	}
	c.kind.live.Add(-1)
	if c.kind.drop != nil {
		if derr := c.kind.drop(&c.val); err == nil {
			err = derr
		}
	}
	return err
}

// handle.ops holds four flags and, below them, the number of calls in
// flight on the handle.
const (
	closedBit   = 1 << 63 // Close has begun
	attachedBit = 1 << 62 // the handle has its cleanup (h.cleanup is set)
	// viewBit marks a handle that another object owns (Stream.Context's):
	// users may call it but not close it, and it holds no reference.
	viewBit = 1 << 61
	// boxedBit marks the first handle of an object allocated together
	// with its core (attachBoxed).
	boxedBit = 1 << 60
	inFlight = boxedBit - 1
)

// handle is what a Context, Stream, Event or other object holds: one
// reference on a core, given back once by Close after the calls in flight
// on this handle have returned. It plays the part of internal/poll's
// fdMutex: every method that reaches the driver holds the handle (enter,
// exit) for the whole driver call, so the object cannot be destroyed under
// it, and a call that starts after Close gets ErrClosed without reaching
// the driver. The hot calls are the exception: they check the closed bit
// themselves and are waited for by the object's destroy instead (shared.hot).
type handle[T any] struct {
	core    *shared[T]
	ops     atomic.Uint64
	cleanup runtime.Cleanup
}

// attach makes h, embedded in *owner, the holder of one reference on core.
// If owner becomes unreachable without Close, a cleanup releases that
// reference; it is attached lazily (cleanup.go).
func attach[P any, T any](owner *P, h *handle[T], core *shared[T]) {
	h.core = core
	queueAttach(unsafe.Pointer(owner), h)
}

// attachBoxed is attach for the first handle of a new object whose owner
// and core are one allocation, box, as an event's and a stream's are
// (eventBox, streamBox): one allocation where a create would take two,
// which is most of what this package adds to a short-lived object's create
// and destroy. Clones point into that allocation and keep it; so does
// anything else that holds the core. Once it is unreachable, only this
// handle's reference is left, and its cleanup, attached to box, finishes
// the object from a copy of the core. So the object of a first handle
// dropped without Close lives until its clones, closed or not, are
// unreachable too, where a separate core would let it go at the last
// clone's Close.
func attachBoxed[B any, T any](box *B, h *handle[T], core *shared[T]) {
	h.ops.Store(boxedBit)
	h.core = core
	queueAttach(unsafe.Pointer(box), h)
}

// attachCleanup gives h, embedded in owner, the cleanup that releases its
// reference once owner is unreachable, unless h is closed already. The
// cleanup function is not generic and its argument an interface holding
// the core: a generic function value would cost an allocation of its own.
func (h *handle[T]) attachCleanup(owner unsafe.Pointer) {
	if h.ops.Load()&closedBit != 0 {
		return
	}
	var c runtime.Cleanup
	if h.ops.Load()&boxedBit != 0 {
		// The argument must not point into owner's allocation, where the
		// core is: the cleanup would keep owner reachable and never run.
		c = runtime.AddCleanup((*byte)(owner), finishDropped, finisher(h.core.copy()))
	} else {
		c = runtime.AddCleanup((*byte)(owner), releaseDropped, releaser(h.core))
	}
	h.cleanup = c
	if h.ops.Or(attachedBit)&closedBit != 0 {
		c.Stop() // closed meanwhile; Close may stop it too, which is harmless
	}
}

// releaser is a core, for the cleanup of a dropped handle.
type releaser interface {
	release() error
	kindName() string
}

// finisher is the copy of a boxed core, for the cleanup of its dropped
// first handle.
type finisher interface {
	finish() error
	kindName() string
}

// copy returns a core with c's object and accounting, holding the one
// reference left when c's box is unreachable. It is made when the cleanup
// is attached, from what does not change after the object is made
// (stateCopier). It needs no grace: every handle of the object points
// into the box, and a call that holds no reference keeps its handle
// reachable until it has left the driver, so once the box is unreachable
// no such call on the object is in flight.
func (c *shared[T]) copy() *shared[T] {
	d := &shared[T]{kind: c.kind}
	any(&c.val).(stateCopier[T]).copyTo(&d.val)
	return d
}

// stateCopier is the state of a boxed object: copyTo copies what its
// destroy and drop use, which is set before the object is shared; not
// what its methods add later, such as the context's view.
type stateCopier[T any] interface{ copyTo(*T) }

func finishDropped(f finisher) {
	countDropped(f.kindName())
	// As releaseDropped: nobody is left to report the error to.
	_ = f.finish()
}

func releaseDropped(r releaser) {
	// Counted for package cudatest, which reports a handle left to the
	// collector as a leak.
	countDropped(r.kindName())
	// Nobody is left to report the error to: the handle was dropped. A
	// refused destroy still lands in the deferred list.
	_ = r.release()
}

func countDropped(kind string) {
	if kind != "" {
		dropped.Add(kind)
	}
}

// kindName names the kind of object c holds, as a user knows it.
func (c *shared[T]) kindName() string { return c.kind.name }

// enter starts a call on the object: it returns the object's state, or
// false when the handle is nil, zero or closed. Every true must be
// followed by exit once the driver call has returned.
func (h *handle[T]) enter() (*T, bool) {
	if h == nil || h.core == nil {
		return nil, false
	}
	if h.ops.Add(1)&closedBit != 0 {
		h.ops.Add(^uint64(0))
		return nil, false
	}
	return &h.core.val, true
}

// exit ends a call started by enter.
func (h *handle[T]) exit() { h.ops.Add(^uint64(0)) }

// peek returns the state for methods that only read fields set before the
// core was shared (Raw, Size, ...), or false when the handle is nil, zero
// or closed.
func (h *handle[T]) peek() (*T, bool) {
	if h == nil || h.core == nil || h.ops.Load()&closedBit != 0 {
		return nil, false
	}
	return &h.core.val, true
}

// clone takes another reference for a new handle.
//
// A Close racing it either comes first (the handle reads as closed) or
// counts as after it; acquire fails only once the object is being
// destroyed. So the handle need not be held: one compare-and-swap.
func (h *handle[T]) clone() (*shared[T], bool) {
	if _, ok := h.peek(); !ok {
		return nil, false
	}
	return h.core, h.core.acquire()
}

// cloneAs is every Clone method: another handle, made by wrap, on h's core.
func cloneAs[T, P any](h *handle[T], op string, wrap func(*shared[T]) *P) (*P, error) {
	core, ok := h.clone()
	if !ok {
		return nil, h.closedError(op)
	}
	return wrap(core), nil
}

// shut closes h to new calls and waits until those in flight have
// returned. It reports whether this call closed it (false: it already was).
func (h *handle[T]) shut() bool {
	if h.ops.Or(closedBit)&closedBit != 0 {
		return false
	}
	// Calls in flight are driver calls: microseconds, or a synchronize.
	// Close is rare and not on a hot path, so it polls rather than make
	// every exit check for a waiter.
	wait := time.Microsecond
	for h.ops.Load()&inFlight != 0 {
		time.Sleep(wait)
		wait = min(2*wait, time.Millisecond)
	}
	return true
}

// close is every Close method: it gives this handle's reference back once,
// after the calls in flight on it. Closing again returns nil, or the error
// of a destroy the driver refused while the object waits for a retry.
func (h *handle[T]) close(op string) error {
	if h == nil || h.core == nil {
		return h.closedError(op)
	}
	if h.ops.Load()&viewBit != 0 {
		return nil
	}
	if !h.shut() {
		if deferredCount.Load() != 0 {
			if e := refusedError(h.core); e != nil {
				return e
			}
		}
		return nil
	}
	if h.ops.Load()&attachedBit != 0 {
		h.cleanup.Stop()
	} else {
		unqueueAttach(h)
	}
	return h.core.release()
}

// A gate is a handle as the calls on several objects hold it.
type gate interface {
	hold() bool
	exit()
	closedError(op string) error
}

func (h *handle[T]) hold() bool {
	_, ok := h.enter()
	return ok
}

// holds is the set of handles one call on several objects holds, for the
// whole driver call: hold each in turn, and release them all at the end.
// The hot calls hold nothing (see handle).
type holds struct {
	n  int
	gs [3]gate
}

// hold holds g, or returns the closed error of op naming the argument.
func (hs *holds) hold(op, what string, g gate) error {
	if !g.hold() {
		return g.closedError(op + " (" + what + ")")
	}
	hs.gs[hs.n] = g
	hs.n++
	return nil
}

func (hs *holds) release() {
	for _, g := range hs.gs[:hs.n] {
		g.exit()
	}
}

// arg is a gate with the name of the argument it came from, for errors.
type arg struct {
	what string
	g    gate
}

// all holds each gate in order, or returns the closed error of op naming
// the first closed one; those held so far are released by release.
func (hs *holds) all(op string, args ...arg) error {
	for _, a := range args {
		if err := hs.hold(op, a.what, a.g); err != nil {
			return err
		}
	}
	return nil
}

// closedError is the error of using h in op when it cannot be entered:
// nil or closed.
func (h *handle[T]) closedError(op string) error {
	if h == nil {
		return nilError(op)
	}
	return closedError(op)
}
