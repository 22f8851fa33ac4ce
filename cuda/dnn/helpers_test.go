//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// gpuHandle returns a stream on a real GPU and a cuDNN handle on it,
// closed when t ends; it skips (or fails, with GOCUDA_TEST_LIBS=required)
// where there is no GPU or no cuDNN.
func gpuHandle(t *testing.T) (*cuda.Stream, *dnn.Handle) {
	t.Helper()
	_, s := libtest.GPU(t, "cuDNN")
	h, err := dnn.New(s)
	if errors.Is(err, cudnn.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuDNN library: %v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil && !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s, h
}

// toT is v as T, rounded as CUDA rounds.
func toT[T dnn.Float](v float32) T {
	var z T
	switch any(z).(type) {
	case cuda.Float16:
		return any(cuda.ToFloat16(v)).(T)
	case cuda.BFloat16:
		return any(cuda.ToBFloat16(v)).(T)
	}
	return any(v).(T)
}

// fromT is v as float64, exactly.
func fromT[T dnn.Float](v T) float64 {
	switch x := any(v).(type) {
	case cuda.Float16:
		return float64(x.Float32())
	case cuda.BFloat16:
		return float64(x.Float32())
	case float32:
		return float64(x)
	}
	panic("unreachable")
}

// random returns n numbers of T uniform in [-1, 1), from r.
func random[T dnn.Float](r *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = toT[T](float32(2*r.Float64() - 1))
	}
	return v
}

// upload copies v to a new Slice on s, closed when t ends.
func upload[T dnn.Float](t *testing.T, s *cuda.Stream, v []T) *cuda.Slice[T] {
	t.Helper()
	d, err := cuda.AllocSliceFrom(s, v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// filledSlice returns a new Slice of n copies of v on s, closed when t
// ends: elements a call leaves unwritten keep v.
func filledSlice[T dnn.Float](t *testing.T, s *cuda.Stream, n int, v float32) *cuda.Slice[T] {
	t.Helper()
	host := make([]T, n)
	for i := range host {
		host[i] = toT[T](v)
	}
	return upload(t, s, host)
}

// download waits for s and copies d back.
func download[T dnn.Float](t *testing.T, s *cuda.Stream, d *cuda.Slice[T]) []T {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	v := make([]T, d.Len())
	if err := d.CopyTo(v); err != nil {
		t.Fatal(err)
	}
	return v
}

// index is the position of element (n, c, h, w) of a packed tensor of
// dims (N, C, H, W) in layout l: the package's documented layouts,
// written out independently of it.
func index(l dnn.Layout, dims [4]int, n, c, h, w int) int {
	C, H, W := dims[1], dims[2], dims[3]
	if l == dnn.NHWC {
		return ((n*H+h)*W+w)*C + c
	}
	return ((n*C+c)*H+h)*W + w
}

// refConv is the convolution of x by w, both in layout l, computed
// directly in float64 from its definition: y[n][k][p][q] = Σ over the
// channels c of k's group and the taps (r, s) of x[n][g·Cg+c][p·SH − PH +
// r·DH][q·SW − PW + s·DW] · w[k][c][r][s], taps outside x being zero. It
// returns y (NCHW-indexed by index with layout l) and, per output
// element, Σ |x·w| over its terms, the scale of its rounding error.
func refConv(l dnn.Layout, c dnn.Conv, xd [4]int, x []float64, wd [4]int, w []float64, yd [4]int) (y, scale []float64) {
	one := func(v int) int {
		if v == 0 {
			return 1
		}
		return v
	}
	sh, sw, dh, dw, groups := one(c.StrideH), one(c.StrideW), one(c.DilationH), one(c.DilationW), one(c.Groups)
	cg, kg := wd[1], wd[0]/groups
	y = make([]float64, yd[0]*yd[1]*yd[2]*yd[3])
	scale = make([]float64, len(y))
	for n := range yd[0] {
		for k := range yd[1] {
			g := k / kg
			for p := range yd[2] {
				for q := range yd[3] {
					var sum, abs float64
					for ci := range cg {
						for r := range wd[2] {
							for s := range wd[3] {
								ih, iw := p*sh-c.PadH+r*dh, q*sw-c.PadW+s*dw
								if ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3] {
									continue
								}
								v := x[index(l, xd, n, g*cg+ci, ih, iw)] * w[index(l, wd, k, ci, r, s)]
								sum += v
								if v < 0 {
									abs -= v
								} else {
									abs += v
								}
							}
						}
					}
					i := index(l, yd, n, k, p, q)
					y[i], scale[i] = sum, abs
				}
			}
		}
	}
	return y, scale
}

// to64 is v as float64s.
func to64[T dnn.Float](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = fromT(x)
	}
	return out
}

// allocIn returns n elements of device memory in ctx, freed when t ends.
func allocIn[T dnn.Float](t *testing.T, ctx *cuda.Context, n int) *cuda.Slice[T] {
	t.Helper()
	s, err := cuda.AllocSlice[T](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
