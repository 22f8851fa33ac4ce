package blas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// batchKind is how a test lays out a batch operand.
type batchKind int

const (
	single      batchKind = iota // one matrix, for every product
	packed                       // Count matrices back to back
	gaps                         // padded leading dimension, a gap between matrices
	interleaved                  // matrix b's lines at offset b inside each line of the whole
)

func (k batchKind) String() string {
	return [...]string{"single", "packed", "gaps", "interleaved"}[k]
}

// batchMatrix describes a batch of count rows×cols matrices laid out as k
// says.
func batchMatrix(rows, cols int, l Layout, k batchKind, count int) Matrix {
	m := Matrix{Rows: rows, Cols: cols, Layout: l}
	outer, inner := m.lines()
	switch k {
	case packed:
		m.Batch = Batch{Count: count}
	case gaps:
		m.Stride = inner + 2
		m.Batch = Batch{Count: count, Stride: outer*m.Stride + 5}
	case interleaved:
		m.Stride = count*inner + 1
		m.Batch = Batch{Count: count, Stride: inner}
	}
	return m
}

// offset is the index of element (i, j) of matrix b of x's batch.
func offset(x Matrix, b, i, j int) int {
	o := int(x.operandStride()) * b
	if x.Layout == RowMajor {
		return o + i*x.stride() + j
	}
	return o + j*x.stride() + i
}

