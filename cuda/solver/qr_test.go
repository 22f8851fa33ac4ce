//go:build linux && (amd64 || arm64)

package solver_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

// applyQ returns op(Q)·C or C·op(Q) computed by Ormqr from Geqrf's
// factors.
func applyQ[T solver.Float](t *testing.T, h *solver.Handle, s *cuda.Stream, side solver.Side, op solver.Op, f solver.Matrix[T], tau *cuda.Slice[T], c host) host {
	t.Helper()
	dc := upload[T](t, s, c)
	if err := solver.Ormqr(h, side, op, f, tau, dc); err != nil {
		t.Fatalf("Ormqr(%v, %v): %v", side, op, err)
	}
	out := download(t, s, dc)
	checkPadding(t, "Ormqr", out)
	return out
}

// TestGeqrfOrmqrReconstructs factors random tall, square and wide
// matrices as A = Q·R and checks, with Q applied by Ormqr: ‖Q·R − A‖,
// ‖Qᵀ·A − R‖, ‖Qᵀ·Q − I‖, and C·Q against (Qᵀ·Cᵀ)ᵀ on the right side.
func TestGeqrfOrmqrReconstructs(t *testing.T) {
	forEachType(t, testQR[float32], testQR[float64])
}

func testQR[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range []struct{ m, n, ld int }{{9, 5, 11}, {6, 6, 0}, {4, 7, 0}} {
		m, n := shape.m, shape.n
		k := min(m, n)
		a := random(rng, m, n, shape.ld)
		da := upload[T](t, s, a)
		tau := zeros[T](t, s, k)
		if err := solver.Geqrf(h, da, tau); err != nil {
			t.Fatalf("%d×%d: %v", m, n, err)
		}
		f := download(t, s, da)
		checkPadding(t, "Geqrf", f)
		r := newHost(m, n, m+1)
		for j := 0; j < n; j++ {
			for i := 0; i <= min(j, m-1); i++ {
				r.set(i, j, f.at(i, j))
			}
		}
		for i := range r.v { // padding for Ormqr to keep
			if i%r.ld >= m {
				r.v[i] = padding
			}
		}
		scale := a.norm() * float64(m)
		checkResidual[T](t, "‖Q·R − A‖", applyQ(t, h, s, solver.Left, solver.NoTrans, da, tau, r), a, scale)
		checkResidual[T](t, "‖Qᵀ·A − R‖", applyQ(t, h, s, solver.Left, solver.Trans, da, tau, a), r, scale)
		q := applyQ(t, h, s, solver.Left, solver.NoTrans, da, tau, identity(m))
		checkResidual[T](t, "‖Qᵀ·Q − I‖", mul(q.t(), q), identity(m), float64(m))
		c := random(rng, 3, m, 0)
		checkResidual[T](t, "‖C·Q − C·Q‖", applyQ(t, h, s, solver.Right, solver.NoTrans, da, tau, c), mul(c, q), c.norm()*float64(m))
		checkResidual[T](t, "‖C·Qᵀ − C·Qᵀ‖", applyQ(t, h, s, solver.Right, solver.Trans, da, tau, c), mul(c, q.t()), c.norm()*float64(m))
	}
}
