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
// against the fake as it does on a GPU. Their work is made of the fake
// driver's own operations (copies between the user's memory and host
// buffers, and host functions): the race detector sees what a generation
// or a transform reads and writes as a copy, queued by cuMemcpyHtoDAsync
// or cuMemcpyDtoHAsync from the library call's Go stack, and the
// driver's call counts include those calls. A fake that cannot be built
// leaves its variable unset: the library is then missing, as on a machine
// without it, and Setup's error is only the driver's.
func setupFakeRandFFT() {
	if os.Getenv(curand.LibraryEnv) == "" {
		_, _ = fakecurand.Setup()
	}
	if os.Getenv(cufft.LibraryEnv) == "" {
		_, _ = fakecufft.Setup()
	}
}
