//go:build linux && (amd64 || arm64)

package solver_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver and cuSOLVER where there is a
// driver, else against the fake driver with the fake cuSOLVER
// (internal/fakecusolver) that cudatest.Setup gives it: every test runs
// there, the factorizations on the host, in stream order. The child
// process of TestFakeMatchesCuSOLVER takes the fakes whatever the machine
// has.
func TestMain(m *testing.M) {
	if os.Getenv(fakeChildEnv) != "" {
		if _, err := cudatest.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	} else {
		cudatest.SetupIfNoDriver()
	}
	code := m.Run()
	// With FAKECUDA_RACE=1 the fake driver checks the fake cuSOLVER's
	// work for races too: any found fail the run.
	if n := cudatest.ReportRaces(os.Stderr); n > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d CUDA data race(s)\n", n)
		code = 1
	}
	os.Exit(code)
}
