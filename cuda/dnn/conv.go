//go:build linux && (amd64 || arm64)

package dnn

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// Conv is the geometry of a 2-D convolution, cross-correlation as deep
// learning frameworks compute it (the filter is not flipped). A zero
// stride, dilation or group count means 1, so Conv{} is a plain
// convolution without padding.
type Conv struct {
	PadH, PadW           int // zeros added above and below, left and right
	StrideH, StrideW     int
	DilationH, DilationW int // spacing of the filter's taps
	// Groups splits the channels: each of Groups groups of the input's
	// channels is convolved with K/Groups of the filters, whose C is the
	// channels of one group.
	Groups int
}

// norm is c with its zeros made 1.
func (c Conv) norm() Conv {
	one := func(v *int) {
		if *v == 0 {
			*v = 1
		}
	}
	one(&c.StrideH)
	one(&c.StrideW)
	one(&c.DilationH)
	one(&c.DilationW)
	one(&c.Groups)
	return c
}

// ConvOutput returns the shape of the output of convolving x with w: N
// images of K channels of P×Q pixels, P = (H + 2·PadH − (R−1)·DilationH −
// 1)/StrideH + 1 and Q likewise. It checks the shapes (not the data) of x
// and w and their fit; it needs neither a GPU nor cuDNN.
func ConvOutput[T Float](c Conv, x Tensor[T], w Filter[T]) (n, k, p, q int, err error) {
	y, err := convShape("ConvOutput", c.norm(), x, w)
	return y[0], y[1], y[2], y[3], err
}

// convShape checks c, x's and w's shapes and that they fit, and returns
// the output's shape; c is normalized.
func convShape[T Float](op string, c Conv, x Tensor[T], w Filter[T]) (shape, error) {
	if err := checkShape(op, "x", x.shape(), x.Layout, "NCHW"); err != nil {
		return shape{}, err
	}
	if err := checkShape(op, "w", w.shape(), w.Layout, "KCRS"); err != nil {
		return shape{}, err
	}
	switch {
	case c.PadH < 0 || c.PadW < 0:
		return shape{}, fmt.Errorf("dnn: %s: negative padding %d×%d", op, c.PadH, c.PadW)
	case c.StrideH < 0 || c.StrideW < 0:
		return shape{}, fmt.Errorf("dnn: %s: negative stride %d×%d", op, c.StrideH, c.StrideW)
	case c.DilationH < 0 || c.DilationW < 0:
		return shape{}, fmt.Errorf("dnn: %s: negative dilation %d×%d", op, c.DilationH, c.DilationW)
	case c.Groups < 0:
		return shape{}, fmt.Errorf("dnn: %s: negative group count %d", op, c.Groups)
	case x.Layout != w.Layout:
		return shape{}, fmt.Errorf("dnn: %s: x is %v but w is %v: both must have one layout", op, x.Layout, w.Layout)
	case x.C != w.C*c.Groups:
		return shape{}, fmt.Errorf("dnn: %s: x has %d channels but w has %d per group in %d group(s): %d needed", op, x.C, w.C, c.Groups, w.C*c.Groups)
	case w.K%c.Groups != 0:
		return shape{}, fmt.Errorf("dnn: %s: w's %d filters do not split into %d groups", op, w.K, c.Groups)
	}
	const limit = 1 << 20 // far beyond any real image, and no overflow below
	if c.PadH > limit || c.PadW > limit || c.StrideH > limit || c.StrideW > limit || c.DilationH > limit || c.DilationW > limit {
		return shape{}, fmt.Errorf("dnn: %s: padding, stride or dilation above %d", op, limit)
	}
	eh, ew := (w.R-1)*c.DilationH+1, (w.S-1)*c.DilationW+1
	ph, pw := x.H+2*c.PadH, x.W+2*c.PadW
	if eh > ph || ew > pw {
		return shape{}, fmt.Errorf("dnn: %s: the dilated filter is %d×%d, larger than the padded input's %d×%d", op, eh, ew, ph, pw)
	}
	return shape{x.N, w.K, (ph-eh)/c.StrideH + 1, (pw-ew)/c.StrideW + 1}, nil
}

