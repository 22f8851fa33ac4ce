//go:build linux && (amd64 || arm64)

package rand_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver and the fake cuRAND beside it (cudatest.Setup points
// GOCUDA_LIBCURAND at it unless it names a library). The child process of
// TestFakeMatchesCuRAND takes the fakes whatever the machine has.
func TestMain(m *testing.M) {
	if os.Getenv(fakeChildEnv) != "" {
		if _, err := cudatest.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	} else {
		cudatest.SetupIfNoDriver()
	}
	os.Exit(m.Run())
}
