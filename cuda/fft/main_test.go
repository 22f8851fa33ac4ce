//go:build linux && (amd64 || arm64)

package fft_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver, which allocates memory (the size checks run
// everywhere) but has no cuFFT: the tests that transform skip there.
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
