//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver and cuSPARSE where there is a
// driver, else against the fake driver and the fake cuSPARSE beside it
// (cudatest.Setup points GOCUDA_LIBCUSPARSE at it unless it names a
// library).
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
