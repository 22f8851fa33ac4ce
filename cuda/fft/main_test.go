//go:build linux && (amd64 || arm64)

package fft_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver and the fake cuFFT beside it (cudatest.Setup points
// GOCUDA_LIBCUFFT at it unless it names a library).
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
