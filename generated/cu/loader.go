//go:build linux && (amd64 || arm64)

package cu

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// gocu_dlopen opens the driver library; on failure it copies dlerror's text.
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

// gocu_proc asks the driver's cuGetProcAddress for an entry point as of
// cudaVersion, taking the legacy default stream, as the header's own macros
// do. getProc is cuGetProcAddress_v2 (CUDA 12.0+) when v2 is set, else
// cuGetProcAddress (11.3+): their signatures differ by the last argument.
static uintptr_t gocu_proc(uintptr_t getProc, int v2, const char *name, int cudaVersion) {
	void *fn = NULL;
	int r;
	if (v2) {
		int status = 0;
		r = ((int (*)(const char *, void **, int, uint64_t, int *))getProc)(name, &fn, cudaVersion, 1, &status);
		if (status != 0) fn = NULL;
	} else {
		r = ((int (*)(const char *, void **, int, uint64_t))getProc)(name, &fn, cudaVersion, 1);
	}
	return r == 0 ? (uintptr_t)fn : 0;
}

static int gocu_driver_version(uintptr_t fn) {
	int v = 0;
	if (((int (*)(int *))fn)(&v) != 0) return 0;
	return v;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// LibraryEnv names the environment variable that overrides the driver
// library's path; the default is libcuda.so.1, as the CUDA runtime loads it.
const LibraryEnv = "GOCUDA_LIBCUDA"

// procInfo describes one bound function.
type procInfo struct {
	api       string // API name: cuMemAlloc
	symbol    string // versioned symbol: cuMemAlloc_v2
	since     string // first CUDA version of the matrix that declares the symbol
	byAddress bool   // resolve through cuGetProcAddress(api, headerVersion)
}

var (
	loaded    atomic.Bool
	loadMu    sync.Mutex
	loadErr   error
	driverVer int
)

// proc returns the entry point of function i, loading the driver on first
// use; 0 means the function is not available.
func proc(i int) uintptr {
	if !loaded.Load() {
		load()
	}
	return procAddrs[i]
}

// Load opens the driver and resolves every entry point now rather than on
// the first call. It returns the error every call would return if the
// driver cannot be loaded.
func Load() error {
	if !loaded.Load() {
		load()
	}
	return loadErr
}

// DriverVersionLoaded is the CUDA version the loaded driver reports
// (cuDriverGetVersion, e.g. 13000), or 0 when no driver is loaded.
func DriverVersionLoaded() int {
	_ = Load()
	return driverVer
}

// Proc returns the entry point package cu resolved for the C function name,
// as the header spells it ("cuMemAlloc"), with the ABI of the header these
// bindings follow (cuMemAlloc_v2): for C code of the caller's own that
// calls the driver without a crossing per call. The error is the one a call
// of the binding would return: a *LoadError without a driver, a
// *MissingFunctionError when the driver lacks it; an unknown name is an
// error naming it.
func Proc(name string) (uintptr, error) {
	for i, p := range procTable {
		if p.api == name {
			if fn := proc(i); fn != 0 {
				return fn, nil
			}
			return 0, missing(i)
		}
	}
	return 0, fmt.Errorf("cu: %s is not a function of the CUDA %s header", name, versionString(headerVersion))
}

// HeaderVersion returns CUDA_VERSION of the cuda.h these bindings were
// generated from, 1000*major + 10*minor: 12040 for CUDA 12.4. It is a
// function, the same value on every call; the build tag picks it:
//
//	v := cu.HeaderVersion()
//	fmt.Printf("bindings of CUDA %d.%d\n", v/1000, v%1000/10)
func HeaderVersion() int { return headerVersion }

func load() {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded.Load() {
		return
	}
	defer loaded.Store(true)
	lib, err := openDriver()
	if err != nil {
		loadErr = err
		return
	}
	getProc, v2 := dlsym(lib, "cuGetProcAddress_v2"), true
	if getProc == 0 {
		getProc, v2 = dlsym(lib, "cuGetProcAddress"), false
	}
	if fn := dlsym(lib, "cuDriverGetVersion"); fn != 0 {
		driverVer = int(C.gocu_driver_version(C.uintptr_t(fn)))
	}
	for i, p := range procTable {
		var addr uintptr
		if p.byAddress && getProc != 0 {
			name := C.CString(p.api)
			v := C.int(0)
			if v2 {
				v = 1
			}
			addr = uintptr(C.gocu_proc(C.uintptr_t(getProc), v, name, C.int(headerVersion)))
			C.free(unsafe.Pointer(name))
		}
		if addr == 0 {
			addr = dlsym(lib, p.symbol)
		}
		procAddrs[i] = addr
	}
}

func openDriver() (unsafe.Pointer, error) {
	paths := []string{"libcuda.so.1", "libcuda.so"}
	if p := os.Getenv(LibraryEnv); p != "" {
		paths = []string{p}
	}
	le := &LoadError{}
	var buf [512]C.char
	for _, p := range paths {
		cp := C.CString(p)
		h := C.gocu_dlopen(cp, &buf[0], C.size_t(len(buf)))
		C.free(unsafe.Pointer(cp))
		if h != nil {
			return h, nil
		}
		le.Tried = append(le.Tried, p)
		le.Reasons = append(le.Reasons, C.GoString(&buf[0]))
	}
	return nil, le
}

func dlsym(lib unsafe.Pointer, name string) uintptr {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return uintptr(C.gocu_dlsym(lib, cn))
}
