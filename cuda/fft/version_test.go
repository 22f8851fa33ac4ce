//go:build linux && (amd64 || arm64)

package fft_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/fft"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cufft"
)

var library = libtest.Library{
	Name: "cuFFT", Env: cufft.LibraryEnv, ErrNoLibrary: cufft.ErrNoLibrary, Load: cufft.Load,
	Version: fft.Version, LibraryPath: fft.LibraryPath, PerMajor: 1000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version and LibraryPath return the load error (in a child process).
func TestVersionWithoutLibrary(t *testing.T) { libtest.CheckWithoutLibrary(t, library) }

// TestVersionAndLibraryPath checks the installed library's file and that
// its version's major number is its soname's.
func TestVersionAndLibraryPath(t *testing.T) { libtest.CheckVersionAndPath(t, library) }
