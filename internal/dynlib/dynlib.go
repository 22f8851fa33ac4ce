//go:build linux && (amd64 || arm64)

package dynlib

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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Func describes one bound function of a library.
type Func struct {
	API    string // C name: cublasSgemm
	Symbol string // symbol looked up: cublasSgemm_v2
	Since  string // first version of the matrix that declares it: "12.4"
}

// Spec describes a library and its bound functions.
type Spec struct {
	Package string // Go package name, the prefix of every message: "nvrtc"
	Name    string // the library's name in messages: "NVRTC"
	Env     string // environment variable that overrides the path: "GOCUDA_LIBNVRTC"
	Header  string // the header the bindings come from: "nvrtc.h"
	// HeaderVersion is CUDA_VERSION of that header: 12040; for an NCCL
	// header, NCCL_VERSION_CODE: 22203.
	HeaderVersion int
	// OwnVersions marks a library numbered apart from CUDA (NCCL): its
	// versions are its own, Name's, not CUDA's.
	OwnVersions bool
	// Sonames are the names dlopen tries, in order, when Env is unset.
	Sonames []string
	// Funcs is the generated table: Library.Addrs[i] receives the entry
	// point of Funcs[i].
	Funcs []Func
	// Preload, if set, is called with each path before dlopen tries it
	// (see PreloadSiblings).
	Preload func(path string)
}

// Library is a library loaded on first use. A binding package declares
// one as a package-level variable, a composite literal of Spec and Addrs,
// so that the flag Ensure reads lies at a fixed address, and its proc(i)
// is
//
//	lib.Ensure()
//	return procAddrs[i]
//
// an atomic load, a branch and an index of the generated array, inlined
// into every binding. The methods are safe for concurrent use; the first
// that needs the library loads it, once. A Library must not be copied.
type Library struct {
	Spec Spec
	// Addrs receives the entry points, one per Spec.Funcs, 0 for a
	// missing one: the binding package's generated array, as a slice.
	Addrs []uintptr

	// loaded is set to 1, after everything below, once loading is done.
	// A uint32 with atomic.LoadUint32 rather than an atomic.Bool, and
	// Ensure rather than Load in proc, leave proc's inlining cost a few
	// units under the budget of 80 (74 with Go 1.26; TestProcInlines in
	// generated/nvrtc watches it).
	loaded uint32
	mu     sync.Mutex
	err    error  // the load's error, nil on success
	path   string // the name or path the library was opened by

	sentinels          sync.Once
	errNoLibrary       error
	errMissingFunction error
}

// ErrNoLibrary returns the sentinel of this library that every *LoadError
// of it matches (errors.Is), and no other library's error does; the same
// value on every call.
func (l *Library) ErrNoLibrary() error {
	l.sentinels.Do(l.makeSentinels)
	return l.errNoLibrary
}

// ErrMissingFunction returns the sentinel of this library that every
// *MissingFunctionError of it matches (errors.Is); the same value on every
// call.
func (l *Library) ErrMissingFunction() error {
	l.sentinels.Do(l.makeSentinels)
	return l.errMissingFunction
}

func (l *Library) makeSentinels() {
	l.errNoLibrary = errors.New(l.Spec.Name + " library not found")
	l.errMissingFunction = errors.New("function not in the installed " + l.Spec.Name + " library")
}

// Ensure loads the library unless that is done: after it, Addrs holds the
// entry points (0 for a missing function, and for every function when the
// library did not load). It is the fast path of a binding's proc.
func (l *Library) Ensure() {
	if atomic.LoadUint32(&l.loaded) == 0 {
		l.load()
	}
}

// Missing is the error of a call of function i when Addrs[i] is 0: the
// *LoadError when the library did not load, else a *MissingFunctionError.
func (l *Library) Missing(i int) error {
	if err := l.Load(); err != nil {
		return err
	}
	f := l.Spec.Funcs[i]
	return &MissingFunctionError{Function: f.API, Since: f.Since, Library: l.path, lib: l}
}

