//go:build linux && (amd64 || arm64)

package rand_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver and the fake cuRAND beside it (cudatest.Setup points
// GOCUDA_LIBCURAND at it unless it names a library).
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
