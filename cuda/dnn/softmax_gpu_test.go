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
	"github.com/gocuda/gocuda/generated/cudnn"
)

// refSoftmax is the softmax (or its logarithm) of x over the sets over
// names, in float64 from its definition: for each set, exp(v − m) / Σ
// exp(u − m), m the set's largest element.
func refSoftmax(l dnn.Layout, algo dnn.SoftmaxAlgo, over dnn.SoftmaxOver, d [4]int, x []float64) []float64 {
	y := make([]float64, len(x))
	// sets lists the positions of each set's elements.
	var sets [][]int
	for n := range d[0] {
		if over == dnn.Image {
			var set []int
			for c := range d[1] {
				for h := range d[2] {
					for w := range d[3] {
						set = append(set, index(l, d, n, c, h, w))
					}
				}
			}
			sets = append(sets, set)
			continue
		}
		for h := range d[2] {
			for w := range d[3] {
				var set []int
				for c := range d[1] {
					set = append(set, index(l, d, n, c, h, w))
				}
				sets = append(sets, set)
			}
		}
	}
	for _, set := range sets {
		m := math.Inf(-1)
		for _, i := range set {
			m = math.Max(m, x[i])
		}
		var sum float64
		for _, i := range set {
			sum += math.Exp(x[i] - m)
		}
		for _, i := range set {
			if algo == dnn.Log {
				y[i] = x[i] - m - math.Log(sum)
			} else {
				y[i] = math.Exp(x[i]-m) / sum
			}
		}
	}
	return y
}

// softmaxTolerance is the error a correct softmax may have in an element
// whose exact value is ref. In float32 a sum of n exponentials is good to
// about log₂(n) units of 2⁻²⁴ when reduced as a tree, n units in the
// worst order: 1e-4 of |ref| covers the 1000-element sets, and a log
// softmax's log(sum) is off by as much absolutely. float16 and bfloat16
// outputs are rounded to 11 and 8 bits, 2⁻¹¹ and 2⁻⁸ of |ref|, plus the
// absolute error of their subnormal range (probabilities) or of
// log-probabilities rounded at their size.
func softmaxTolerance[T dnn.Float](algo dnn.SoftmaxAlgo, ref float64) float64 {
	var z T
	rel, abs := 1e-4, 1e-6
	switch any(z).(type) {
	case cuda.Float16:
		rel, abs = 0x1p-10, 1e-4
	case cuda.BFloat16:
		rel, abs = 0x1p-7, 1e-3
	}
	if algo == dnn.Log {
		abs = max(abs*10, 1e-4)
	}
	return rel*math.Abs(ref) + abs
}

func testSoftmaxMatchesReference[T dnn.Float](t *testing.T) {
	s, h := gpuHandle(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, d := range [][4]int{{4, 10, 1, 1}, {2, 5, 3, 4}, {3, 7, 2, 3}, {1, 1000, 1, 1}} {
		for _, l := range []dnn.Layout{dnn.NCHW, dnn.NHWC} {
			for _, algo := range []dnn.SoftmaxAlgo{dnn.Accurate, dnn.Log} {
				for _, over := range []dnn.SoftmaxOver{dnn.Channels, dnn.Image} {
					t.Run(fmt.Sprintf("%v/%v/%v/%v", d, l, algo, over), func(t *testing.T) {
						n := d[0] * d[1] * d[2] * d[3]
						xh := make([]T, n)
						for i := range xh {
							// Inputs in [-8, 8): exponentials over a
							// range of e¹⁶, and a largest element far
							// from 0, which only its subtraction keeps
							// from mattering.
							xh[i] = toT[T](float32(16*r.Float64() - 8))
						}
						x := dnn.NewTensor(upload(t, s, xh), l, d[0], d[1], d[2], d[3])
						y := dnn.NewTensor(filledSlice[T](t, s, n, float32(math.NaN())), l, d[0], d[1], d[2], d[3])
						err := dnn.Softmax(h, algo, over, x, y)
						var z T
						if _, bf := any(z).(cuda.BFloat16); bf && errors.Is(err, cudnn.CUDNN_STATUS_NOT_SUPPORTED) {
							t.Skipf("this cuDNN has no bfloat16 softmax: %v", err)
						}
						if err != nil {
							t.Fatalf("Softmax: %v", err)
						}
						got := to64(download(t, s, y.Data))
						want := refSoftmax(l, algo, over, d, to64(xh))
						bad := 0
						for i := range want {
							if diff := math.Abs(got[i] - want[i]); !(diff <= softmaxTolerance[T](algo, want[i])) {
								if bad < 5 {
									t.Errorf("y[%d] = %g, want %g", i, got[i], want[i])
								}
								bad++
							}
						}
						if bad > 0 {
							t.Errorf("%d of %d elements wrong", bad, n)
						}
					})
				}
			}
		}
	}
}

func TestSoftmaxFloat32MatchesReference(t *testing.T)  { testSoftmaxMatchesReference[float32](t) }
func TestSoftmaxFloat16MatchesReference(t *testing.T)  { testSoftmaxMatchesReference[cuda.Float16](t) }
func TestSoftmaxBFloat16MatchesReference(t *testing.T) { testSoftmaxMatchesReference[cuda.BFloat16](t) }
