//go:build linux && (amd64 || arm64)

package solver_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda/solver"
)

// symmetric is a random symmetric n×n matrix.
func symmetric(rng *rand.Rand, n, ld int) host {
	a := random(rng, n, n, ld)
	for j := 0; j < n; j++ {
		for i := j + 1; i < n; i++ {
			a.set(i, j, a.at(j, i))
		}
	}
	return a
}

// TestSyevdEigenpairs computes eigenvalues and vectors of random
// symmetric matrices from either triangle (the other filled with a
// marker) and checks ‖A·V − V·Λ‖, ‖Vᵀ·V − I‖, that the eigenvalues
// ascend and sum to the trace, and that without vectors the eigenvalues
// are the same.
func TestSyevdEigenpairs(t *testing.T) {
	forEachType(t, testSyevd[float32], testSyevd[float64])
}

func testSyevd[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, uplo := range []solver.Fill{solver.Lower, solver.Upper} {
		for _, n := range []int{1, 5, 24} {
			a := symmetric(rng, n, n+1)
			in := a.clone()
			scribble(in, uplo)
			da := upload[T](t, s, in)
			w := zeros[T](t, s, n)
			if err := solver.Syevd(h, true, uplo, da, w); err != nil {
				t.Fatalf("%v %d×%d: %v", uplo, n, n, err)
			}
			v := download(t, s, da)
			checkPadding(t, "Syevd", v)
			lambda := toFloat64(downloadSlice(t, s, w, n))
			trace, sum := 0.0, 0.0
			for i := 0; i < n; i++ {
				trace += a.at(i, i)
				sum += lambda[i]
				if i > 0 && lambda[i] < lambda[i-1] {
					t.Fatalf("eigenvalues not ascending: %v", lambda)
				}
			}
			vl := newHost(n, n, 0)
			for j := 0; j < n; j++ {
				for i := 0; i < n; i++ {
					vl.set(i, j, v.at(i, j)*lambda[j])
				}
			}
			scale := a.norm() * float64(n)
			checkResidual[T](t, uplo.String()+": ‖A·V − V·Λ‖", mul(a, v), vl, scale)
			checkResidual[T](t, "‖Vᵀ·V − I‖", mul(v.t(), v), identity(n), float64(n))
			if math.Abs(trace-sum) > tol[T]()*scale {
				t.Fatalf("eigenvalues sum to %v, the trace is %v", sum, trace)
			}
			w2 := zeros[T](t, s, n)
			if err := solver.Syevd(h, false, uplo, upload[T](t, s, in), w2); err != nil {
				t.Fatal(err)
			}
			only := newHost(n, 1, 0)
			copy(only.v, toFloat64(downloadSlice(t, s, w2, n)))
			want := newHost(n, 1, 0)
			copy(want.v, lambda)
			checkResidual[T](t, "eigenvalues without and with vectors", only, want, scale)
		}
	}
}

// TestGesvdReconstructs decomposes random tall and square matrices with
// all of U, its first n columns, or none, and checks ‖U·Σ·Vᵀ − A‖,
// ‖Uᵀ·U − I‖, ‖V·Vᵀ − I‖, singular values descending and not negative,
// and the same values without vectors.
func TestGesvdReconstructs(t *testing.T) {
	forEachType(t, testGesvd[float32], testGesvd[float64])
}

func testGesvd[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, shape := range []struct{ m, n, ld int }{{8, 5, 10}, {6, 6, 0}, {12, 1, 0}} {
		m, n := shape.m, shape.n
		a := random(rng, m, n, shape.ld)
		scale := a.norm() * float64(m)
		var first []float64
		for _, ucols := range []int{m, n, 0} {
			da := upload[T](t, s, a)
			sv := zeros[T](t, s, n)
			var u, vt solver.Matrix[T]
			if ucols > 0 {
				u = upload[T](t, s, random(rng, m, ucols, m+2))
				vt = upload[T](t, s, random(rng, n, n, 0))
			}
			if err := solver.Gesvd(h, da, sv, u, vt); err != nil {
				t.Fatalf("%d×%d, U with %d columns: %v", m, n, ucols, err)
			}
			sigma := toFloat64(downloadSlice(t, s, sv, n))
			for i := range sigma {
				if sigma[i] < 0 || (i > 0 && sigma[i] > sigma[i-1]) {
					t.Fatalf("singular values not descending and positive: %v", sigma)
				}
			}
			if first == nil {
				first = sigma
			} else {
				got, want := newHost(n, 1, 0), newHost(n, 1, 0)
				copy(got.v, sigma)
				copy(want.v, first)
				checkResidual[T](t, "singular values of two calls", got, want, scale)
			}
			if ucols == 0 {
				continue
			}
			hu, hv := download(t, s, u), download(t, s, vt)
			checkPadding(t, "Gesvd's U", hu)
			us := newHost(m, n, 0)
			for j := 0; j < n; j++ {
				for i := 0; i < m; i++ {
					us.set(i, j, hu.at(i, j)*sigma[j])
				}
			}
			checkResidual[T](t, "‖U·Σ·Vᵀ − A‖", mul(us, hv), a, scale)
			checkResidual[T](t, "‖Uᵀ·U − I‖", mul(hu.t(), hu), identity(ucols), float64(m))
			checkResidual[T](t, "‖V·Vᵀ − I‖", mul(hv, hv.t()), identity(n), float64(n))
		}
	}
}
