//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
)

// bsrHost is a random BSR matrix of bRows×bCols blocks of r×c values,
// each block present with probability 0.4 (the first always), as the
// three arrays in block order, and as a host matrix of every stored value.
func bsrHost(rng *rand.Rand, bRows, bCols, r, c int, order sparse.Order, cx bool) (off, col []int64, vals []complex128, h host) {
	h = host{rows: bRows * r, cols: bCols * c}
	off = []int64{0}
	for i := range bRows {
		for j := range bCols {
			if !(i == 0 && j == 0) && rng.Float64() >= 0.4 {
				continue
			}
			col = append(col, int64(j))
			block := make([]complex128, r*c)
			for k := range block {
				block[k] = randomValue(rng, cx)
			}
			vals = append(vals, block...)
			for br := range r {
				for bc := range c {
					at := br*c + bc
					if order == sparse.ColMajor {
						at = br + bc*r
					}
					h.add(i*r+br, j*c+bc, block[at])
				}
			}
		}
		off = append(off, int64(len(col)))
	}
	return off, col, vals, h
}

func convert[I sparse.Index](v []int64) []I {
	out := make([]I, len(v))
	for i, x := range v {
		out[i] = I(x)
	}
	return out
}

func TestBSRSpMVMatchesReference(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	t.Run("float32/int32", func(t *testing.T) { bsrCases[float32, int32](t, s, h) })
	t.Run("float64/int64", func(t *testing.T) { bsrCases[float64, int64](t, s, h) })
	t.Run("complex64/int32", func(t *testing.T) { bsrCases[complex64, int32](t, s, h) })
	t.Run("complex128/int64", func(t *testing.T) { bsrCases[complex128, int64](t, s, h) })
}

// bsrCases runs SpMV (NoTrans) on 7×5 blocks of 1×1, 2×2 and 3×3 values,
// blocks in either order, with beta nonzero.
func bsrCases[T sparse.Scalar, I sparse.Index](t *testing.T, s *cuda.Stream, h *sparse.Handle) {
	rng := rand.New(rand.NewPCG(31, 32))
	cx := isComplex[T]()
	alpha, beta := scalars[T]()
	for _, bs := range [][2]int{{1, 1}, {2, 2}, {3, 3}} {
		for _, order := range []sparse.Order{sparse.RowMajor, sparse.ColMajor} {
			t.Run(name(bs[0], "x", bs[1], order), func(t *testing.T) {
				off, col, vals, a := bsrHost(rng, 7, 5, bs[0], bs[1], order, cx)
				a = rounded[T](a)
				A, err := sparse.NewBSR(7, 5, bs[0], order, alloc(t, s, convert[I](off)), alloc(t, s, convert[I](col)), alloc(t, s, toTs[T](vals)))
				if err != nil && strings.Contains(err.Error(), "from CUDA 12 on") {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if A.Rows() != 7*bs[0] || A.Cols() != 5*bs[1] || A.NNZ() != len(col) {
					t.Fatalf("A is %d×%d with %d blocks, want %d×%d with %d", A.Rows(), A.Cols(), A.NNZ(), 7*bs[0], 5*bs[1], len(col))
				}
				m, k := a.rows, a.cols
				xv := fromTs(toTs[T](randomDense(rng, k, 1, cx).v))
				y0 := fromTs(toTs[T](randomDense(rng, m, 1, cx).v))
				dx, dy := alloc(t, s, toTs[T](xv)), alloc(t, s, toTs[T](y0))
				err = sparse.SpMV(h, sparse.NoTrans, alpha, A, dx, beta, dy)
				unsupported(t, err)
				if err != nil {
					t.Fatal(err)
				}
				want, scale := refSpMM(sparse.NoTrans, fromT(alpha), a, dense{k, 1, xv}, fromT(beta), dense{m, 1, y0})
				compare(t, "y", fromTs(download(t, s, dy)), want.v, scale.v, tolerance[T]())
			})
		}
	}
}

// TestBSRIsCheckedAndRefusedWhereCuSPARSETakesNone: NewBSR checks its
// arrays' lengths and the block shape, and SpMM, SpGEMM and the solvers
// refuse a BSR matrix before cuSPARSE is called.
func TestBSRIsCheckedAndRefusedWhereCuSPARSETakesNone(t *testing.T) {
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	off := alloc(t, s, []int32{0, 1, 2})
	col := alloc(t, s, []int32{0, 1})
	vals := alloc(t, s, make([]float64, 8))
	A, err := sparse.NewBSR(2, 2, 2, sparse.RowMajor, off, col, vals)
	if err != nil && strings.Contains(err.Error(), "from CUDA 12 on") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if bs, o := A.BlockSize(); bs != 2 || o != sparse.RowMajor || A.Format() != sparse.BSR {
		t.Fatalf("BlockSize = %d, %v; format %v", bs, o, A.Format())
	}
	short := alloc(t, s, make([]float64, 7))
	d := alloc(t, s, make([]float64, 4))
	D, _ := sparse.NewDense(4, 1, sparse.ColMajor, d)
	E, _ := sparse.NewDense(4, 1, sparse.ColMajor, alloc(t, s, make([]float64, 4)))
	newErr := func(_ any, err error) error { return err }
	for what, tc := range map[string]struct {
		err  error
		want string
	}{
		"values":      {newErr(sparse.NewBSR(2, 2, 2, sparse.RowMajor, off, col, short)), "values has 7 elements, want 8: 2 blocks of 2×2"},
		"offsets":     {newErr(sparse.NewBSR(3, 2, 2, sparse.RowMajor, off, col, vals)), "block row offsets has 3 elements, want 4"},
		"block size":  {newErr(sparse.NewBSR(2, 2, 0, sparse.RowMajor, off, col, vals)), "2×2 blocks of 0×0"},
		"block order": {newErr(sparse.NewBSR(2, 2, 2, sparse.Order(4), off, col, vals)), "unknown block order"},
		"SpMM":        {sparse.SpMM(h, sparse.NoTrans, 1, A, D, 0, E), "A is BSR: SpMM takes"},
		"SpGEMM":      {newErr(sparse.SpGEMM(h, 1, A, A)), "takes CSR matrices"},
		"solver":      {newErr(sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Lower, sparse.NonUnit)), "A is BSR"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", what, tc.err, tc.want)
		}
	}
}
