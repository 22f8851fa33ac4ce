//go:build linux && (amd64 || arm64)

package solver

import (
	"errors"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// Handle is a cuSOLVER dense handle bound to a stream: see the package
// comment.
//
// All methods are safe for concurrent use; calls on one handle and its
// clones take turns.
type Handle struct {
	o   *cuda.LibraryObject[cusolver.CusolverDnHandle_t]
	mu  *sync.Mutex
	buf *buffers // shared by the clones, guarded by mu
}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a cusolver.CusolverStatus_t that
// errors.Is matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "solver", Op: strings.TrimPrefix(op, "solver."), Func: fn, Err: err}
}

// New makes a cuSOLVER dense handle whose work goes to s
// (cusolverDnCreate, cusolverDnSetStream). The handle keeps its own clone
// of s: closing s does not end it.
func New(s *cuda.Stream) (*Handle, error) {
	const op = "solver.New"
	raw := s.Raw()
	buf := new(buffers)
	o, err := cuda.NewLibraryObject(s, func() (cusolver.CusolverDnHandle_t, error) {
		var h cusolver.CusolverDnHandle_t
		if err := cusolver.DnCreate(&h); err != nil {
			return 0, check(op, "cusolverDnCreate", err)
		}
		if err := cusolver.DnSetStream(h, raw); err != nil {
			_ = cusolver.DnDestroy(h)
			return 0, check(op, "cusolverDnSetStream", err)
		}
		return h, nil
	}, func(h cusolver.CusolverDnHandle_t) error {
		// The last Close: no call is in flight to use buf.
		err := check("Handle.Close", "cusolverDnDestroy", cusolver.DnDestroy(h))
		return errors.Join(err, buf.free("Handle.Close"))
	})
	if err != nil {
		return nil, err
	}
	return &Handle{o: o, mu: new(sync.Mutex), buf: buf}, nil
}

func (h *Handle) object() *cuda.LibraryObject[cusolver.CusolverDnHandle_t] {
	if h == nil {
		return nil
	}
	return h.o
}

// call runs fn on the raw handle and its stream, with the handle and hold
// held and its context current (cuda.LibraryObject.CallOnStream), after
// the calls of other goroutines on the handle: a cuSOLVER handle keeps
// per-call state on the host and is not documented safe for two threads
// at once.
func (h *Handle) call(op string, fn func(cusolver.CusolverDnHandle_t, cu.CUstream) error, hold ...cuda.Holder) error {
	return h.object().CallOnStream(op, func(raw cusolver.CusolverDnHandle_t, s cu.CUstream) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		return fn(raw, s)
	}, hold...)
}

// Clone returns another handle to the same cuSOLVER handle, to be closed
// on its own.
func (h *Handle) Clone() (*Handle, error) {
	o, err := h.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Handle{o: o, mu: h.mu, buf: h.buf}, nil
}

// Close releases this handle, after the calls in flight on it; the last
// Close destroys the cuSOLVER handle (cusolverDnDestroy) and releases its
// stream.
func (h *Handle) Close() error { return h.object().Close() }

// Stream returns the handle's stream, owned by the handle (no Close
// needed), or nil once this handle is closed.
func (h *Handle) Stream() *cuda.Stream { return h.object().Stream() }

// SetStream moves the handle, and its clones, to s, a stream of the same
// context (cusolverDnSetStream), after the calls in flight on it.
func (h *Handle) SetStream(s *cuda.Stream) error {
	const op = "Handle.SetStream"
	return h.object().SetStream(op, s, func(raw cusolver.CusolverDnHandle_t, stream cu.CUstream) error {
		return check(op, "cusolverDnSetStream", cusolver.DnSetStream(raw, stream))
	})
}
