//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/dnn"
)

// TestConvForwardTF32ReachesTheTensorCores checks, on a GPU with TF32
// tensor cores (compute capability 8.0 or later), that SetTF32(true)
// makes a large 1×1 convolution run on them and SetTF32(false) keeps it
// off. Each input is 1 + 2⁻¹³, which TF32's 10-bit mantissa rounds to 1
// but float32 holds: 1024 channels of it times weights of 1 sum to 1024
// in TF32 and 1024.125 in float32, both exact. The shape is one where the
// tensor cores are several times faster, so an exhaustive search that
// may use them does.
func TestConvForwardTF32ReachesTheTensorCores(t *testing.T) {
	s, h := gpuHandle(t)
	major, _, err := s.Context().Device().ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	if major < 8 {
		t.Skipf("compute capability %d.x has no TF32 tensor cores", major)
	}
	if err := h.SetSearch(dnn.Exhaustive); err != nil {
		t.Fatal(err)
	}
	const n, c, hw, k = 32, 1024, 14, 256
	x := dnn.NewTensor(filledSlice[float32](t, s, n*c*hw*hw, 1+1.0/8192), dnn.NCHW, n, c, hw, hw)
	w := dnn.NewFilter(filledSlice[float32](t, s, k*c, 1), dnn.NCHW, k, c, 1, 1)
	y := dnn.NewTensor(filledSlice[float32](t, s, n*k*hw*hw, 0), dnn.NCHW, n, k, hw, hw)
	for _, tc := range []struct {
		tf32 bool
		want float32
	}{{true, 1024}, {false, 1024.125}} {
		if err := h.SetTF32(tc.tf32); err != nil {
			t.Fatal(err)
		}
		if err := dnn.ConvForward(h, dnn.Conv{}, x, w, y); err != nil {
			t.Fatalf("TF32 %v: %v", tc.tf32, err)
		}
		algo, _, err := dnn.ConvAlgorithm(h, dnn.Conv{}, x, w, y)
		if err != nil {
			t.Fatal(err)
		}
		got := download(t, s, y.Data)
		for _, i := range []int{0, len(got) / 2, len(got) - 1} {
			if got[i] != tc.want {
				t.Errorf("TF32 %v (algorithm %v): y[%d] = %v, want %v", tc.tf32, algo, i, got[i], tc.want)
			}
		}
	}
}
