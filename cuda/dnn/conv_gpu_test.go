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

// convCase is a convolution of the GPU tests: x's dimensions, the
// filter's K, R, S (its C is x's channels over the groups), the geometry.
type convCase struct {
	name       string
	n, c, h, w int
	k, r, s    int
	conv       dnn.Conv
}

// convCases cover padding, stride, dilation, groups (depthwise
// included), 1×1 and 5×5 filters, and sizes that are not multiples of
// the tensor cores' tiles.
var convCases = []convCase{
	{"3x3 pad 1", 2, 3, 7, 9, 4, 3, 3, dnn.Conv{PadH: 1, PadW: 1}},
	{"3x3 stride 2", 1, 4, 8, 8, 6, 3, 3, dnn.Conv{StrideH: 2, StrideW: 2}},
	{"dilated, uneven", 2, 4, 9, 7, 4, 3, 2, dnn.Conv{PadH: 2, PadW: 1, StrideW: 2, DilationH: 2, DilationW: 1}},
	{"4 groups", 2, 8, 6, 6, 8, 3, 3, dnn.Conv{PadH: 1, PadW: 1, Groups: 4}},
	{"depthwise stride 2", 1, 6, 5, 5, 6, 3, 3, dnn.Conv{PadH: 1, PadW: 1, StrideH: 2, StrideW: 2, Groups: 6}},
	{"1x1", 3, 16, 4, 4, 8, 1, 1, dnn.Conv{}},
	{"5x5 pad 2", 1, 3, 11, 10, 5, 5, 5, dnn.Conv{PadH: 2, PadW: 2}},
	{"channels 32", 2, 32, 8, 8, 16, 3, 3, dnn.Conv{PadH: 1, PadW: 1}},
}

// tolerance is the error a correct convolution may have in an output
// element whose exact value is ref and whose terms' absolute values sum
// to scale, for T and the handle's math:
//
//   - float32 (IEEE): each product is exact in float64 and rounded once
//     in float32 (2⁻²⁴ of it); summing K ≤ 288 terms adds at most
//     K·2⁻²⁴·scale ≈ 1.7e-5·scale; the FFT and Winograd algorithms
//     transform x and w in float32 first, which cuDNN's own tests bound
//     by a few times that. 1e-4·scale covers both, and is still far
//     below the error of a wrong term, about scale/K.
//   - TF32: each input is rounded to 10 bits of mantissa, 2⁻¹¹ of it,
//     so each product is off by up to 2⁻¹⁰ of itself: 2e-3·scale.
//   - float16: the inputs are float16 already (the reference uses the
//     same values), products and sums are float32, and y is rounded to
//     float16, 2⁻¹¹ of |ref|; algorithms that keep transformed
//     operands in float16 add up to about 2⁻¹¹ of the transform's
//     growth times scale: 2⁻¹⁰·|ref| + 4e-3·scale.
//   - bfloat16: as float16 with 8 bits of mantissa (2⁻⁸ for a rounding
//     of y): 2⁻⁷·|ref| + 2e-2·scale.
func tolerance[T dnn.Float](tf32 bool, ref, scale float64) float64 {
	var z T
	switch any(z).(type) {
	case cuda.Float16:
		return 0x1p-10*math.Abs(ref) + 4e-3*scale + 1e-6
	case cuda.BFloat16:
		return 0x1p-7*math.Abs(ref) + 2e-2*scale + 1e-6
	}
	if tf32 {
		return 2e-3*scale + 1e-6
	}
	return 1e-4*scale + 1e-6
}