// TestPlanComputesBatchedProducts runs batches of every layout, with
// transposed views, packed, gapped, interleaved and single (broadcast)
// operands, through plan and a CPU stand-in for cuBLAS's column-major
// strided-batched GEMM, and compares each product with the one computed
// from the matrices' own elements. The elements of C's memory that belong
// to no matrix must keep their values.
func TestPlanComputesBatchedProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const m, k, n, count = 5, 3, 4, 3
	kinds := [][3]batchKind{
		{packed, packed, packed},
		{gaps, interleaved, packed},
		{interleaved, gaps, interleaved},
		{single, packed, gaps},
		{packed, single, interleaved},
		{single, single, packed},
		{interleaved, interleaved, interleaved},
	}
	fill := func(x Matrix) []float64 {
		buf := make([]float64, x.span())
		for i := range buf {
			buf[i] = float64(r.IntN(19) - 9)
		}
		return buf
	}
	cases := 0
	for _, la := range []Layout{RowMajor, ColMajor} {
		for _, lb := range []Layout{RowMajor, ColMajor} {
			for _, lc := range []Layout{RowMajor, ColMajor} {
				for _, transA := range []bool{false, true} {
					for _, kd := range kinds {
						a := batchMatrix(m, k, la, kd[0], count)
						if transA { // A as the transpose of a K×M batch
							a = batchMatrix(k, m, la, kd[0], count).T()
						}
						b := batchMatrix(k, n, lb, kd[1], count)
						c := batchMatrix(m, n, lc, kd[2], count)
						name := fmt.Sprintf("A %v, B %v, C %v", a, b, c)
						if err := gemmShapes("Gemm", a, b, c); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						abuf, bbuf, cbuf := fill(a), fill(b), fill(c)
						before := append([]float64(nil), cbuf...)
						g := plan(a, b, c)
						if g.batch != count || g.strideC != c.batchStride() {
							t.Fatalf("%s: plan has batch %d, C's stride %d", name, g.batch, g.strideC)
						}
						first, second := abuf, bbuf
						if lc == RowMajor {
							first, second = bbuf, abuf
						}
						for p := range int(g.batch) {
							colMajorGemm(g.opA, g.opB, int(g.m), int(g.n), int(g.k),
								first[int(g.strideA)*p:], int(g.lda), second[int(g.strideB)*p:], int(g.ldb), cbuf[int(g.strideC)*p:], int(g.ldc))
						}
						written := make([]bool, len(cbuf))
						for p := range count {
							for i := range m {
								for j := range n {
									var want float64
									for q := range k {
										want += abuf[offset(a, p, i, q)] * bbuf[offset(b, p, q, j)]
									}
									o := offset(c, p, i, j)
									written[o] = true
									if cbuf[o] != want {
										t.Fatalf("%s: C[%d][%d,%d] = %v, want %v", name, p, i, j, cbuf[o], want)
									}
								}
							}
						}
						for i, w := range written {
							if !w && cbuf[i] != before[i] {
								t.Fatalf("%s: element %d of C's memory, in no matrix, was written", name, i)
							}
						}
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d batched layout combinations give A[i]·B[i]", cases)
}

func TestBatchStridesAndSpans(t *testing.T) {
	for _, c := range []struct {
		m            Matrix
		stride, span int64
		err          string
	}{
		{m: Matrix{Rows: 2, Cols: 3}, stride: 6, span: 6},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 4}}, stride: 6, span: 24},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 1, Stride: 100}}, stride: 100, span: 6},
		{m: Matrix{Rows: 2, Cols: 3, Stride: 5, Batch: Batch{Count: 4}}, stride: 10, span: 38},
		{m: Matrix{Rows: 2, Cols: 3, Stride: 5, Layout: ColMajor, Batch: Batch{Count: 4}}, stride: 15, span: 57},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 4, Stride: 6}}, stride: 6, span: 24},
		{m: Matrix{Rows: 2, Cols: 3, Stride: 12, Batch: Batch{Count: 4, Stride: 3}}, stride: 3, span: 24}, // interleaved
		{m: Matrix{Rows: 2, Cols: 3, Stride: 11, Batch: Batch{Count: 4, Stride: 3}}, err: "overlap"},      // the last matrix's line runs into the next line
		{m: Matrix{Rows: 2, Cols: 3, Stride: 12, Batch: Batch{Count: 4, Stride: 2}}, err: "overlap"},      // lines overlap
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 4, Stride: 5}}, err: "overlap"},
		{m: Matrix{Rows: 1, Cols: 3, Batch: Batch{Count: 4, Stride: 3}}, stride: 3, span: 12},
		{m: Matrix{Rows: 0, Cols: 3, Batch: Batch{Count: 4, Stride: 1}}, stride: 1, span: 0},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Stride: 6}}, err: "no batch Count"},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: -1}}, err: "negative batch"},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 2, Stride: -6}}, err: "negative batch"},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 1 << 31}}, err: "batches of fewer than 2³¹"},
		{m: Matrix{Rows: 2, Cols: 3, Batch: Batch{Count: 1 << 30, Stride: 1 << 60}}, err: "more elements than memory"},
	} {
		err := c.m.checkShape("Gemm", "A")
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: %v, want an error containing %q", c.m, err, c.err)
			}
		case err != nil:
			t.Errorf("%v: %v", c.m, err)
		case c.m.batchStride() != c.stride || c.m.span() != c.span:
			t.Errorf("%v: stride %d, span %d; want %d, %d", c.m, c.m.batchStride(), c.m.span(), c.stride, c.span)
		}
	}
	// T keeps the batch, and the default stride, of the same memory.
	m := Matrix{Rows: 2, Cols: 3, Stride: 5, Batch: Batch{Count: 4}}
	if tr := m.T(); tr.batchStride() != m.batchStride() || tr.span() != m.span() || tr.Batch != m.Batch {
		t.Errorf("T of %v = %v", m, tr)
	}
}

func TestBatchCountsMustAgree(t *testing.T) {
	one := func(r, c int) Matrix { return Matrix{Rows: r, Cols: c} }
	of := func(r, c, n int) Matrix { return Matrix{Rows: r, Cols: c, Batch: Batch{Count: n}} }
	for _, c := range []struct {
		a, b, c Matrix
		err     string
	}{
		{of(2, 3, 4), of(3, 5, 4), of(2, 5, 4), ""},
		{one(2, 3), of(3, 5, 4), of(2, 5, 4), ""},
		{of(2, 3, 4), one(3, 5), of(2, 5, 4), ""},
		{of(2, 3, 1), of(3, 5, 1), of(2, 5, 1), ""},
		{of(2, 3, 4), of(3, 5, 4), one(2, 5), "A is a batch of 4 but C is one matrix"},
		{one(2, 3), of(3, 5, 4), of(2, 5, 3), "B is a batch of 4 and C of 3"},
		{of(2, 3, 4), of(3, 5, 4), of(2, 4, 4), "A·B is 2×5 but C is 2×4"},
	} {
		err := gemmShapes("Gemm", c.a, c.b, c.c)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("A %v, B %v, C %v: %v, want %q", c.a, c.b, c.c, err, c.err)
		}
	}
}
