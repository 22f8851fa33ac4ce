package main

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing/fstest"
)

// A library header is not self-contained as cuda.h is: cublas_v2.h
// includes cublas_api.h, driver_types.h, cuda_fp16.h and more. The
// manifest pins every header a version's libraries include; ParseSet reads
// them from memory, mounted at setRoot, so that no header outside the
// pinned set (a CUDA installed in /usr/include, say) can take part.
const (
	setRoot = "cuda"
	// standinRoot holds what the generator supplies in place of headers
	// that are not C: see standins.
	standinRoot = "gocuda-standin"
)

// standins are headers the CUDA headers include in C mode although they
// are C++: <nv/target> (libcu++'s, which NVIDIA does not ship in the
// packages) is included by cuda_fp16.h unless __CUDACC_RTC__ is defined,
// and declares nothing a C program can use. An empty file stands in for
// it, rather than defining __CUDACC_RTC__, which changes what other
// headers declare.
var standins = map[string]string{
	"nv/target": "/* gocuda: stand-in for libcu++'s <nv/target>, a C++ header with nothing for C. */\n",
}

// hostHeaders are headers of the C library of Linux beyond the standard
// ones that the CUDA headers include in C mode (crt/host_config.h takes
// __THROW from glibc's <features.h>).
var hostHeaders = map[string]bool{"features.h": true, "arpa/inet.h": true, "sys/socket.h": true}

// HeaderSet is the header of a library and every header of its version
// that it may include, by their names under the include directory
// ("crt/host_defines.h").
type HeaderSet struct {
	Main  string
	Files map[string][]byte
}

// ParseSet preprocesses and type-checks the main header of s as the host
// C compiler would with the set on its include path. Every header of the
// set may include only standard C headers, headers of the set, stand-ins,
// and the headers included only in C++, device or Windows
// sections (cudaCxxIncludes); those are given a body that stops the parse, so that one
// reached after all is an error rather than a file read from the machine.
func ParseSet(l *library, s HeaderSet) (*Header, error) {
	if _, ok := s.Files[s.Main]; !ok {
		return nil, fmt.Errorf("%s is not in its header set", s.Main)
	}
	fsys := fstest.MapFS{}
	total := 0
	for name, src := range s.Files {
		total += len(src)
		if total > maxHeaderBytes {
			return nil, fmt.Errorf("%s: its headers have more than the %d bytes a header set may have", s.Main, maxHeaderBytes)
		}
		if err := checkSetDirectives(s, name, src); err != nil {
			return nil, err
		}
		fsys[setRoot+"/"+name] = &fstest.MapFile{Data: src}
	}
	for name, text := range standins {
		fsys[standinRoot+"/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	for _, name := range cudaCxxIncludes {
		if _, ok := standins[name]; !ok {
			fsys[standinRoot+"/"+name] = &fstest.MapFile{Data: []byte(fmt.Sprintf("#error \"gocuda: %s was to be included only in C++, device or Windows code\"\n", name))}
		}
	}
	base, err := hostConfig()
	if err != nil {
		return nil, fmt.Errorf("configure C front end: %w", err)
	}
	c := *base
	c.FS = fsys
	// The includer's directory first (""), then the stand-ins, which must
	// win over anything of the same name on the machine, then the set,
	// then the C library.
	front := []string{"", standinRoot, setRoot}
	c.IncludePaths = append(front, withoutEmpty(base.IncludePaths)...)
	c.SysIncludePaths = append(front[1:], base.SysIncludePaths...)
	main := setRoot + "/" + s.Main
	h, err := parseWithTimeout(&c, main, string(s.Files[s.Main]))
	if err != nil {
		return nil, err
	}
	h.Own = map[string]bool{}
	for _, f := range l.ownFiles() {
		h.Own[setRoot+"/"+f] = true
	}
	return h, nil
}

func withoutEmpty(paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return p == "" || p == "@" })
}

// checkSetDirectives is checkDirectives for a header of a set.
func checkSetDirectives(s HeaderSet, name string, src []byte) error {
	return walkDirectives(name, src, func(arg string, line int) error {
		inc, ok := includeName(arg)
		if ok && (standardHeaders[inc] || hostHeaders[inc] || standins[inc] != "" || slices.Contains(cudaCxxIncludes, inc)) {
			return nil
		}
		if _, in := s.Files[inc]; ok && in {
			return nil
		}
		if _, in := s.Files[path.Join(path.Dir(name), inc)]; ok && in && strings.HasPrefix(arg, `"`) {
			return nil
		}
		return fmt.Errorf("%s:%d: #include %s: not a header of the pinned set of %s, a standard C header, or one known to be C++-only (add it to headers/versions.json, or to cudaCxxIncludes in gen/library.go)", name, line, arg, s.Main)
	})
}

// includeName is the file an #include names literally, <x> or "x".
func includeName(arg string) (string, bool) {
	if len(arg) < 2 {
		return "", false
	}
	switch {
	case arg[0] == '<' && arg[len(arg)-1] == '>', arg[0] == '"' && arg[len(arg)-1] == '"':
		n := arg[1 : len(arg)-1]
		return n, n != "" && !strings.Contains(n, "..")
	}
	return "", false
}
