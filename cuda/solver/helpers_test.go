//go:build linux && (amd64 || arm64)

package solver_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// newHandle returns a handle on a new stream, both closed when t ends;
// without cuSOLVER the test is unavailable.
func newHandle(t testing.TB) (*solver.Handle, *cuda.Stream) {
	t.Helper()
	_, s := libtest.Stream(t)
	if err := cusolver.Load(); err != nil {
		libtest.Unavailable(t, "no cuSOLVER library: %v", err)
	}
	h, err := solver.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h, s
}

// forEachType runs f as a subtest for float32 and float64.
func forEachType(t *testing.T, f32 func(*testing.T), f64 func(*testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
}

// tol is the relative accuracy a residual must reach in T.
func tol[T solver.Float]() float64 {
	var v T
	if _, ok := any(v).(float32); ok {
		return 1e-5
	}
	return 1e-12
}

// host is a column-major matrix on the host, in float64.
type host struct {
	rows, cols, ld int
	v              []float64
}

func newHost(rows, cols, ld int) host {
	if ld == 0 {
		ld = max(rows, 1)
	}
	return host{rows, cols, ld, make([]float64, ld*cols)}
}

func (h host) at(i, j int) float64     { return h.v[i+j*h.ld] }
func (h host) set(i, j int, x float64) { h.v[i+j*h.ld] = x }

// random is a rows×cols matrix of uniform numbers in [-1, 1), its
// padding (ld > rows) filled with a marker that must survive.
func random(rng *rand.Rand, rows, cols, ld int) host {
	h := newHost(rows, cols, ld)
	for i := range h.v {
		h.v[i] = padding
	}
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			h.set(i, j, 2*rng.Float64()-1)
		}
	}
	return h
}

// padding marks the elements between columns that no call may write.
const padding = 12345

// spd is a random symmetric positive definite n×n matrix B·Bᵀ + n·I.
func spd(rng *rand.Rand, n, ld int) host {
	b := random(rng, n, n, 0)
	a := newHost(n, n, ld)
	for i := range a.v {
		a.v[i] = padding
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += b.at(i, k) * b.at(j, k)
			}
			if i == j {
				s += float64(n)
			}
			a.set(i, j, s)
		}
	}
	return a
}

func (h host) clone() host {
	c := h
	c.v = append([]float64(nil), h.v...)
	return c
}

// mul is a·b, packed.
func mul(a, b host) host {
	c := newHost(a.rows, b.cols, 0)
	for i := 0; i < a.rows; i++ {
		for j := 0; j < b.cols; j++ {
			s := 0.0
			for k := 0; k < a.cols; k++ {
				s += a.at(i, k) * b.at(k, j)
			}
			c.set(i, j, s)
		}
	}
	return c
}

func (h host) t() host {
	c := newHost(h.cols, h.rows, 0)
	for i := 0; i < h.rows; i++ {
		for j := 0; j < h.cols; j++ {
			c.set(j, i, h.at(i, j))
		}
	}
	return c
}

func identity(n int) host {
	c := newHost(n, n, 0)
	for i := 0; i < n; i++ {
		c.set(i, i, 1)
	}
	return c
}

// norm is the Frobenius norm of the matrix's elements.
func (h host) norm() float64 {
	s := 0.0
	for j := 0; j < h.cols; j++ {
		for i := 0; i < h.rows; i++ {
			s += h.at(i, j) * h.at(i, j)
		}
	}
	return math.Sqrt(s)
}

// diff is ‖a − b‖ over the elements of a's shape, which b must have.
func diff(t *testing.T, a, b host) float64 {
	t.Helper()
	if a.rows != b.rows || a.cols != b.cols {
		t.Fatalf("comparing a %d×%d with a %d×%d matrix", a.rows, a.cols, b.rows, b.cols)
	}
	s := 0.0
	for j := 0; j < a.cols; j++ {
		for i := 0; i < a.rows; i++ {
			d := a.at(i, j) - b.at(i, j)
			s += d * d
		}
	}
	return math.Sqrt(s)
}

// checkPadding fails t if an element between h's columns lost its marker.
func checkPadding(t *testing.T, name string, h host) {
	t.Helper()
	for j := 0; j < h.cols; j++ {
		for i := h.rows; i < h.ld; i++ {
			if h.at(i, j) != padding {
				t.Fatalf("%s: element (%d, %d), between columns, was written: %v", name, i, j, h.at(i, j))
			}
		}
	}
}

// upload copies h to new device memory as a Matrix of T.
func upload[T solver.Float](t testing.TB, s *cuda.Stream, h host) solver.Matrix[T] {
	t.Helper()
	vals := make([]T, len(h.v))
	for i, x := range h.v {
		vals[i] = T(x)
	}
	return solver.Matrix[T]{Mem: uploadSlice(t, s, vals), Rows: h.rows, Cols: h.cols, Stride: h.ld}
}

func uploadSlice[E cuda.Element](t testing.TB, s *cuda.Stream, vals []E) *cuda.Slice[E] {
	t.Helper()
	if len(vals) == 0 {
		vals = make([]E, 1)
	}
	d, err := cuda.AllocSliceFrom(s, vals)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func zeros[E cuda.Element](t testing.TB, s *cuda.Stream, n int) *cuda.Slice[E] {
	t.Helper()
	return uploadSlice(t, s, make([]E, n))
}

// download reads m back as a host matrix of m's shape and stride.
func download[T solver.Float](t testing.TB, s *cuda.Stream, m solver.Matrix[T]) host {
	t.Helper()
	ld := m.Stride
	if ld == 0 {
		ld = max(m.Rows, 1)
	}
	h := newHost(m.Rows, m.Cols, ld)
	vals := downloadSlice(t, s, m.Mem, len(h.v))
	for i, x := range vals {
		h.v[i] = float64(x)
	}
	return h
}

func downloadSlice[E cuda.Element](t testing.TB, s *cuda.Stream, d *cuda.Slice[E], n int) []E {
	t.Helper()
	out := make([]E, n)
	if err := d.CopyToHost(s, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toFloat64[E solver.Float](x []E) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// checkResidual fails t unless ‖got − want‖ ≤ tol·scale.
func checkResidual[T solver.Float](t *testing.T, what string, got, want host, scale float64) {
	t.Helper()
	r := diff(t, got, want)
	if !(r <= tol[T]()*scale) {
		t.Fatalf("%s: residual %.3g, more than %.3g (scale %.3g)", what, r, tol[T]()*scale, scale)
	}
	t.Logf("%s: residual %.3g (scale %.3g)", what, r, scale)
}