// checkConv checks a convolution's arguments: c normalized.
func checkConv[T Float](op string, c Conv, x Tensor[T], w Filter[T], y Tensor[T]) error {
	ys, err := convShape(op, c, x, w)
	if err != nil {
		return err
	}
	if err := checkShape(op, "y", y.shape(), y.Layout, "NCHW"); err != nil {
		return err
	}
	if y.shape() != ys {
		return fmt.Errorf("dnn: %s: y is %s but the convolution's output is %s", op, y.shape(), ys)
	}
	if y.Layout != x.Layout {
		return fmt.Errorf("dnn: %s: x is %v but y is %v: both must have one layout", op, x.Layout, y.Layout)
	}
	for _, e := range []error{x.check(op, "x"), w.check(op, "w"), y.check(op, "y")} {
		if e != nil {
			return e
		}
	}
	if overlaps(y.Data, ys.elements(), x.Data, x.shape().elements()) || overlaps(y.Data, ys.elements(), w.Data, w.shape().elements()) {
		return fmt.Errorf("dnn: %s: y shares memory with x or w", op)
	}
	return nil
}

// ConvForward computes y = x ∗ w, the convolution c of x by w, on the
// handle's stream (cudnnConvolutionForward). y must have the shape
// ConvOutput gives and the layout of x and w, and must not share memory
// with them. It returns when the work is queued: synchronize the stream,
// or copy on it, to see y.
//
// The first convolution of a shape chooses its algorithm (see Search) and
// makes its descriptors; they are kept in the handle for the next
// convolutions of that shape. The workspace the algorithm needs is the
// handle's, grown when a shape needs more.
func ConvForward[T Float](h *Handle, c Conv, x Tensor[T], w Filter[T], y Tensor[T]) error {
	const op = "ConvForward"
	c = c.norm()
	if err := checkConv(op, c, x, w, y); err != nil {
		return err
	}
	// Raw addresses before the call: see cuda.LibraryObject.Call.
	px, pw, py := x.Data.Ptr(), w.Data.Ptr(), y.Data.Ptr()
	key := convKey{dt: dataType[T](), layout: x.Layout, x: x.shape(), w: w.shape(), conv: c}
	return h.call("dnn."+op, func(st *state) error {
		p, err := st.plan(op, key, y.shape(), px, pw, py)
		if err != nil {
			return err
		}
		if err := st.ensureWorkspace(op, p.wsSize); err != nil {
			return err
		}
		alpha, beta := float32(1), float32(0)
		return check(op, "cudnnConvolutionForward", cudnn.ConvolutionForward(st.h, unsafe.Pointer(&alpha),
			p.x, devptr.Of(px), p.w, devptr.Of(pw), p.conv, p.algo, devptr.Of(st.ws), p.wsSize,
			unsafe.Pointer(&beta), p.y, devptr.Of(py)))
	}, x.Data, w.Data, y.Data)
}

// ConvAlgorithm returns the algorithm ConvForward uses for its arguments
// and the workspace it needs, choosing them as ConvForward does if this
// shape has not run yet. Exhaustive search runs the algorithms on y.
func ConvAlgorithm[T Float](h *Handle, c Conv, x Tensor[T], w Filter[T], y Tensor[T]) (algo cudnn.CudnnConvolutionFwdAlgo_t, workspace int, err error) {
	const op = "ConvAlgorithm"
	c = c.norm()
	if err := checkConv(op, c, x, w, y); err != nil {
		return 0, 0, err
	}
	px, pw, py := x.Data.Ptr(), w.Data.Ptr(), y.Data.Ptr()
	key := convKey{dt: dataType[T](), layout: x.Layout, x: x.shape(), w: w.shape(), conv: c}
	err = h.call("dnn."+op, func(st *state) error {
		p, err := st.plan(op, key, y.shape(), px, pw, py)
		if err == nil {
			algo, workspace = p.algo, int(p.wsSize)
		}
		return err
	}, x.Data, w.Data, y.Data)
	return algo, workspace, err
}

// ensureWorkspace gives st a workspace of at least n bytes. The old one
// is freed once the context's queued work, which may use it, is done.
func (st *state) ensureWorkspace(op string, n uint64) error {
	if n <= st.wsSize {
		return nil
	}
	if st.ws != 0 {
		if err := cu.CtxSynchronize(); err != nil {
			return check(op, "cuCtxSynchronize", err)
		}
		if err := cu.MemFree(st.ws); err != nil {
			return check(op, "cuMemFree", err)
		}
		st.ws, st.wsSize = 0, 0
	}
	var p cu.CUdeviceptr
	if err := cu.MemAlloc(&p, n); err != nil {
		return fmt.Errorf("dnn: %s: a workspace of %d bytes: %w", op, n, err)
	}
	st.ws, st.wsSize = p, n
	return nil
}
