//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// newHandle makes a handle on s, skipping where there is no cuSPARSE
// (unless GOCUDA_TEST_LIBS=required).
func newHandle(t *testing.T, s *cuda.Stream) *sparse.Handle {
	t.Helper()
	h, err := sparse.New(s)
	if errors.Is(err, cusparse.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuSPARSE library: %v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// host is a sparse matrix on the host: its entries in row order, then
// column order, each position once. The reference computations are on
// it, in complex128 whatever the type tested.
type host struct {
	rows, cols int
	r, c       []int
	v          []complex128
}

// pattern makes the positions of a rows×cols matrix; values come after.
type pattern struct {
	name string
	keep func(rng *rand.Rand, i, j, rows, cols int) bool
}

var patterns = []pattern{
	{"random 15%", func(rng *rand.Rand, _, _, _, _ int) bool { return rng.Float64() < 0.15 }},
	{"diagonal", func(_ *rand.Rand, i, j, _, _ int) bool { return i == j }},
	{"empty rows", func(rng *rand.Rand, i, _, _, _ int) bool { return i%3 != 1 && rng.Float64() < 0.3 }},
	{"one full row", func(rng *rand.Rand, i, _, rows, _ int) bool { return i == rows/2 || rng.Float64() < 0.05 }},
	{"band", func(_ *rand.Rand, i, j, _, _ int) bool { return j-i >= -2 && j-i <= 1 }},
}

// randomHost makes a matrix of the pattern, with values in [-1, 1) (and
// imaginary parts where complex). Every matrix has an entry.
func randomHost(rng *rand.Rand, p pattern, rows, cols int, complexValues bool) host {
	h := host{rows: rows, cols: cols}
	for i := range rows {
		for j := range cols {
			if p.keep(rng, i, j, rows, cols) {
				h.add(i, j, randomValue(rng, complexValues))
			}
		}
	}
	if len(h.v) == 0 {
		h.add(0, 0, 1)
	}
	return h
}

func randomValue(rng *rand.Rand, complexValues bool) complex128 {
	re := 2*rng.Float64() - 1
	if !complexValues {
		return complex(re, 0)
	}
	return complex(re, 2*rng.Float64()-1)
}

func (h *host) add(i, j int, v complex128) {
	h.r = append(h.r, i)
	h.c = append(h.c, j)
	h.v = append(h.v, v)
}

func isComplex[T sparse.Scalar]() bool {
	var z T
	switch any(z).(type) {
	case complex64, complex128:
		return true
	}
	return false
}

// tolerance is the relative error allowed of a result of T: several
// roundings of T's precision.
func tolerance[T sparse.Scalar]() float64 {
	var z T
	switch any(z).(type) {
	case float32, complex64:
		return 2e-5
	}
	return 1e-12
}

func toT[T sparse.Scalar](z complex128) T {
	var t T
	switch p := any(&t).(type) {
	case *float32:
		*p = float32(real(z))
	case *float64:
		*p = real(z)
	case *complex64:
		*p = complex64(z)
	case *complex128:
		*p = z
	}
	return t
}

func fromT[T sparse.Scalar](v T) complex128 {
	switch x := any(v).(type) {
	case float32:
		return complex(float64(x), 0)
	case float64:
		return complex(x, 0)
	case complex64:
		return complex128(x)
	}
	return any(v).(complex128)
}

func toTs[T sparse.Scalar](z []complex128) []T {
	out := make([]T, len(z))
	for i, v := range z {
		out[i] = toT[T](v)
	}
	return out
}

func fromTs[T sparse.Scalar](v []T) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = fromT(x)
	}
	return out
}

// rounded is h with its values rounded to T, as the device holds them.
func rounded[T sparse.Scalar](h host) host {
	h.v = fromTs(toTs[T](h.v))
	return h
}

// arrays are h's index arrays and values in format f.
func arrays[I sparse.Index](h host, f sparse.Format) (p, q []I, v []complex128) {
	switch f {
	case sparse.CSR:
		p = make([]I, h.rows+1)
		for k := range h.v {
			p[h.r[k]+1]++
			q = append(q, I(h.c[k]))
		}
		for i := range h.rows {
			p[i+1] += p[i]
		}
		return p, q, slices.Clone(h.v)
	case sparse.CSC:
		order := make([]int, len(h.v))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return h.c[a] - h.c[b] })
		p = make([]I, h.cols+1)
		for _, k := range order {
			p[h.c[k]+1]++
			q = append(q, I(h.r[k]))
			v = append(v, h.v[k])
		}
		for j := range h.cols {
			p[j+1] += p[j]
		}
		return p, q, v
	}
	for k := range h.v {
		p = append(p, I(h.r[k]))
		q = append(q, I(h.c[k]))
	}
	return p, q, slices.Clone(h.v)
}

