//go:build linux && (amd64 || arm64)

package dynlib

/*
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

// gocu_loaded_file copies into out the file name of the link map of the
// object name refers to, if that object is loaded already: RTLD_NOLOAD
// opens nothing new, and dlclose gives back the reference it took.
static int gocu_loaded_file(const char *name, char *out, size_t n) {
	void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) return -1;
	struct link_map *lm = NULL;
	int r = dlinfo(h, RTLD_DI_LINKMAP, &lm);
	if (r == 0 && lm != NULL && lm->l_name != NULL && lm->l_name[0] != 0) {
		strncpy(out, lm->l_name, n - 1);
		out[n - 1] = 0;
	} else {
		r = -1;
	}
	dlclose(h);
	return r;
}

// gocu_exports reports whether the library at path defines symbol,
// opening it privately and giving the reference back.
static int gocu_exports(const char *path, const char *symbol) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return 0;
	int found = dlsym(h, symbol) != NULL;
	dlclose(h);
	return found;
}
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"unsafe"
)

// LoadedFile returns the file of the library that name (a soname such as
// "libcublas.so.12", or a path) refers to among those the process has
// loaded: the file the dynamic linker found for a soname, as an absolute
// path, which is what a user asks when two toolkits are installed. It
// loads nothing: a library not loaded yet is an error.
func LoadedFile(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("dynlib: LoadedFile: empty library name")
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var buf [4096]C.char
	if C.gocu_loaded_file(cn, &buf[0], C.size_t(len(buf))) != 0 {
		return "", fmt.Errorf("dynlib: %s is not loaded", name)
	}
	file := C.GoString(&buf[0])
	// A path given relative to the working directory stays so in the link
	// map; the working directory can change, so it is made absolute now.
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return file, nil
}

// File is the file the library was loaded from (see LoadedFile), or the
// error of loading it.
func (l *Library) File() (string, error) {
	if err := l.Load(); err != nil {
		return "", err
	}
	return LoadedFile(l.path)
}

// Exports reports whether the library at path (a file or a soname) can be
// opened and defines symbol: how the fakes of internal/ tell themselves
// from the real libraries, by a marker symbol only they define.
func Exports(path, symbol string) bool {
	if path == "" {
		return false
	}
	cp, cs := C.CString(path), C.CString(symbol)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cs))
	return C.gocu_exports(cp, cs) != 0
}
