//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// TestClosedAndNilHandles: every function on a nil handle and on a closed
// clone fails with an error matching ErrClosed, with valid arguments;
// the open original still works, and outlives the stream it was made on.
func TestClosedAndNilHandles(t *testing.T) {
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const n = 3
	a := upload[float32](t, s, spd(rng, n, 0))
	b := upload[float32](t, s, random(rng, n, 1, 0))
	vec := zeros[float32](t, s, n)
	ipiv := zeros[int32](t, s, n)
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var null *solver.Handle
	for _, x := range []struct {
		name string
		h    *solver.Handle
	}{{"nil", null}, {"closed", c}} {
		calls := map[string]func() error{
			"Getrf": func() error { return solver.Getrf(x.h, a, ipiv) },
			"Getrs": func() error { return solver.Getrs(x.h, solver.NoTrans, a, ipiv, b) },
			"Potrf": func() error { return solver.Potrf(x.h, solver.Lower, a) },
			"Potrs": func() error { return solver.Potrs(x.h, solver.Lower, a, b) },
			"Geqrf": func() error { return solver.Geqrf(x.h, a, vec) },
			"Ormqr": func() error { return solver.Ormqr(x.h, solver.Left, solver.Trans, a, vec, b) },
			"Syevd": func() error { return solver.Syevd(x.h, true, solver.Lower, a, vec) },
			"Gesvd": func() error { return solver.Gesvd(x.h, a, vec, solver.Matrix[float32]{}, solver.Matrix[float32]{}) },
			"Gesvdj": func() error {
				return solver.Gesvdj(x.h, a, vec, solver.Matrix[float32]{}, solver.Matrix[float32]{})
			},
			"PotrfBatched": func() error { return solver.PotrfBatched(x.h, solver.Lower, a, solver.Batch{Count: 1}) },
			"PotrsBatched": func() error {
				return solver.PotrsBatched(x.h, solver.Lower, a, solver.Batch{Count: 1}, b, solver.Batch{Count: 1})
			},
			"SetStream": func() error { return x.h.SetStream(s) },
			"Clone": func() error {
				_, err := x.h.Clone()
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("%s on a %s handle = %v, want ErrClosed", name, x.name, err)
			}
		}
		if x.h.Stream() != nil {
			t.Errorf("Stream of a %s handle is not nil", x.name)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := solver.Potrf(h, solver.Lower, a); err != nil {
		t.Fatalf("Potrf after the user's stream was closed: %v", err)
	}
}

// TestSolvesFromManyGoroutines solves a different system in each of 8
// goroutines, 4 times each, on one handle and its clones, and checks
// every solution's residual: calls take turns and keep their own
// workspaces. Run with -race (and FAKECUDA_RACE=1 on the fake).
func TestSolvesFromManyGoroutines(t *testing.T) {
	h, s := newHandle(t)
	const workers, rounds, n = 8, 4, 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := h
			if w%2 == 1 {
				c, err := h.Clone()
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				mine = c
			}
			rng := rand.New(rand.NewPCG(uint64(w), 23))
			for range rounds {
				if err := solveAndCheck(t, mine, s, rng, n); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// solveAndCheck solves a random SPD system by Cholesky and a random one
// by LU on h and checks both residuals.
func solveAndCheck(t *testing.T, h *solver.Handle, s *cuda.Stream, rng *rand.Rand, n int) error {
	a := spd(rng, n, 0)
	b := random(rng, n, 2, 0)
	da, db := upload[float64](t, s, a), upload[float64](t, s, b)
	if err := solver.Potrf(h, solver.Upper, da); err != nil {
		return err
	}
	if err := solver.Potrs(h, solver.Upper, da, db); err != nil {
		return err
	}
	if r := diff(t, mul(a, download(t, s, db)), b); r > 1e-10 {
		return errors.New("a Cholesky solve's residual is too large")
	}
	g := random(rng, n, n, 0)
	dg, dc := upload[float64](t, s, g), upload[float64](t, s, b)
	ipiv := zeros[int32](t, s, n)
	if err := solver.Getrf(h, dg, ipiv); err != nil {
		return err
	}
	if err := solver.Getrs(h, solver.NoTrans, dg, ipiv, dc); err != nil {
		return err
	}
	x := download(t, s, dc)
	if r := diff(t, mul(g, x), b); r > 1e-10*g.norm()*x.norm()*float64(n) {
		return errors.New("an LU solve's residual is too large")
	}
	return nil
}

// TestHandleMovesToAnotherStream moves a handle to a second stream and
// solves there.
func TestHandleMovesToAnotherStream(t *testing.T) {
	h, s := newHandle(t)
	s2, err := cuda.NewStream(s.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := h.SetStream(s2); err != nil {
		t.Fatal(err)
	}
	if !h.Stream().IsSameQueue(s2) {
		t.Fatal("the handle's stream is not the one it moved to")
	}
	if err := solveAndCheck(t, h, s2, rand.New(rand.NewPCG(24, 25)), 8); err != nil {
		t.Fatal(err)
	}
}

// TestNewWithoutCuSOLVER runs in a child process with GOCUDA_LIBCUSOLVER
// pointing nowhere: New fails with an error matching
// cusolver.ErrNoLibrary and leaves no object behind.
func TestNewWithoutCuSOLVER(t *testing.T) {
	const nowhere = "/nonexistent/libcusolver.so"
	if os.Getenv("GOCUDA_SOLVER_CHILD") != "" {
		ctx := libtest.Context(t)
		s, err := cuda.NewStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := cuda.LiveObjects()
		_, err = solver.New(s)
		if !errors.Is(err, cusolver.ErrNoLibrary) || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("New = %v, want cusolver.ErrNoLibrary naming the path", err)
		}
		if after := cuda.LiveObjects(); after != before {
			t.Fatalf("live objects %+v after, %+v before", after, before)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewWithoutCuSOLVER$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_SOLVER_CHILD=1", cusolver.LibraryEnv+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("child skipped:\n%s", out)
	}
	if !strings.Contains(string(out), "--- PASS: TestNewWithoutCuSOLVER") {
		t.Fatalf("child did not pass:\n%s", out)
	}
}
