//go:build linux && (amd64 || arm64)

package solver_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/solver"
)

// TestGesvdjReconstructsEveryShape decomposes tall, square and wide random
// matrices with all singular vectors, the first min(m, n) of each side,
// and none, and checks ‖U·Σ·Vᵀ − A‖, ‖Uᵀ·U − I‖, ‖Vᵀ·V − I‖, singular
// values descending and the same in the three calls.
func TestGesvdjReconstructsEveryShape(t *testing.T) {
	forEachType(t, testGesvdj[float32], testGesvdj[float64])
}

func testGesvdj[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(32, 33))
	for _, shape := range []struct{ m, n, ld int }{{8, 5, 9}, {6, 6, 0}, {4, 7, 6}} {
		m, n := shape.m, shape.n
		k := min(m, n)
		a := random(rng, m, n, shape.ld)
		scale := a.norm() * float64(max(m, n))
		var first host
		for _, econ := range []int{0, 1, -1} {
			ucols, vcols := m, n
			if econ == 1 {
				ucols, vcols = k, k
			}
			var u, v solver.Matrix[T]
			if econ >= 0 {
				u = upload[T](t, s, random(rng, m, ucols, m+1))
				v = upload[T](t, s, random(rng, n, vcols, 0))
			}
			sv := zeros[T](t, s, k)
			if err := solver.Gesvdj(h, upload[T](t, s, a), sv, u, v); err != nil {
				t.Fatalf("%d×%d, econ %d: %v", m, n, econ, err)
			}
			sig := newHost(k, 1, 0)
			copy(sig.v, toFloat64(downloadSlice(t, s, sv, k)))
			for i := 1; i < k; i++ {
				if sig.v[i] > sig.v[i-1] || sig.v[i] < 0 {
					t.Fatalf("singular values not descending and positive: %v", sig.v)
				}
			}
			if first.v == nil {
				first = sig
			} else {
				checkResidual[T](t, "singular values of two calls", sig, first, scale)
			}
			if econ < 0 {
				continue
			}
			hu, hv := download(t, s, u), download(t, s, v)
			checkPadding(t, "Gesvdj's U", hu)
			us := newHost(m, k, 0)
			for j := 0; j < k; j++ {
				for i := 0; i < m; i++ {
					us.set(i, j, hu.at(i, j)*sig.v[j])
				}
			}
			vk := newHost(n, k, 0)
			for j := 0; j < k; j++ {
				for i := 0; i < n; i++ {
					vk.set(i, j, hv.at(i, j))
				}
			}
			checkResidual[T](t, "‖U·Σ·Vᵀ − A‖", mul(us, vk.t()), a, scale)
			checkResidual[T](t, "‖Uᵀ·U − I‖", mul(hu.t(), hu), identity(ucols), float64(m))
			checkResidual[T](t, "‖Vᵀ·V − I‖", mul(hv.t(), hv), identity(vcols), float64(n))
		}
	}
}

// TestGesvdjRefusesVectorsOfOtherShapes: U and V must be both full, both
// economy-sized or both empty.
func TestGesvdjRefusesVectorsOfOtherShapes(t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(34, 35))
	a := upload[float64](t, s, random(rng, 5, 3, 0))
	sv := zeros[float64](t, s, 3)
	u := upload[float64](t, s, random(rng, 5, 5, 0))
	v := upload[float64](t, s, random(rng, 3, 3, 0))
	ue := upload[float64](t, s, random(rng, 5, 3, 0))
	for _, c := range []struct {
		name string
		u, v solver.Matrix[float64]
	}{{"U without V", u, solver.Matrix[float64]{}}, {"economy U, V of another shape", ue, solver.Matrix[float64]{Mem: u.Mem, Rows: 3, Cols: 5}}, {"V as U", v, u}} {
		err := solver.Gesvdj(h, a, sv, c.u, c.v)
		if err == nil || !strings.Contains(err.Error(), "or both empty") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := solver.Gesvdj(h, a, zeros[float64](t, s, 2), solver.Matrix[float64]{}, solver.Matrix[float64]{}); err == nil || !strings.Contains(err.Error(), "S") {
		t.Errorf("a short S: %v", err)
	}
}
