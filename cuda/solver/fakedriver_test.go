//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cu"
)

// TestWorkspaceIsTheHandlesAndAFailedAllocationChangesNothing, on the
// fake driver: a handle keeps one device allocation for its workspace,
// made by its first call, reused by calls that fit in it, grown (not
// added to) by one that does not, and freed by its Close; and a call whose
// workspace cannot be allocated fails with a *solver.Error naming
// cuMemAllocAsync and matching the driver's result, with the matrix as it
// was; the next call works.
func TestWorkspaceIsTheHandlesAndAFailedAllocationChangesNothing(t *testing.T) {
	if !cudatest.Active() {
		t.Skip("counts allocations and injects a failure: needs the fake driver")
	}
	h, s := newHandle(t)
	rng := rand.New(rand.NewPCG(36, 37))
	a := spd(rng, 6, 0)
	da := upload[float64](t, s, a)
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	before := cudatest.Live().DeviceAllocs
	cudatest.FailCall("cuMemAllocAsync", 1, cu.CUDA_ERROR_OUT_OF_MEMORY)
	err := solver.Potrf(h, solver.Lower, da)
	var le *solver.Error
	if !errors.As(err, &le) || le.Func != "cuMemAllocAsync" || !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) {
		t.Fatalf("Potrf with no memory for its workspace = %v, want a *solver.Error of cuMemAllocAsync matching CUDA_ERROR_OUT_OF_MEMORY", err)
	}
	if got := download(t, s, da); !slices.Equal(got.v, a.v) {
		t.Fatal("the failed Potrf changed the matrix")
	}
	live := func(when string, want int) {
		t.Helper()
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got := cudatest.Live().DeviceAllocs - before; got != want {
			t.Fatalf("%s: %d device allocations more than before, want %d (the matrices made since and one workspace)", when, got, want)
		}
	}
	for i := range 2 {
		if err := solver.Potrf(h, solver.Lower, upload[float64](t, s, a)); err != nil {
			t.Fatal(err)
		}
		live(fmt.Sprintf("after Potrf %d", i+1), 1+(i+1))
	}
	big := upload[float64](t, s, spd(rng, 40, 0))
	if err := solver.Potrf(h, solver.Lower, big); err != nil {
		t.Fatal(err)
	}
	live("after a larger Potrf", 4)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	live("after Close", 3)
}
