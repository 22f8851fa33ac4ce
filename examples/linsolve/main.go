// Command linsolve solves a dense linear system A·x = b on the GPU twice,
// with a Cholesky factorization (cuSOLVER's potrf and potrs) and with an
// LU factorization (getrf and getrs), and checks each solution's residual
// ‖A·x − b‖ on the CPU; it exits 1 if one is off or if there is no driver,
// device or library.
//
//	go run ./examples/linsolve [-n 2048] [-device 0]
//
// A is symmetric with n on its diagonal and entries in [-½, ½) off it, so
// diagonally dominant and positive definite: both factorizations apply. cuSOLVER is column-major; a symmetric A reads
// the same either way, and b and x are vectors.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

func main() {
	n := flag.Int("n", 2048, "order of the system")
	ordinal := flag.Int("device", 0, "device ordinal")
	flag.Parse()
	if err := run(*ordinal, *n); err != nil {
		fmt.Fprintln(os.Stderr, "linsolve:", err)
		os.Exit(1)
	}
}

func run(ordinal, n int) error {
	a, b := system(n)
	s, err := cuda.OpenStream(ordinal)
	if err != nil {
		return err
	}
	defer s.Close()
	h, err := solver.New(s)
	if err != nil {
		return err
	}
	defer h.Close()

	cholesky := func(da, db *cuda.Slice[float64]) error {
		A := solver.Matrix[float64]{Mem: da, Rows: n, Cols: n}
		if err := solver.Potrf(h, solver.Lower, A); err != nil {
			return err
		}
		return solver.Potrs(h, solver.Lower, A, solver.Matrix[float64]{Mem: db, Rows: n, Cols: 1})
	}
	lu := func(da, db *cuda.Slice[float64]) error {
		ipiv, err := cuda.AllocSlice[int32](s, n)
		if err != nil {
			return err
		}
		defer ipiv.Close()
		A := solver.Matrix[float64]{Mem: da, Rows: n, Cols: n}
		if err := solver.Getrf(h, A, ipiv); err != nil {
			return err
		}
		return solver.Getrs(h, solver.NoTrans, A, ipiv, solver.Matrix[float64]{Mem: db, Rows: n, Cols: 1})
	}
	for _, m := range []struct {
		name  string
		solve func(da, db *cuda.Slice[float64]) error
	}{{"Cholesky", cholesky}, {"LU", lu}} {
		da, err := cuda.AllocSliceFrom(s, a)
		if err != nil {
			return err
		}
		defer da.Close()
		db, err := cuda.AllocSliceFrom(s, b)
		if err != nil {
			return err
		}
		defer db.Close()
		start := time.Now()
		if err := m.solve(da, db); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		took := time.Since(start)
		x := make([]float64, n)
		if err := db.CopyToHost(s, x); err != nil {
			return err
		}
		r := residual(a, x, b)
		fmt.Printf("%-8s n=%d: %v, relative residual %.2e\n", m.name, n, took.Round(time.Microsecond), r)
		if r > 1e-10 {
			return fmt.Errorf("%s: relative residual %.2e, more than 1e-10", m.name, r)
		}
	}
	return nil
}

// system returns a symmetric positive definite n×n matrix and a right-hand
// side, both random.
func system(n int) (a, b []float64) {
	r := rand.New(rand.NewPCG(2026, uint64(n)))
	a = make([]float64, n*n)
	for i := range n {
		for j := range i {
			v := r.Float64() - 0.5
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] = float64(n)
	}
	b = make([]float64, n)
	for i := range b {
		b[i] = r.Float64() - 0.5
	}
	return a, b
}

// residual is ‖A·x − b‖ / (‖A‖·‖x‖ + ‖b‖), in the max norm.
func residual(a, x, b []float64) float64 {
	n := len(b)
	var rmax, amax, xmax, bmax float64
	for i := range n {
		s := -b[i]
		for j := range n {
			s += a[i*n+j] * x[j]
			amax = math.Max(amax, math.Abs(a[i*n+j]))
		}
		rmax = math.Max(rmax, math.Abs(s))
		xmax = math.Max(xmax, math.Abs(x[i]))
		bmax = math.Max(bmax, math.Abs(b[i]))
	}
	return rmax / (amax*xmax*float64(n) + bmax)
}
