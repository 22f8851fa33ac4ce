//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// BatchNorm is a trained batch normalization: per channel of the tensor
// it normalizes, a scale γ, a bias β, and the mean and variance learnt in
// training, C float32 each whatever the tensor's type (cuDNN keeps these
// in float32 for the 16-bit types too), and the ε added to the variance.
type BatchNorm struct {
	Scale, Bias, Mean, Variance *cuda.Slice[float32]
	Epsilon                     float64
}

// BatchNormInference computes y = γ·(x − mean)/√(variance + ε) + β, each
// channel with its own parameters, on the handle's stream
// (cudnnBatchNormalizationForwardInference, spatial mode). x and y have
// one shape and layout and must not share memory; the parameters hold at
// least x's C elements each. It returns when the work is queued.
func BatchNormInference[T Float](h *Handle, bn BatchNorm, x, y Tensor[T]) error {
	const op = "BatchNormInference"
	if err := checkSame(op, x, y); err != nil {
		return err
	}
	if math.IsNaN(bn.Epsilon) || math.IsInf(bn.Epsilon, 0) || bn.Epsilon < 0 {
		return fmt.Errorf("dnn: %s: epsilon %g: it must be finite and not negative", op, bn.Epsilon)
	}
	params := []struct {
		name string
		s    *cuda.Slice[float32]
	}{{"Scale", bn.Scale}, {"Bias", bn.Bias}, {"Mean", bn.Mean}, {"Variance", bn.Variance}}
	for _, p := range params {
		if err := checkData(op, p.name, p.s, x.C); err != nil {
			return err
		}
		if overlaps(y.Data, y.shape().elements(), p.s, x.C) {
			return fmt.Errorf("dnn: %s: y shares memory with %s", op, p.name)
		}
	}
	px, py := x.Data.Ptr(), y.Data.Ptr()
	ps, pb, pm, pv := bn.Scale.Ptr(), bn.Bias.Ptr(), bn.Mean.Ptr(), bn.Variance.Ptr()
	return h.call("dnn."+op, func(st *state) (err error) {
		d, err := newTensorDesc(op, dataType[T](), x.shape(), x.Layout)
		if err != nil {
			return err
		}
		defer func() {
			err = errors.Join(err, check(op, "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(d)))
		}()
		var pd cudnn.CudnnTensorDescriptor_t
		if err := cudnn.CreateTensorDescriptor(&pd); err != nil {
			return check(op, "cudnnCreateTensorDescriptor", err)
		}
		defer func() {
			err = errors.Join(err, check(op, "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(pd)))
		}()
		// cuDNN says what the parameters' descriptor is for x: 1×C×1×1
		// in float32 for each of the package's types.
		if err := cudnn.DeriveBNTensorDescriptor(pd, d, cudnn.CUDNN_BATCHNORM_SPATIAL); err != nil {
			return check(op, "cudnnDeriveBNTensorDescriptor", err)
		}
		var dt cudnn.CudnnDataType_t
		var n, c, hh, w, ns, cs, hs, ws int32
		if err := cudnn.GetTensor4dDescriptor(pd, &dt, &n, &c, &hh, &w, &ns, &cs, &hs, &ws); err != nil {
			return check(op, "cudnnGetTensor4dDescriptor", err)
		}
		if dt != cudnn.CUDNN_DATA_FLOAT || c != int32(x.C) || n*hh*w != 1 {
			return fmt.Errorf("dnn: %s: %w: cuDNN wants the parameters as %v %d×%d×%d×%d, not float32 1×%d×1×1",
				op, cudnn.CUDNN_STATUS_NOT_SUPPORTED, dt, n, c, hh, w, x.C)
		}
		alpha, beta := float32(1), float32(0)
		return check(op, "cudnnBatchNormalizationForwardInference", cudnn.BatchNormalizationForwardInference(st.h,
			cudnn.CUDNN_BATCHNORM_SPATIAL, unsafe.Pointer(&alpha), unsafe.Pointer(&beta), d, devptr.Of(px), d, devptr.Of(py),
			pd, devptr.Of(ps), devptr.Of(pb), devptr.Of(pm), devptr.Of(pv), bn.Epsilon))
	}, x.Data, y.Data, bn.Scale, bn.Mean, bn.Bias, bn.Variance)
}
