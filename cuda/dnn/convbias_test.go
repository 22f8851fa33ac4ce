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

func TestConvBiasReLURefusesBadBiasBeforeCuDNN(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[float32] { return allocIn[float32](t, ctx, n) }
	x := dnn.NewTensor(alloc(1*2*5*5), dnn.NCHW, 1, 2, 5, 5)
	w := dnn.NewFilter(alloc(3*2*3*3), dnn.NCHW, 3, 2, 3, 3)
	y := dnn.NewTensor(alloc(1*3*3*3), dnn.NCHW, 1, 3, 3, 3)
	var h *dnn.Handle
	checkRefused(t, "short bias", dnn.ConvBiasReLU(h, dnn.Conv{}, x, w, alloc(2), y), "bias needs 3 elements but its Slice has 2")
	checkRefused(t, "nil bias", dnn.ConvBiasReLU(h, dnn.Conv{}, x, w, nil, y), "bias has no data")
	checkRefused(t, "bias in y", dnn.ConvBiasReLU(h, dnn.Conv{}, x, w, y.Data, y), "y shares memory with bias")
	checkRefused(t, "y shape", dnn.ConvBiasReLU(h, dnn.Conv{PadH: 1}, x, w, alloc(3), y), "but the convolution's output is 1×3×5×3")
	if err := dnn.ConvBiasReLU(h, dnn.Conv{}, x, w, alloc(3), y); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("valid arguments on a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
}

func testConvBiasReLUMatchesReference[T dnn.Float](t *testing.T) {
	s, h := gpuHandle(t)
	for _, l := range []dnn.Layout{dnn.NCHW, dnn.NHWC} {
		for i, cc := range convCases {
			t.Run(fmt.Sprintf("%v/%s", l, cc.name), func(t *testing.T) {
				groups := max(cc.conv.Groups, 1)
				r := rand.New(rand.NewPCG(uint64(i), 31))
				xd, wd := [4]int{cc.n, cc.c, cc.h, cc.w}, [4]int{cc.k, cc.c / groups, cc.r, cc.s}
				xh := random[T](r, xd[0]*xd[1]*xd[2]*xd[3])
				wh := random[T](r, wd[0]*wd[1]*wd[2]*wd[3])
				bh := random[T](r, cc.k)
				x := dnn.NewTensor(upload(t, s, xh), l, xd[0], xd[1], xd[2], xd[3])
				w := dnn.NewFilter(upload(t, s, wh), l, wd[0], wd[1], wd[2], wd[3])
				n, k, p, q, err := dnn.ConvOutput(cc.conv, x, w)
				if err != nil {
					t.Fatal(err)
				}
				yd := [4]int{n, k, p, q}
				y := dnn.NewTensor(filledSlice[T](t, s, n*k*p*q, float32(math.NaN())), l, n, k, p, q)
				err = dnn.ConvBiasReLU(h, cc.conv, x, w, upload(t, s, bh), y)
				var z T
				if _, bf := any(z).(cuda.BFloat16); bf && (errors.Is(err, cudnn.CUDNN_STATUS_NOT_SUPPORTED) || errors.Is(err, cudnn.CUDNN_STATUS_BAD_PARAM)) {
					t.Skipf("this cuDNN takes no bfloat16 bias in a fused convolution: %v", err)
				}
				if err != nil {
					t.Fatalf("ConvBiasReLU: %v", err)
				}
				got := to64(download(t, s, y.Data))
				conv, scale := refConv(l, cc.conv, xd, to64(xh), wd, to64(wh), yd)
				b := to64(bh)
				bad := 0
				for n := range yd[0] {
					for k := range yd[1] {
						for p := range yd[2] {
							for q := range yd[3] {
								i := index(l, yd, n, k, p, q)
								pre := conv[i] + b[k]
								want := math.Max(0, pre)
								// ReLU moves no value further from
								// the exact one: the tolerance of the
								// sum before it holds after it.
								if d := math.Abs(got[i] - want); !(d <= tolerance[T](false, pre, scale[i]+math.Abs(b[k]))) {
									if bad < 5 {
										t.Errorf("y[%d] = %g, want %g", i, got[i], want)
									}
									bad++
								}
							}
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d elements wrong", bad, len(got))
				}
			})
		}
	}
}

func TestConvBiasReLUFloat32MatchesReference(t *testing.T) {
	testConvBiasReLUMatchesReference[float32](t)
}

func TestConvBiasReLUFloat16MatchesReference(t *testing.T) {
	testConvBiasReLUMatchesReference[cuda.Float16](t)
}

func TestConvBiasReLUBFloat16MatchesReference(t *testing.T) {
	testConvBiasReLUMatchesReference[cuda.BFloat16](t)
}
