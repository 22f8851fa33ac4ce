//go:build linux && (amd64 || arm64)

package sparse

import (
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// Version returns the version of the cuSPARSE library loaded, as
// CUSPARSE_VERSION spells it: 1000*major + 100*minor + patch, 12603 for
// cuSPARSE 12.6.3 (cuSPARSE numbers its releases apart from CUDA: 12.6.3
// came with CUDA 13.0). It needs no GPU (cusparseGetProperty). A missing
// library returns an error matching cusparse.ErrNoLibrary.
func Version() (int, error) {
	var parts [3]int32
	for i, p := range []libtypes.LibraryPropertyType{libtypes.MAJOR_VERSION, libtypes.MINOR_VERSION, libtypes.PATCH_LEVEL} {
		if err := cusparse.GetProperty(p, &parts[i]); err != nil {
			return 0, check("Version", "cusparseGetProperty", err)
		}
	}
	return int(parts[0])*1000 + int(parts[1])*100 + int(parts[2]), nil
}

// LibraryPath returns the file of the cuSPARSE library this package
// calls, loading it if need be: the file the dynamic linker found for the
// soname of the bindings' CUDA version (libcusparse.so.12 for CUDA 12 and
// 13), or the path in GOCUDA_LIBCUSPARSE. A missing library returns an
// error matching cusparse.ErrNoLibrary that names every path tried.
func LibraryPath() (string, error) {
	if err := cusparse.Load(); err != nil {
		return "", err
	}
	return dynlib.LoadedFile(cusparse.LibraryPath())
}
