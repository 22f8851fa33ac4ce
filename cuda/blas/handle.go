//go:build linux && (amd64 || arm64)

package blas

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
)

// Handle is a cuBLAS handle bound to a stream: see the package comment.
// It owns the workspace cuBLAS uses (cublasSetWorkspace), Workspace bytes
// of device memory unless SetWorkspace changes it, freed with the handle.
//
// All methods are safe for concurrent use. Settings (SetTF32,
// SetWorkspace) change the handle for every call on it, those of its
// clones included.
type Handle struct {
	o *cuda.LibraryObject[blasState]
}

// blasState is a cuBLAS handle and its workspace. ws changes only with
// the object held exclusively (SetWorkspace), and is read by calls that
// hold it shared.
type blasState struct {
	h  cublas.CublasHandle_t
	ws *workspace
}

// workspace is the device memory a cuBLAS handle is given; mem is nil for
// none.
type workspace struct{ mem *cuda.DeviceMemory }

// Workspace is the workspace New gives a handle: 32 MiB, what NVIDIA
// recommends for cuBLAS on Hopper (cuBLAS's own pool is smaller, and a
// handle's workspace is what lets it use split-K and stream-K kernels
// without allocating).
const Workspace = 32 << 20

// api is the part of cuBLAS the handle's life cycle calls: the library's,
// but tests without a GPU give it a stand-in.
var api = struct {
	create       func(*cublas.CublasHandle_t) error
	destroy      func(cublas.CublasHandle_t) error
	setStream    func(cublas.CublasHandle_t, cu.CUstream) error
	setWorkspace func(cublas.CublasHandle_t, unsafe.Pointer, uint64) error
}{cublas.Create, cublas.Destroy, cublas.SetStream, cublas.SetWorkspace}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a cublas.CublasStatus_t that errors.Is
// matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "blas", Op: strings.TrimPrefix(op, "blas."), Func: fn, Err: err}
}

// bind gives h the workspace w (cublasSetWorkspace).
func (w *workspace) bind(op string, h cublas.CublasHandle_t) error {
	var p unsafe.Pointer
	var n uint64
	if w.mem != nil {
		p, n = devptr.Of(w.mem.Raw()), uint64(w.mem.Size())
	}
	return check(op, "cublasSetWorkspace_v2", api.setWorkspace(h, p, n))
}

// newWithWorkspace makes create's object, bound to s, with a workspace of
// bytes on the context of s. Once the object is made the workspace is its
// own, for destroy to free; until then it is freed here on any error.
func newWithWorkspace[T any](s *cuda.Stream, bytes int, create func(ws *cuda.DeviceMemory) (T, error), destroy func(T) error) (*cuda.LibraryObject[T], error) {
	ws, err := cuda.Alloc(s.Context(), bytes)
	if err != nil {
		return nil, err
	}
	o, err := cuda.NewLibraryObject(s, func() (T, error) { return create(ws) }, destroy)
	if err != nil {
		return nil, errors.Join(err, ws.Close())
	}
	return o, nil
}

