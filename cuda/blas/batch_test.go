//go:build linux && (amd64 || arm64)

package blas_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

// The layout of a batch, from the exported fields alone.

func leading(x blas.Matrix) int {
	switch {
	case x.Stride != 0:
		return x.Stride
	case x.Layout == blas.ColMajor:
		return max(x.Rows, 1)
	}
	return max(x.Cols, 1)
}

func lines(x blas.Matrix) (outer, inner int) {
	if x.Layout == blas.ColMajor {
		return x.Cols, x.Rows
	}
	return x.Rows, x.Cols
}

// index is where element (i, j) of matrix b of x's batch lies; a single
// matrix is the same for every b.
func index(x blas.Matrix, b, i, j int) int {
	o := 0
	if x.Batch.Count > 1 {
		s := x.Batch.Stride
		if s == 0 {
			outer, _ := lines(x)
			s = outer * leading(x)
		}
		o = b * s
	}
	if x.Layout == blas.RowMajor {
		return o + i*leading(x) + j
	}
	return o + j*leading(x) + i
}

// spanOf is the number of elements x's batch spans.
func spanOf(x blas.Matrix) int {
	if x.Rows == 0 || x.Cols == 0 {
		return 0
	}
	return index(x, max(x.Batch.Count, 1)-1, x.Rows-1, x.Cols-1) + 1
}

type batchKind int

const (
	single      batchKind = iota // one matrix for every product
	packed                       // back to back
	gaps                         // padded leading dimension, a gap between matrices
	interleaved                  // the batch's lines side by side, as heads in [seq][heads][dim]
)

func batchOf(rows, cols int, l blas.Layout, k batchKind, count int) blas.Matrix {
	m := blas.Matrix{Rows: rows, Cols: cols, Layout: l}
	outer, inner := lines(m)
	switch k {
	case packed:
		m.Batch = blas.Batch{Count: count}
	case gaps:
		m.Stride = inner + 3
		m.Batch = blas.Batch{Count: count, Stride: outer*m.Stride + 7}
	case interleaved:
		m.Stride = count * inner
		m.Batch = blas.Batch{Count: count, Stride: inner}
	}
	return m
}

func TestGemmRejectsBadBatches(t *testing.T) {
	ctx := libtest.Context(t)
	mem := func(n int) *cuda.DeviceMemory { return libtest.Alloc(t, ctx, 4*n) }
	batch := func(r, c, n int) blas.Matrix {
		return blas.Matrix{Mem: mem(r * c * max(n, 1)), Rows: r, Cols: c, Batch: blas.Batch{Count: n}}
	}
	a, b, c := batch(2, 3, 4), batch(3, 5, 4), batch(2, 5, 4)
	short := a
	short.Mem = mem(23)
	overlapC := c
	overlapC.Batch.Stride = 9
	interleavedC := blas.Matrix{Mem: mem(2 * 5 * 4), Rows: 2, Cols: 5, Stride: 20, Batch: blas.Batch{Count: 4, Stride: 5}}
	for name, tc := range map[string]struct {
		a, b, c blas.Matrix
		want    string
	}{
		"short memory":      {short, b, c, "a batch of 4 every 6 elements, 96 bytes of 4-byte elements, but its memory has 92"},
		"counts":            {a, b, batch(2, 5, 3), "A is a batch of 4 and C of 3"},
		"one C":             {a, b, blas.Matrix{Mem: mem(10), Rows: 2, Cols: 5}, "A is a batch of 4 but C is one matrix"},
		"overlapping C":     {a, b, overlapC, "its matrices overlap (each spans 10 elements)"},
		"overlapping A":     {blas.Matrix{Mem: mem(100), Rows: 2, Cols: 3, Stride: 8, Batch: blas.Batch{Count: 4, Stride: 2}}, b, c, "A is 2×3 row-major (stride 8), a batch of 4 every 2 elements: its matrices overlap"},
		"stride, no count":  {blas.Matrix{Mem: mem(24), Rows: 2, Cols: 3, Batch: blas.Batch{Stride: 6}}, b, c, "batch stride of 6 but no batch Count"},
		"negative count":    {blas.Matrix{Mem: mem(24), Rows: 2, Cols: 3, Batch: blas.Batch{Count: -4}}, b, c, "negative batch sizes"},
		"interleaved short": {a, b, blas.Matrix{Mem: mem(39), Rows: 2, Cols: 5, Stride: 20, Batch: blas.Batch{Count: 4, Stride: 5}}, "160 bytes of 4-byte elements, but its memory has 156"},
		"shapes":            {a, a, c, "A is 2×3 and B is 2×3"},
	} {
		err := blas.Gemm[float32](nil, 1, tc.a, tc.b, 0, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Gemm = %v, want an error containing %q", name, err, tc.want)
		}
		err = (*blas.LtHandle)(nil).Run(blas.Matmul{A: tc.a, B: tc.b, C: tc.c}, 1, 0, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LtHandle.Run = %v, want an error containing %q", name, err, tc.want)
		}
	}
	// Well-formed batches, single operands among them, reach the (nil) handle.
	one := blas.Matrix{Mem: mem(6), Rows: 2, Cols: 3}
	for _, ok := range [][3]blas.Matrix{{a, b, c}, {one, b, c}, {a, b, interleavedC}, {one, b, interleavedC}} {
		if err := blas.Gemm[float64](nil, 1, ok[0], ok[1], 0, ok[2]); err == nil || !strings.Contains(err.Error(), "bytes of 8-byte") {
			// float64 elements need twice the memory: the size check, not the handle, refuses.
			t.Errorf("Gemm[float64] of float32-sized memory = %v", err)
		}
		if err := blas.Gemm[float32](nil, 1, ok[0], ok[1], 0, ok[2]); !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("Gemm of A %v, B %v, C %v on a nil handle = %v, want ErrClosed", ok[0], ok[1], ok[2], err)
		}
	}
}

