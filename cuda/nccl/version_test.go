//go:build linux && (amd64 || arm64)

package nccl_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/nccl"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
)

var library = libtest.Library{
	Name: "NCCL", Env: rawnccl.LibraryEnv, ErrNoLibrary: rawnccl.ErrNoLibrary, Load: rawnccl.Load,
	Version: nccl.Version, LibraryPath: nccl.LibraryPath, PerMajor: 10000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version and LibraryPath return the load error (in a child process).
func TestVersionWithoutLibrary(t *testing.T) { libtest.CheckWithoutLibrary(t, library) }

// TestVersionAndLibraryPath checks the installed library's file and that
// its version's major number is its soname's.
func TestVersionAndLibraryPath(t *testing.T) { libtest.CheckVersionAndPath(t, library) }
