//go:build linux && (amd64 || arm64)

package nvrtc

import (
	raw "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// LibraryPath returns the file of the NVRTC library this package calls,
// loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libnvrtc.so.12 for CUDA 12), or
// the path in GOCUDA_LIBNVRTC. A missing library returns an error
// matching ErrNoLibrary that names every path tried. NVRTC's builtins
// library is looked for beside this file (see the package comment).
func LibraryPath() (string, error) {
	if err := raw.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(raw.LibraryPath())
}
