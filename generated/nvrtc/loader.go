//go:build linux && (amd64 || arm64)

package nvrtc

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// gocu_dlopen opens the library; on failure it copies dlerror's text.
static void *gocu_dlopen(const char *path, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e ? e : "unknown error", n - 1);
		err[n - 1] = 0;
	}
	return h;
}

static uintptr_t gocu_dlsym(void *h, const char *name) { return (uintptr_t)dlsym(h, name); }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// LibraryEnv names the environment variable that overrides the library's
// path; the default is the soname of the version the bindings follow.
const LibraryEnv = "GOCUDA_LIBNVRTC"

// procInfo describes one bound function.
type procInfo struct {
	api    string // C name: nvrtcCompileProgram
	symbol string // symbol looked up: the same for NVRTC
	since  string // first CUDA version of the matrix that declares it
}

var (
	loaded     atomic.Bool
	loadMu     sync.Mutex
	loadErr    error
	loadedPath string
)

// proc returns the entry point of function i, loading the library on first
// use; 0 means the function is not available.
func proc(i int) uintptr {
	if !loaded.Load() {
		load()
	}
	return procAddrs[i]
}

// Load opens the library and resolves every entry point now rather than
// on the first call. It returns the error every call would return if the
// library cannot be loaded.
func Load() error {
	if !loaded.Load() {
		load()
	}
	return loadErr
}

// LibraryPath is the name or path the library was opened by, "" when none.
func LibraryPath() string {
	_ = Load()
	return loadedPath
}

// HeaderVersion is the CUDA version of the nvrtc.h these bindings were
// generated from, e.g. 12040.
func HeaderVersion() int { return headerVersion }

// Proc returns the entry point of the C function name ("nvrtcVersion"),
// for C code of the caller's own; the error is the one a call of the
// binding would return.
func Proc(name string) (uintptr, error) {
	for i, p := range procTable {
		if p.api == name {
			if fn := proc(i); fn != 0 {
				return fn, nil
			}
			return 0, missing(i)
		}
	}
	return 0, fmt.Errorf("nvrtc: %s is not a function of the nvrtc.h of CUDA %d.%d", name, headerVersion/1000, headerVersion%1000/10)
}

func load() {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded.Load() {
		return
	}
	defer loaded.Store(true)
	lib, path, err := openLibrary()
	if err != nil {
		loadErr = err
		return
	}
	loadedPath = path
	for i, p := range procTable {
		cn := C.CString(p.symbol)
		procAddrs[i] = uintptr(C.gocu_dlsym(lib, cn))
		C.free(unsafe.Pointer(cn))
	}
}

func openLibrary() (unsafe.Pointer, string, error) {
	paths := libraryNames
	if p := os.Getenv(LibraryEnv); p != "" {
		paths = []string{p}
	}
	le := &LoadError{}
	var buf [512]C.char
	for _, p := range paths {
		preloadBuiltins(p)
		cp := C.CString(p)
		h := C.gocu_dlopen(cp, &buf[0], C.size_t(len(buf)))
		C.free(unsafe.Pointer(cp))
		if h != nil {
			return h, p, nil
		}
		le.Tried = append(le.Tried, p)
		le.Reasons = append(le.Reasons, C.GoString(&buf[0]))
	}
	return nil, "", le
}

// preloadBuiltins opens the builtins libraries that lie next to the NVRTC
// library at path, when path names a directory. NVRTC dlopens its builtins
// (libnvrtc-builtins.so.12.4) by soname, which the dynamic linker looks for
// on the library search path only, not next to libnvrtc; a library already
// loaded under that soname is what dlopen returns, so a library opened from
// a directory off the search path (the header cache, an unpacked package)
// then finds its builtins. A failure here surfaces as NVRTC's own error.
func preloadBuiltins(path string) {
	if !strings.Contains(path, "/") {
		return
	}
	builtins, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "libnvrtc-builtins.so.*"))
	var buf [512]C.char
	for _, b := range builtins {
		cb := C.CString(b)
		C.gocu_dlopen(cb, &buf[0], C.size_t(len(buf)))
		C.free(unsafe.Pointer(cb))
	}
}
