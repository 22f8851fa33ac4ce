//go:build linux && (amd64 || arm64)

package dnn

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// ConvBiasReLU computes y = max(0, x ∗ w + bias) in one cuDNN call
// (cudnnConvolutionBiasActivationForward): ConvForward's convolution,
// then bias[k] added to every element of output channel k, then ReLU.
// bias holds at least K elements of T and must not share memory with y.
// The algorithm is ConvForward's for the shape, chosen and cached the
// same way.
func ConvBiasReLU[T Float](h *Handle, c Conv, x Tensor[T], w Filter[T], bias *cuda.Slice[T], y Tensor[T]) error {
	const op = "ConvBiasReLU"
	c = c.norm()
	if err := checkConv(op, c, x, w, y); err != nil {
		return err
	}
	if err := checkData(op, "bias", bias, w.K); err != nil {
		return err
	}
	if overlaps(y.Data, y.shape().elements(), bias, w.K) {
		return fmt.Errorf("dnn: %s: y shares memory with bias", op)
	}
	px, pw, pb, py := x.Data.Ptr(), w.Data.Ptr(), bias.Ptr(), y.Data.Ptr()
	key := convKey{dt: dataType[T](), layout: x.Layout, x: x.shape(), w: w.shape(), conv: c}
	return h.call("dnn."+op, func(st *state) error {
		p, err := st.plan(op, key, y.shape(), px, pw, py)
		if err != nil {
			return err
		}
		if err := p.makeFused(op, key); err != nil {
			return err
		}
		if err := st.ensureWorkspace(op, p.wsSize); err != nil {
			return err
		}
		// alpha2 = 0 drops the z term; z is y, as cuDNN allows.
		alpha1, alpha2 := float32(1), float32(0)
		return check(op, "cudnnConvolutionBiasActivationForward", cudnn.ConvolutionBiasActivationForward(st.h,
			unsafe.Pointer(&alpha1), p.x, devptr.Of(px), p.w, devptr.Of(pw), p.conv, p.algo, devptr.Of(st.ws), p.wsSize,
			unsafe.Pointer(&alpha2), p.y, devptr.Of(py), p.bias, devptr.Of(pb), p.act, p.y, devptr.Of(py)))
	}, x.Data, w.Data, bias, y.Data)
}

// makeFused gives p the bias's and the ReLU's descriptors, the first
// time a fused call needs them.
func (p *convPlan) makeFused(op string, key convKey) error {
	if p.bias == 0 {
		d, err := newTensorDesc(op, key.dt, shape{1, key.w[0], 1, 1}, NCHW)
		if err != nil {
			return err
		}
		p.bias = d
	}
	if p.act == 0 {
		var a cudnn.CudnnActivationDescriptor_t
		if err := cudnn.CreateActivationDescriptor(&a); err != nil {
			return check(op, "cudnnCreateActivationDescriptor", err)
		}
		if err := cudnn.SetActivationDescriptor(a, cudnn.CUDNN_ACTIVATION_RELU, cudnn.CUDNN_NOT_PROPAGATE_NAN, 0); err != nil {
			_ = cudnn.DestroyActivationDescriptor(a)
			return check(op, "cudnnSetActivationDescriptor", err)
		}
		p.act = a
	}
	return nil
}
