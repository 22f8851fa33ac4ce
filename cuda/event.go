package cuda

import (
	"fmt"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// Event is a shared handle to a CUDA event: a marker recorded into a stream
// that completes when the work before it does. It orders work across
// streams (Stream.WaitEvent) and, made WithTiming, measures it (Elapsed).
// Clone, Close and the Context reference work as for Stream.
//
// All methods are safe for concurrent use.
type Event struct {
	h handle[eventState]
}

type eventState struct {
	raw   cu.CUevent // first: see shared.val
	ctx   ctxRef
	flags uint32
}

func (e *Event) handle() *handle[eventState] {
	if e == nil {
		return nil
	}
	return &e.h
}

// EventOption configures NewEvent. It maps the event's flags to new ones,
// so that applying options costs no allocation.
type EventOption func(flags uint32) uint32

// WithTiming makes the event record a timestamp, for Elapsed. Events are
// made without timing by default (CU_EVENT_DISABLE_TIMING) because timing
// makes recording and waiting on them slower.
func WithTiming() EventOption {
	return func(f uint32) uint32 { return f &^ uint32(cu.CU_EVENT_DISABLE_TIMING) }
}

// WithBlockingSync makes Synchronize on the event put the calling thread to
// sleep instead of spinning (CU_EVENT_BLOCKING_SYNC): less CPU, more latency.
func WithBlockingSync() EventOption {
	return func(f uint32) uint32 { return f | uint32(cu.CU_EVENT_BLOCKING_SYNC) }
}

// WithInterprocess makes an event that can be shared with other processes
// through cuIpcGetEventHandle (CU_EVENT_INTERPROCESS). The driver requires
// such events to have no timing, so it cannot be combined with WithTiming.
func WithInterprocess() EventOption {
	return func(f uint32) uint32 { return f | uint32(cu.CU_EVENT_INTERPROCESS) }
}

// NewEvent creates an event in ctx (cuEventCreate).
func NewEvent(ctx *Context, opts ...EventOption) (*Event, error) {
	const op = "NewEvent"
	flags := uint32(cu.CU_EVENT_DISABLE_TIMING)
	for _, o := range opts {
		flags = o(flags)
	}
	if flags&uint32(cu.CU_EVENT_INTERPROCESS) != 0 && flags&uint32(cu.CU_EVENT_DISABLE_TIMING) == 0 {
		return nil, &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_VALUE, Err: fmt.Errorf(
			"an interprocess event cannot have timing (WithInterprocess with WithTiming): %w", cu.CUDA_ERROR_INVALID_VALUE)}
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}
	f, err := procs(op, "cuEventCreate")
	if err != nil {
		_ = cc.release()
		return nil, err
	}
	out, err := boundEventCreate(op, f, cc.val.raw, flags)
	if err != nil {
		// The event may exist even so, when restoring the thread's
		// context failed after it was made.
		if out != 0 {
			_ = boundEventDestroy(op, f, cc.val.raw, out)
		}
		_ = cc.release()
		return nil, err
	}
	b := &eventBox{}
	b.core.init(&eventKind)
	b.core.val.raw, b.core.val.flags = cu.CUevent(out), flags
	b.core.val.ctx.core = cc
	attachBoxed(b, &b.e.h, &b.core)
	return &b.e, nil
}

var _ stateCopier[eventState] = (*eventState)(nil)

func (s *eventState) copyTo(d *eventState) {
	d.raw, d.ctx.core, d.flags = s.raw, s.ctx.core, s.flags
}

// eventBox is a new event's first handle and its core (attachBoxed).
type eventBox struct {
	e    Event
	core shared[eventState]
}

func destroyEvent(st *eventState) error {
	const op, fn = "Event.Close", "cuEventDestroy"
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return destroyEventUnbound(op, f, st.ctx.raw(), uint64(st.raw))
}

func dropEvent(st *eventState) error { return st.ctx.release() }

func newEventHandle(core *shared[eventState]) *Event {
	e := &Event{}
	attach(e, &e.h, core)
	return e
}

// Clone returns another handle to the same event, to be closed on its own.
func (e *Event) Clone() (*Event, error) {
	return cloneAs(e.handle(), "Event.Clone", newEventHandle)
}

