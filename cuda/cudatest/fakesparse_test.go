package cudatest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// TestSetupPointsSparseAtTheFake: after Setup (TestMain's), the cuSPARSE
// variable names the fake, which is the library loaded; a child whose
// variable names a library keeps it.
func TestSetupPointsSparseAtTheFake(t *testing.T) {
	const child = "GOCUDATEST_SPARSE_CHILD"
	if os.Getenv(child) != "" {
		if got := os.Getenv(cusparse.LibraryEnv); got != "/chosen/libcusparse.so" {
			t.Fatalf("%s = %q after Setup, want the user's choice", cusparse.LibraryEnv, got)
		}
		return
	}
	if !fakecusparse.Is(os.Getenv(cusparse.LibraryEnv)) || !fakecusparse.Active() {
		t.Errorf("%s = %q, not the fake cuSPARSE", cusparse.LibraryEnv, os.Getenv(cusparse.LibraryEnv))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetupPointsSparseAtTheFake$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", "GOCUDA_LIBCUDA=", cusparse.LibraryEnv+"=/chosen/libcusparse.so")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSetupPointsSparseAtTheFake") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
