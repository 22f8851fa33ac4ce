//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// Search is how a handle chooses a convolution's algorithm, once per
// shape.
type Search int

const (
	// Heuristic takes the fastest algorithm cuDNN's heuristics predict
	// that fits the workspace limit
	// (cudnnGetConvolutionForwardAlgorithm_v7): no work on the GPU.
	Heuristic Search = iota
	// Exhaustive runs every algorithm that fits the workspace limit
	// on the call's tensors and takes the fastest
	// (cudnnFindConvolutionForwardAlgorithmEx): milliseconds, once per
	// shape, for the best algorithm. It needs a workspace of the limit.
	Exhaustive
)

func (s Search) String() string {
	switch s {
	case Heuristic:
		return "Heuristic"
	case Exhaustive:
		return "Exhaustive"
	}
	return fmt.Sprintf("Search(%d)", int(s))
}

// WorkspaceLimit is the most workspace a convolution's algorithm may
// need, unless SetWorkspaceLimit changes it.
const WorkspaceLimit = 256 << 20

// maxPlans bounds the shapes a handle keeps; past it, it forgets them
// all and starts again.
const maxPlans = 512

// convKey is what a convolution's plan depends on: the arguments'
// types and shapes (their addresses aside) and the handle's settings.
type convKey struct {
	dt      cudnn.CudnnDataType_t
	layout  Layout
	x, w    shape
	conv    Conv
	tf32    bool
	search  Search
	wsLimit uint64
}

// convPlan is a convolution's descriptors and algorithm.
type convPlan struct {
	x, y   cudnn.CudnnTensorDescriptor_t
	w      cudnn.CudnnFilterDescriptor_t
	conv   cudnn.CudnnConvolutionDescriptor_t
	algo   cudnn.CudnnConvolutionFwdAlgo_t
	wsSize uint64
	// bias and act are ConvBiasReLU's, made on its first call.
	bias cudnn.CudnnTensorDescriptor_t
	act  cudnn.CudnnActivationDescriptor_t
}

func (p *convPlan) destroy() error {
	var err error
	if p.x != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(p.x)))
	}
	if p.y != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(p.y)))
	}
	if p.w != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyFilterDescriptor", cudnn.DestroyFilterDescriptor(p.w)))
	}
	if p.bias != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(p.bias)))
	}
	if p.act != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyActivationDescriptor", cudnn.DestroyActivationDescriptor(p.act)))
	}
	if p.conv != 0 {
		err = errors.Join(err, check("Handle.Close", "cudnnDestroyConvolutionDescriptor", cudnn.DestroyConvolutionDescriptor(p.conv)))
	}
	return err
}

// SetSearch sets how the handle chooses the algorithms of the
// convolution shapes it has not run yet; Heuristic is the default.
func (h *Handle) SetSearch(s Search) error {
	if s != Heuristic && s != Exhaustive {
		return fmt.Errorf("dnn: Handle.SetSearch: unknown search %v", s)
	}
	return h.call("dnn.Handle.SetSearch", func(st *state) error {
		st.search = s
		return nil
	})
}

// SetWorkspaceLimit sets the most workspace, in bytes, the algorithm of
// a convolution shape the handle has not run yet may need (0: none, and
// only algorithms that need none run). WorkspaceLimit is the default.
func (h *Handle) SetWorkspaceLimit(bytes int) error {
	if bytes < 0 {
		return fmt.Errorf("dnn: Handle.SetWorkspaceLimit: %d bytes", bytes)
	}
	return h.call("dnn.Handle.SetWorkspaceLimit", func(st *state) error {
		st.wsLimit = uint64(bytes)
		return nil
	})
}

// mathType is the math a plan asks cuDNN for: IEEE float32 unless TF32
// is allowed, when cuDNN's default lets Ampere and later GPUs use TF32;
// tensor cores for the 16-bit types.
func (k convKey) mathType() cudnn.CudnnMathType_t {
	switch {
	case k.dt != cudnn.CUDNN_DATA_FLOAT:
		return cudnn.CUDNN_TENSOR_OP_MATH
	case k.tf32:
		return cudnn.CUDNN_DEFAULT_MATH
	}
	return cudnn.CUDNN_FMA_MATH
}

// plan returns the plan of key, made and cached the first time: its
// descriptors, cuDNN's output shape checked against want, and its
// algorithm. px, pw, py are the tensors Exhaustive runs the algorithms
// on.
func (st *state) plan(op string, key convKey, want shape, px, pw, py cu.CUdeviceptr) (*convPlan, error) {
	key.tf32, key.search, key.wsLimit = st.tf32, st.search, st.wsLimit
	if p, ok := st.plans[key]; ok {
		return p, nil
	}
	p, err := st.newPlan(op, key, want, px, pw, py)
	if err != nil {
		return nil, err
	}
	if len(st.plans) >= maxPlans {
		for k, old := range st.plans {
			_ = old.destroy()
			delete(st.plans, k)
		}
	}
	st.plans[key] = p
	return p, nil
}