// Load opens the library and resolves every entry point, if not done yet,
// and returns the error every call returns when the library cannot be
// loaded.
func (l *Library) Load() error {
	if atomic.LoadUint32(&l.loaded) == 0 {
		l.load()
	}
	return l.err
}

// Path is the name or path the library was opened by, "" when none.
func (l *Library) Path() string {
	_ = l.Load()
	return l.path
}

// Proc returns the entry point of the C function name of the table; the
// error is the one a call of its binding would return.
func (l *Library) Proc(name string) (uintptr, error) {
	for i, f := range l.Spec.Funcs {
		if f.API == name {
			if l.Ensure(); l.Addrs[i] != 0 {
				return l.Addrs[i], nil
			}
			return 0, l.Missing(i)
		}
	}
	v := l.Spec.HeaderVersion
	if l.Spec.OwnVersions {
		return 0, fmt.Errorf("%s: %s is not a function of the %s of %s %d.%d.%d", l.Spec.Package, name, l.Spec.Header, l.Spec.Name, v/10000, v%10000/100, v%100)
	}
	return 0, fmt.Errorf("%s: %s is not a function of the %s of CUDA %d.%d", l.Spec.Package, name, l.Spec.Header, v/1000, v%1000/10)
}

func (l *Library) load() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if atomic.LoadUint32(&l.loaded) != 0 {
		return
	}
	defer atomic.StoreUint32(&l.loaded, 1)
	if len(l.Addrs) != len(l.Spec.Funcs) {
		panic(fmt.Sprintf("dynlib: %s: %d entry points for %d functions", l.Spec.Package, len(l.Addrs), len(l.Spec.Funcs)))
	}
	h, path, err := l.open()
	if err != nil {
		l.err = err
		return
	}
	l.path = path
	for i, f := range l.Spec.Funcs {
		cs := C.CString(f.Symbol)
		l.Addrs[i] = uintptr(C.gocu_dlsym(h, cs))
		C.free(unsafe.Pointer(cs))
	}
}

// open dlopens the path in the environment variable, else each soname in
// turn, and returns the first that opens.
func (l *Library) open() (unsafe.Pointer, string, error) {
	paths := l.Spec.Sonames
	if p := os.Getenv(l.Spec.Env); p != "" {
		paths = []string{p}
	}
	le := &LoadError{lib: l}
	for _, p := range paths {
		if l.Spec.Preload != nil {
			l.Spec.Preload(p)
		}
		h, err := dlopen(p)
		if err == nil {
			return h, p, nil
		}
		le.Tried = append(le.Tried, p)
		le.Reasons = append(le.Reasons, err.Error())
	}
	return nil, "", le
}

// dlopen opens path with RTLD_NOW | RTLD_LOCAL; the error is dlerror's.
func dlopen(path string) (unsafe.Pointer, error) {
	var buf [512]C.char
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	h := C.gocu_dlopen(cp, &buf[0], C.size_t(len(buf)))
	if h == nil {
		return nil, errors.New(C.GoString(&buf[0]))
	}
	return h, nil
}

// PreloadSiblings returns a Spec.Preload that, when the path about to be
// opened names a directory (has a "/"), dlopens every file of that
// directory matching pattern (filepath.Glob), ignoring failures.
//
// It is for a library that dlopens a companion by soname, as NVRTC does its
// builtins (libnvrtc-builtins.so.12.4): the dynamic linker looks for a
// soname on the library search path only, not next to the library, but a
// library already loaded under that soname is what dlopen returns; so a
// library opened from a directory off the search path (the header cache,
// an unpacked package) finds its companion. A companion that still cannot
// be found surfaces as the library's own error.
func PreloadSiblings(pattern string) func(path string) {
	return func(path string) {
		if !strings.Contains(path, "/") {
			return
		}
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), pattern))
		for _, m := range matches {
			_, _ = dlopen(m)
		}
	}
}