// runConvCase runs cc in layout l on h and compares y with refConv,
// twice: the second time with new x and w through the plan the first
// call cached.
func runConvCase[T dnn.Float](t *testing.T, s *cuda.Stream, h *dnn.Handle, l dnn.Layout, cc convCase, tf32 bool, seed uint64) {
	t.Helper()
	groups := max(cc.conv.Groups, 1)
	one := func(v int) int { return max(v, 1) }
	p := positions(cc.h, cc.conv.PadH, one(cc.conv.StrideH), one(cc.conv.DilationH), cc.r)
	q := positions(cc.w, cc.conv.PadW, one(cc.conv.StrideW), one(cc.conv.DilationW), cc.s)
	xd, wd, yd := [4]int{cc.n, cc.c, cc.h, cc.w}, [4]int{cc.k, cc.c / groups, cc.r, cc.s}, [4]int{cc.n, cc.k, p, q}
	r := rand.New(rand.NewPCG(seed, 7))
	for round := range 2 {
		xh := random[T](r, cc.n*cc.c*cc.h*cc.w)
		wh := random[T](r, wd[0]*wd[1]*wd[2]*wd[3])
		x := dnn.NewTensor(upload(t, s, xh), l, xd[0], xd[1], xd[2], xd[3])
		w := dnn.NewFilter(upload(t, s, wh), l, wd[0], wd[1], wd[2], wd[3])
		// NaN in y shows any element the convolution leaves unwritten.
		y := dnn.NewTensor(filledSlice[T](t, s, yd[0]*yd[1]*yd[2]*yd[3], float32(math.NaN())), l, yd[0], yd[1], yd[2], yd[3])
		err := dnn.ConvForward(h, cc.conv, x, w, y)
		var z T
		if _, bf := any(z).(cuda.BFloat16); bf && errors.Is(err, cudnn.CUDNN_STATUS_NOT_SUPPORTED) {
			// cuDNN's legacy API lists bfloat16 convolutions for sm_80
			// and later; a cuDNN or GPU without them is not this
			// package's fault.
			t.Skipf("this cuDNN has no bfloat16 convolution of this shape: %v", err)
		}
		if err != nil {
			t.Fatalf("round %d: ConvForward: %v", round, err)
		}
		got := to64(download(t, s, y.Data))
		want, scale := refConv(l, cc.conv, xd, to64(xh), wd, to64(wh), yd)
		bad := 0
		for i := range want {
			if d := math.Abs(got[i] - want[i]); !(d <= tolerance[T](tf32, want[i], scale[i])) {
				if bad < 5 {
					t.Errorf("round %d: y[%d] = %g, want %g (scale %g)", round, i, got[i], want[i], scale[i])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("round %d: %d of %d elements wrong", round, bad, len(want))
			return
		}
	}
}

func testConvMatchesReference[T dnn.Float](t *testing.T, search dnn.Search, tf32 bool) {
	s, h := gpuHandle(t)
	if err := h.SetSearch(search); err != nil {
		t.Fatal(err)
	}
	if err := h.SetTF32(tf32); err != nil {
		t.Fatal(err)
	}
	for _, l := range []dnn.Layout{dnn.NCHW, dnn.NHWC} {
		for i, cc := range convCases {
			t.Run(fmt.Sprintf("%v/%s", l, cc.name), func(t *testing.T) {
				runConvCase[T](t, s, h, l, cc, tf32, uint64(i))
			})
		}
	}
}

func TestConvForwardFloat32MatchesReference(t *testing.T) {
	testConvMatchesReference[float32](t, dnn.Heuristic, false)
}

func TestConvForwardFloat32ExhaustiveMatchesReference(t *testing.T) {
	testConvMatchesReference[float32](t, dnn.Exhaustive, false)
}

func TestConvForwardTF32MatchesReference(t *testing.T) {
	testConvMatchesReference[float32](t, dnn.Heuristic, true)
}

func TestConvForwardFloat16MatchesReference(t *testing.T) {
	testConvMatchesReference[cuda.Float16](t, dnn.Heuristic, false)
}

func TestConvForwardFloat16ExhaustiveMatchesReference(t *testing.T) {
	testConvMatchesReference[cuda.Float16](t, dnn.Exhaustive, false)
}

func TestConvForwardBFloat16MatchesReference(t *testing.T) {
	testConvMatchesReference[cuda.BFloat16](t, dnn.Heuristic, false)
}

// TestConvAlgorithmFitsTheWorkspaceLimit checks that with a workspace
// limit of 0 the handle still finds an algorithm, one that needs no
// workspace, and that it computes the right y.
func TestConvAlgorithmFitsTheWorkspaceLimit(t *testing.T) {
	s, h := gpuHandle(t)
	cc := convCases[0]
	if err := h.SetWorkspaceLimit(0); err != nil {
		t.Fatal(err)
	}
	xs := upload(t, s, random[float32](rand.New(rand.NewPCG(1, 2)), cc.n*cc.c*cc.h*cc.w))
	ws := upload(t, s, random[float32](rand.New(rand.NewPCG(3, 4)), cc.k*cc.c*cc.r*cc.s))
	x := dnn.NewTensor(xs, dnn.NCHW, cc.n, cc.c, cc.h, cc.w)
	w := dnn.NewFilter(ws, dnn.NCHW, cc.k, cc.c, cc.r, cc.s)
	n, k, p, q, err := dnn.ConvOutput(cc.conv, x, w)
	if err != nil {
		t.Fatal(err)
	}
	y := dnn.NewTensor(filledSlice[float32](t, s, n*k*p*q, 0), dnn.NCHW, n, k, p, q)
	algo, need, err := dnn.ConvAlgorithm(h, cc.conv, x, w, y)
	if err != nil {
		t.Fatalf("ConvAlgorithm with no workspace: %v", err)
	}
	t.Logf("algorithm %v, %d bytes of workspace", algo, need)
	if need != 0 {
		t.Errorf("with a limit of 0 the algorithm needs %d bytes", need)
	}
	runConvCase[float32](t, s, h, dnn.NCHW, cc, false, 5)
}
