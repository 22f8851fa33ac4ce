//go:build linux && (amd64 || arm64)

package blas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
)

// orderGemm does what cuBLASLt's matmul does with every layout in order,
// on the CPU: C = op(A)·op(B), element (i, j) of a matrix of leading
// dimension ld at j·ld+i in column order and i·ld+j in row order.
func orderGemm(order Layout, opA, opB cublas.CublasOperation_t, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	idx := func(ld, i, j int) int {
		if order == RowMajor {
			return i*ld + j
		}
		return j*ld + i
	}
	get := func(buf []float64, ld int, op cublas.CublasOperation_t, i, j int) float64 {
		if op == cublas.CUBLAS_OP_T {
			i, j = j, i
		}
		return buf[idx(ld, i, j)]
	}
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += get(a, lda, opA, i, p) * get(b, ldb, opB, p, j)
			}
			c[idx(ldc, i, j)] = s
		}
	}
}

// checkLayouts checks that the layouts describe makes for g (layoutDims
// and the strides) agree with its operation: op(first) is m×k, op(second)
// k×n, C m×n, each leading dimension holding a line in the order.
func checkLayouts(t *testing.T, name string, g gemmPlan, c Matrix) {
	t.Helper()
	dims := func(x Matrix, op cublas.CublasOperation_t) (int, int) {
		r, cl := layoutDims(x, g.order)
		if op == cublas.CUBLAS_OP_T {
			r, cl = cl, r
		}
		return r, cl
	}
	inner := func(x Matrix) int {
		r, cl := layoutDims(x, g.order)
		if g.order == RowMajor {
			return cl
		}
		return r
	}
	m, n, k := int(g.m), int(g.n), int(g.k)
	for _, x := range []struct {
		what       string
		x          Matrix
		op         cublas.CublasOperation_t
		rows, cols int
		ld         int32
	}{
		{"first", g.a, g.opA, m, k, g.lda},
		{"second", g.b, g.opB, k, n, g.ldb},
		{"C", c, cublas.CUBLAS_OP_N, m, n, g.ldc},
	} {
		if r, cl := dims(x.x, x.op); r != x.rows || cl != x.cols {
			t.Fatalf("%s: %s operand reads %d×%d, the operation needs %d×%d", name, x.what, r, cl, x.rows, x.cols)
		}
		if int(x.ld) < inner(x.x) || int(x.ld) != x.x.stride() {
			t.Fatalf("%s: %s operand has leading dimension %d for lines of %d (stride %d)", name, x.what, x.ld, inner(x.x), x.x.stride())
		}
	}
}

