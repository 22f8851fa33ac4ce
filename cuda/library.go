package cuda

import (
	"strconv"
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
)

// LibraryObject is a shared handle to an object of another CUDA library
// that works on a stream: a cuBLAS or cuFFT handle, a cuRAND generator, an
// NCCL communicator. It is how the packages that bind those libraries
// (cuda/blas and the like) give their handles this package's rules: the
// object holds its own clone of the stream it was made on (and through it
// the stream's context); Clone gives another handle to it, each closed on
// its own, and the last Close destroys it once the calls in flight on it
// have returned; a call after Close, or on a nil handle, returns ErrClosed
// without reaching the library; a handle dropped without Close is closed
// by a cleanup.
//
// T is the library's raw handle type (cublas.CublasHandle_t).
//
// All methods are safe for concurrent use. Calls (Call) may run at once,
// as cuBLAS allows on one handle; what changes the object (Exclusive,
// SetStream) waits for the calls in flight and holds the next ones back.
type LibraryObject[T any] struct {
	h handle[libState[T]]
}

type libState[T any] struct {
	raw     T // first: see shared.val
	destroy func(T) error
	// mu is held shared by calls and exclusively by what changes the
	// object, the stream included.
	mu     sync.RWMutex
	stream *Stream
}

func (o *LibraryObject[T]) handle() *handle[libState[T]] {
	if o == nil {
		return nil
	}
	return &o.h
}

// NewLibraryObject makes create's object, with the context of s current on
// the calling thread as the library requires, and returns a handle to it
// bound to a clone of s. destroy is called once, with the same context
// current, when the last handle is closed; an error it returns is the
// error of that Close.
func NewLibraryObject[T any](s *Stream, create func() (T, error), destroy func(T) error) (*LibraryObject[T], error) {
	const op = "NewLibraryObject"
	if create == nil || destroy == nil {
		return nil, invalidArg(op, "nil create or destroy function")
	}
	own, err := s.Clone()
	if err != nil {
		return nil, s.handle().closedError(op + " (stream)")
	}
	ctx := own.Context()
	var raw T
	if err := ctx.Do(func() error {
		var cerr error
		raw, cerr = create()
		return cerr
	}); err != nil {
		_ = own.Close()
		return nil, err
	}
	// The kind is made per object: T has no package-level value. Library
	// objects are made rarely (a handle per stream, say).
	core := newShared(&objectKind[libState[T]]{destroy: destroyLibraryObject[T], drop: dropLibraryObject[T], live: &liveLibraryObjects, name: "library object"})
	core.val = libState[T]{raw: raw, stream: own, destroy: destroy}
	return newLibraryObjectHandle(core), nil
}

func newLibraryObjectHandle[T any](core *shared[libState[T]]) *LibraryObject[T] {
	o := &LibraryObject[T]{}
	attach(o, &o.h, core)
	return o
}

func destroyLibraryObject[T any](st *libState[T]) error {
	return st.stream.Context().Do(func() error { return st.destroy(st.raw) })
}

func dropLibraryObject[T any](st *libState[T]) error { return st.stream.Close() }

// Clone returns another handle to the same object, to be closed on its own.
func (o *LibraryObject[T]) Clone() (*LibraryObject[T], error) {
	return cloneAs(o.handle(), "LibraryObject.Clone", newLibraryObjectHandle[T])
}

// Close releases this handle, after the calls in flight on it; the last
// Close destroys the object and releases its stream.
func (o *LibraryObject[T]) Close() error { return o.handle().close("LibraryObject.Close") }

// Stream returns a handle to the object's stream, owned by the object: it
// is valid while this handle is open and the object is not moved to
// another stream (SetStream), and needs no Close. It is nil once this
// handle is closed.
func (o *LibraryObject[T]) Stream() *Stream {
	h := o.handle()
	st, ok := h.enter()
	if !ok {
		return nil
	}
	defer h.exit()
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.stream
}

