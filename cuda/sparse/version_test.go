//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cusparse"
)

var library = libtest.Library{
	Name: "cuSPARSE", Env: cusparse.LibraryEnv, ErrNoLibrary: cusparse.ErrNoLibrary, Load: cusparse.Load,
	Version: sparse.Version, LibraryPath: sparse.LibraryPath, PerMajor: 1000,
}

// TestVersionWithoutLibrary: with the library's path naming nothing,
// Version, LibraryPath and New return the load error (in a child
// process).
func TestVersionWithoutLibrary(t *testing.T) {
	if !libtest.CheckWithoutLibrary(t, library) {
		return
	}
	_, s := libtest.Stream(t)
	if h, err := sparse.New(s); !errors.Is(err, cusparse.ErrNoLibrary) || h != nil {
		t.Fatalf("New = %v, %v; want nil and an error matching ErrNoLibrary", h, err)
	}
}

// TestVersionAndLibraryPath checks the installed library's file, that its
// version's major number is its soname's, and that a handle reports the
// same version.
func TestVersionAndLibraryPath(t *testing.T) {
	libtest.CheckVersionAndPath(t, library)
	v, err := sparse.Version()
	if err != nil {
		t.Fatal(err)
	}
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	if hv, err := h.Version(); err != nil || hv != v {
		t.Errorf("Handle.Version() = %d, %v; Version() = %d", hv, err, v)
	}
}
