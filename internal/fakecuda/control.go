package fakecuda

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *fk_open(const char *path, int probe, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e ? e : "unknown error", n - 1);
		err[n - 1] = 0;
	} else if (probe) {
		dlclose(h);
	}
	return h;
}

static void *fk_sym(void *h, const char *name) { return dlsym(h, name); }
static long fk_name_long(void *fn, const char *s) { return ((long (*)(const char *))fn)(s); }
static const char *fk_function(void *fn, int i) { return ((const char *(*)(int))fn)(i); }
static int fk_fail(void *fn, const char *s, long nth, int r) { return ((int (*)(const char *, long, int))fn)(s, nth, r); }
static void fk_reset(void *fn) { ((void (*)(void))fn)(); }
static int fk_proc(void *fn, const char *name, void **pfn, int version, int *status) {
	return ((int (*)(const char *, void **, int, unsigned long long, int *))fn)(name, pfn, version, 1, status);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Lib is the fake driver loaded in this process, for its controls.
type Lib struct {
	path                               string
	h                                  unsafe.Pointer
	live, calls, function, fail, reset unsafe.Pointer

	lazyOnce sync.Once
	lazy     lazySyms
}

// lazySyms are the library's entry points beyond Open's, resolved on
// first use; nil where the library lacks one.
type lazySyms struct {
	raceEnabled, raceCount, raceGet, raceQuiesce, raceHostAccess, seed unsafe.Pointer
	raceObserve, raceObserveEnd                                        unsafe.Pointer
	// race is fakecuda_race_enabled's answer, fixed when the library loaded.
	race bool

	funcNew, funcFree, lastLaunch unsafe.Pointer

	kernel    kernelSyms
	kernelErr error
}

// syms resolves the entry points of lazySyms once.
func (l *Lib) syms() *lazySyms {
	l.lazyOnce.Do(func() {
		s := &l.lazy
		for name, p := range map[string]*unsafe.Pointer{
			"fakecuda_race_enabled": &s.raceEnabled, "fakecuda_race_count": &s.raceCount,
			"fakecuda_race_get": &s.raceGet, "fakecuda_race_quiesce": &s.raceQuiesce,
			"fakecuda_race_host_access": &s.raceHostAccess, "fakecuda_seed": &s.seed,
			"fakecuda_race_observe_hostfn": &s.raceObserve, "fakecuda_race_observe_end": &s.raceObserveEnd,
			"fakecuda_function_new": &s.funcNew, "fakecuda_function_free": &s.funcFree,
			"fakecuda_last_launch": &s.lastLaunch,
		} {
			*p = l.sym(name)
		}
		if s.raceEnabled != nil {
			s.race = raceEnabled(s.raceEnabled)
		}
		for name, p := range map[string]*unsafe.Pointer{
			"fakecuda_set_kernel_runner": &s.kernel.setRunner, "fakecuda_kernel_register": &s.kernel.register,
			"fakecuda_kernel_unregister": &s.kernel.unregister, "fakecuda_kernel_pin": &s.kernel.pin,
			"fakecuda_note_access": &s.kernel.note, "fakecuda_set_ptx_checker": &s.kernel.setChecker,
		} {
			if *p = l.sym(name); *p == nil {
				s.kernelErr = fmt.Errorf("fakecuda: the library has no %s", name)
			}
		}
	})
	return &l.lazy
}

// Open opens the library at path, the one package cu loaded: dlopen of the
// same path gives the same instance, so the counts read are the driver's.
// It fails if path is not the fake driver.
func Open(path string) (*Lib, error) {
	h, err := dlopen(path, false)
	if err != nil {
		return nil, err
	}
	l := &Lib{path: path, h: h}
	for name, p := range map[string]*unsafe.Pointer{
		"fakecuda_live": &l.live, "fakecuda_calls": &l.calls, "fakecuda_function": &l.function,
		"fakecuda_fail": &l.fail, "fakecuda_reset_counts": &l.reset,
	} {
		cn := C.CString(name)
		*p = C.fk_sym(h, cn)
		C.free(unsafe.Pointer(cn))
		if *p == nil {
			return nil, fmt.Errorf("fakecuda: %s is not the fake driver: it has no %s", path, name)
		}
	}
	return l, nil
}

// CanOpen reports whether dlopen can open path (a driver library, say),
// closing it again; the error is dlopen's.
func CanOpen(path string) error {
	_, err := dlopen(path, true)
	return err
}

func dlopen(path string, probe bool) (unsafe.Pointer, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var buf [512]C.char
	p := C.int(0)
	if probe {
		p = 1
	}
	h := C.fk_open(cp, p, &buf[0], C.size_t(len(buf)))
	if h == nil {
		return nil, fmt.Errorf("fakecuda: dlopen %s: %s", path, C.GoString(&buf[0]))
	}
	return h, nil
}

// Path is the library's path.
func (l *Lib) Path() string { return l.path }

// Live returns the number of live objects of a kind: "contexts", "primary"
// (outstanding primary context retains), "streams", "events", "device" and
// "host" (allocations), "graphs", "graph_execs", "reaped": objects never
// freed that went away with their context, since the last Reset, or
// "bound_threads": threads with a context on their stack, "managed":
// managed allocations (counted in "device" too), or "modules": modules and
// libraries loaded. It panics on another kind.
func (l *Lib) Live(kind string) int {
	n := l.nameLong(l.live, kind)
	if n < 0 {
		panic("fakecuda: unknown kind " + kind)
	}
	return n
}

// Calls returns how many times the function was called, by API name (a _vN
// suffix is ignored: cuMemAlloc_v2 counts as cuMemAlloc), or -1 if the
// fake does not implement it. cuGetProcAddress is not counted.
func (l *Lib) Calls(name string) int { return l.nameLong(l.calls, name) }

// Functions lists the API names of every function the fake implements.
func (l *Lib) Functions() []string {
	var names []string
	for i := 0; ; i++ {
		p := C.fk_function(l.function, C.int(i))
		if p == nil {
			return names
		}
		names = append(names, C.GoString(p))
	}
}

// functionName returns the API name of function i of Functions, or "".
func (l *Lib) functionName(i int) string {
	if i < 0 {
		return ""
	}
	p := C.fk_function(l.function, C.int(i))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// Fail makes the nth call of the function from now on (1: the next one)
// fail with result, without doing anything else.
func (l *Lib) Fail(name string, nth int, result int) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.fk_fail(l.fail, cn, C.long(nth), C.int(result)) != 0 {
		return fmt.Errorf("fakecuda: cannot fail call %d of %s: not a function of the fake, nth < 1, or too many faults armed", nth, name)
	}
	return nil
}

// Reset zeroes the call counts and the reaped count and disarms every
// fault; live objects stay counted.
func (l *Lib) Reset() { C.fk_reset(l.reset) }

func (l *Lib) nameLong(fn unsafe.Pointer, s string) int {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	return int(C.fk_name_long(fn, cs))
}

// Symbol returns the address of an exported symbol of the library, or 0.
func (l *Lib) Symbol(name string) uintptr { return uintptr(l.sym(name)) }

func (l *Lib) sym(name string) unsafe.Pointer {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.fk_sym(l.h, cn)
}

// ProcAddress asks the library's cuGetProcAddress_v2 for an API name at a
// CUDA version, as package cu's loader does, and returns the entry point and
// the symbol status (0 found, 1 not found, 2 version not sufficient).
func (l *Lib) ProcAddress(name string, version int) (fn uintptr, status int, result int) {
	get := l.sym("cuGetProcAddress_v2")
	if get == nil {
		return 0, 1, -1
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var p unsafe.Pointer
	var st C.int
	r := C.fk_proc(get, cn, &p, C.int(version), &st)
	return uintptr(p), int(st), int(r)
}
