//go:build linux && (amd64 || arm64)

package rand_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/rand"
	"github.com/gocuda/gocuda/generated/curand"
)

var library = libtest.Library{
	Name: "cuRAND", Env: curand.LibraryEnv, ErrNoLibrary: curand.ErrNoLibrary, Load: curand.Load,
	Version: rand.Version, LibraryPath: rand.LibraryPath, PerMajor: 1000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version and LibraryPath return the load error (in a child process).
func TestVersionWithoutLibrary(t *testing.T) { libtest.CheckWithoutLibrary(t, library) }

// TestVersionAndLibraryPath checks the installed library's file and that
// its version's major number is its soname's.
func TestVersionAndLibraryPath(t *testing.T) { libtest.CheckVersionAndPath(t, library) }