// Close releases this handle, after the calls in flight on it have
// returned. Closing a handle again returns nil and does nothing. The last
// Close destroys the event (cuEventDestroy; a pending record still
// completes) and releases its context.
func (e *Event) Close() error { return e.handle().close("Event.Close") }

// Raw returns the driver's event handle, or 0 once this handle is closed.
func (e *Event) Raw() cu.CUevent {
	st, ok := e.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// Context returns the event's context, owned by the event as
// Stream.Context's is by the stream; a closed handle naming the object
// once this handle is closed (see Stream.Context).
func (e *Event) Context() *Context {
	return contextOf(e.handle(), func(st *eventState) *ctxRef { return &st.ctx })
}

// Timing reports whether the event was made WithTiming.
func (e *Event) Timing() bool {
	st, ok := e.handle().peek()
	return ok && st.flags&uint32(cu.CU_EVENT_DISABLE_TIMING) == 0
}

// Record captures the work enqueued on s so far (cuEventRecord); Query,
// Synchronize and Stream.WaitEvent then refer to that work. The stream must
// be of the event's context. It binds no context and does not allocate.
func (e *Event) Record(s *Stream) error {
	const op, fn = "Event.Record", "cuEventRecord"
	eh, sh := e.handle(), s.handle()
	ec, sc := hotReady(eh), hotReady(sh)
	switch {
	case ec == nil:
		return eh.closedError(op)
	case sc == nil:
		return sh.closedError(op + " (stream)")
	}
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	return hotResult(op, fn, " (stream)", hotEventRecord(f.eventRecord, eh, sh, uintptr(ec.val.raw), uintptr(sc.val.raw)))
}

// Query reports whether the recorded work has finished (cuEventQuery). An
// event never recorded is done. Work still running is not an error.
func (e *Event) Query() (done bool, err error) {
	const op, fn = "Event.Query", "cuEventQuery"
	h := e.handle()
	c := hotReady(h)
	if c == nil {
		return false, h.closedError(op)
	}
	f, err := procs(op, fn)
	if err != nil {
		return false, err
	}
	r := hotEventQuery(f.eventQuery, h, uintptr(c.val.raw))
	if r == int32(cu.CUDA_ERROR_NOT_READY) {
		return false, nil
	}
	err = hotResult(op, fn, "", r)
	return err == nil, err
}

// Synchronize waits until the recorded work has finished
// (cuEventSynchronize).
func (e *Event) Synchronize() error {
	h := e.handle()
	ev, ok := h.enter()
	if !ok {
		return h.closedError("Event.Synchronize")
	}
	err := cu.EventSynchronize(ev.raw)
	h.exit()
	return check("Event.Synchronize", "cuEventSynchronize", err)
}

// errNoTiming explains the driver's CUDA_ERROR_INVALID_HANDLE for an event
// made without timing, which is easy to forget since that is the default.
var errNoTiming = fmt.Errorf("event made without WithTiming: %w", cu.CUDA_ERROR_INVALID_HANDLE)

// Elapsed returns the time between two recorded, completed events made
// WithTiming (cuEventElapsedTime, a resolution of about half a
// microsecond). An event not yet complete is an error matching
// cu.CUDA_ERROR_NOT_READY.
func Elapsed(start, end *Event) (time.Duration, error) {
	const op = "Elapsed"
	var hs holds
	defer hs.release()
	sh, eh := start.handle(), end.handle()
	if err := hs.all(op, arg{"start", sh}, arg{"end", eh}); err != nil {
		return 0, err
	}
	a, b := &sh.core.val, &eh.core.val
	if (a.flags|b.flags)&uint32(cu.CU_EVENT_DISABLE_TIMING) != 0 {
		return 0, &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_HANDLE, Err: errNoTiming}
	}
	var ms float32
	if err := cu.EventElapsedTime(&ms, a.raw, b.raw); err != nil {
		return 0, newError(op, "cuEventElapsedTime", err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

var eventKind = objectKind[eventState]{destroy: destroyEvent, drop: dropEvent, live: &liveEvents, grace: hotGrace, name: "event"}
