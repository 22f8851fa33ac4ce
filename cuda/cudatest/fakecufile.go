//go:build linux && (amd64 || arm64)

package cudatest

import (
	"fmt"
	"os"

	"github.com/gocuda/gocuda/generated/cufile"
	"github.com/gocuda/gocuda/internal/fakecufile"
)

// setupFakeCuFile points generated/cufile at the fake cuFile of
// internal/fakecufile unless GOCUDA_LIBCUFILE names a library, so that
// code using package cuda/gds reads and writes files on the fake
// driver's memory. A fake that cannot be built is reported on standard
// error and leaves the variable unset: cuFile calls then fail as with no
// library.
func setupFakeCuFile() {
	if os.Getenv(cufile.LibraryEnv) != "" {
		return
	}
	if _, err := fakecufile.Setup(); err != nil {
		fmt.Fprintf(os.Stderr, "cudatest: no fake cuFile: %v\n", err)
	}
}
