//go:build linux && (amd64 || arm64)

package nccl

import (
	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// LibraryPath returns the file of the NCCL library this package calls,
// loading it if need be: the file the dynamic linker found for
// libnccl.so.2, or the path in GOCUDA_LIBNCCL. A missing library returns
// an error matching generated/nccl's ErrNoLibrary that names every path
// tried. Version says which release the file is.
func LibraryPath() (string, error) {
	if err := nccl.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(nccl.LibraryPath())
}
