//go:build linux && (amd64 || arm64)

package blas

import (
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuBLAS library loaded, as
// CUBLAS_VERSION spells it: 10000*major + 100*minor + patch, 120805 for
// cuBLAS 12.8.5 (cuBLAS numbers its releases apart from CUDA's, close to
// them). It needs no GPU: it asks cublasGetProperty, which takes no
// handle. A missing library returns an error matching
// cublas.ErrNoLibrary.
func Version() (int, error) {
	var v [3]int32
	for i, p := range []libtypes.LibraryPropertyType{libtypes.MAJOR_VERSION, libtypes.MINOR_VERSION, libtypes.PATCH_LEVEL} {
		if err := cublas.GetProperty(p, &v[i]); err != nil {
			return 0, err
		}
	}
	return int(v[0])*10000 + int(v[1])*100 + int(v[2]), nil
}

// LibraryPath returns the file of the cuBLAS library this package calls,
// loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libcublas.so.12 for CUDA 12), or
// the path in GOCUDA_LIBCUBLAS. A missing library returns an error
// matching cublas.ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := cublas.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(cublas.LibraryPath())
}
