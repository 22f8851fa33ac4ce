//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// SoftmaxAlgo is how Softmax computes.
type SoftmaxAlgo int

const (
	// Accurate subtracts the largest input before exponentiating, so
	// that no exponential overflows (CUDNN_SOFTMAX_ACCURATE).
	Accurate SoftmaxAlgo = iota
	// Log computes the logarithm of the softmax, x − max − log Σ
	// exp(x − max) (CUDNN_SOFTMAX_LOG).
	Log
)

func (a SoftmaxAlgo) String() string {
	switch a {
	case Accurate:
		return "Accurate"
	case Log:
		return "Log"
	}
	return fmt.Sprintf("SoftmaxAlgo(%d)", int(a))
}

// SoftmaxOver is the set of elements one softmax normalizes.
type SoftmaxOver int

const (
	// Channels normalizes over C, for each image and pixel
	// (CUDNN_SOFTMAX_MODE_CHANNEL): a classifier's output as N×C×1×1,
	// or per-pixel classes.
	Channels SoftmaxOver = iota
	// Image normalizes over all C·H·W elements of each image
	// (CUDNN_SOFTMAX_MODE_INSTANCE).
	Image
)

func (o SoftmaxOver) String() string {
	switch o {
	case Channels:
		return "Channels"
	case Image:
		return "Image"
	}
	return fmt.Sprintf("SoftmaxOver(%d)", int(o))
}

// Softmax computes y = softmax(x), or its logarithm, on the handle's
// stream (cudnnSoftmaxForward): y = exp(x − m) / Σ exp(x − m) over the
// elements over names, m their largest. x and y have one shape and
// layout and must not share memory. It returns when the work is queued.
func Softmax[T Float](h *Handle, algo SoftmaxAlgo, over SoftmaxOver, x, y Tensor[T]) error {
	const op = "Softmax"
	var a cudnn.CudnnSoftmaxAlgorithm_t
	switch algo {
	case Accurate:
		a = cudnn.CUDNN_SOFTMAX_ACCURATE
	case Log:
		a = cudnn.CUDNN_SOFTMAX_LOG
	default:
		return fmt.Errorf("dnn: %s: unknown algorithm %v", op, algo)
	}
	var m cudnn.CudnnSoftmaxMode_t
	switch over {
	case Channels:
		m = cudnn.CUDNN_SOFTMAX_MODE_CHANNEL
	case Image:
		m = cudnn.CUDNN_SOFTMAX_MODE_INSTANCE
	default:
		return fmt.Errorf("dnn: %s: unknown softmax set %v", op, over)
	}
	if err := checkSame(op, x, y); err != nil {
		return err
	}
	px, py := x.Data.Ptr(), y.Data.Ptr()
	return h.call("dnn."+op, func(st *state) (err error) {
		// A tensor's descriptor is a few host calls: made per call.
		d, err := newTensorDesc(op, dataType[T](), x.shape(), x.Layout)
		if err != nil {
			return err
		}
		defer func() {
			err = errors.Join(err, check(op, "cudnnDestroyTensorDescriptor", cudnn.DestroyTensorDescriptor(d)))
		}()
		alpha, beta := float32(1), float32(0)
		return check(op, "cudnnSoftmaxForward", cudnn.SoftmaxForward(st.h, a, m,
			unsafe.Pointer(&alpha), d, devptr.Of(px), unsafe.Pointer(&beta), d, devptr.Of(py)))
	}, x.Data, y.Data)
}

// checkSame checks an elementwise operation's x and y: valid, of one
// shape and layout, in memory of their own.
func checkSame[T Float](op string, x, y Tensor[T]) error {
	if err := x.check(op, "x"); err != nil {
		return err
	}
	if err := y.check(op, "y"); err != nil {
		return err
	}
	if x.shape() != y.shape() || x.Layout != y.Layout {
		return fmt.Errorf("dnn: %s: x is %s %v but y is %s %v: they must match", op, x.shape(), x.Layout, y.shape(), y.Layout)
	}
	n := x.shape().elements()
	if overlaps(x.Data, n, y.Data, n) {
		return fmt.Errorf("dnn: %s: y shares memory with x", op)
	}
	return nil
}
