//go:build linux && (amd64 || arm64)

package cudatest

import (
	"fmt"
	"os"

	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/internal/fakecusolver"
)

// setupFakeSolver points generated/cusolver at the fake cuSOLVER of
// internal/fakecusolver unless GOCUDA_LIBCUSOLVER names a library (a
// user's choice, or a parent's that a child process inherits, stays), so
// that code using package cuda/solver factorizes on the fake driver's
// host memory, in stream order, seen by the race detector. A fake that
// cannot be built is reported on standard error and leaves the variable
// unset: cuSOLVER calls then fail as with no library.
func setupFakeSolver() {
	if os.Getenv(cusolver.LibraryEnv) != "" {
		return
	}
	if _, err := fakecusolver.Setup(); err != nil {
		fmt.Fprintf(os.Stderr, "cudatest: no fake cuSOLVER: %v\n", err)
	}
}
