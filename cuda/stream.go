package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// Stream is a shared handle to a CUDA stream, a queue of device work that
// runs in order. Clone returns another handle to the same queue, so
// independent parts of a program can enqueue work on one queue and close
// their handle when done; the queue is destroyed when the last handle is
// closed. A stream holds a reference on its Context until then.
//
// All methods are safe for concurrent use. Closing one handle while another
// handle of the same queue is in use is fine; using a raw handle (Raw)
// concurrently with the queue's last Close is a use after free, as in C.
type Stream struct {
	h handle[streamState]
}

type streamState struct {
	raw      cu.CUstream // first: see shared.val
	ctx      ctxRef
	priority int32 // in the context's range, which is a few values around 0
	owned    bool  // false for WrapStream: the queue belongs to someone else
}

func (s *Stream) handle() *handle[streamState] {
	if s == nil {
		return nil
	}
	return &s.h
}

// NewStream creates a stream in ctx with the default priority. It is
// created with CU_STREAM_NON_BLOCKING: work in it does not synchronize with
// the legacy default stream (stream 0), which would otherwise serialize
// unrelated libraries that use it.
func NewStream(ctx *Context) (*Stream, error) {
	return newStream("NewStream", ctx, 0, false)
}

// OpenStream returns a new stream on the primary context of the device of
// the given ordinal (0 for the first GPU): GetDevice, PrimaryContext and
// NewStream in one call, for programs that use one device. The stream holds
// the context: its Context method gives it, for LoadModule and the like,
// and the stream's last Close releases both.
func OpenStream(device int) (*Stream, error) {
	const op = "OpenStream"
	dev, err := GetDevice(device)
	if err != nil {
		return nil, err
	}
	ctx, err := PrimaryContext(dev)
	if err != nil {
		return nil, err
	}
	s, err := newStream(op, ctx, 0, false)
	if cerr := ctx.Close(); err == nil && cerr != nil {
		_ = s.Close()
		return nil, cerr
	}
	return s, err
}

// NewStreamWithPriority is NewStream with a scheduling priority: lower
// numbers are higher priorities, and the valid ones are those of
// ctx.StreamPriorityRange. An out-of-range priority is an error matching
// cu.CUDA_ERROR_INVALID_VALUE that names the range, where the driver itself
// would silently clamp it.
func NewStreamWithPriority(ctx *Context, priority int) (*Stream, error) {
	return newStream("NewStreamWithPriority", ctx, priority, true)
}

func newStream(op string, ctx *Context, priority int, withPriority bool) (*Stream, error) {
	// The reference comes first so that ctx cannot be destroyed by a
	// concurrent Close while the stream is being made in it.
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	f, err := procs(op, "cuStreamCreate")
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	const flags = uint32(cu.CU_STREAM_NON_BLOCKING)
	var out uint64
	if withPriority {
		r, perr := cc.val.prio()
		if perr != nil {
			_ = cc.release()
			return nil, perr
		}
		if priority < r.greatest || priority > r.least {
			_ = cc.release()
			return nil, &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_VALUE, Err: fmt.Errorf(
				"priority %d is outside the context's range %d (highest) to %d (lowest): %w",
				priority, r.greatest, r.least, cu.CUDA_ERROR_INVALID_VALUE)}
		}
		out, err = boundStreamCreatePrio(op, f, cc.val.raw, flags, priority)
	} else {
		out, err = boundStreamCreate(op, f, cc.val.raw, flags)
	}
	if err != nil {
		// The stream may exist even so, when restoring the thread's
		// context failed after it was made.
		if out != 0 {
			_ = boundStreamDestroy(op, f, cc.val.raw, out)
		}
		_ = cc.release()
		return nil, err
	}
	b := &streamBox{}
	b.core.init(&streamKind)
	b.core.val.raw, b.core.val.priority, b.core.val.owned = cu.CUstream(out), int32(priority), true
	b.core.val.ctx.core = cc
	attachBoxed(b, &b.s.h, &b.core)
	return &b.s, nil
}

var _ stateCopier[streamState] = (*streamState)(nil)

func (s *streamState) copyTo(d *streamState) {
	d.raw, d.ctx.core, d.priority, d.owned = s.raw, s.ctx.core, s.priority, s.owned
}

// streamBox is a new stream's first handle and its core (attachBoxed).
type streamBox struct {
	s    Stream
	core shared[streamState]
}

