//go:build linux && (amd64 || arm64)

package blas_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestMain runs against the real driver and cuBLAS where there is a
// driver, else against the fake driver with the fake cuBLAS and cuBLASLt
// (internal/fakecublas) that cudatest.Setup gives it: every test runs
// there, the multiplies on the host, in stream order.
//
// The child process of TestFakeMatchesRealLibrary uses the fakes even
// where there is a GPU.
func TestMain(m *testing.M) {
	if os.Getenv(fakeChildEnv) != "" {
		if _, err := cudatest.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	} else {
		cudatest.SetupIfNoDriver()
	}
	code := m.Run()
	// With FAKECUDA_RACE=1 the fake driver checks the fake cuBLAS's work
	// for races too: any found fail the run.
	if n := cudatest.ReportRaces(os.Stderr); n > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d CUDA data race(s)\n", n)
		code = 1
	}
	os.Exit(code)
}

// decodeShape is K and N of the tuning tests' decode shapes: 4096 on a
// GPU; on the fake cuBLAS, which multiplies on the host, 256 and 64, so
// that the thousands of timed runs of a Tune take seconds, not an hour.
func decodeShape() (k, n int) {
	if fakecublas.Active() {
		return 256, 64
	}
	return 4096, 4096
}