// SetStream moves the object to s, a stream of the same context: fn tells
// the library (cublasSetStream) with the object held exclusively, after
// the calls in flight, and the object then holds a clone of s instead of
// its old stream. Work already queued on the old stream stays there:
// order the two streams (an event) if later work depends on it.
func (o *LibraryObject[T]) SetStream(op string, s *Stream, fn func(raw T, stream cu.CUstream) error) error {
	h := o.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	own, err := s.Clone()
	if err != nil {
		return s.handle().closedError(op + " (stream)")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if own.Context().Raw() != st.stream.Context().Raw() {
		_ = own.Close()
		return invalidArg(op, "the stream is of another context than the object's")
	}
	if err := st.stream.Context().Do(func() error { return fn(st.raw, own.Raw()) }); err != nil {
		_ = own.Close()
		return err
	}
	old := st.stream
	st.stream = own
	return old.Close()
}

// LibraryError is the error of a call into another CUDA library made by
// one of the packages built on LibraryObject (cuda/blas, cuda/rand,
// cuda/fft): the package, its operation, the C function that failed, and
// the cause, the library's status, which errors.Is matches
// (cublas.CUBLAS_STATUS_NOT_SUPPORTED).
type LibraryError struct {
	Pkg  string // "blas"
	Op   string // "Gemm"
	Func string // "cublasSgemm_v2"
	Err  error
}

func (e *LibraryError) Error() string {
	return e.Pkg + ": " + e.Op + ": " + e.Func + ": " + e.Err.Error()
}

func (e *LibraryError) Unwrap() error { return e.Err }

// A Holder is an object of this package that a call into another library
// can hold for its length (see LibraryObject.Call): *Stream, *Event,
// *DeviceMemory, *Slice and *Context. A nil one of these is a closed one.
type Holder interface {
	gate() gate
}

func (s *Stream) gate() gate       { return s.handle() }
func (e *Event) gate() gate        { return e.handle() }
func (m *DeviceMemory) gate() gate { return m.handle() }
func (c *Context) gate() gate      { return c.handle() }

// maxHeld is how many objects one Call holds besides the library object.
const maxHeld = 8

// Call runs fn, which calls into the library, with the object and each of
// hold held for its whole length, so that none can be destroyed under the
// library, and with the object's context current on the calling thread. fn
// gets the raw object. Take the raw handles of the others (their Raw)
// before Call: a handle whose Close has begun reads as 0, but if one was
// closed before Call held it, Call fails, and once held, what Raw gave
// stays valid until fn returns. If the object or one of hold is nil or closed,
// Call returns an error matching ErrClosed naming op and the argument, and
// fn is not called. fn's error is returned as it is.
func (o *LibraryObject[T]) Call(op string, fn func(raw T) error, hold ...Holder) error {
	return o.CallOnStream(op, func(raw T, _ cu.CUstream) error { return fn(raw) }, hold...)
}

// CallOnStream is Call for libraries that take the stream on every call
// (cuBLASLt's cublasLtMatmul): fn gets the raw handle of the object's
// stream too, valid until it returns.
func (o *LibraryObject[T]) CallOnStream(op string, fn func(raw T, stream cu.CUstream) error, hold ...Holder) error {
	h := o.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	if len(hold) > maxHeld {
		return invalidArg(op, "%d objects to hold, more than %d", len(hold), maxHeld)
	}
	var gs [maxHeld]gate
	n := 0
	defer func() {
		for _, g := range gs[:n] {
			g.exit()
		}
	}()
	for i, x := range hold {
		var g gate
		if x != nil {
			g = x.gate()
		}
		if g == nil || !g.hold() {
			return closedError(op + " (argument " + strconv.Itoa(i+1) + ")")
		}
		gs[n] = g
		n++
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	stream := st.stream.Raw()
	return st.stream.Context().Do(func() error { return fn(st.raw, stream) })
}

// Exclusive is Call for what changes the object (a cuBLAS handle's math
// mode, say): fn runs after the calls in flight on the object have
// returned, and none starts until it has.
func (o *LibraryObject[T]) Exclusive(op string, fn func(raw T) error) error {
	h := o.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.stream.Context().Do(func() error { return fn(st.raw) })
}
