//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

// exampleStream is a stream on the first device's primary context; done
// releases both.
func exampleStream() (s *cuda.Stream, done func()) {
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		log.Fatal("no device: ", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		log.Fatal(err)
	}
	s, err = cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return s, func() { s.Close(); ctx.Close() }
}

// Solving A·x = b by LU: Getrf factors A in place, Getrs solves with the
// factors, overwriting b with x. The matrix is column-major: its columns
// one after the other.
func Example() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// A = | 2 1 1 |   b = | 4 |
	//     | 4 3 3 |       | 10 |
	//     | 8 7 9 |       | 24 |
	da, err := cuda.AllocSliceFrom(s, []float64{2, 4, 8, 1, 3, 7, 1, 3, 9})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	db, err := cuda.AllocSliceFrom(s, []float64{4, 10, 24})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ipiv, err := cuda.AllocSlice[int32](s, 3)
	if err != nil {
		log.Fatal(err)
	}
	defer ipiv.Close()

	a := solver.Matrix[float64]{Mem: da, Rows: 3, Cols: 3}
	b := solver.Matrix[float64]{Mem: db, Rows: 3, Cols: 1}
	if err := solver.Getrf(h, a, ipiv); err != nil {
		log.Fatal(err)
	}
	if err := solver.Getrs(h, solver.NoTrans, a, ipiv, b); err != nil {
		log.Fatal(err)
	}
	x := make([]float64, 3)
	if err := db.CopyToHost(s, x); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("x = %.4f\n", x)
	// Output: x = [1.0000 1.0000 1.0000]
}

// Cholesky's factor of a symmetric positive definite matrix, in its
// lower triangle; a matrix that is not positive definite is an error
// naming the first leading minor that is not.
func ExamplePotrf() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// A = | 4  2 |, L = | 2  0 |
	//     | 2 10 |       | 1  3 |
	da, err := cuda.AllocSliceFrom(s, []float32{4, 2, 2, 10})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	if err := solver.Potrf(h, solver.Lower, solver.Matrix[float32]{Mem: da, Rows: 2, Cols: 2}); err != nil {
		log.Fatal(err)
	}
	l := make([]float32, 4)
	if err := da.CopyToHost(s, l); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("L(1,1) = %.1f, L(2,1) = %.1f, L(2,2) = %.1f\n", l[0], l[1], l[3])

	// | 1 2 | has the minor 1 - 2·2 < 0 of order 2.
	// | 2 1 |
	bad, err := cuda.AllocSliceFrom(s, []float32{1, 2, 2, 1})
	if err != nil {
		log.Fatal(err)
	}
	defer bad.Close()
	err = solver.Potrf(h, solver.Lower, solver.Matrix[float32]{Mem: bad, Rows: 2, Cols: 2})
	var ie *solver.InfoError
	if errors.Is(err, solver.ErrNotPositiveDefinite) && errors.As(err, &ie) {
		fmt.Println("not positive definite at order", ie.Index)
	}
	// Output:
	// L(1,1) = 2.0, L(2,1) = 1.0, L(2,2) = 3.0
	// not positive definite at order 2
}

// A zero pivot makes Getrf's error name it.
func ExampleGetrf_singular() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// The second column is twice the first; the numbers keep every step
	// exact, so the pivot is exactly zero however the library rounds.
	da, err := cuda.AllocSliceFrom(s, []float64{1, 2, 2, 4})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	ipiv, err := cuda.AllocSlice[int32](s, 2)
	if err != nil {
		log.Fatal(err)
	}
	defer ipiv.Close()
	err = solver.Getrf(h, solver.Matrix[float64]{Mem: da, Rows: 2, Cols: 2}, ipiv)
	fmt.Println(errors.Is(err, solver.ErrSingular))
	fmt.Println(err)
	// Output:
	// true
	// solver: Getrf: cusolverDnDgetrf: pivot U(2,2) is exactly zero: the matrix is singular
}

// The eigenvalues of a symmetric matrix, ascending, and the eigenvectors
// in the matrix's columns.
func ExampleSyevd() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// | 2 1 | has eigenvalues 1 and 3, eigenvectors (1, -1) and (1, 1)
	// | 1 2 | over √2, each up to its sign.
	da, err := cuda.AllocSliceFrom(s, []float64{2, 1, 1, 2})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	dw, err := cuda.AllocSlice[float64](s, 2)
	if err != nil {
		log.Fatal(err)
	}
	defer dw.Close()
	if err := solver.Syevd(h, true, solver.Upper, solver.Matrix[float64]{Mem: da, Rows: 2, Cols: 2}, dw); err != nil {
		log.Fatal(err)
	}
	w, v := make([]float64, 2), make([]float64, 4)
	if err := dw.CopyToHost(s, w); err != nil {
		log.Fatal(err)
	}
	if err := da.CopyToHost(s, v); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("eigenvalues %.4f\n", w)
	fmt.Printf("v1(1)·v1(2) = %.4f, v2(1)·v2(2) = %.4f\n", v[0]*v[1], v[2]*v[3])
	// Output:
	// eigenvalues [1.0000 3.0000]
	// v1(1)·v1(2) = -0.5000, v2(1)·v2(2) = 0.5000
}

