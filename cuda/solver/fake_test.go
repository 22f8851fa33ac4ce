//go:build linux && (amd64 || arm64)

package solver_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/internal/fakecusolver"
)

// fakeChildEnv names the file where TestFakeMatchesCuSOLVER's child,
// which runs on the fake driver and the fake cuSOLVER, writes its
// results.
const fakeChildEnv = "GOCUDA_SOLVER_FAKE_CHILD"

// outcome is what the fake and cuSOLVER are compared by: results that
// LAPACK's conventions fix (the LU factors and pivots, the Cholesky
// factor, R and the Householder scalars, Qᵀ·B, eigenvalues, singular
// values, by gesvd and gesvdj), not the vectors, whose signs are free.
type outcome struct {
	LU, Chol, QR, Tau, QtB, Eig, SV, SVJ []float64
	Ipiv                                 []int32
	SingularAt, MinorAt                  int
}

// outcomeOf computes the outcome of fixed random float64 inputs.
func outcomeOf(t *testing.T) outcome {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(30, 31))
	const n = 9
	var o outcome
	a := upload[float64](t, s, random(rng, n, n, 0))
	ipiv := zeros[int32](t, s, n)
	if err := solver.Getrf(h, a, ipiv); err != nil {
		t.Fatal(err)
	}
	o.LU, o.Ipiv = download(t, s, a).v, downloadSlice(t, s, ipiv, n)

	c := upload[float64](t, s, spd(rng, n, 0))
	if err := solver.Potrf(h, solver.Upper, c); err != nil {
		t.Fatal(err)
	}
	f := download(t, s, c)
	for j := 0; j < n; j++ {
		for i := 0; i <= j; i++ {
			o.Chol = append(o.Chol, f.at(i, j))
		}
	}

	q := upload[float64](t, s, random(rng, n+3, n, 0))
	tau := zeros[float64](t, s, n)
	if err := solver.Geqrf(h, q, tau); err != nil {
		t.Fatal(err)
	}
	o.QR, o.Tau = download(t, s, q).v, downloadSlice(t, s, tau, n)
	b := upload[float64](t, s, random(rng, n+3, 2, 0))
	if err := solver.Ormqr(h, solver.Left, solver.Trans, q, tau, b); err != nil {
		t.Fatal(err)
	}
	o.QtB = download(t, s, b).v

	e := upload[float64](t, s, symmetric(rng, n, 0))
	w := zeros[float64](t, s, n)
	if err := solver.Syevd(h, false, solver.Lower, e, w); err != nil {
		t.Fatal(err)
	}
	o.Eig = downloadSlice(t, s, w, n)

	g := upload[float64](t, s, random(rng, n+2, n, 0))
	sv := zeros[float64](t, s, n)
	if err := solver.Gesvd(h, g, sv, solver.Matrix[float64]{}, solver.Matrix[float64]{}); err != nil {
		t.Fatal(err)
	}
	o.SV = downloadSlice(t, s, sv, n)

	wide := upload[float64](t, s, random(rng, n-4, n, 0))
	svj := zeros[float64](t, s, n-4)
	if err := solver.Gesvdj(h, wide, svj, solver.Matrix[float64]{}, solver.Matrix[float64]{}); err != nil {
		t.Fatal(err)
	}
	o.SVJ = downloadSlice(t, s, svj, n-4)

	z := random(rng, n, n, 0)
	for i := 0; i < n; i++ {
		z.set(i, 5, 0)
	}
	var ie *solver.InfoError
	if err := solver.Getrf(h, upload[float64](t, s, z), zeros[int32](t, s, n)); asInfo(err, &ie) {
		o.SingularAt = ie.Index
	}
	p := spd(rng, n, 0)
	p.set(6, 6, -50)
	if err := solver.Potrf(h, solver.Lower, upload[float64](t, s, p)); asInfo(err, &ie) {
		o.MinorAt = ie.Index
	}
	return o
}

func asInfo(err error, ie **solver.InfoError) bool {
	e, ok := err.(*solver.InfoError)
	*ie = e
	return ok
}

// TestFakeMatchesCuSOLVER compares the fake cuSOLVER with the real one on
// a GPU: it solves fixed problems with cuSOLVER, then the same in a child
// process of this test binary on the fake driver and the fake cuSOLVER,
// and compares the two: the pivots and the indexes of the failures
// exactly, the numbers to 1e-9 of the largest of their kind.
func TestFakeMatchesCuSOLVER(t *testing.T) {
	real, fake, ok := libtest.RealAndFake(t, "cuSOLVER", fakeChildEnv, cusolver.LibraryEnv, fakecusolver.Active, outcomeOf)
	if !ok {
		return
	}
	if !slices.Equal(fake.Ipiv, real.Ipiv) {
		t.Errorf("pivots: fake %v, cuSOLVER %v", fake.Ipiv, real.Ipiv)
	}
	if fake.SingularAt != real.SingularAt || fake.MinorAt != real.MinorAt || real.SingularAt != 6 || real.MinorAt != 7 {
		t.Errorf("zero pivot at %d and minor %d on the fake, %d and %d on cuSOLVER; want 6 and 7", fake.SingularAt, fake.MinorAt, real.SingularAt, real.MinorAt)
	}
	for _, c := range []struct {
		name       string
		fake, real []float64
	}{
		{"LU factors", fake.LU, real.LU}, {"Cholesky factor", fake.Chol, real.Chol}, {"QR factors", fake.QR, real.QR},
		{"Householder scalars", fake.Tau, real.Tau}, {"Qᵀ·B", fake.QtB, real.QtB}, {"eigenvalues", fake.Eig, real.Eig},
		{"singular values", fake.SV, real.SV}, {"Jacobi singular values of a wide matrix", fake.SVJ, real.SVJ},
	} {
		if len(c.fake) != len(c.real) {
			t.Errorf("%s: %d numbers on the fake, %d on cuSOLVER", c.name, len(c.fake), len(c.real))
			continue
		}
		scale := 0.0
		for _, v := range c.real {
			scale = max(scale, math.Abs(v))
		}
		worst := 0.0
		for i := range c.real {
			worst = max(worst, math.Abs(c.fake[i]-c.real[i]))
		}
		if !(worst <= 1e-9*scale) {
			t.Errorf("%s: the fake differs from cuSOLVER by up to %.3g (largest %.3g)", c.name, worst, scale)
		}
		t.Logf("%s: fake and cuSOLVER within %.3g (largest %.3g)", c.name, worst, scale)
	}
}