// WrapStream returns a handle to a stream created elsewhere (by a library,
// say) in ctx, without taking ownership: the last Close releases the
// reference on ctx but does not destroy raw. The caller keeps raw alive
// while any handle is in use, and while completions of Then or Done on it
// are pending. The special handles 0 (legacy default
// stream), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are refused: they mean
// a stream of whatever context is current on the calling thread, which
// this package's calls do not keep bound.
func WrapStream(ctx *Context, raw cu.CUstream) (*Stream, error) {
	const op = "WrapStream"
	if raw <= cu.CU_STREAM_PER_THREAD {
		return nil, &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_HANDLE, Err: fmt.Errorf(
			"stream %#x is a per-thread alias, not a stream of one context: %w", uintptr(raw), cu.CUDA_ERROR_INVALID_HANDLE)}
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	var p int32
	err = bind(op, cc.val.raw, func() error {
		return check(op, "cuStreamGetPriority", cu.StreamGetPriority(raw, &p))
	})
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	core := newShared(&streamKind)
	core.val.raw, core.val.priority = raw, p
	core.val.ctx.core = cc
	return newStreamHandle(core), nil
}

func destroyStream(st *streamState) error {
	if !st.owned {
		return nil
	}
	const op, fn = "Stream.Close", "cuStreamDestroy"
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return destroyStreamUnbound(op, f, st.ctx.raw(), uint64(st.raw))
}

// dropStream releases the context after the stream: it must outlive it.
func dropStream(st *streamState) error { return st.ctx.release() }

func newStreamHandle(core *shared[streamState]) *Stream {
	s := &Stream{}
	attach(s, &s.h, core)
	return s
}

// Clone returns another handle to the same queue, to be closed on its own.
func (s *Stream) Clone() (*Stream, error) {
	return cloneAs(s.handle(), "Stream.Clone", newStreamHandle)
}

// Close releases this handle, after the calls in flight on it have
// returned (a Synchronize, say). Closing a handle again returns nil and
// does nothing. The last Close of the queue destroys it (cuStreamDestroy:
// work already enqueued still completes) and releases its context; it
// returns the driver's error if that fails. While completions of Then or
// Done are pending the queue is kept: the last of them to be delivered
// or dropped destroys it instead, and an error then has nobody to go to.
func (s *Stream) Close() error { return s.handle().close("Stream.Close") }

// Raw returns the driver's stream handle for use with the raw bindings, or
// 0 once this handle is closed. Beware that 0 is also the legacy default
// stream: check handles you may have closed.
func (s *Stream) Raw() cu.CUstream {
	st, ok := s.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// IsSameQueue reports whether s and other are handles to one driver queue.
// A closed handle is the same queue as nothing.
func (s *Stream) IsSameQueue(other *Stream) bool {
	a, aok := s.handle().peek()
	b, bok := other.handle().peek()
	return aok && bok && a.raw == b.raw
}

// Context returns the stream's context. The handle belongs to the stream:
// it can be used while the queue lives (its methods return ErrClosed
// after), closing it does nothing, and Clone gives a handle of your own
// that outlives the stream. Once this stream handle is closed it is a
// closed Context whose errors match ErrClosed and say it was the context
// of a closed stream, so that a call made with it blames the stream's
// Close; for a nil *Stream it is nil, whose errors say nil. While you hold it, it
// keeps the stream from being destroyed by the cleanup of a stream handle
// dropped without Close.
func (s *Stream) Context() *Context {
	return contextOf(s.handle(), func(st *streamState) *ctxRef { return &st.ctx })
}

// Priority returns the priority the stream was created with (0, the lowest,
// for NewStream).
func (s *Stream) Priority() int {
	st, ok := s.handle().peek()
	if !ok {
		return 0
	}
	return int(st.priority)
}

// Synchronize waits until all work enqueued so far has finished
// (cuStreamSynchronize). It cannot be interrupted; see WaitIdle. It does
// not wait for functions of Then, which may call it.
func (s *Stream) Synchronize() error {
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError("Stream.Synchronize")
	}
	err := cu.StreamSynchronize(st.raw)
	h.exit()
	return check("Stream.Synchronize", "cuStreamSynchronize", err)
}

// Query reports whether all work enqueued so far has finished
// (cuStreamQuery); a busy stream is not an error.
func (s *Stream) Query() (idle bool, err error) {
	const op, fn = "Stream.Query", "cuStreamQuery"
	h := s.handle()
	c := hotReady(h)
	if c == nil {
		return false, h.closedError(op)
	}
	f, err := procs(op, fn)
	if err != nil {
		return false, err
	}
	r := hotStreamQuery(f.streamQuery, h, uintptr(c.val.raw))
	if r == int32(cu.CUDA_ERROR_NOT_READY) {
		return false, nil
	}
	err = hotResult(op, fn, "", r)
	return err == nil, err
}

// The polling backoff of WaitIdle, for drivers without cuLaunchHostFunc: a
// few immediate retries catch short work at once; after that the sleeps
// double up to a cap that bounds both the added latency and the polling
// cost (a few thousand cheap queries a second at worst).
const (
	waitSpins    = 8
	waitMinSleep = 2 * time.Microsecond
	waitMaxSleep = 500 * time.Microsecond
)

