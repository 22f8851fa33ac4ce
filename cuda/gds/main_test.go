//go:build linux && (amd64 || arm64)

package gds_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver and cuFile where there is a GPU,
// else against the fake driver and the fake cuFile beside it
// (cudatest.Setup points GOCUDA_LIBCUFILE at it unless it names a
// library).
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
