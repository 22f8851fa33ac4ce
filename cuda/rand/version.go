//go:build linux && (amd64 || arm64)

package rand

import (
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuRAND library loaded, as
// CURAND_VERSION spells it: 1000*major + 100*minor + patch, 10305 for
// cuRAND 10.3.5 (cuRAND numbers its releases apart from CUDA: 10.3.5 came
// with CUDA 12.4). It needs no GPU (curandGetVersion). A missing library
// returns an error matching curand.ErrNoLibrary.
func Version() (int, error) {
	var v int32
	if err := curand.GetVersion(&v); err != nil {
		return 0, err
	}
	return int(v), nil
}

// LibraryPath returns the file of the cuRAND library this package calls,
// loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libcurand.so.10 for CUDA 11 and
// 12), or the path in GOCUDA_LIBCURAND. A missing library returns an
// error matching curand.ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := curand.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(curand.LibraryPath())
}
