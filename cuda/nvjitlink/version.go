//go:build linux && (amd64 || arm64)

package nvjitlink

import (
	raw "github.com/gocuda/gocuda/generated/nvjitlink"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// LibraryPath returns the file of the nvJitLink library this package
// calls, loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libnvJitLink.so.12 for CUDA 12),
// or the path in GOCUDA_LIBNVJITLINK. A missing library returns an error
// matching ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := raw.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(raw.LibraryPath())
}
