//go:build linux && (amd64 || arm64)

package rand_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/rand"
)

// TestSliceOfAnotherTypeIsRefused: a *cuda.Slice whose elements are not
// the function's is an error before cuRAND, naming both.
func TestSliceOfAnotherTypeIsRefused(t *testing.T) {
	ctx := libtest.Context(t)
	x, err := cuda.AllocSlice[int32](ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var g *rand.Generator // the type is checked first
	for name, err := range map[string]error{
		"Uniform": rand.Uniform[float32](g, x),
		"NormalN": rand.NormalN[float64](g, x, 2, 0, 1),
	} {
		if err == nil || !strings.Contains(err.Error(), "*cuda.Slice[int32]") || !strings.Contains(err.Error(), "float") {
			t.Errorf("%s on a *cuda.Slice[int32] = %v, want an error naming the slice's type and the elements", name, err)
		}
	}
}

// TestFillsASubSlice: a view made with Sub is filled in its range only,
// and an empty view is no work and no error.
func TestFillsASubSlice(t *testing.T) {
	ctx := libtest.Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := newGenerator(t, s, rand.Philox, 7)
	all := make([]float32, 100)
	for i := range all {
		all[i] = -1
	}
	x, err := cuda.AllocSliceFrom(s, all)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	mid, err := x.Sub(10, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	if err := rand.Uniform[float32](g, mid); err != nil {
		t.Fatal(err)
	}
	if err := rand.NormalN[float32](g, mid, 0, 0, 1); err != nil {
		t.Errorf("NormalN of 0 numbers = %v", err)
	}
	empty, err := x.Sub(50, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if err := rand.Uniform[float32](g, empty); err != nil {
		t.Errorf("Uniform of an empty view = %v", err)
	}
	if err := x.CopyToHost(s, all); err != nil {
		t.Fatal(err)
	}
	for i, v := range all {
		inside := i >= 10 && i < 30
		if inside && (v <= 0 || v > 1 || math.IsNaN(float64(v))) || !inside && v != -1 {
			t.Fatalf("element %d is %v after filling [10:30]", i, v)
		}
	}
}
