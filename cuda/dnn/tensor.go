//go:build linux && (amd64 || arm64)

package dnn

import (
	"fmt"
	"math"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// Float is the element types of the package's tensors.
type Float interface {
	float32 | cuda.Float16 | cuda.BFloat16
}

// Layout is the order of a 4-D tensor's elements in memory.
type Layout int

const (
	// NCHW: each image's channels one after the other, each channel
	// row after row (for a filter, KCRS).
	NCHW Layout = iota
	// NHWC: each image's pixels row after row, a pixel's channels
	// together (for a filter, KRSC): the layout tensor cores read best.
	NHWC
)

func (l Layout) String() string {
	switch l {
	case NCHW:
		return "NCHW"
	case NHWC:
		return "NHWC"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Tensor is a 4-D tensor of N images of C channels of H×W pixels held in
// a Slice, packed in Layout order: element (n, c, h, w) is Data[n·C·H·W +
// c·H·W + h·W + w] in NCHW and Data[n·H·W·C + h·W·C + w·C + c] in NHWC.
// Data must hold at least N·C·H·W elements; the first N·C·H·W are the
// tensor's. A Tensor is a description, checked by each call that takes
// it, and owns nothing: Data stays the caller's to close.
type Tensor[T Float] struct {
	Data       *cuda.Slice[T]
	Layout     Layout
	N, C, H, W int
}

// NewTensor is Tensor{data, layout, n, c, h, w}.
func NewTensor[T Float](data *cuda.Slice[T], layout Layout, n, c, h, w int) Tensor[T] {
	return Tensor[T]{Data: data, Layout: layout, N: n, C: c, H: h, W: w}
}

// Filter is the weights of a convolution: K filters of C channels of R×S
// taps, packed as Tensor with K, C, R, S for N, C, H, W (KCRS in NCHW,
// KRSC in NHWC). In a grouped convolution C is the channels of one group.
type Filter[T Float] struct {
	Data       *cuda.Slice[T]
	Layout     Layout
	K, C, R, S int
}

// NewFilter is Filter{data, layout, k, c, r, s}.
func NewFilter[T Float](data *cuda.Slice[T], layout Layout, k, c, r, s int) Filter[T] {
	return Filter[T]{Data: data, Layout: layout, K: k, C: c, R: r, S: s}
}

// maxElements is the most elements a tensor of cuDNN's legacy API may
// span: its sizes and strides are C ints.
const maxElements = math.MaxInt32

// shape is the dimensions of a tensor or filter, in NCHW (KCRS) order.
type shape [4]int

func (s shape) elements() int { return s[0] * s[1] * s[2] * s[3] }

// strides are those of a packed tensor of s in layout l, in NCHW order.
func (s shape) strides(l Layout) [4]int {
	c, h, w := s[1], s[2], s[3]
	if l == NHWC {
		return [4]int{h * w * c, 1, w * c, c}
	}
	return [4]int{c * h * w, h * w, w, 1}
}

// checkShape checks a tensor's dimensions and layout: what is the name
// the error gives it, dims the names of its dimensions.
func checkShape(op, what string, s shape, l Layout, dims string) error {
	if l != NCHW && l != NHWC {
		return fmt.Errorf("dnn: %s: %s has unknown layout %v", op, what, l)
	}
	n := 1
	for i, d := range s {
		if d <= 0 {
			return fmt.Errorf("dnn: %s: %s is %s %s: dimension %c must be positive", op, what, dims, s.String(), dims[i])
		}
		if d > maxElements/n {
			return fmt.Errorf("dnn: %s: %s is %s %s: more than %d elements, cuDNN's limit", op, what, dims, s.String(), maxElements)
		}
		n *= d
	}
	return nil
}

func (s shape) String() string { return fmt.Sprintf("%d×%d×%d×%d", s[0], s[1], s[2], s[3]) }

// checkData checks that data is open and holds the n elements of a
// tensor.
func checkData[T Float](op, what string, data *cuda.Slice[T], n int) error {
	if data == nil {
		return fmt.Errorf("dnn: %s: %s has no data (nil Slice)", op, what)
	}
	have := data.Len()
	if have == 0 && data.Ptr() == 0 {
		// A closed Slice reads as empty: say what it is.
		return fmt.Errorf("dnn: %s: the Slice of %s: %w", op, what, cuda.ErrClosed)
	}
	if have < n {
		return fmt.Errorf("dnn: %s: %s needs %d elements but its Slice has %d", op, what, n, have)
	}
	return nil
}

func (t Tensor[T]) shape() shape { return shape{t.N, t.C, t.H, t.W} }
func (f Filter[T]) shape() shape { return shape{f.K, f.C, f.R, f.S} }

// check checks t's shape and data.
func (t Tensor[T]) check(op, what string) error {
	s := t.shape()
	if err := checkShape(op, what, s, t.Layout, "NCHW"); err != nil {
		return err
	}
	return checkData(op, what, t.Data, s.elements())
}

// check checks f's shape and data.
func (f Filter[T]) check(op, what string) error {
	s := f.shape()
	if err := checkShape(op, what, s, f.Layout, "KCRS"); err != nil {
		return err
	}
	return checkData(op, what, f.Data, s.elements())
}

// dataType is cuDNN's name for T.
func dataType[T Float]() cudnn.CudnnDataType_t {
	var z T
	switch any(z).(type) {
	case cuda.Float16:
		return cudnn.CUDNN_DATA_HALF
	case cuda.BFloat16:
		return cudnn.CUDNN_DATA_BFLOAT16
	}
	return cudnn.CUDNN_DATA_FLOAT
}

// overlaps reports whether the first n elements of a and m of b share
// memory: two views of one allocation may.
func overlaps[T, U Float](a *cuda.Slice[T], n int, b *cuda.Slice[U], m int) bool {
	pa, pb := uint64(a.Ptr()), uint64(b.Ptr())
	na, nb := uint64(n)*uint64(sizeOf[T]()), uint64(m)*uint64(sizeOf[U]())
	return pa != 0 && pb != 0 && pa < pb+nb && pb < pa+na
}

func sizeOf[T Float]() int {
	if dataType[T]() == cudnn.CUDNN_DATA_FLOAT {
		return 4
	}
	return 2
}

// newTensorDesc makes a cuDNN descriptor of a packed tensor of s in
// layout l.
func newTensorDesc(op string, dt cudnn.CudnnDataType_t, s shape, l Layout) (cudnn.CudnnTensorDescriptor_t, error) {
	var d cudnn.CudnnTensorDescriptor_t
	if err := cudnn.CreateTensorDescriptor(&d); err != nil {
		return 0, check(op, "cudnnCreateTensorDescriptor", err)
	}
	st := s.strides(l)
	if err := cudnn.SetTensor4dDescriptorEx(d, dt, int32(s[0]), int32(s[1]), int32(s[2]), int32(s[3]),
		int32(st[0]), int32(st[1]), int32(st[2]), int32(st[3])); err != nil {
		_ = cudnn.DestroyTensorDescriptor(d)
		return 0, check(op, "cudnnSetTensor4dDescriptorEx", err)
	}
	return d, nil
}

// newFilterDesc makes a cuDNN descriptor of a filter of s in layout l.
func newFilterDesc(op string, dt cudnn.CudnnDataType_t, s shape, l Layout) (cudnn.CudnnFilterDescriptor_t, error) {
	var d cudnn.CudnnFilterDescriptor_t
	if err := cudnn.CreateFilterDescriptor(&d); err != nil {
		return 0, check(op, "cudnnCreateFilterDescriptor", err)
	}
	format := cudnn.CUDNN_TENSOR_NCHW
	if l == NHWC {
		format = cudnn.CUDNN_TENSOR_NHWC
	}
	if err := cudnn.SetFilter4dDescriptor(d, dt, format, int32(s[0]), int32(s[1]), int32(s[2]), int32(s[3])); err != nil {
		_ = cudnn.DestroyFilterDescriptor(d)
		return 0, check(op, "cudnnSetFilter4dDescriptor", err)
	}
	return d, nil
}
