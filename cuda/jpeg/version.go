//go:build linux && (amd64 || arm64)

package jpeg

import (
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/generated/nvjpeg"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the nvJPEG library loaded, major, minor
// and patch (nvjpegGetProperty; nvJPEG numbers its releases apart from
// CUDA: 12.3 came with CUDA 12.4). It needs no GPU. A missing library
// returns an error matching nvjpeg.ErrNoLibrary.
func Version() (major, minor, patch int, err error) {
	var v [3]int32
	for i, p := range []libtypes.LibraryPropertyType{libtypes.MAJOR_VERSION, libtypes.MINOR_VERSION, libtypes.PATCH_LEVEL} {
		if err := nvjpeg.GetProperty(p, &v[i]); err != nil {
			return 0, 0, 0, err
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), nil
}

// LibraryPath returns the file of the nvJPEG library this package calls,
// loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libnvjpeg.so.12 for CUDA 12), or
// the path in GOCUDA_LIBNVJPEG. A missing library returns an error
// matching nvjpeg.ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := nvjpeg.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(nvjpeg.LibraryPath())
}
