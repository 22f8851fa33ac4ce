//go:build linux && (amd64 || arm64)

package cudatest

import (
	"fmt"
	"os"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// setupFakeSparse points generated/cusparse at the fake cuSPARSE of
// internal/fakecusparse, which runs on the fake driver's host memory,
// unless the user chose a library with GOCUDA_LIBCUSPARSE. Setup calls it
// once the fake driver is loaded, so code that uses package cuda/sparse
// runs its products and solves there, in stream order, seen by the race
// detector. A fake that cannot be built is reported on standard error and
// leaves the variable unset: cuSPARSE is then missing, as on a machine
// without it.
func setupFakeSparse() {
	if os.Getenv(cusparse.LibraryEnv) != "" {
		return
	}
	if _, err := fakecusparse.Setup(); err != nil {
		fmt.Fprintf(os.Stderr, "cudatest: no fake cuSPARSE: %v\n", err)
	}
}
