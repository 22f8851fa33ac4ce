package main

import (
	"fmt"
	"sort"

	"github.com/gocuda/gocuda/internal/manifest"
)

// library describes one header family the generator binds, as data: the
// parse, model and emit steps are the same for all of them.
type library struct {
	pkg    string // Go package and directory under generated/: "nvrtc"
	header string // header file in the cache: "nvrtc.h"
	prefix string // prefix of the functions bound, dropped from their Go names: "nvrtc"
	result string // the Go name of the status type the functions return: "NvrtcResult"
	// what names the library in doc comments: "the driver symbol X".
	what string
	// reference is the documentation page each binding points to.
	reference string
	// sonames are the library names the loader dlopens, by CUDA major
	// version; nil when the handwritten loader knows them (libcuda.so.1
	// does not change with the version).
	sonames map[int][]string
	// getProcAddress marks a library whose entry points come through
	// cuGetProcAddress: the table then says which may.
	getProcAddress bool
	// foreignIncludes are headers the library header includes only in
	// C++ or Windows sections (see checkDirectives).
	foreignIncludes []string
	// apiDiff marks a library whose API data (z*_api.txt) and changes
	// across the matrix (API_CHANGES.md) are generated.
	apiDiff bool
}

var (
	cuLib = &library{
		pkg: "cu", header: "cuda.h", prefix: "cu", result: "CUresult",
		what:           "driver symbol",
		reference:      "https://docs.nvidia.com/cuda/cuda-driver-api/",
		getProcAddress: true,
		apiDiff:        true,
	}
	nvrtcLib = &library{
		pkg: "nvrtc", header: "nvrtc.h", prefix: "nvrtc", result: "NvrtcResult",
		what:      "NVRTC symbol",
		reference: "https://docs.nvidia.com/cuda/nvrtc/",
		// NVRTC 11.x kept the soname of 11.2 for every later 11 release.
		sonames:         map[int][]string{11: {"libnvrtc.so.11.2"}, 12: {"libnvrtc.so.12"}, 13: {"libnvrtc.so.13"}},
		foreignIncludes: []string{"cxxabi.h", "cstdlib", "string", "typeinfo", "Windows.h", "DbgHelp.h"},
	}
	// libraries are every header family bound, cuda.h first.
	libraries = []*library{cuLib, nvrtcLib}
)

// filePrefix starts the name of every file the generator owns in the
// library's package: zcu_, znvrtc_.
func (l *library) filePrefix() string { return "z" + l.pkg + "_" }

// provides reports whether version v of the matrix has the library's header.
func (l *library) provides(v manifest.Version) bool {
	if l == cuLib {
		return true
	}
	_, ok := v.Header(l.header)
	return ok
}

// readHeader returns the cached header of the library for v.
func (l *library) readHeader(v manifest.Version) ([]byte, string, error) {
	if l == cuLib {
		return v.ReadHeader()
	}
	return v.ReadLibraryHeader(l.header)
}

// providers are the versions of m that have the library's header, in
// ascending order.
func (l *library) providers(m *manifest.Manifest) []manifest.Version {
	var vs []manifest.Version
	for _, v := range m.Versions {
		if l.provides(v) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Number() < vs[j].Number() })
	return vs
}

// sonamesFor returns the names the loader of version v opens.
func (l *library) sonamesFor(v manifest.Version) ([]string, error) {
	names := l.sonames[v.Number()/1000]
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no soname known for CUDA major version %d (add it to the library's description in gen/library.go)", l.header, v.Number()/1000)
	}
	return names, nil
}

// exportTypes gives each type of the model whose C name starts with a
// lower-case letter (nvrtcProgram, nvrtcResult) the same name with its first
// letter upper-cased (NvrtcProgram), the nearest spelling Go exports.
// References to it throughout the model follow.
func exportTypes(m *Module) {
	rename := func(n string) string {
		if n != "" && n[0] >= 'a' && n[0] <= 'z' {
			return string(n[0]-'a'+'A') + n[1:]
		}
		return n
	}
	var fix func(t *Type)
	fix = func(t *Type) {
		if t == nil {
			return
		}
		if t.Kind == Named {
			t.Name = rename(t.Name)
		}
		fix(t.Elem)
	}
	for i := range m.Enums {
		m.Enums[i].Name = rename(m.Enums[i].Name)
	}
	for i := range m.Records {
		r := &m.Records[i]
		r.Name = rename(r.Name)
		for j := range r.Fields {
			fix(&r.Fields[j].Type)
		}
	}
	for i := range m.Typedefs {
		m.Typedefs[i].Name = rename(m.Typedefs[i].Name)
		fix(&m.Typedefs[i].Target)
	}
	for i := range m.Functions {
		f := &m.Functions[i]
		fix(&f.Result)
		for j := range f.Params {
			fix(&f.Params[j].Type)
		}
	}
}
