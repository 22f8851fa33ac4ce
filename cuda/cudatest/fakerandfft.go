package cudatest

import (
	"os"

	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/fakecufft"
	"github.com/gocuda/gocuda/internal/fakecurand"
)

// setupFakeRandFFT points generated/curand and generated/cufft at the
// fake cuRAND and cuFFT (internal/fakecurand, internal/fakecufft), which
// run on the fake driver's host memory, unless the user chose a library
// with GOCUDA_LIBCURAND or GOCUDA_LIBCUFFT. Setup calls it once the fake
// driver is loaded, so code that uses package cuda/rand or cuda/fft runs
// against the fake as it does on a GPU. A fake that cannot be built leaves
// its variable unset: the library is then missing, as on a machine without
// it, and Setup's error is only the driver's.
func setupFakeRandFFT() {
	if os.Getenv(curand.LibraryEnv) == "" {
		_, _ = fakecurand.Setup()
	}
	if os.Getenv(cufft.LibraryEnv) == "" {
		_, _ = fakecufft.Setup()
	}
}
