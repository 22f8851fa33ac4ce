//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver. There is no fake nvJPEG: on the fake driver the tests
// that decode skip (libtest.GPU), and those of what is checked before
// nvJPEG run everywhere.
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
