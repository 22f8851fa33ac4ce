//go:build linux && (amd64 || arm64)

package blas

import (
	"strings"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
)

// Handle is a cuBLAS handle bound to a stream: see the package comment.
//
// All methods are safe for concurrent use. Settings (SetTF32) change the
// handle for every call on it, those of its clones included.
type Handle struct {
	o *cuda.LibraryObject[cublas.CublasHandle_t]
}

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

// New makes a cuBLAS handle whose work goes to s (cublasCreate,
// cublasSetStream). The handle keeps its own clone of s: closing s does not
// end it.
func New(s *cuda.Stream) (*Handle, error) {
	const op = "blas.New"
	raw := s.Raw()
	o, err := cuda.NewLibraryObject(s, func() (cublas.CublasHandle_t, error) {
		var h cublas.CublasHandle_t
		if err := cublas.Create(&h); err != nil {
			return 0, check(op, "cublasCreate_v2", err)
		}
		if err := cublas.SetStream(h, raw); err != nil {
			_ = cublas.Destroy(h)
			return 0, check(op, "cublasSetStream_v2", err)
		}
		return h, nil
	}, func(h cublas.CublasHandle_t) error {
		return check("Handle.Close", "cublasDestroy_v2", cublas.Destroy(h))
	})
	if err != nil {
		return nil, err
	}
	return &Handle{o: o}, nil
}

func (h *Handle) object() *cuda.LibraryObject[cublas.CublasHandle_t] {
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
// Close destroys the cuBLAS handle and releases its stream.
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
	return h.object().Exclusive(op, func(raw cublas.CublasHandle_t) error {
		return check(op, "cublasSetMathMode", cublas.SetMathMode(raw, mode))
	})
}

// SetStream moves the handle, and its clones, to s, a stream of the same
// context (cublasSetStream), after the calls in flight on it. Work queued
// on the old stream stays there: order the two (an event) if later work
// depends on it.
func (h *Handle) SetStream(s *cuda.Stream) error {
	const op = "Handle.SetStream"
	return h.object().SetStream(op, s, func(raw cublas.CublasHandle_t, stream cu.CUstream) error {
		return check(op, "cublasSetStream_v2", cublas.SetStream(raw, stream))
	})
}