func (st *state) newPlan(op string, key convKey, want shape, px, pw, py cu.CUdeviceptr) (_ *convPlan, err error) {
	// p is not the result: a failed return sets that to nil, and p's
	// descriptors are still to be destroyed.
	p := &convPlan{}
	defer func() {
		if err != nil {
			_ = p.destroy()
		}
	}()
	if p.x, err = newTensorDesc(op, key.dt, key.x, key.layout); err != nil {
		return nil, err
	}
	if p.w, err = newFilterDesc(op, key.dt, key.w, key.layout); err != nil {
		return nil, err
	}
	if err := cudnn.CreateConvolutionDescriptor(&p.conv); err != nil {
		return nil, check(op, "cudnnCreateConvolutionDescriptor", err)
	}
	c := key.conv
	// Accumulation in float32 for every type: cuDNN's "pseudo half"
	// configuration for the 16-bit ones.
	if err := cudnn.SetConvolution2dDescriptor(p.conv, int32(c.PadH), int32(c.PadW), int32(c.StrideH), int32(c.StrideW),
		int32(c.DilationH), int32(c.DilationW), cudnn.CUDNN_CROSS_CORRELATION, cudnn.CUDNN_DATA_FLOAT); err != nil {
		return nil, check(op, "cudnnSetConvolution2dDescriptor", err)
	}
	if err := cudnn.SetConvolutionGroupCount(p.conv, int32(c.Groups)); err != nil {
		return nil, check(op, "cudnnSetConvolutionGroupCount", err)
	}
	if err := cudnn.SetConvolutionMathType(p.conv, key.mathType()); err != nil {
		return nil, check(op, "cudnnSetConvolutionMathType", err)
	}
	var n, k, h, w int32
	if err := cudnn.GetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &n, &k, &h, &w); err != nil {
		return nil, check(op, "cudnnGetConvolution2dForwardOutputDim", err)
	}
	if got := (shape{int(n), int(k), int(h), int(w)}); got != want {
		return nil, fmt.Errorf("dnn: %s: cuDNN makes the output %s, this package %s", op, got, want)
	}
	if p.y, err = newTensorDesc(op, key.dt, want, key.layout); err != nil {
		return nil, err
	}
	if err := st.choose(op, key, p, px, pw, py); err != nil {
		return nil, err
	}
	return p, nil
}

// choose sets p's algorithm and workspace size by key's search.
func (st *state) choose(op string, key convKey, p *convPlan, px, pw, py cu.CUdeviceptr) error {
	var perf [cudnn.CUDNN_CONVOLUTION_FWD_ALGO_COUNT]cudnn.CudnnConvolutionFwdAlgoPerf_t
	var got int32
	if key.search == Exhaustive {
		if err := st.ensureWorkspace(op, key.wsLimit); err != nil {
			return err
		}
		if err := cudnn.FindConvolutionForwardAlgorithmEx(st.h, p.x, devptr.Of(px), p.w, devptr.Of(pw), p.conv, p.y, devptr.Of(py),
			int32(len(perf)), &got, &perf[0], devptr.Of(st.ws), key.wsLimit); err != nil {
			return check(op, "cudnnFindConvolutionForwardAlgorithmEx", err)
		}
	} else if err := cudnn.GetConvolutionForwardAlgorithm_v7(st.h, p.x, p.w, p.conv, p.y, int32(len(perf)), &got, &perf[0]); err != nil {
		return check(op, "cudnnGetConvolutionForwardAlgorithm_v7", err)
	}
	strict := key.mathType() == cudnn.CUDNN_FMA_MATH
	var last error
	for _, r := range perf[:min(int(got), len(perf))] {
		if r.Status != cudnn.CUDNN_STATUS_SUCCESS || r.Memory > key.wsLimit {
			continue
		}
		// cuDNN picks tensor-core kernels or not by the algorithm and the
		// descriptor's math type together. IEEE float32 keeps FMA_MATH,
		// which holds any algorithm to its FMA kernels whatever math the
		// result reports; otherwise the descriptor takes the math the
		// result was predicted or measured with, but never
		// ALLOW_CONVERSION for float32, which would round its inputs to
		// float16, whose range is far smaller than TF32's.
		if !strict {
			if key.dt == cudnn.CUDNN_DATA_FLOAT && r.MathType == cudnn.CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION {
				continue
			}
			if err := cudnn.SetConvolutionMathType(p.conv, r.MathType); err != nil {
				return check(op, "cudnnSetConvolutionMathType", err)
			}
		}
		var ws uint64
		if err := cudnn.GetConvolutionForwardWorkspaceSize(st.h, p.x, p.w, p.conv, p.y, r.Algo, &ws); err != nil {
			last = check(op, "cudnnGetConvolutionForwardWorkspaceSize", err)
			continue
		}
		if ws > key.wsLimit {
			continue
		}
		p.algo, p.wsSize = r.Algo, ws
		return nil
	}
	if last != nil {
		return last
	}
	return fmt.Errorf("dnn: %s: %w: no algorithm for this convolution fits a workspace of %d bytes (SetWorkspaceLimit)",
		op, cudnn.CUDNN_STATUS_NOT_SUPPORTED, key.wsLimit)
}
