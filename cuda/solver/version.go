//go:build linux && (amd64 || arm64)

package solver

import (
	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuSOLVER library loaded, as
// CUSOLVER_VERSION spells it: 1000*major + 100*minor + patch, 11601 for
// cuSOLVER 11.6.1 (cuSOLVER numbers its releases apart from CUDA: 11.6.1
// came with CUDA 12.4). It needs no GPU (cusolverGetVersion). A missing
// library returns an error matching cusolver.ErrNoLibrary.
func Version() (int, error) {
	var v int32
	if err := cusolver.GetVersion(&v); err != nil {
		return 0, err
	}
	return int(v), nil
}

// LibraryPath returns the file of the cuSOLVER library this package
// calls, loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libcusolver.so.11 for CUDA 11 and
// 12, .12 for 13), or the path in GOCUDA_LIBCUSOLVER. A missing library
// returns an error matching cusolver.ErrNoLibrary that names every path
// tried.
func LibraryPath() (string, error) {
	if err := cusolver.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(cusolver.LibraryPath())
}
