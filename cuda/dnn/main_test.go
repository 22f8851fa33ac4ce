//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver. There is no fake cuDNN: on the fake driver only the
// tests that need no library run (the checks made before cuDNN is
// called); the others skip, saying so.
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	os.Exit(m.Run())
}
