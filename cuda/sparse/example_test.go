//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/sparse"
)

// stream is the examples' stream on the first device.
func stream() *cuda.Stream {
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		log.Fatal("no device: ", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close() // the stream keeps it
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// upload1 copies v to the device on s.
func upload1[T cuda.Element](s *cuda.Stream, v []T) *cuda.Slice[T] {
	d, err := cuda.AllocSliceFrom(s, v)
	if err != nil {
		log.Fatal(err)
	}
	return d
}

// A matrix-vector product: the 3×3 matrix
//
//	1 0 2
//	0 3 0
//	4 0 5
//
// in CSR, times a vector of ones.
func Example() {
	s := stream()
	defer s.Close()
	h, err := sparse.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	offsets := upload1(s, []int32{0, 2, 3, 5})
	defer offsets.Close()
	columns := upload1(s, []int32{0, 2, 1, 0, 2})
	defer columns.Close()
	values := upload1(s, []float64{1, 2, 3, 4, 5})
	defer values.Close()
	A, err := sparse.NewCSR(3, 3, offsets, columns, values)
	if err != nil {
		log.Fatal(err)
	}
	x := upload1(s, []float64{1, 1, 1})
	defer x.Close()
	y := upload1(s, []float64{0, 0, 0})
	defer y.Close()

	if err := sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y); err != nil { // y = A·x
		log.Fatal(err)
	}
	if err := sparse.SpMV(h, sparse.Trans, 1, A, x, 10, y); err != nil { // y = Aᵀ·x + 10·y
		log.Fatal(err)
	}
	out := make([]float64, 3)
	if err := y.CopyToHost(s, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)

	// A vector of the wrong length is refused before cuSPARSE is called.
	y4 := upload1(s, make([]float64, 4))
	defer y4.Close()
	fmt.Println(sparse.SpMV(h, sparse.NoTrans, 1, A, y, 0, y4))
	// Output:
	// [35 33 97]
	// sparse: SpMV: op(A) is 3×3 (NoTrans of a 3×3 matrix): x has 3 elements and y 4, want 3 and 3
}

// A sparse matrix times a dense one: the 2×3 CSR matrix
//
//	1 0 2
//	0 3 0
//
// times a 3×2 row-major B.
func ExampleSpMM() {
	s := stream()
	defer s.Close()
	h, err := sparse.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	offsets := upload1(s, []int64{0, 2, 3})
	defer offsets.Close()
	columns := upload1(s, []int64{0, 2, 1})
	defer columns.Close()
	values := upload1(s, []float32{1, 2, 3})
	defer values.Close()
	A, err := sparse.NewCSR(2, 3, offsets, columns, values)
	if err != nil {
		log.Fatal(err)
	}
	b := upload1(s, []float32{1, 2, 3, 4, 5, 6}) // rows [1 2], [3 4], [5 6]
	defer b.Close()
	c := upload1(s, make([]float32, 4))
	defer c.Close()
	B, err := sparse.NewDense(3, 2, sparse.RowMajor, b)
	if err != nil {
		log.Fatal(err)
	}
	C, err := sparse.NewDense(2, 2, sparse.RowMajor, c)
	if err != nil {
		log.Fatal(err)
	}
	if err := sparse.SpMM(h, sparse.NoTrans, 1, A, B, 0, C); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, 4)
	if err := c.CopyToHost(s, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[:2], out[2:])
	// Output:
	// [11 14] [9 12]
}

// The square of a CSR matrix, a new CSR matrix whose Slices SpGEMM
// allocates: the 3×3 matrix
//
//	1 2 0
//	0 1 0
//	0 0 3
func ExampleSpGEMM() {
	s := stream()
	defer s.Close()
	h, err := sparse.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	offsets := upload1(s, []int32{0, 2, 3, 4})
	defer offsets.Close()
	columns := upload1(s, []int32{0, 1, 1, 2})
	defer columns.Close()
	values := upload1(s, []float64{1, 2, 1, 3})
	defer values.Close()
	A, err := sparse.NewCSR(3, 3, offsets, columns, values)
	if err != nil {
		log.Fatal(err)
	}
	P, err := sparse.SpGEMM(h, 1, A, A)
	if err != nil {
		log.Fatal(err)
	}
	defer P.Close()
	po, pc, pv := P.Arrays()
	o, c, v := make([]int32, po.Len()), make([]int32, pc.Len()), make([]float64, pv.Len())
	for _, err := range []error{po.CopyToHost(s, o), pc.CopyToHost(s, c), pv.CopyToHost(s, v)} {
		if err != nil {
			log.Fatal(err)
		}
	}
	// The product's rows, entry by entry (cuSPARSE need not sort a row's
	// columns).
	fmt.Println(P.NNZ(), "entries")
	for i := range 3 {
		row := make([]float64, 3)
		for e := o[i]; e < o[i+1]; e++ {
			row[c[e]] = v[e]
		}
		fmt.Println(row)
	}
	// Output:
	// 4 entries
	// [1 4 0]
	// [0 1 0]
	// [0 0 9]
}

// Solving a lower triangular system L·x = b twice with one analysis:
//
//	2 0 0
//	1 1 0
//	0 3 3
func ExampleTriangularSolver() {
	s := stream()
	defer s.Close()
	h, err := sparse.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	offsets := upload1(s, []int32{0, 1, 3, 5})
	defer offsets.Close()
	columns := upload1(s, []int32{0, 0, 1, 1, 2})
	defer columns.Close()
	values := upload1(s, []float64{2, 1, 1, 3, 3})
	defer values.Close()
	L, err := sparse.NewCSR(3, 3, offsets, columns, values)
	if err != nil {
		log.Fatal(err)
	}
	solver, err := sparse.NewTriangularSolver(h, sparse.NoTrans, L, sparse.Lower, sparse.NonUnit)
	if err != nil {
		log.Fatal(err)
	}
	defer solver.Close()
	x := upload1(s, make([]float64, 3))
	defer x.Close()
	for _, rhs := range [][]float64{{2, 3, 12}, {4, 2, 0}} {
		b := upload1(s, rhs)
		if err := solver.Solve(1, b, x); err != nil {
			log.Fatal(err)
		}
		out := make([]float64, 3)
		if err := x.CopyToHost(s, out); err != nil {
			log.Fatal(err)
		}
		b.Close()
		fmt.Println(out)
	}
	// Output:
	// [1 2 2]
	// [2 0 0]
}