// The singular values of a 3×2 matrix, without the vectors (zero
// matrices for U and Vᵀ ask for none).
func ExampleGesvd() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// | 3 0 |
	// | 0 4 |  has singular values 4 and 3.
	// | 0 0 |
	da, err := cuda.AllocSliceFrom(s, []float32{3, 0, 0, 0, 4, 0})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	ds, err := cuda.AllocSlice[float32](s, 2)
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	a := solver.Matrix[float32]{Mem: da, Rows: 3, Cols: 2}
	if err := solver.Gesvd(h, a, ds, solver.Matrix[float32]{}, solver.Matrix[float32]{}); err != nil {
		log.Fatal(err)
	}
	sv := make([]float32, 2)
	if err := ds.CopyToHost(s, sv); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.3f\n", sv)
	// Output: [4.000 3.000]
}

// A least-squares fit by QR: the line y = c0 + c1·t through four points
// minimizes ‖A·c − y‖ for A's rows (1, t). Geqrf factors A = Q·R, Ormqr
// makes Qᵀ·y, and R·c = (Qᵀ·y)'s first two elements is solved on the
// host, R being 2×2.
func ExampleGeqrf() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// t = 0, 1, 2, 3 and y = 1, 3.1, 4.9, 7: close to y = 1 + 2t; the
	// least-squares line has slope Σ(t−1.5)(y−4) / Σ(t−1.5)² = 9.9/5.
	da, err := cuda.AllocSliceFrom(s, []float64{1, 1, 1, 1, 0, 1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	dy, err := cuda.AllocSliceFrom(s, []float64{1, 3.1, 4.9, 7})
	if err != nil {
		log.Fatal(err)
	}
	defer dy.Close()
	tau, err := cuda.AllocSlice[float64](s, 2)
	if err != nil {
		log.Fatal(err)
	}
	defer tau.Close()

	a := solver.Matrix[float64]{Mem: da, Rows: 4, Cols: 2}
	if err := solver.Geqrf(h, a, tau); err != nil {
		log.Fatal(err)
	}
	y := solver.Matrix[float64]{Mem: dy, Rows: 4, Cols: 1}
	if err := solver.Ormqr(h, solver.Left, solver.Trans, a, tau, y); err != nil {
		log.Fatal(err)
	}
	r, qty := make([]float64, 8), make([]float64, 4)
	if err := da.CopyToHost(s, r); err != nil {
		log.Fatal(err)
	}
	if err := dy.CopyToHost(s, qty); err != nil {
		log.Fatal(err)
	}
	// R = | r[0] r[4] |, column-major.
	//     |  0   r[5] |
	c1 := qty[1] / r[5]
	c0 := (qty[0] - r[4]*c1) / r[0]
	fmt.Printf("y = %.3f + %.3f·t\n", c0, c1)
	// Output: y = 1.030 + 1.980·t
}

// A matrix held row by row, as Go's [][]float64 flattened, is its
// transpose column by column: Getrf factors that, and Getrs with Trans
// solves with the matrix itself.
func ExampleGetrs_rowMajor() {
	s, done := exampleStream()
	defer done()
	h, err := solver.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	rows := [][]float64{{2, 1, 1}, {4, 3, 3}, {8, 7, 9}}
	var flat []float64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	da, err := cuda.AllocSliceFrom(s, flat)
	if err != nil {
		log.Fatal(err)
	}
	defer da.Close()
	db, err := cuda.AllocSliceFrom(s, []float64{4, 10, 24}) // A·(1, 1, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ipiv, err := cuda.AllocSlice[int32](s, 3)
	if err != nil {
		log.Fatal(err)
	}
	defer ipiv.Close()

	at := solver.Matrix[float64]{Mem: da, Rows: 3, Cols: 3} // Aᵀ, column-major
	if err := solver.Getrf(h, at, ipiv); err != nil {
		log.Fatal(err)
	}
	if err := solver.Getrs(h, solver.Trans, at, ipiv, solver.Matrix[float64]{Mem: db, Rows: 3, Cols: 1}); err != nil {
		log.Fatal(err)
	}
	x := make([]float64, 3)
	if err := db.CopyToHost(s, x); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("x = %.4f\n", x)
	// Output: x = [1.0000 1.0000 1.0000]
}
