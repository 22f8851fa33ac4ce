//go:build linux && (amd64 || arm64)

package blas_test

import (
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

// TestGemmRefusesSliceOfAnotherType: a *cuda.Slice whose elements are not
// Gemm's is an error before cuBLAS, naming the matrix and both types.
func TestGemmRefusesSliceOfAnotherType(t *testing.T) {
	ctx := libtest.Context(t)
	f64, err := cuda.AllocSlice[float64](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f64.Close()
	f32, err := cuda.AllocSlice[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f32.Close()
	a := blas.Matrix{Mem: f64, Rows: 2, Cols: 2}
	b := blas.Matrix{Mem: f32, Rows: 2, Cols: 2}
	c, err := cuda.AllocSlice[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var h *blas.Handle // the types are checked first
	err = blas.Gemm[float32](h, 1, a, b, 0, blas.Matrix{Mem: c, Rows: 2, Cols: 2})
	if err == nil || !strings.Contains(err.Error(), "A is a *cuda.Slice[float64], not memory of float32") {
		t.Errorf("Gemm[float32] with A a Slice of float64 = %v", err)
	}
}

// TestGemmOnSlices: matrices in Slices, C a Sub view of a larger Slice
// whose other elements stay as they were, and an inner dimension of 0,
// which leaves C = beta·C as BLAS defines it.
func TestGemmOnSlices(t *testing.T) {
	_, s, h := needHandle(t)
	a, err := cuda.AllocSliceFrom(s, []float32{1, 2, 3, 4, 5, 6}) // 2×3, row-major
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := cuda.AllocSliceFrom(s, []float32{1, 0, 0, 1, 1, 1}) // 3×2
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	all, err := cuda.AllocSliceFrom(s, []float32{-1, -1, -1, -1, -1, -1})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	c, err := all.Sub(1, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := blas.Gemm[float32](h, 1, blas.Matrix{Mem: a, Rows: 2, Cols: 3}, blas.Matrix{Mem: b, Rows: 3, Cols: 2}, 0, blas.Matrix{Mem: c, Rows: 2, Cols: 2}); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 6)
	if err := all.CopyToHost(s, got); err != nil {
		t.Fatal(err)
	}
	want := []float32{-1, 4, 5, 10, 11, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("C in [1:5] of the slice: %v, want %v", got, want)
		}
	}
	empty, err := cuda.AllocSlice[float32](s, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if err := blas.Gemm[float32](h, 1, blas.Matrix{Mem: empty, Rows: 2, Cols: 0}, blas.Matrix{Mem: empty, Rows: 0, Cols: 2}, 2, blas.Matrix{Mem: c, Rows: 2, Cols: 2}); err != nil {
		t.Fatalf("Gemm with k = 0: %v", err)
	}
	if err := all.CopyToHost(s, got); err != nil {
		t.Fatal(err)
	}
	want = []float32{-1, 8, 10, 20, 22, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after Gemm with k = 0 and beta 2: %v, want %v", got, want)
		}
	}
}

// TestGemmRefusesCOverlappingA: C and A as overlapping Sub views of one
// allocation are refused before cuBLAS; disjoint views are not.
func TestGemmRefusesCOverlappingA(t *testing.T) {
	ctx := libtest.Context(t)
	all, err := cuda.AllocSlice[float32](ctx, 12)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	view := func(i, j int) *cuda.Slice[float32] {
		v, err := all.Sub(i, j)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	a := blas.Matrix{Mem: view(0, 4), Rows: 2, Cols: 2}
	b := blas.Matrix{Mem: view(4, 8), Rows: 2, Cols: 2}
	var h *blas.Handle
	err = blas.Gemm[float32](h, 1, a, b, 0, blas.Matrix{Mem: view(2, 6), Rows: 2, Cols: 2})
	if err == nil || !strings.Contains(err.Error(), "C shares its memory with A or B") {
		t.Errorf("C overlapping A and B = %v", err)
	}
	err = blas.Gemm[float32](h, 1, a, b, 0, blas.Matrix{Mem: view(8, 12), Rows: 2, Cols: 2})
	if err == nil || strings.Contains(err.Error(), "shares") {
		t.Errorf("disjoint C = %v, want only the nil handle's error", err)
	}
}
