package blas

import (
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
)

// hostMatrix is a matrix laid out in a buffer as a Matrix describes.
type hostMatrix struct {
	Matrix
	buf []float64
}

func newHostMatrix(r *rand.Rand, rows, cols, pad int, l Layout) hostMatrix {
	m := Matrix{Rows: rows, Cols: cols, Layout: l}
	if pad > 0 {
		m.Stride = m.stride() + pad
	}
	outer := rows
	if l == ColMajor {
		outer = cols
	}
	h := hostMatrix{Matrix: m, buf: make([]float64, outer*m.stride())}
	for i := range h.buf {
		h.buf[i] = float64(r.IntN(19) - 9)
	}
	return h
}

// at is element (i, j) of the matrix x describes, read from buf.
func at(x Matrix, buf []float64, i, j int) float64 {
	if x.Layout == RowMajor {
		return buf[i*x.stride()+j]
	}
	return buf[j*x.stride()+i]
}

// colMajorGemm does what cuBLAS's gemm does, on the CPU: C = op(A)·op(B)
// with every buffer column-major.
func colMajorGemm(opA, opB cublas.CublasOperation_t, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	get := func(buf []float64, ld int, op cublas.CublasOperation_t, i, j int) float64 {
		if op == cublas.CUBLAS_OP_T {
			i, j = j, i
		}
		return buf[j*ld+i]
	}
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += get(a, lda, opA, i, p) * get(b, ldb, opB, p, j)
			}
			c[j*ldc+i] = s
		}
	}
}

// TestPlanComputesTheMatrixProduct runs every combination of layouts,
// transposed views, padded strides and non-square shapes through plan and
// a CPU stand-in for cuBLAS's column-major GEMM, and compares C with the
// product computed from the matrices' own elements.
func TestPlanComputesTheMatrixProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const m, k, n = 5, 3, 4
	cases := 0
	for _, la := range []Layout{RowMajor, ColMajor} {
		for _, lb := range []Layout{RowMajor, ColMajor} {
			for _, lc := range []Layout{RowMajor, ColMajor} {
				for _, transA := range []bool{false, true} {
					for _, pad := range []int{0, 2} {
						// A given as the transpose of a K×M matrix when transA.
						var a hostMatrix
						if transA {
							a = newHostMatrix(r, k, m, pad, la)
							a.Matrix = a.Matrix.T()
						} else {
							a = newHostMatrix(r, m, k, pad, la)
						}
						b := newHostMatrix(r, k, n, pad, lb)
						c := newHostMatrix(r, m, n, pad, lc)
						if err := gemmShapes("Gemm", a.Matrix, b.Matrix, c.Matrix); err != nil {
							t.Fatal(err)
						}
						g := plan(a.Matrix, b.Matrix, c.Matrix)
						first, second := a.buf, b.buf
						if lc == RowMajor {
							first, second = b.buf, a.buf
						}
						colMajorGemm(g.opA, g.opB, int(g.m), int(g.n), int(g.k), first, int(g.lda), second, int(g.ldb), c.buf, int(g.ldc))
						for i := range m {
							for j := range n {
								var want float64
								for p := range k {
									want += at(a.Matrix, a.buf, i, p) * at(b.Matrix, b.buf, p, j)
								}
								if got := at(c.Matrix, c.buf, i, j); got != want {
									t.Fatalf("A %v, B %v, C %v: C[%d,%d] = %v, want %v", a.Matrix, b.Matrix, c.Matrix, i, j, got, want)
								}
							}
						}
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d layout combinations give A·B", cases)
}

func TestTransposeIsAViewOfTheSameMemory(t *testing.T) {
	m := Matrix{Rows: 3, Cols: 5, Stride: 7}
	tr := m.T()
	if tr.Rows != 5 || tr.Cols != 3 || tr.Layout != ColMajor || tr.stride() != 7 {
		t.Fatalf("T of %v = %v", m, tr)
	}
	if back := tr.T(); back != m {
		t.Fatalf("T of T of %v = %v", m, back)
	}
}
