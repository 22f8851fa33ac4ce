//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cudnn"
)

func TestBatchNormInferenceRefusesBadArgumentsBeforeCuDNN(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[float32] { return allocIn[float32](t, ctx, n) }
	x := dnn.NewTensor(alloc(2*5*3*3), dnn.NHWC, 2, 5, 3, 3)
	y := dnn.NewTensor(alloc(2*5*3*3), dnn.NHWC, 2, 5, 3, 3)
	good := dnn.BatchNorm{Scale: alloc(5), Bias: alloc(5), Mean: alloc(5), Variance: alloc(5), Epsilon: 1e-5}
	with := func(f func(b *dnn.BatchNorm)) dnn.BatchNorm {
		b := good
		f(&b)
		return b
	}
	var h *dnn.Handle
	for _, tc := range []struct {
		name string
		bn   dnn.BatchNorm
		x, y dnn.Tensor[float32]
		want string
	}{
		{"short scale", with(func(b *dnn.BatchNorm) { b.Scale = alloc(4) }), x, y, "Scale needs 5 elements but its Slice has 4"},
		{"nil variance", with(func(b *dnn.BatchNorm) { b.Variance = nil }), x, y, "Variance has no data"},
		{"negative epsilon", with(func(b *dnn.BatchNorm) { b.Epsilon = -1 }), x, y, "epsilon -1"},
		{"NaN epsilon", with(func(b *dnn.BatchNorm) { b.Epsilon = math.NaN() }), x, y, "epsilon NaN"},
		{"y is the mean", with(func(b *dnn.BatchNorm) { b.Mean = y.Data }), x, y, "y shares memory with Mean"},
		{"shapes differ", good, x, dnn.NewTensor(y.Data, dnn.NHWC, 2, 5, 9, 1), "they must match"},
	} {
		checkRefused(t, tc.name, dnn.BatchNormInference(h, tc.bn, tc.x, tc.y), tc.want)
	}
	if err := dnn.BatchNormInference(h, good, x, y); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("valid arguments on a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
}

func testBatchNormMatchesReference[T dnn.Float](t *testing.T) {
	s, h := gpuHandle(t)
	r := rand.New(rand.NewPCG(21, 22))
	d := [4]int{3, 6, 4, 5}
	c := d[1]
	for _, l := range []dnn.Layout{dnn.NCHW, dnn.NHWC} {
		t.Run(fmt.Sprint(l), func(t *testing.T) {
			xh := random[T](r, d[0]*d[1]*d[2]*d[3])
			scale, bias, mean, variance := make([]float32, c), make([]float32, c), make([]float32, c), make([]float32, c)
			for i := range c {
				scale[i] = float32(0.5 + r.Float64())
				bias[i] = float32(r.Float64() - 0.5)
				mean[i] = float32(r.Float64() - 0.5)
				variance[i] = float32(0.1 + r.Float64())
			}
			const eps = 1e-5
			bn := dnn.BatchNorm{Scale: upload(t, s, scale), Bias: upload(t, s, bias), Mean: upload(t, s, mean), Variance: upload(t, s, variance), Epsilon: eps}
			x := dnn.NewTensor(upload(t, s, xh), l, d[0], d[1], d[2], d[3])
			y := dnn.NewTensor(filledSlice[T](t, s, len(xh), float32(math.NaN())), l, d[0], d[1], d[2], d[3])
			err := dnn.BatchNormInference(h, bn, x, y)
			var z T
			if _, bf := any(z).(cuda.BFloat16); bf && (errors.Is(err, cudnn.CUDNN_STATUS_NOT_SUPPORTED) || errors.Is(err, cudnn.CUDNN_STATUS_BAD_PARAM)) {
				t.Skipf("this cuDNN has no bfloat16 batch normalization: %v", err)
			}
			if err != nil {
				t.Fatalf("BatchNormInference: %v", err)
			}
			got := to64(download(t, s, y.Data))
			xv := to64(xh)
			bad := 0
			for n := range d[0] {
				for ch := range d[1] {
					for hh := range d[2] {
						for w := range d[3] {
							i := index(l, d, n, ch, hh, w)
							want := float64(scale[ch])*(xv[i]-float64(mean[ch]))/math.Sqrt(float64(variance[ch])+eps) + float64(bias[ch])
							// float32 arithmetic on inputs below 4 in size is
							// good to a few units of 2⁻²⁴ of them; the 16-bit
							// outputs are rounded once more, to 2⁻¹¹ or 2⁻⁸.
							tol := 1e-5 * (1 + math.Abs(want))
							switch any(z).(type) {
							case cuda.Float16:
								tol += 0x1p-10 * math.Abs(want)
							case cuda.BFloat16:
								tol += 0x1p-7 * math.Abs(want)
							}
							if !(math.Abs(got[i]-want) <= tol) {
								if bad < 5 {
									t.Errorf("y(%d,%d,%d,%d) = %g, want %g", n, ch, hh, w, got[i], want)
								}
								bad++
							}
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d elements wrong", bad, len(xh))
			}
		})
	}
}

func TestBatchNormInferenceFloat32MatchesReference(t *testing.T) {
	testBatchNormMatchesReference[float32](t)
}

func TestBatchNormInferenceFloat16MatchesReference(t *testing.T) {
	testBatchNormMatchesReference[cuda.Float16](t)
}

func TestBatchNormInferenceBFloat16MatchesReference(t *testing.T) {
	testBatchNormMatchesReference[cuda.BFloat16](t)
}
