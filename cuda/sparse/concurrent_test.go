//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
)

// TestConcurrentUse: goroutines share one matrix, and some one handle
// while others use clones of it or a handle on a stream of their own;
// each computes SpMV, SpMM and a triangular solve into its own outputs
// many times, and every result is checked. Run under -race, it also
// checks the package's own synchronization.
func TestConcurrentUse(t *testing.T) {
	ctx, s := libtest.Stream(t)
	h := newHandle(t, s)
	const n, rounds, workers = 64, 10, 8
	rng := rand.New(rand.NewPCG(13, 14))
	a := rounded[float64](triangle(rng, n, sparse.Lower, sparse.NonUnit, false))
	A := upload[float64, int32](t, s, a, sparse.CSR)
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- worker(ctx, h, A, a, w, rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// worker is one goroutine of TestConcurrentUse: w%3 picks the shared
// handle, a clone, or a handle on a new stream.
func worker(ctx *cuda.Context, shared *sparse.Handle, A *sparse.Matrix[float64, int32], a host, w, rounds int) (err error) {
	n := a.rows
	h := shared
	var s *cuda.Stream
	switch w % 3 {
	case 1:
		if h, err = shared.Clone(); err != nil {
			return err
		}
		defer h.Close()
	case 2:
		if s, err = cuda.NewStream(ctx); err != nil {
			return err
		}
		defer s.Close()
		if h, err = sparse.New(s); err != nil {
			return err
		}
		defer h.Close()
	}
	s = h.Stream()
	rng := rand.New(rand.NewPCG(uint64(w), 15))
	xv := randomDense(rng, n, 2, false)
	x, err := cuda.AllocSliceFrom(s, toTs[float64](xv.v))
	if err != nil {
		return err
	}
	defer x.Close()
	x0, err := x.Sub(0, n)
	if err != nil {
		return err
	}
	defer x0.Close()
	y, err := cuda.AllocSlice[float64](s, 2*n)
	if err != nil {
		return err
	}
	defer y.Close()
	y0, err := y.Sub(0, n)
	if err != nil {
		return err
	}
	defer y0.Close()
	z, err := cuda.AllocSlice[float64](s, n)
	if err != nil {
		return err
	}
	defer z.Close()
	B, err := sparse.NewDense(n, 2, sparse.ColMajor, x)
	if err != nil {
		return err
	}
	C, err := sparse.NewDense(n, 2, sparse.ColMajor, y)
	if err != nil {
		return err
	}
	solver, err := sparse.NewTriangularSolver(h, sparse.NoTrans, A, sparse.Lower, sparse.NonUnit)
	if err != nil {
		return err
	}
	defer solver.Close()
	for r := range rounds {
		alpha := float64(w + r + 1)
		if err := sparse.SpMM(h, sparse.NoTrans, alpha, A, B, 0, C); err != nil {
			return err
		}
		if err := sparse.SpMV(h, sparse.Trans, alpha, A, x0, 0, y0); err != nil {
			return err
		}
		if err := solver.Solve(alpha, x0, z); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		gy, gz := make([]float64, 2*n), make([]float64, n)
		if err := y.CopyTo(gy); err != nil {
			return err
		}
		if err := z.CopyTo(gz); err != nil {
			return err
		}
		want, _ := refSpMM(sparse.NoTrans, complex(alpha, 0), a, xv, 0, dense{})
		wantT, _ := refSpMM(sparse.Trans, complex(alpha, 0), a, dense{n, 1, xv.v[:n]}, 0, dense{})
		wantZ := refSolve(sparse.NoTrans, a, sparse.Lower, sparse.NonUnit, complex(alpha, 0), xv.v[:n])
		for i := range n {
			if !near(gy[i], real(wantT.v[i])) || !near(gy[n+i], real(want.v[n+i])) || !near(gz[i], real(wantZ[i])) {
				return fmt.Errorf("worker %d round %d, element %d: y %v and %v, z %v; want %v, %v and %v", w, r, i, gy[i], gy[n+i], gz[i], wantT.v[i], want.v[n+i], wantZ[i])
			}
		}
	}
	return nil
}

func near(got, want float64) bool {
	d := got - want
	return d <= 1e-9*(1+abs(want)) && -d <= 1e-9*(1+abs(want))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