// TestFormulationsComputeTheMatrixProduct runs every batched layout
// combination of TestPlanComputesBatchedProducts (every layout of A, B and
// C, A transposed or not, packed, gapped, interleaved and single
// operands), plus padded single matrices, through planIn in both orders
// and a CPU stand-in for cuBLASLt's matmul in that order, and compares
// each product with the one computed from the matrices' own elements.
// It also checks the layouts describe would make (layoutDims).
func TestFormulationsComputeTheMatrixProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
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
	padded := func(rows, cols int, l Layout) Matrix {
		x := Matrix{Rows: rows, Cols: cols, Layout: l}
		x.Stride = x.stride() + 2
		return x
	}
	cases := 0
	swaps := map[Formulation]int{}
	for _, f := range []Formulation{ColumnOrder, RowOrder} {
		for _, la := range []Layout{RowMajor, ColMajor} {
			for _, lb := range []Layout{RowMajor, ColMajor} {
				for _, lc := range []Layout{RowMajor, ColMajor} {
					for _, transA := range []bool{false, true} {
						type abc struct{ a, b, c Matrix }
						var all []abc
						for _, kd := range kinds {
							a := batchMatrix(m, k, la, kd[0], count)
							if transA { // A as the transpose of a K×M batch
								a = batchMatrix(k, m, la, kd[0], count).T()
							}
							all = append(all, abc{a, batchMatrix(k, n, lb, kd[1], count), batchMatrix(m, n, lc, kd[2], count)})
						}
						a := padded(m, k, la)
						if transA {
							a = padded(k, m, la).T()
						}
						all = append(all, abc{a, padded(k, n, lb), padded(m, n, lc)})
						for _, x := range all {
							a, b, c := x.a, x.b, x.c
							name := fmt.Sprintf("%v: A %v, B %v, C %v", f, a, b, c)
							if err := gemmShapes("Matmul", a, b, c); err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							abuf, bbuf, cbuf := fill(a), fill(b), fill(c)
							before := append([]float64(nil), cbuf...)
							g := planIn(a, b, c, f.order())
							if g.order != f.order() || g.swap != (lc != f.order()) {
								t.Fatalf("%s: plan in order %v, swap %v", name, g.order, g.swap)
							}
							checkLayouts(t, name, g, c)
							first, second := abuf, bbuf
							if g.swap {
								first, second = bbuf, abuf
								swaps[f]++
							}
							for p := range int(max(g.batch, 1)) {
								orderGemm(g.order, g.opA, g.opB, int(g.m), int(g.n), int(g.k),
									first[int(g.strideA)*p:], int(g.lda), second[int(g.strideB)*p:], int(g.ldb), cbuf[int(g.strideC)*p:], int(g.ldc))
							}
							written := make([]bool, len(cbuf))
							for p := range c.count() {
								for i := range m {
									for j := range n {
										var want float64
										for q := range k {
											want += abuf[offset(a, min(p, a.count()-1), i, q)] * bbuf[offset(b, min(p, b.count()-1), q, j)]
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
	}
	// Each order computes half the cases as Cᵀ = Bᵀ·Aᵀ: those whose C is
	// in the other order.
	if swaps[ColumnOrder] != cases/4 || swaps[RowOrder] != cases/4 {
		t.Fatalf("swapped %v of %d", swaps, cases)
	}
	t.Logf("%d combinations of formulation and layouts give A·B", cases)
}

// TestPlanIsColumnOrder: Gemm's plan is planIn's column order, unchanged.
func TestPlanIsColumnOrder(t *testing.T) {
	a, b, c := Matrix{Rows: 2, Cols: 3}, Matrix{Rows: 3, Cols: 4, Layout: ColMajor}, Matrix{Rows: 2, Cols: 4}
	g := plan(a, b, c)
	if g != planIn(a, b, c, ColMajor) || !g.swap || g.opA != cublas.CUBLAS_OP_T || g.opB != cublas.CUBLAS_OP_N || g.m != 4 || g.n != 2 {
		t.Fatalf("plan = %+v", g)
	}
	// In row order the same product is computed as it is.
	g = planIn(a, b, c, RowMajor)
	if g.swap || g.opA != cublas.CUBLAS_OP_N || g.opB != cublas.CUBLAS_OP_T || g.m != 2 || g.n != 4 {
		t.Fatalf("planIn(RowMajor) = %+v", g)
	}
}

func TestFormulationCheck(t *testing.T) {
	bf := Matmul{AType: BFloat16, BType: BFloat16, CType: BFloat16}
	fp8 := Matmul{AType: Float8E4M3, BType: Float8E4M3, CType: BFloat16}
	for _, c := range []struct {
		f    Formulation
		mm   Matmul
		want string
	}{
		{ColumnOrder, bf, ""},
		{RowOrder, bf, ""},
		{ColumnOrder, fp8, ""},
		{RowOrder, fp8, "column-order only"},
		{Formulation(7), bf, "unknown formulation"},
	} {
		err := c.f.check("op", &c.mm)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v on %v: %v, want %q", c.f, c.mm.AType, err, c.want)
		}
	}
	if ColumnOrder.String() != "col" || RowOrder.String() != "row" || Formulation(5).String() != "Formulation(5)" {
		t.Error("Formulation.String")
	}
}
