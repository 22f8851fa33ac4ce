package cuda

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

const oldDriverChildEnv = "GOCUDA_TEST_OLD_DRIVER_CHILD"

// oldDriverVersion is CUDA 11.7, the last version without cuLaunchKernelEx.
const oldDriverVersion = 11070

// TestLaunchExOnOldDriver runs TestLaunchExOnOldDriverChild against the
// fake driver as a CUDA 11.7 driver, which has no cuLaunchKernelEx: built
// without the newer entry points, reporting 11.7. It takes a process of
// its own: the driver is loaded once per process.
func TestLaunchExOnOldDriver(t *testing.T) {
	if os.Getenv(oldDriverChildEnv) != "" {
		t.Skip("in the child")
	}
	if !cudatest.Active() {
		t.Skip("needs the fake driver (GOCUDA_TEST_DRIVER=fake), which can be an older driver than it is")
	}
	lib, err := fakecuda.BuildForDriver("", oldDriverVersion)
	must(t, err)
	out := runChildTest(t, "TestLaunchExOnOldDriverChild", oldDriverChildEnv+"=1", cu.LibraryEnv+"="+lib,
		"FAKECUDA_DRIVER_VERSION="+strconv.Itoa(oldDriverVersion), fakecuda.QuickRaceExit())
	t.Logf("child:\n%s", out)
}

// TestLaunchExOnOldDriverChild: LaunchEx and LaunchArgsEx, with
// attributes or none, return an error matching ErrMissingFunction that
// names cuLaunchKernelEx, and nothing reaches the driver, while Launch
// still launches.
func TestLaunchExOnOldDriverChild(t *testing.T) {
	if os.Getenv(oldDriverChildEnv) == "" {
		t.Skip("runs only as TestLaunchExOnOldDriver's child process")
	}
	_, ctx := needGPU(t)
	if v := cu.DriverVersionLoaded(); v != oldDriverVersion {
		t.Fatalf("the driver reports CUDA %d, want %d", v, oldDriverVersion)
	}
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 32, Params: []int{8, 4}})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	args, err := k.NewArgs(cu.CUdeviceptr(0), int32(7))
	must(t, err)
	defer args.Close()
	cfg := LaunchConfig{Grid: Dim3{X: 4}, Block: Dim3{X: 64}}
	before := launches(lib)
	missing := func(what string, err error) {
		t.Helper()
		var e *Error
		var mf *cu.MissingFunctionError
		switch {
		case !errors.Is(err, ErrMissingFunction) || !errors.Is(err, cu.ErrMissingFunction):
			t.Errorf("%s on a CUDA 11.7 driver = %v, want an error matching ErrMissingFunction", what, err)
		case !errors.As(err, &e) || e.Func != "cuLaunchKernelEx" || !strings.Contains(err.Error(), "cuLaunchKernelEx"):
			t.Errorf("%s = %v, want a *cuda.Error naming cuLaunchKernelEx", what, err)
		case !errors.As(err, &mf) || mf.Function != "cuLaunchKernelEx" || mf.DriverVersion != oldDriverVersion:
			t.Errorf("%s = %v, want a *cu.MissingFunctionError for cuLaunchKernelEx and the driver's version", what, err)
		case !strings.Contains(err.Error(), "needs a driver for CUDA 11.8 or later"):
			t.Errorf("%s = %v, want it to say which driver it needs", what, err)
		}
	}
	err = k.LaunchEx(s, cfg, LaunchAttributes{}, cu.CUdeviceptr(0), int32(7))
	missing("LaunchEx", err)
	t.Logf("LaunchEx: %v", err)
	missing("LaunchEx with a priority", k.LaunchEx(s, cfg, LaunchAttributes{HasPriority: true}, cu.CUdeviceptr(0), int32(7)))
	missing("LaunchEx of a cooperative grid", k.LaunchEx(s, cfg, LaunchAttributes{Cooperative: true}, cu.CUdeviceptr(0), int32(7)))
	missing("LaunchArgsEx", k.LaunchArgsEx(s, cfg, LaunchAttributes{}, args))
	if n := launches(lib); n != before {
		t.Errorf("%d launches reached the driver", n-before)
	}
	must(t, k.Launch(s, cfg, cu.CUdeviceptr(0), int32(7))) // cuLaunchKernel is there
	must(t, s.Synchronize())
	if n := launches(lib); n != before+1 {
		t.Errorf("%d launches after Launch, want 1", n-before)
	}
}
