//go:build linux && (amd64 || arm64)

package rand_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver, which allocates memory (the count checks run
// everywhere) but has no cuRAND: the tests that generate skip there.
func TestMain(m *testing.M) {
	if os.Getenv("GOCUDA_RAND_CHILD") == "" && fakecuda.CanOpen("libcuda.so.1") != nil {
		if _, err := cudatest.Setup(); err != nil {
			// No C compiler to build the fake: the tests that need a
			// driver skip.
			_ = err
		}
	}
	os.Exit(m.Run())
}
