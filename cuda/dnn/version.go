//go:build linux && (amd64 || arm64)

package dnn

import (
	"github.com/gocuda/gocuda/generated/cudnn"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuDNN library loaded, as
// CUDNN_VERSION spells it: 10000·major + 100·minor + patch, 91400 for
// cuDNN 9.14.0. It needs no GPU (cudnnGetVersion). A missing library
// returns an error matching cudnn.ErrNoLibrary.
func Version() (int, error) {
	v, err := cudnn.GetVersion()
	if err != nil {
		return 0, err
	}
	return int(v), nil
}

// LibraryPath returns the file of the cuDNN library this package calls,
// loading it if need be: the file the dynamic linker found for
// libcudnn.so.9, or the path in GOCUDA_LIBCUDNN. A missing library
// returns an error matching cudnn.ErrNoLibrary that names every path
// tried.
func LibraryPath() (string, error) {
	if err := cudnn.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(cudnn.LibraryPath())
}
