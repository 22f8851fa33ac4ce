//go:build linux && (amd64 || arm64)

package blas_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestMain runs against the real driver and cuBLAS where there is a
// driver, else against the fake driver with the fake cuBLAS and cuBLASLt
// (internal/fakecublas) that cudatest.Setup gives it: every test runs
// there, the multiplies on the host, in stream order.
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
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