// WaitIdle waits until all work enqueued so far has finished, like
// Synchronize, or until ctx is done, whichever comes first, and then
// returns nil or ctx.Err(). A stream already idle gives nil even with ctx
// done. A stream whose context has failed (a kernel's fault) gives the
// driver's error, as Synchronize does, matching its result (such as
// cu.CUDA_ERROR_ILLEGAL_ADDRESS): within about a second of the failure
// however long ctx lasts, or at once if the failure is already known.
// (It is not named SynchronizeContext because Context means a CUDA
// context in this package.)
//
// It does not poll for completion: the driver reports it (Done), and the
// calling goroutine waits in a select, so an abandoned wait leaves nothing
// blocked in the driver. Only a failure, which the driver does not report
// so, is looked for by asking it on a coarse timer (see Done). With a ctx
// that can never be done it is Synchronize.
//
// Like Synchronize, it waits for the device's work and not for functions
// of Then, so a function of Then may call it, on its own stream too.
func (s *Stream) WaitIdle(ctx context.Context) error {
	const op = "Stream.WaitIdle"
	h := s.handle()
	if _, ok := h.peek(); !ok {
		return h.closedError(op)
	}
	if ctx.Done() == nil {
		st, ok := h.enter()
		if !ok {
			return h.closedError(op)
		}
		err := cu.StreamSynchronize(st.raw)
		h.exit()
		return check(op, "cuStreamSynchronize", err)
	}
	if idle, err := s.Query(); err != nil || idle {
		return err
	}
	done, err := s.done(op, true)
	if errors.Is(err, ErrMissingFunction) {
		return s.pollIdle(ctx)
	}
	if err != nil {
		return err
	}
	return s.waitDone(ctx, done)
}

// pollIdle is WaitIdle by polling cuStreamQuery with backoff.
func (s *Stream) pollIdle(ctx context.Context) error {
	const op = "Stream.WaitIdle"
	h := s.handle()
	done := ctx.Done()
	var timer *time.Timer
	sleep := waitMinSleep
	for i := 0; ; i++ {
		// The handle is held for each query, not across the wait, so a
		// Close of it is not held up by the wait: the wait ends with
		// ErrClosed instead.
		st, ok := h.enter()
		if !ok {
			return h.closedError(op)
		}
		err := cu.StreamQuery(st.raw)
		h.exit()
		switch err {
		case nil:
			if timer != nil {
				timer.Stop()
			}
			return nil
		case error(cu.CUDA_ERROR_NOT_READY):
		default:
			return newError(op, "cuStreamQuery", err)
		}
		if i < waitSpins {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
			runtime.Gosched()
			continue
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-done:
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		sleep = min(2*sleep, waitMaxSleep)
	}
}

// WaitEvent makes work enqueued on s after this call wait until the work
// captured by e's last Record has finished (cuStreamWaitEvent); it does not
// block the caller. s and e may belong to different contexts of one device.
// It binds no context and does not allocate.
func (s *Stream) WaitEvent(e *Event) error {
	const op, fn = "Stream.WaitEvent", "cuStreamWaitEvent"
	sh, eh := s.handle(), e.handle()
	sc, ec := hotReady(sh), hotReady(eh)
	switch {
	case sc == nil:
		return sh.closedError(op)
	case ec == nil:
		return eh.closedError(op + " (event)")
	}
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return hotResult(op, fn, " (event)", hotStreamWaitEvent(f.streamWaitEvent, sh, eh, uintptr(sc.val.raw), uintptr(ec.val.raw)))
}

// WaitFor makes work enqueued on s after this call wait until the work
// enqueued on other before it has finished, through an event of its own
// (cuEventRecord on other, cuStreamWaitEvent on s); it does not block the
// caller. It is WaitEvent for a program that keeps no event: each call
// creates and destroys one, a few microseconds, so a loop that orders two
// streams many times a second keeps an Event instead.
func (s *Stream) WaitFor(other *Stream) error {
	const op = "Stream.WaitFor"
	if _, ok := s.handle().peek(); !ok {
		return s.handle().closedError(op)
	}
	oc := other.Context()
	if oc == nil || oc.orphanOf != "" {
		return other.handle().closedError(op + " (other)")
	}
	e, err := NewEvent(oc)
	if err != nil {
		return err
	}
	if err := e.Record(other); err != nil {
		_ = e.Close()
		return err
	}
	if err := s.WaitEvent(e); err != nil {
		_ = e.Close()
		return err
	}
	return e.Close()
}

var streamKind = objectKind[streamState]{destroy: destroyStream, drop: dropStream, live: &liveStreams, grace: hotGrace, name: "stream"}