// upload puts h on the device in format f, the Slices closed when t ends.
func upload[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h host, f sparse.Format) *sparse.Matrix[T, I] {
	t.Helper()
	p, q, v := arrays[I](h, f)
	dp, dq, dv := alloc(t, s, p), alloc(t, s, q), alloc(t, s, toTs[T](v))
	var m *sparse.Matrix[T, I]
	var err error
	switch f {
	case sparse.CSR:
		m, err = sparse.NewCSR(h.rows, h.cols, dp, dq, dv)
	case sparse.CSC:
		m, err = sparse.NewCSC(h.rows, h.cols, dp, dq, dv)
	default:
		m, err = sparse.NewCOO(h.rows, h.cols, dp, dq, dv)
	}
	if err != nil {
		t.Fatalf("New%v: %v", f, err)
	}
	return m
}

// alloc copies v to new device memory, closed when t ends.
func alloc[T cuda.Element](t *testing.T, s *cuda.Stream, v []T) *cuda.Slice[T] {
	t.Helper()
	d, err := cuda.AllocSliceFrom(s, v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// download waits for s and copies d back.
func download[T cuda.Element](t *testing.T, s *cuda.Stream, d *cuda.Slice[T]) []T {
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

// dense is a column-major host matrix.
type dense struct {
	rows, cols int
	v          []complex128
}

func (d dense) at(i, j int) complex128 { return d.v[i+j*d.rows] }

func randomDense(rng *rand.Rand, rows, cols int, complexValues bool) dense {
	d := dense{rows, cols, make([]complex128, rows*cols)}
	for i := range d.v {
		d.v[i] = randomValue(rng, complexValues)
	}
	return d
}

// layout is d's elements in the order and leading dimension given, the
// gaps NaN so that reading one shows.
func (d dense) layout(order sparse.Order, ld int) []complex128 {
	inner, outer := d.rows, d.cols
	if order == sparse.RowMajor {
		inner, outer = d.cols, d.rows
	}
	out := make([]complex128, (outer-1)*ld+inner)
	for i := range out {
		out[i] = complex(math.NaN(), 0)
	}
	for i := range d.rows {
		for j := range d.cols {
			if order == sparse.ColMajor {
				out[i+j*ld] = d.at(i, j)
			} else {
				out[i*ld+j] = d.at(i, j)
			}
		}
	}
	return out
}

// unlayout reads a rows×cols matrix back from its layout.
func unlayout(v []complex128, rows, cols int, order sparse.Order, ld int) dense {
	d := dense{rows, cols, make([]complex128, rows*cols)}
	for i := range rows {
		for j := range cols {
			if order == sparse.ColMajor {
				d.v[i+j*rows] = v[i+j*ld]
			} else {
				d.v[i+j*rows] = v[i*ld+j]
			}
		}
	}
	return d
}

// entries is op(h)'s entries: (row, column, value).
func (h host) entries(op sparse.Op) (r, c []int, v []complex128) {
	r, c, v = slices.Clone(h.r), slices.Clone(h.c), slices.Clone(h.v)
	if op != sparse.NoTrans {
		r, c = c, r
	}
	if op == sparse.ConjTrans {
		for k := range v {
			v[k] = cmplx.Conj(v[k])
		}
	}
	return r, c, v
}

// refSpMM is alpha*op(A)*B + beta*C with B and C column-major, and for
// each element the sum of the magnitudes of its terms, the scale of its
// rounding error.
func refSpMM(op sparse.Op, alpha complex128, a host, b dense, beta complex128, c dense) (out, scale dense) {
	m, _ := a.rows, a.cols
	if op != sparse.NoTrans {
		m = a.cols
	}
	out = dense{m, b.cols, make([]complex128, m*b.cols)}
	scale = dense{m, b.cols, make([]complex128, m*b.cols)}
	r, cc, v := a.entries(op)
	for k := range v {
		for j := range b.cols {
			term := alpha * v[k] * b.at(cc[k], j)
			out.v[r[k]+j*m] += term
			scale.v[r[k]+j*m] += complex(cmplx.Abs(term), 0)
		}
	}
	if beta != 0 {
		for i := range out.v {
			out.v[i] += beta * c.v[i]
			scale.v[i] += complex(cmplx.Abs(beta*c.v[i]), 0)
		}
	}
	return out, scale
}

// compare fails t where got and want differ by more than tol times the
// scale of an element (and a little absolute slack for elements whose
// terms cancel).
func compare(t *testing.T, what string, got, want, scale []complex128, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		limit := tol*(real(scale[i])+1e-3) + 1e-30
		if d := cmplx.Abs(got[i] - want[i]); !(d <= limit) {
			if bad < 5 {
				t.Errorf("%s: element %d is %v, want %v (difference %.3g, allowed %.3g)", what, i, got[i], want[i], d, limit)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(got))
	}
}

func name(parts ...any) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "/"
		}
		s += fmt.Sprint(p)
	}
	return s
}
