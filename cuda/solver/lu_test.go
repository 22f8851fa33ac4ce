//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
)

// luFactors splits Getrf's result into P·A's rows (perm: row i of P·A is
// row perm[i] of A), L (m×k) and U (k×n).
func luFactors(t *testing.T, f host, ipiv []int32) (perm []int, l, u host) {
	t.Helper()
	m, n := f.rows, f.cols
	k := min(m, n)
	perm = make([]int, m)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < k; i++ {
		p := int(ipiv[i]) - 1
		if p < i || p >= m {
			t.Fatalf("pivot %d is %d: want a row in [%d, %d]", i+1, ipiv[i], i+1, m)
		}
		perm[i], perm[p] = perm[p], perm[i]
	}
	l, u = newHost(m, k, 0), newHost(k, n, 0)
	for i := 0; i < m; i++ {
		for j := 0; j < k; j++ {
			switch {
			case i == j:
				l.set(i, j, 1)
			case i > j:
				l.set(i, j, f.at(i, j))
			}
		}
	}
	for i := 0; i < k; i++ {
		for j := i; j < n; j++ {
			u.set(i, j, f.at(i, j))
		}
	}
	return perm, l, u
}

// TestGetrfFactorsAsPLU factors random square and rectangular matrices,
// some with padded columns, and checks ‖P·A − L·U‖ against A's norm and
// that the padding kept its values.
func TestGetrfFactorsAsPLU(t *testing.T) {
	forEachType(t, testGetrfFactors[float32], testGetrfFactors[float64])
}

func testGetrfFactors[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range []struct{ m, n, ld int }{{8, 8, 0}, {9, 5, 12}, {5, 9, 7}, {1, 1, 0}, {33, 33, 40}} {
		a := random(rng, shape.m, shape.n, shape.ld)
		da := upload[T](t, s, a)
		ipiv := zeros[int32](t, s, min(shape.m, shape.n))
		if err := solver.Getrf(h, da, ipiv); err != nil {
			t.Fatalf("%d×%d: %v", shape.m, shape.n, err)
		}
		f := download(t, s, da)
		checkPadding(t, "Getrf", f)
		perm, l, u := luFactors(t, f, downloadSlice(t, s, ipiv, min(shape.m, shape.n)))
		pa := newHost(shape.m, shape.n, 0)
		for i := 0; i < shape.m; i++ {
			for j := 0; j < shape.n; j++ {
				pa.set(i, j, a.at(perm[i], j))
			}
		}
		checkResidual[T](t, "‖P·A − L·U‖", mul(l, u), pa, a.norm()*float64(shape.m))
	}
}

// TestGetrsSolvesRandomSystems solves A·X = B and Aᵀ·X = B with Getrf's
// factors and checks ‖op(A)·X − B‖ against ‖A‖·‖X‖.
func TestGetrsSolvesRandomSystems(t *testing.T) {
	forEachType(t, testGetrs[float32], testGetrs[float64])
}

func testGetrs[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const n, nrhs = 12, 3
	a := random(rng, n, n, n+2)
	da := upload[T](t, s, a)
	ipiv := zeros[int32](t, s, n)
	if err := solver.Getrf(h, da, ipiv); err != nil {
		t.Fatal(err)
	}
	for _, op := range []solver.Op{solver.NoTrans, solver.Trans} {
		b := random(rng, n, nrhs, n+1)
		db := upload[T](t, s, b)
		if err := solver.Getrs(h, op, da, ipiv, db); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		x := download(t, s, db)
		checkPadding(t, "Getrs", x)
		opA := a
		if op == solver.Trans {
			opA = a.t()
		}
		checkResidual[T](t, op.String()+": ‖op(A)·X − B‖", mul(opA, x), b, opA.norm()*x.norm()*n)
	}
}

// TestGetrfSingularNamesThePivot factors matrices with a zero column j:
// the pivot U(j+1, j+1), 1-based, is exactly zero, and the error says so.
func TestGetrfSingularNamesThePivot(t *testing.T) {
	forEachType(t, testGetrfSingular[float32], testGetrfSingular[float64])
}

func testGetrfSingular[T solver.Float](t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 7
	for _, zero := range []int{0, 3, n - 1} {
		a := random(rng, n, n, 0)
		for i := 0; i < n; i++ {
			a.set(i, zero, 0)
		}
		da := upload[T](t, s, a)
		ipiv := zeros[int32](t, s, n)
		err := solver.Getrf(h, da, ipiv)
		var ie *solver.InfoError
		if !errors.Is(err, solver.ErrSingular) || !errors.As(err, &ie) || ie.Index != zero+1 || ie.Info != zero+1 {
			t.Fatalf("column %d zero: Getrf = %v; want an *InfoError matching ErrSingular at pivot %d", zero, err, zero+1)
		}
		t.Log(err)
	}
}

// TestGetrfEmptyMatrixIsNoWork: a 0×n matrix needs no memory and gives no
// error, but a closed handle still does.
func TestGetrfEmptyMatrixIsNoWork(t *testing.T) {
	h, _ := newHandle(t)
	if err := solver.Getrf(h, solver.Matrix[float64]{Rows: 0, Cols: 4}, nil); err != nil {
		t.Fatal(err)
	}
	if err := solver.Getrs(h, solver.NoTrans, solver.Matrix[float64]{}, nil, solver.Matrix[float64]{}); err != nil {
		t.Fatal(err)
	}
	var closed *solver.Handle
	if err := solver.Getrf(closed, solver.Matrix[float64]{}, nil); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("empty Getrf on a nil handle = %v, want ErrClosed", err)
	}
}
