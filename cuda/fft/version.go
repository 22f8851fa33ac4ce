//go:build linux && (amd64 || arm64)

package fft

import (
	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuFFT library loaded, as
// CUFFT_VERSION spells it: 1000*major + 100*minor + patch, 11203 for
// cuFFT 11.2.3 (cuFFT numbers its releases apart from CUDA: 11.2.3 came
// with CUDA 12.5). It needs no GPU (cufftGetVersion). A missing library
// returns an error matching cufft.ErrNoLibrary.
func Version() (int, error) {
	var v int32
	if err := cufft.GetVersion(&v); err != nil {
		return 0, err
	}
	return int(v), nil
}

// LibraryPath returns the file of the cuFFT library this package calls,
// loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libcufft.so.11 for CUDA 12), or
// the path in GOCUDA_LIBCUFFT. A missing library returns an error
// matching cufft.ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := cufft.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(cufft.LibraryPath())
}
