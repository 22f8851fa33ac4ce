//go:build linux && (amd64 || arm64)

package cudatest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/internal/fakecusolver"
)

// TestSetupPointsSolverAtTheFake: after Setup (TestMain's), the cuSOLVER
// variable names the fake; a child whose variable names a library keeps
// it.
func TestSetupPointsSolverAtTheFake(t *testing.T) {
	const child = "GOCUDATEST_SOLVER_CHILD"
	if os.Getenv(child) != "" {
		if got := os.Getenv(cusolver.LibraryEnv); got != "/chosen/libcusolver.so" {
			t.Fatalf("%s = %q after Setup, want the user's choice", cusolver.LibraryEnv, got)
		}
		return
	}
	if !fakecusolver.Is(os.Getenv(cusolver.LibraryEnv)) || !fakecusolver.Active() {
		t.Errorf("%s = %q, not the fake cuSOLVER", cusolver.LibraryEnv, os.Getenv(cusolver.LibraryEnv))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetupPointsSolverAtTheFake$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", "GOCUDA_LIBCUDA=", cusolver.LibraryEnv+"=/chosen/libcusolver.so")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSetupPointsSolverAtTheFake") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
