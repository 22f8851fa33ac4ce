//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// Handle is a cuDNN handle bound to a stream: see the package comment.
//
// All methods are safe for concurrent use; calls on one handle and its
// clones take turns, since a cuDNN handle serves one host thread at a
// time. Settings (SetTF32, SetSearch) change the handle for every call on
// it, those of its clones included.
type Handle struct {
	o *cuda.LibraryObject[*state]
}

// state is a cuDNN handle and what its calls keep between them. Every
// field but h is guarded by mu.
type state struct {
	h  cudnn.CudnnHandle_t
	mu sync.Mutex
	// tf32 lets float32 convolutions use TF32 tensor cores.
	tf32   bool
	search Search
	// wsLimit bounds the workspace of a plan's algorithm.
	wsLimit uint64
	// ws is the workspace the convolutions share, wsSize bytes (0: none).
	ws     cu.CUdeviceptr
	wsSize uint64
	plans  map[convKey]*convPlan
	// attn is AttentionForward's plans, made on first use.
	attn map[attnKey]*attnPlan
}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a cudnn.CudnnStatus_t that errors.Is
// matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "dnn", Op: strings.TrimPrefix(op, "dnn."), Func: fn, Err: err}
}

// New makes a cuDNN handle whose work goes to s (cudnnCreate,
// cudnnSetStream). The handle keeps its own clone of s: closing s does
// not end it. A missing library returns an error matching
// cudnn.ErrNoLibrary.
func New(s *cuda.Stream) (*Handle, error) {
	const op = "dnn.New"
	raw := s.Raw()
	o, err := cuda.NewLibraryObject(s, func() (*state, error) {
		var h cudnn.CudnnHandle_t
		if err := cudnn.Create(&h); err != nil {
			return nil, check(op, "cudnnCreate", err)
		}
		if err := cudnn.SetStream(h, raw); err != nil {
			_ = cudnn.Destroy(h)
			return nil, check(op, "cudnnSetStream", err)
		}
		return &state{h: h, wsLimit: WorkspaceLimit, plans: map[convKey]*convPlan{}}, nil
	}, destroy)
	if err != nil {
		return nil, err
	}
	return &Handle{o: o}, nil
}

// destroy ends a handle's cuDNN objects and frees its workspace, with the
// handle's context current. The context is synchronized first: the
// workspace may still be in use by queued convolutions.
func destroy(st *state) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	err := check("Handle.Close", "cuCtxSynchronize", cu.CtxSynchronize())
	for _, p := range st.plans {
		err = errors.Join(err, p.destroy())
	}
	st.plans = nil
	for _, p := range st.attn {
		err = errors.Join(err, p.b.destroy())
	}
	st.attn = nil
	if st.ws != 0 {
		err = errors.Join(err, check("Handle.Close", "cuMemFree", cu.MemFree(st.ws)))
		st.ws, st.wsSize = 0, 0
	}
	return errors.Join(err, check("Handle.Close", "cudnnDestroy", cudnn.Destroy(st.h)))
}

func (h *Handle) object() *cuda.LibraryObject[*state] {
	if h == nil {
		return nil
	}
	return h.o
}

// call runs fn with the handle and hold held, the handle's context
// current, and the calls of other goroutines on the handle done.
func (h *Handle) call(op string, fn func(st *state) error, hold ...cuda.Holder) error {
	return h.object().Call(op, func(st *state) error {
		st.mu.Lock()
		defer st.mu.Unlock()
		return fn(st)
	}, hold...)
}

// Clone returns another handle to the same cuDNN handle, to be closed on
// its own.
func (h *Handle) Clone() (*Handle, error) {
	o, err := h.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Handle{o: o}, nil
}

// Close releases this handle, after the calls in flight on it; the last
// Close waits for the context's queued work, destroys the cuDNN handle
// and the descriptors it cached, frees its workspace and releases its
// stream.
func (h *Handle) Close() error { return h.object().Close() }

// Stream returns the handle's stream, owned by the handle (no Close
// needed), or nil once this handle is closed.
func (h *Handle) Stream() *cuda.Stream { return h.object().Stream() }

// SetStream moves the handle, and its clones, to s, a stream of the same
// context (cudnnSetStream), after the calls in flight on it. Work queued
// on the old stream stays there: order the two (an event) if later work
// depends on it.
func (h *Handle) SetStream(s *cuda.Stream) error {
	const op = "Handle.SetStream"
	return h.object().SetStream(op, s, func(st *state, stream cu.CUstream) error {
		st.mu.Lock()
		defer st.mu.Unlock()
		// The workspace is shared by the calls on both streams.
		if err := cu.CtxSynchronize(); err != nil {
			return check(op, "cuCtxSynchronize", err)
		}
		return check(op, "cudnnSetStream", cudnn.SetStream(st.h, stream))
	})
}

// SetTF32 lets float32 convolutions use the tensor cores' TF32 format:
// several times the throughput on Ampere and later GPUs, with inputs
// rounded to 10 bits of mantissa. Off, the default, keeps float32
// convolutions to IEEE float32 arithmetic (CUDNN_FMA_MATH). Float16 and
// bfloat16 convolutions may use the tensor cores either way
// (CUDNN_TENSOR_OP_MATH), accumulating in float32.
func (h *Handle) SetTF32(on bool) error {
	return h.call("dnn.Handle.SetTF32", func(st *state) error {
		st.tf32 = on
		return nil
	})
}
