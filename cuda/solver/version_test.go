//go:build linux && (amd64 || arm64)

package solver_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cusolver"
)

var library = libtest.Library{
	Name: "cuSOLVER", Env: cusolver.LibraryEnv, ErrNoLibrary: cusolver.ErrNoLibrary, Load: cusolver.Load,
	Version: solver.Version, LibraryPath: solver.LibraryPath, PerMajor: 1000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version and LibraryPath return the load error (in a child process).
func TestVersionWithoutLibrary(t *testing.T) { libtest.CheckWithoutLibrary(t, library) }

// TestVersionAndLibraryPath checks the installed library's file and that
// its version's major number is its soname's.
func TestVersionAndLibraryPath(t *testing.T) { libtest.CheckVersionAndPath(t, library) }
