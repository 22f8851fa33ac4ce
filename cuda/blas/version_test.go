//go:build linux && (amd64 || arm64)

package blas_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cublas"
)

var library = libtest.Library{
	Name: "cuBLAS", Env: cublas.LibraryEnv, ErrNoLibrary: cublas.ErrNoLibrary, Load: cublas.Load,
	Version: blas.Version, LibraryPath: blas.LibraryPath, PerMajor: 10000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version and LibraryPath return the load error (in a child process).
func TestVersionWithoutLibrary(t *testing.T) { libtest.CheckWithoutLibrary(t, library) }

// TestVersionAndLibraryPath checks the installed library's file and that
// its version's major number is its soname's.
func TestVersionAndLibraryPath(t *testing.T) { libtest.CheckVersionAndPath(t, library) }