// checkBatchedGemm multiplies random batches laid out as a, b and c
// describe (without memory) on the GPU, and compares every product, and
// every element of C's memory in no matrix, with the CPU.
func checkBatchedGemm[T float32 | float64](t *testing.T, ctx *cuda.Context, s *cuda.Stream, h *blas.Handle, a, b, c blas.Matrix, tol float64) {
	t.Helper()
	name := fmt.Sprintf("%T: A %v, B %v, C %v", T(0), a, b, c)
	r := rand.New(rand.NewPCG(uint64(a.Rows), uint64(c.Batch.Count)))
	rnd := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = T(r.Float64()*2 - 1)
		}
		return v
	}
	abuf, bbuf, cbuf := rnd(spanOf(a)), rnd(spanOf(b)), rnd(spanOf(c))
	var err error
	for _, x := range []struct {
		m   *blas.Matrix
		buf []T
	}{{&a, abuf}, {&b, bbuf}, {&c, cbuf}} {
		if x.m.Mem, err = cuda.AllocFrom(ctx, x.buf); err != nil {
			t.Fatal(err)
		}
		defer x.m.Mem.Close()
	}
	const alpha, beta = 0.75, 1.25
	if err := blas.Gemm(h, T(alpha), a, b, T(beta), c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]T, len(cbuf))
	if err := cuda.CopyFromDevice(out, c.Mem.(*cuda.DeviceMemory)); err != nil {
		t.Fatal(err)
	}
	written := make([]bool, len(out))
	worst := 0.0
	for p := range max(c.Batch.Count, 1) {
		for i := range c.Rows {
			for j := range c.Cols {
				o := index(c, p, i, j)
				want, scale := beta*float64(cbuf[o]), 1.0
				for q := range a.Cols {
					x := alpha * float64(abuf[index(a, p, i, q)]) * float64(bbuf[index(b, p, q, j)])
					want += x
					scale += math.Abs(x)
				}
				written[o] = true
				worst = max(worst, math.Abs(float64(out[o])-want)/scale)
			}
		}
	}
	if worst > tol {
		t.Fatalf("%s: relative error %.3g, more than %.3g", name, worst, tol)
	}
	for i, w := range written {
		if !w && out[i] != cbuf[i] {
			t.Fatalf("%s: element %d of C's memory, in no matrix, was written", name, i)
		}
	}
}

