// Command matmul fills two matrices with random numbers on the GPU
// (cuRAND), multiplies them (cuBLAS), and checks a sample of the product's
// entries against the same sums computed on the CPU; it exits 1 if one is
// wrong or if there is no driver, device or library.
//
//	go run ./examples/matmul [-m 1024] [-k 512] [-n 768] [-device 0]
//
// The matrices are row-major, as Go slices are: blas.Gemm works out what
// cuBLAS, which is column-major, must do.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/rand"
)

func main() {
	m := flag.Int("m", 1024, "rows of A and C")
	k := flag.Int("k", 512, "columns of A, rows of B")
	n := flag.Int("n", 768, "columns of B and C")
	ordinal := flag.Int("device", 0, "device ordinal")
	flag.Parse()
	if err := run(*ordinal, *m, *k, *n); err != nil {
		fmt.Fprintln(os.Stderr, "matmul:", err)
		os.Exit(1)
	}
}

func run(ordinal, m, k, n int) error {
	s, err := cuda.OpenStream(ordinal)
	if err != nil {
		return err
	}
	defer s.Close()

	da, err := cuda.AllocSlice[float32](s, m*k)
	if err != nil {
		return err
	}
	defer da.Close()
	db, err := cuda.AllocSlice[float32](s, k*n)
	if err != nil {
		return err
	}
	defer db.Close()
	dc, err := cuda.AllocSlice[float32](s, m*n)
	if err != nil {
		return err
	}
	defer dc.Close()

	// A uniform in (0, 1], B normal: both made on the GPU, in stream order.
	gen, err := rand.New(s, rand.Philox, 2026)
	if err != nil {
		return err
	}
	defer gen.Close()
	if err := rand.Uniform[float32](gen, da); err != nil {
		return err
	}
	if err := rand.Normal[float32](gen, db, 0, 1); err != nil {
		return err
	}

	h, err := blas.New(s)
	if err != nil {
		return err
	}
	defer h.Close()
	a := blas.Matrix{Mem: da, Rows: m, Cols: k}
	b := blas.Matrix{Mem: db, Rows: k, Cols: n}
	c := blas.Matrix{Mem: dc, Rows: m, Cols: n}
	start := time.Now()
	if err := blas.Gemm[float32](h, 1, a, b, 0, c); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	elapsed := time.Since(start)

	ha, hb, hc := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, cp := range []struct {
		dst []float32
		src *cuda.Slice[float32]
	}{{ha, da}, {hb, db}, {hc, dc}} {
		if err := cp.src.CopyTo(cp.dst); err != nil {
			return err
		}
	}
	// A sample of entries, the corners included, summed in float64.
	checked := 0
	for t := 0; t < 1000; t++ {
		i, j := (t*7919)%m, (t*104729)%n
		if t < 4 {
			i, j = (t/2)*(m-1), (t%2)*(n-1)
		}
		var want, scale float64
		for p := 0; p < k; p++ {
			x := float64(ha[i*k+p]) * float64(hb[p*n+j])
			want += x
			scale += math.Abs(x)
		}
		if got := float64(hc[i*n+j]); math.Abs(got-want) > 1e-5*scale+1e-6 {
			return fmt.Errorf("entry C[%d][%d] = %v, want %v", i, j, got, want)
		}
		checked++
	}
	name, _ := s.Context().Device().Name()
	fmt.Printf("matmul: %d×%d·%d×%d on %s in %v; %d entries checked against the CPU\n", m, k, k, n, name, elapsed.Round(time.Microsecond), checked)
	return nil
}