// New makes a cuBLAS handle whose work goes to s (cublasCreate,
// cublasSetStream), with a workspace of Workspace bytes
// (cublasSetWorkspace). The handle keeps its own clone of s: closing s
// does not end it.
func New(s *cuda.Stream) (*Handle, error) {
	const op = "blas.New"
	raw := s.Raw()
	o, err := newWithWorkspace(s, Workspace, func(mem *cuda.DeviceMemory) (blasState, error) {
		ws := &workspace{mem: mem}
		var h cublas.CublasHandle_t
		if err := api.create(&h); err != nil {
			return blasState{}, check(op, "cublasCreate_v2", err)
		}
		if err := api.setStream(h, raw); err != nil {
			_ = api.destroy(h)
			return blasState{}, check(op, "cublasSetStream_v2", err)
		}
		if err := ws.bind(op, h); err != nil {
			_ = api.destroy(h)
			return blasState{}, err
		}
		return blasState{h: h, ws: ws}, nil
	}, func(st blasState) error {
		// cublasDestroy waits for the device's work, the workspace's
		// last users included, before it returns.
		err := check("Handle.Close", "cublasDestroy_v2", api.destroy(st.h))
		if st.ws.mem != nil {
			err = errors.Join(err, st.ws.mem.Close())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Handle{o: o}, nil
}

func (h *Handle) object() *cuda.LibraryObject[blasState] {
	if h == nil {
		return nil
	}
	return h.o
}

// Clone returns another handle to the same cuBLAS handle, to be closed on
// its own.
func (h *Handle) Clone() (*Handle, error) {
	o, err := h.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Handle{o: o}, nil
}

// Close releases this handle, after the calls in flight on it; the last
// Close destroys the cuBLAS handle, frees its workspace and releases its
// stream.
func (h *Handle) Close() error { return h.object().Close() }

// Stream returns the handle's stream, owned by the handle (no Close
// needed), or nil once this handle is closed.
func (h *Handle) Stream() *cuda.Stream { return h.object().Stream() }

// SetTF32 lets float32 GEMMs use the tensor cores' TF32 format
// (CUBLAS_TF32_TENSOR_OP_MATH): about eight times the throughput on Ampere
// and later GPUs, with inputs rounded to 10 bits of mantissa. Off, the
// default, is IEEE float32 throughout.
func (h *Handle) SetTF32(on bool) error {
	const op = "Handle.SetTF32"
	mode := cublas.CUBLAS_DEFAULT_MATH
	if on {
		mode = cublas.CUBLAS_TF32_TENSOR_OP_MATH
	}
	return h.object().Exclusive(op, func(st blasState) error {
		return check(op, "cublasSetMathMode", cublas.SetMathMode(st.h, mode))
	})
}

// SetStream moves the handle, and its clones, to s, a stream of the same
// context (cublasSetStream), after the calls in flight on it. Work queued
// on the old stream stays there: order the two (an event) if later work
// depends on it. cublasSetStream gives cuBLAS its default workspace pool
// back, so the handle's own workspace is bound again after it.
func (h *Handle) SetStream(s *cuda.Stream) error {
	const op = "Handle.SetStream"
	return h.object().SetStream(op, s, func(st blasState, stream cu.CUstream) error {
		if err := api.setStream(st.h, stream); err != nil {
			return check(op, "cublasSetStream_v2", err)
		}
		return st.ws.bind(op, st.h)
	})
}

// WorkspaceSize returns the size of the handle's workspace in bytes.
func (h *Handle) WorkspaceSize() (int, error) {
	n := 0
	err := h.object().Call("blas.Handle.WorkspaceSize", func(st blasState) error {
		if st.ws.mem != nil {
			n = st.ws.mem.Size()
		}
		return nil
	})
	return n, err
}

// SetWorkspace gives the handle, and its clones, a workspace of its own of
// bytes bytes instead of the one it has (0: none, and cuBLAS runs the
// algorithms that need none), after the calls in flight on it. The old
// workspace is freed once the context's queued work, which may still use
// it, has finished (cuCtxSynchronize). On an error the handle keeps its
// workspace.
func (h *Handle) SetWorkspace(bytes int) error {
	const op = "Handle.SetWorkspace"
	if bytes < 0 {
		return fmt.Errorf("blas: %s: %d bytes", op, bytes)
	}
	s := h.Stream()
	if s == nil {
		return fmt.Errorf("blas: %s: %w", op, cuda.ErrClosed)
	}
	var mem *cuda.DeviceMemory
	if bytes > 0 {
		var err error
		if mem, err = cuda.Alloc(s.Context(), bytes); err != nil {
			return err
		}
	}
	err := h.object().Exclusive(op, func(st blasState) error {
		if err := cu.CtxSynchronize(); err != nil {
			return check(op, "cuCtxSynchronize", err)
		}
		old := st.ws.mem
		st.ws.mem = mem
		if err := st.ws.bind(op, st.h); err != nil {
			st.ws.mem = old
			return err
		}
		mem = old // freed below
		return nil
	})
	if mem != nil {
		err = errors.Join(err, mem.Close())
	}
	return err
}
