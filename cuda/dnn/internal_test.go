//go:build linux && (amd64 || arm64)

package dnn

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// TestStridesAddressTheDocumentedLayouts checks that the strides given
// to cuDNN put element (n, c, h, w) where Tensor's comment says it is.
func TestStridesAddressTheDocumentedLayouts(t *testing.T) {
	s := shape{2, 3, 4, 5}
	N, C, H, W := s[0], s[1], s[2], s[3]
	for _, l := range []Layout{NCHW, NHWC} {
		st := s.strides(l)
		seen := map[int]bool{}
		for n := range N {
			for c := range C {
				for h := range H {
					for w := range W {
						want := n*C*H*W + c*H*W + h*W + w
						if l == NHWC {
							want = n*H*W*C + h*W*C + w*C + c
						}
						got := n*st[0] + c*st[1] + h*st[2] + w*st[3]
						if got != want {
							t.Fatalf("%v: element (%d,%d,%d,%d) at %d, want %d", l, n, c, h, w, got, want)
						}
						seen[got] = true
					}
				}
			}
		}
		if len(seen) != s.elements() {
			t.Errorf("%v: %d distinct positions for %d elements", l, len(seen), s.elements())
		}
	}
}

// TestMathTypeKeepsFloat32OffTensorCoresUnlessTF32 checks the math each
// element type and TF32 setting asks cuDNN for.
func TestMathTypeKeepsFloat32OffTensorCoresUnlessTF32(t *testing.T) {
	for _, tc := range []struct {
		dt   cudnn.CudnnDataType_t
		tf32 bool
		want cudnn.CudnnMathType_t
	}{
		{dataType[float32](), false, cudnn.CUDNN_FMA_MATH},
		{dataType[float32](), true, cudnn.CUDNN_DEFAULT_MATH},
		{dataType[cuda.Float16](), false, cudnn.CUDNN_TENSOR_OP_MATH},
		{dataType[cuda.BFloat16](), true, cudnn.CUDNN_TENSOR_OP_MATH},
	} {
		if got := (convKey{dt: tc.dt, tf32: tc.tf32}).mathType(); got != tc.want {
			t.Errorf("%v with TF32 %v: math %v, want %v", tc.dt, tc.tf32, got, tc.want)
		}
	}
	for _, tc := range []struct {
		got, want cudnn.CudnnDataType_t
	}{
		{dataType[float32](), cudnn.CUDNN_DATA_FLOAT},
		{dataType[cuda.Float16](), cudnn.CUDNN_DATA_HALF},
		{dataType[cuda.BFloat16](), cudnn.CUDNN_DATA_BFLOAT16},
	} {
		if tc.got != tc.want {
			t.Errorf("data type %v, want %v", tc.got, tc.want)
		}
	}
}

// TestConvNormMakesZerosOne checks that a zero stride, dilation or group
// count means 1 and that padding and other values are kept.
func TestConvNormMakesZerosOne(t *testing.T) {
	got := Conv{PadH: 2, StrideW: 3, DilationH: 2}.norm()
	want := Conv{PadH: 2, StrideH: 1, StrideW: 3, DilationH: 2, DilationW: 1, Groups: 1}
	if got != want {
		t.Errorf("norm = %+v, want %+v", got, want)
	}
}
