//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cu"
)

// TestWorkspaceIsFreedAndAFailedAllocationChangesNothing, on the fake
// driver: a factorization leaves no device allocation behind once its
// stream is idle, and one whose workspace cannot be allocated fails with
// a *solver.Error naming cuMemAllocAsync and matching the driver's
// result, with the matrix as it was; the next call works.
func TestWorkspaceIsFreedAndAFailedAllocationChangesNothing(t *testing.T) {
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
	if err := solver.Potrf(h, solver.Lower, da); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if after := cudatest.Live().DeviceAllocs; after != before {
		t.Fatalf("%d device allocations before the calls, %d after", before, after)
	}
}
