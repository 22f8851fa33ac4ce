//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"fmt"

	"github.com/gocuda/gocuda/internal/dynlib"
)

// LibraryEnv names the environment variable that overrides the library's
// path; the default is the soname of the version the bindings follow.
const LibraryEnv = "GOCUDA_LIBNVRTC"

// lib loads NVRTC on the first call; the generated files reach it through
// proc and missing.
var lib = dynlib.Library{Spec: dynlib.Spec{
	Package: "nvrtc", Name: "NVRTC", Env: LibraryEnv,
	Header: "nvrtc.h", HeaderVersion: headerVersion,
	Sonames: libraryNames, Funcs: funcs(),
	// NVRTC dlopens its builtins (libnvrtc-builtins.so.12.4) by soname:
	// a library opened from a directory off the search path finds them
	// loaded already.
	Preload: dynlib.PreloadSiblings("libnvrtc-builtins.so.*"),
}, Addrs: procAddrs[:]}

var (
	// ErrNoLibrary is matched (errors.Is) by every error that comes from
	// not finding or not loading the NVRTC library.
	ErrNoLibrary = lib.ErrNoLibrary()
	// ErrMissingFunction is matched (errors.Is) by a *MissingFunctionError
	// of NVRTC.
	ErrMissingFunction = lib.ErrMissingFunction()
)

type (
	// LoadError reports that no NVRTC library could be opened: the paths
	// tried and dlopen's message for each.
	LoadError = dynlib.LoadError
	// MissingFunctionError reports a function the installed NVRTC library
	// does not provide (it is older than the header), and the CUDA version
	// that introduced it.
	MissingFunctionError = dynlib.MissingFunctionError
)

// Load opens the library and resolves every entry point now rather than
// on the first call. It returns the error every call would return if the
// library cannot be loaded.
func Load() error { return lib.Load() }

// LibraryPath is the name or path the library was opened by, "" when none.
func LibraryPath() string { return lib.Path() }

// Proc returns the entry point of the C function name ("nvrtcVersion"),
// for C code of the caller's own; the error is the one a call of the
// binding would return.
func Proc(name string) (uintptr, error) { return lib.Proc(name) }

// HeaderVersion is the CUDA version of the nvrtc.h these bindings were
// generated from, e.g. 12040.
func HeaderVersion() int { return headerVersion }

// procInfo describes one bound function of the generated procTable.
type procInfo struct{ api, symbol, since string }

func funcs() []dynlib.Func {
	f := make([]dynlib.Func, len(procTable))
	for i, p := range procTable {
		f[i] = dynlib.Func{API: p.api, Symbol: p.symbol, Since: p.since}
	}
	return f
}

// proc returns the entry point of function i, loading the library on first
// use; 0 means the function is not available and missing(i) says why.
func proc(i int) uintptr {
	lib.Ensure()
	return procAddrs[i]
}

func missing(i int) error { return lib.Missing(i) }

// Error makes an NvrtcResult an error: its C name and number.
func (r NvrtcResult) Error() string { return fmt.Sprintf("%s (%d)", r.String(), int32(r)) }

// resultError turns a result into nil or an error that is the NvrtcResult
// itself, so errors.Is(err, NVRTC_ERROR_X) and err == NVRTC_ERROR_X work.
func resultError(r NvrtcResult) error {
	if r == NVRTC_SUCCESS {
		return nil
	}
	return r
}