func TestGemmBatchedMatchesCPU(t *testing.T) {
	ctx, s, h := needHandle(t)
	const m, k, n, count = 17, 9, 11, 5
	kinds := [][3]batchKind{
		{packed, packed, packed},
		{gaps, interleaved, packed},
		{interleaved, gaps, interleaved},
		{single, packed, gaps},
		{packed, single, interleaved},
	}
	cases := 0
	for _, l := range [][3]blas.Layout{
		{blas.RowMajor, blas.RowMajor, blas.RowMajor},
		{blas.ColMajor, blas.ColMajor, blas.ColMajor},
		{blas.RowMajor, blas.ColMajor, blas.RowMajor},
		{blas.ColMajor, blas.RowMajor, blas.ColMajor},
	} {
		for _, kd := range kinds {
			for _, transA := range []bool{false, true} {
				a := batchOf(m, k, l[0], kd[0], count)
				if transA {
					a = batchOf(k, m, l[0], kd[0], count).T()
				}
				b, c := batchOf(k, n, l[1], kd[1], count), batchOf(m, n, l[2], kd[2], count)
				checkBatchedGemm[float32](t, ctx, s, h, a, b, c, 1e-5)
				checkBatchedGemm[float64](t, ctx, s, h, a, b, c, 1e-13)
				cases++
			}
		}
	}
	// Attention's shape: 12 heads of a row-major [128][12][64] array
	// times each head's 64×96 matrix.
	const heads, seq, dim = 12, 128, 64
	q := blas.Matrix{Rows: seq, Cols: dim, Stride: heads * dim, Batch: blas.Batch{Count: heads, Stride: dim}}
	checkBatchedGemm[float32](t, ctx, s, h, q, batchOf(dim, 96, blas.RowMajor, packed, heads), batchOf(seq, 96, blas.RowMajor, packed, heads), 1e-5)
	t.Logf("%d batched layouts, float32 and float64, and a batch of attention heads match the CPU", cases)
}

// TestLtBatchedMatmul multiplies batches through cuBLASLt: bfloat16
// inputs made with cuda.ToBFloat16s times one weight shared by the batch,
// with a bias and ReLU, and interleaved float32 batches.
func TestLtBatchedMatmul(t *testing.T) {
	ctx, s, lt := needLt(t)
	r := rand.New(rand.NewPCG(9, 10))
	const m, k, n, count = 24, 64, 40, 6
	a, w, bias := smallInts(r, count*m*k), smallInts(r, n*k), smallInts(r, n)
	cmem := libtest.Alloc(t, ctx, count*m*n*2)
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(a)), Rows: m, Cols: k, Batch: blas.Batch{Count: count}},
		B:     blas.Matrix{Mem: upload(t, ctx, cuda.ToBFloat16s(w)), Rows: n, Cols: k}.T(), // one weight for all
		C:     blas.Matrix{Mem: cmem, Rows: m, Cols: n, Batch: blas.Batch{Count: count}},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
		Epilogue: blas.BiasReLU, Bias: upload(t, ctx, cuda.ToBFloat16s(bias)),
	}
	if err := lt.Run(mm, 1, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]cuda.BFloat16, count*m*n)
	if err := cuda.CopyFromDevice(out, cmem); err != nil {
		t.Fatal(err)
	}
	got := cuda.Float32s(out)
	for p := range count {
		want := cpuProduct(a[p*m*k:(p+1)*m*k], w, m, k, n, true, bias, true)
		for i, v := range want {
			// Exact products of small integers, rounded to bfloat16's 8 bits.
			if g := got[p*m*n+i]; math.Abs(float64(g-v)) > math.Abs(float64(v))/128 {
				t.Fatalf("bfloat16 batch: C[%d][%d] = %v, want %v", p, i, g, v)
			}
		}
	}

	// float32, A and C interleaved as heads, a batch of B.
	a32 := blas.Matrix{Rows: m, Cols: k, Stride: count * k, Batch: blas.Batch{Count: count, Stride: k}}
	b32 := blas.Matrix{Rows: k, Cols: n, Batch: blas.Batch{Count: count}}
	c32 := blas.Matrix{Rows: m, Cols: n, Stride: count * n, Batch: blas.Batch{Count: count, Stride: n}}
	av, bv := smallInts(r, spanOf(a32)), smallInts(r, spanOf(b32))
	a32.Mem, b32.Mem = upload(t, ctx, av), upload(t, ctx, bv)
	c32.Mem = libtest.Alloc(t, ctx, 4*spanOf(c32))
	if err := lt.Run(blas.Matmul{A: a32, B: b32, C: c32}, 1, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	cv := make([]float32, spanOf(c32))
	if err := cuda.CopyFromDevice(cv, c32.Mem.(*cuda.DeviceMemory)); err != nil {
		t.Fatal(err)
	}
	for p := range count {
		for i := range m {
			for j := range n {
				var want float32
				for q := range k {
					want += av[index(a32, p, i, q)] * bv[index(b32, p, q, j)]
				}
				if g := cv[index(c32, p, i, j)]; g != want {
					t.Fatalf("float32 interleaved batch: C[%d][%d,%d] = %v, want %v", p, i, j, g, want)
				}
			}
		}
	}
	t.Logf("batches of %d: bfloat16 with a shared weight, bias and ReLU; interleaved float32", count)
}
