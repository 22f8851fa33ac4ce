//go:build linux && (amd64 || arm64)

// # cuBLAS and cuBLASLt
//
// Setup also points GOCUDA_LIBCUBLAS and GOCUDA_LIBCUBLASLT, each unless
// it is set, at a fake cuBLAS and cuBLASLt (internal/fakecublas): code
// using package cuda/blas then runs its GEMMs, cuBLASLt multiplies
// (epilogues, FP8, Tune) and the level-1 and level-2 calls the fake
// models on the host, in stream order, seen by the race detector, within
// floating-point rounding of the real library's results.
package cudatest

import (
	"fmt"
	"os"

	"github.com/gocuda/gocuda/internal/fakecublas"
)

// setupFakeBLAS gives a process on the fake driver the fake cuBLAS and
// cuBLASLt of internal/fakecublas, so that code using package cuda/blas
// runs its multiplies there too, in stream order and seen by the race
// detector: Setup points GOCUDA_LIBCUBLAS and GOCUDA_LIBCUBLASLT at it,
// each unless the environment already names a library (a user's choice,
// or a parent's that a child process inherits, stays). A fake that cannot
// be built is reported on standard error and leaves the variables unset:
// cuBLAS calls then fail as with no library, and the rest of the fake
// driver works.
func setupFakeBLAS() {
	if _, err := fakecublas.SetupUnlessSet(); err != nil {
		fmt.Fprintf(os.Stderr, "cudatest: no fake cuBLAS: %v\n", err)
	}
}
