package cudatest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/fakecufft"
	"github.com/gocuda/gocuda/internal/fakecurand"
)

// TestSetupPointsRandAndFFTAtTheFakes: after Setup (TestMain's), the
// cuRAND and cuFFT variables name the fakes; a child whose variables name
// a library keeps them.
func TestSetupPointsRandAndFFTAtTheFakes(t *testing.T) {
	const child = "GOCUDATEST_RANDFFT_CHILD"
	if os.Getenv(child) != "" {
		if got := os.Getenv(curand.LibraryEnv); got != "/chosen/libcurand.so" {
			t.Fatalf("%s = %q after Setup, want the user's choice", curand.LibraryEnv, got)
		}
		if got := os.Getenv(cufft.LibraryEnv); got != "/chosen/libcufft.so" {
			t.Fatalf("%s = %q after Setup, want the user's choice", cufft.LibraryEnv, got)
		}
		return
	}
	if !fakecurand.Is(os.Getenv(curand.LibraryEnv)) || !fakecurand.Active() {
		t.Errorf("%s = %q, not the fake cuRAND", curand.LibraryEnv, os.Getenv(curand.LibraryEnv))
	}
	if !fakecufft.Is(os.Getenv(cufft.LibraryEnv)) || !fakecufft.Active() {
		t.Errorf("%s = %q, not the fake cuFFT", cufft.LibraryEnv, os.Getenv(cufft.LibraryEnv))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetupPointsRandAndFFTAtTheFakes$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", "GOCUDA_LIBCUDA=", curand.LibraryEnv+"=/chosen/libcurand.so", cufft.LibraryEnv+"=/chosen/libcufft.so")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSetupPointsRandAndFFTAtTheFakes") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
