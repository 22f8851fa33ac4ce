//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/internal/fakecusolver"
)

// scribble fills the triangle of h that uplo does not name (diagonal
// excluded) with a marker: the call must neither read nor write it.
func scribble(h host, uplo solver.Fill) {
	for j := 0; j < h.cols; j++ {
		for i := 0; i < h.rows; i++ {
			if (uplo == solver.Lower && i < j) || (uplo == solver.Upper && i > j) {
				h.set(i, j, -padding)
			}
		}
	}
}

// lowerFactor is L of A = L·Lᵀ from Potrf's result f in triangle uplo
// (Upper holds Lᵀ), failing t if strict and the other triangle changed.
func lowerFactor(t *testing.T, f host, uplo solver.Fill, strict bool) host {
	t.Helper()
	n := f.rows
	l := newHost(n, n, 0)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			switch {
			case uplo == solver.Lower && i >= j:
				l.set(i, j, f.at(i, j))
			case uplo == solver.Upper && i >= j:
				l.set(i, j, f.at(j, i))
			case strict && f.at(i, j) != -padding && f.at(j, i) != -padding:
				t.Fatalf("%v: element (%d, %d) of the other triangle changed", uplo, i, j)
			}
		}
	}
	return l
}

// TestPotrfFactorsSPD factors random symmetric positive definite matrices
// in either triangle, the other filled with a marker, and checks
// ‖L·Lᵀ − A‖ against ‖A‖ (so the marker was not read) and the padding
// untouched; on the fake, the marker too (cuSOLVER, like LAPACK, says
// only that the other triangle is not referenced: an implementation may
// use it).
func TestPotrfFactorsSPD(t *testing.T) {
	forEachType(t, testPotrf[float32], testPotrf[float64])
}

func testPotrf[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, uplo := range []solver.Fill{solver.Lower, solver.Upper} {
		for _, n := range []int{1, 6, 31} {
			a := spd(rng, n, n+3)
			in := a.clone()
			scribble(in, uplo)
			da := upload[T](t, s, in)
			if err := solver.Potrf(h, uplo, da); err != nil {
				t.Fatalf("%v %d×%d: %v", uplo, n, n, err)
			}
			f := download(t, s, da)
			checkPadding(t, "Potrf", f)
			l := lowerFactor(t, f, uplo, fakecusolver.Active())
			checkResidual[T](t, uplo.String()+": ‖L·Lᵀ − A‖", mul(l, l.t()), a, a.norm()*float64(n))
		}
	}
}

// TestPotrsSolvesSPDSystems solves A·X = B with Potrf's factor in either
// triangle and checks ‖A·X − B‖.
func TestPotrsSolvesSPDSystems(t *testing.T) {
	forEachType(t, testPotrs[float32], testPotrs[float64])
}

func testPotrs[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const n, nrhs = 10, 4
	for _, uplo := range []solver.Fill{solver.Lower, solver.Upper} {
		a := spd(rng, n, 0)
		in := a.clone()
		scribble(in, uplo)
		da := upload[T](t, s, in)
		if err := solver.Potrf(h, uplo, da); err != nil {
			t.Fatal(err)
		}
		b := random(rng, n, nrhs, n+2)
		db := upload[T](t, s, b)
		if err := solver.Potrs(h, uplo, da, db); err != nil {
			t.Fatal(err)
		}
		x := download(t, s, db)
		checkPadding(t, "Potrs", x)
		checkResidual[T](t, uplo.String()+": ‖A·X − B‖", mul(a, x), b, a.norm()*x.norm()*n)
	}
}

// TestPotrfNotPositiveDefiniteNamesTheMinor makes diagonal element k of
// an SPD matrix negative: the leading minors before it stay positive
// definite, the one of order k+1 is not, and the error names it.
func TestPotrfNotPositiveDefiniteNamesTheMinor(t *testing.T) {
	forEachType(t, testPotrfNotSPD[float32], testPotrfNotSPD[float64])
}

func testPotrfNotSPD[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 9
	for _, uplo := range []solver.Fill{solver.Lower, solver.Upper} {
		for _, k := range []int{0, 4, n - 1} {
			a := spd(rng, n, 0)
			a.set(k, k, -1000)
			err := solver.Potrf(h, uplo, upload[T](t, s, a))
			var ie *solver.InfoError
			if !errors.Is(err, solver.ErrNotPositiveDefinite) || !errors.As(err, &ie) || ie.Index != k+1 {
				t.Fatalf("%v, A(%d,%d) < 0: Potrf = %v; want an *InfoError matching ErrNotPositiveDefinite for the minor of order %d", uplo, k, k, err, k+1)
			}
			t.Log(err)
		}
	}
}
