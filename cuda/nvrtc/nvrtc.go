//go:build linux && (amd64 || arm64)

// Package nvrtc compiles CUDA C++ to PTX, CUBIN or LTO-IR at run time with NVIDIA's
// NVRTC library, which runs on the CPU: no toolkit, no nvcc, no GPU. The
// result loads with cuda.LoadModule.
//
//	res, err := nvrtc.Compile(src, nvrtc.WithArch("sm_90"))
//	var ce *nvrtc.CompileError // errors.As: the compiler's log
//	mod, err := cuda.LoadModule(ctx, res.PTX)
//
// It is a package of its own, not part of package cuda, so that a program
// that only compiles needs neither the driver nor a GPU, and package cuda
// does not load NVRTC for programs that never compile. The library is
// found as package generated/nvrtc finds it (GOCUDA_LIBNVRTC overrides);
// LibraryPath says which file loaded. NVRTC itself loads its builtins
// (libnvrtc-builtins.so.12.4, say) by soname, which the dynamic linker
// looks for on the library search path only; for a GOCUDA_LIBNVRTC path
// the bindings load the builtins beside that file first, so keep them in
// the same directory.
//
// # The toolkit's headers
//
// NVRTC builds in the device runtime, not the toolkit's headers:
// cuda_fp16.h, cuda_bf16.h, cooperative_groups.h and the rest are files
// of a toolkit, which a source that includes them needs on the include
// path. WithToolkitHeaders finds them (beside the NVRTC loaded, under
// $CUDA_HOME or /usr/local/cuda, or in the module's header cache for
// NVRTC's version) and WithIncludeDir names a directory of your own:
//
//	const src = `
//	#include <cuda_fp16.h>
//	extern "C" __global__ void h2f(const __half *x, float *y, unsigned n) {
//		unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//		if (i < n) y[i] = __half2float(x[i]);
//	}`
//	res, err := nvrtc.Compile(src, nvrtc.WithArch("sm_90"), nvrtc.WithToolkitHeaders())
//	if errors.Is(err, nvrtc.ErrNoToolkitHeaders) {
//		// none found: nvrtc.WithIncludeDir("/opt/cuda-12.8/include") instead
//	}
//
// Without either, such a source fails to compile: a *CompileError whose
// log says "could not open source file".
//
// # The compile cache
//
// Compile keeps each result on disk and answers the same compile again
// from there, in this process or any other: the vadd kernel of the tests,
// for sm_80, takes 19 to 42 µs from the cache against 72 to 134 ms to
// compile (BenchmarkCompileCacheHit and BenchmarkCompileCold, three runs
// each, NVRTC 12.4 on two shared cores of an AMD EPYC); one that includes
// the toolkit's cuda_fp16.h takes 108 to 207 µs, most of it checking the
// headers (BenchmarkCompileCacheHitToolkitHeaders).
//
// Where: os.UserCacheDir()/gocuda/nvrtc ($XDG_CACHE_HOME/gocuda/nvrtc,
// else ~/.cache/gocuda/nvrtc); GOCUDA_NVRTC_CACHE=/some/dir moves it,
// WithCacheDir moves it for one compile. Removing the directory, or any
// file in it, is safe at any time.
//
// Turning it off: GOCUDA_NVRTC_CACHE=off for the whole process (it
// overrides WithCacheDir), WithoutCache for one compile.
//
// Size: the directory is kept under 256 MiB (DefaultCacheLimit);
// GOCUDA_NVRTC_CACHE_LIMIT=64MiB (bytes, or KiB, MiB, GiB) or
// WithCacheLimit sets another bound. A store beyond it removes the least
// recently used entries, by their modification time, which a hit renews
// (at most once a minute). An entry larger than the bound is not kept.
//
// The key is everything that decides the result: the source, the program
// name, the in-memory headers (names and contents), the name
// expressions, every option as NVRTC gets it (the architecture, -dlto and
// the -I directories included), the NVRTC library (its path, inode, size,
// modification time and version) and the bindings' version, and the
// files the compile may include. NVRTC 12.4 cannot say which files it
// read (it has no -M or -MD), so Compile follows every #include,
// #include_next and __has_include name of the source, of the in-memory
// headers and of each file found, whatever #if surrounds it, and looks
// the name up in every place NVRTC could take it from: beside the
// including file (for the source, the directory of the program name,
// relative to the working directory), beside the files that included
// that one, and in each -I directory. Every such place enters the key,
// with the content of the file there or its absence, so that editing an
// included header, or adding one earlier on the search path, misses;
// editing a header nothing includes does not.
// Files are hashed once and then recognised by their inode, size and
// modification and change times until they change. ".." in an include
// name is resolved as text, as if no directory before it were a
// symbolic link.
//
// Not cached: a compile that fails; one whose include graph names a file
// through a macro (#define H "x.h" / #include H), which cannot be
// followed without preprocessing; one with an option by which NVRTC reads
// or writes another file (precompiled headers, -time,
// -fdevice-time-trace, dependency output). Stats counts these as
// Uncached.
//
// Entries are written to a temporary file in the directory and renamed
// into place, so that processes sharing the cache see a whole entry or
// none; evictions take a lock on a file of the directory. Each entry
// starts with a header (a layout version, the payload's length, its key
// and the SHA-256 of the payload) that is checked on every read: an
// entry that fails (truncated, changed, of another layout) is never
// used, but compiled again and replaced.
//
// The cache never fails a compile: a directory that cannot be made or
// written, or an entry that cannot be read, leaves the compile to NVRTC.
// Stats says what the cache did in this process, its errors included
// (Errors, LastError).
package nvrtc

/*
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	raw "github.com/gocuda/gocuda/generated/nvrtc"
)

// ErrNoLibrary is matched (errors.Is) when no NVRTC library can be loaded.
var ErrNoLibrary = raw.ErrNoLibrary

// ErrInvalidArgument is matched (errors.Is) by the error of an argument
// that Compile refuses before NVRTC sees it.
var ErrInvalidArgument = errors.New("invalid argument")

// Option sets up a compilation.
type Option func(*config)

type config struct {
	arch    string
	name    string
	headers [][2]string // name, content
	exprs   []string
	options []string
	lto     bool

	includeDirs    []string // WithIncludeDir
	toolkitHeaders bool     // WithToolkitHeaders

	noCache  bool   // WithoutCache
	cacheDir string // WithCacheDir
	cacheMax int64  // WithCacheLimit; -1 when not given
}

// WithLTO asks for LTO-IR (NVRTC's -dlto) instead of PTX and a CUBIN:
// link-time optimised code that cuda/nvjitlink links, with other LTO-IR,
// PTX or CUBINs, into one CUBIN. It needs NVRTC 12.0 or later.
func WithLTO() Option { return func(c *config) { c.lto = true } }

// WithArch sets the target: "sm_90" gives PTX and a CUBIN for that GPU,
// "compute_90" PTX only. Without it NVRTC's own default applies (PTX for
// the oldest architecture the library supports). ArchOf derives it from a
// device. -arch or --gpu-architecture given through WithOptions does the
// same; NVRTC refuses an architecture given twice.
func WithArch(arch string) Option { return func(c *config) { c.arch = arch } }

// WithHeader makes content available to #include "name" in the source,
// without a file.
func WithHeader(name, content string) Option {
	return func(c *config) { c.headers = append(c.headers, [2]string{name, content}) }
}

// WithNameExpressions asks for the lowered (mangled) names of expressions
// naming __global__ functions or __device__ variables, template
// instantiations included ("saxpy<float>"): Result.LoweredNames has them,
// for Module.Function.
func WithNameExpressions(exprs ...string) Option {
	return func(c *config) { c.exprs = append(c.exprs, exprs...) }
}

// WithOptions passes options to NVRTC as they are ("-std=c++17",
// "-default-device", "-DN=4", …).
func WithOptions(opts ...string) Option {
	return func(c *config) { c.options = append(c.options, opts...) }
}

// WithProgramName names the source in the log's messages (default
// "program.cu").
func WithProgramName(name string) Option { return func(c *config) { c.name = name } }

// ArchOf returns the real architecture of dev for WithArch: "sm_90" for a
// device of compute capability 9.0.
func ArchOf(dev cuda.Device) (string, error) {
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sm_%d%d", major, minor), nil
}

// Result is what a compilation made.
type Result struct {
	PTX   []byte // PTX text, without a terminating NUL; nil for LTO-IR
	CUBIN []byte // the binary for a real architecture (sm_XX); nil otherwise
	// LTOIR is the intermediate form WithLTO asks for, which
	// cuda/nvjitlink links into a CUBIN; nil otherwise.
	LTOIR []byte
	// LoweredNames maps each name expression to its lowered name.
	LoweredNames map[string]string
	Log          string // the compiler's warnings, if any
}

// CompileError is the error of a compilation that failed: Log is NVRTC's
// log (the messages naming lines of the source), Err its result, which
// errors.Is matches (raw.NVRTC_ERROR_COMPILATION, say).
type CompileError struct {
	Err error
	Log string
}

func (e *CompileError) Error() string {
	return "nvrtc: compile: " + e.Err.Error() + "; log:\n" + e.Log
}

func (e *CompileError) Unwrap() error { return e.Err }

// cStrings holds strings copied into C memory, with a C array of their
// pointers: NVRTC takes char** arrays, which cgo does not allow to point
// into Go memory holding Go pointers.
type cStrings struct {
	ptrs **C.char
	n    int
}

func newCStrings(ss []string) *cStrings {
	cs := &cStrings{n: len(ss)}
	if len(ss) == 0 {
		return cs
	}
	cs.ptrs = (**C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	arr := unsafe.Slice(cs.ptrs, len(ss))
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return cs
}

func (cs *cStrings) array() **byte { return (**byte)(unsafe.Pointer(cs.ptrs)) }

func (cs *cStrings) free() {
	if cs.ptrs == nil {
		return
	}
	for _, p := range unsafe.Slice(cs.ptrs, cs.n) {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(cs.ptrs))
}

// cstr is s with a terminating NUL, in pointer-free Go memory that C may
// read during a call.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// checkNUL returns an error naming the first of src and the strings of c
// that holds a NUL byte, where NVRTC would stop reading it.
func (c *config) checkNUL(src string) error {
	var err error
	check := func(what, s string) {
		if i := strings.IndexByte(s, 0); i >= 0 && err == nil {
			err = fmt.Errorf("nvrtc: Compile: %w: %s holds a NUL byte at offset %d, where NVRTC would stop reading", ErrInvalidArgument, what, i)
		}
	}
	check("the source", src)
	check(fmt.Sprintf("the program name %q", c.name), c.name)
	for _, h := range c.headers {
		check(fmt.Sprintf("the header name %q", h[0]), h[0])
		check(fmt.Sprintf("the content of header %q", h[0]), h[1])
	}
	for _, e := range c.exprs {
		check(fmt.Sprintf("the name expression %q", e), e)
	}
	for _, o := range c.options {
		check(fmt.Sprintf("the option %q", o), o)
	}
	return err
}

// Compile compiles the CUDA C++ source src. A source that does not compile
// returns a *CompileError with the log; a missing library an error that
// matches ErrNoLibrary. NVRTC takes C strings, which end at a NUL byte: a
// source, program name, header name or content, name expression or
// option that holds one returns an error matching ErrInvalidArgument, as
// does a nil Option.
func Compile(src string, opts ...Option) (*Result, error) {
	c := config{name: "program.cu", cacheMax: -1}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("nvrtc: Compile: %w: option %d is nil", ErrInvalidArgument, i)
		}
		o(&c)
	}
	includes, err := c.includeArgs(ToolkitIncludeDirs)
	if err != nil {
		return nil, err
	}
	c.options = append(c.options, includes...)
	if err := c.checkNUL(src); err != nil {
		return nil, err
	}
	args := append([]string(nil), c.options...)
	if c.arch != "" {
		args = append(args, "-arch="+c.arch)
	}
	if c.lto && !slices.Contains(args, "-dlto") && !slices.Contains(args, "--dlink-time-opt") {
		args = append(args, "-dlto")
	}
	// -dlto given as an option is asked for as WithLTO is.
	c.lto = slices.Contains(args, "-dlto") || slices.Contains(args, "--dlink-time-opt")

	hit, entry := c.lookup(src, args)
	if hit != nil {
		return hit, nil
	}
	res, err := compile(src, &c, args)
	if err == nil && entry != nil {
		entry.store(res)
	}
	return res, err
}

// compile runs NVRTC on src with the final arguments args.
func compile(src string, c *config, args []string) (*Result, error) {
	var hdrNames, hdrBodies []string
	for _, h := range c.headers {
		hdrNames = append(hdrNames, h[0])
		hdrBodies = append(hdrBodies, h[1])
	}
	names, bodies := newCStrings(hdrNames), newCStrings(hdrBodies)
	defer names.free()
	defer bodies.free()

	var prog raw.NvrtcProgram
	if err := raw.CreateProgram(&prog, cstr(src), cstr(c.name), int32(len(hdrNames)), bodies.array(), names.array()); err != nil {
		return nil, fmt.Errorf("nvrtc: nvrtcCreateProgram: %w", err)
	}
	defer raw.DestroyProgram(&prog)

	for _, e := range c.exprs {
		if err := raw.AddNameExpression(prog, cstr(e)); err != nil {
			return nil, fmt.Errorf("nvrtc: nvrtcAddNameExpression(%q): %w", e, err)
		}
	}
	cargs := newCStrings(args)
	defer cargs.free()
	cerr := raw.CompileProgram(prog, int32(len(args)), cargs.array())
	log, lerr := programLog(prog)
	if cerr != nil {
		var r raw.NvrtcResult
		if errors.As(cerr, &r) {
			return nil, &CompileError{Err: cerr, Log: log}
		}
		return nil, fmt.Errorf("nvrtc: nvrtcCompileProgram: %w", cerr)
	}
	if lerr != nil {
		return nil, lerr
	}
	res := &Result{Log: log}
	var err error
	if c.lto {
		// NVRTC makes neither PTX nor a CUBIN of a -dlto compile.
		if res.LTOIR, err = ltoIR(prog); err != nil {
			return nil, err
		}
		return res, lowerNames(prog, c.exprs, res)
	}
	if res.PTX, err = output(prog, raw.GetPTXSize, raw.GetPTX, "PTX"); err != nil {
		return nil, err
	}
	res.PTX = bytes.TrimRight(res.PTX, "\x00")
	// NVRTC makes a CUBIN for a real architecture however it was named
	// (WithArch, -arch or --gpu-architecture in WithOptions), and none,
	// a size of 0, for a virtual one.
	if res.CUBIN, err = output(prog, raw.GetCUBINSize, raw.GetCUBIN, "CUBIN"); err != nil {
		return nil, err
	}
	if err := lowerNames(prog, c.exprs, res); err != nil {
		return nil, err
	}
	return res, nil
}

// lowerNames fills res.LoweredNames with the lowered name of each of exprs.
func lowerNames(prog raw.NvrtcProgram, exprs []string, res *Result) error {
	if len(exprs) == 0 {
		return nil
	}
	res.LoweredNames = map[string]string{}
	for _, e := range exprs {
		var lowered *byte // set to NVRTC's memory, valid until the program is destroyed
		if err := raw.GetLoweredName(prog, cstr(e), &lowered); err != nil {
			return fmt.Errorf("nvrtc: nvrtcGetLoweredName(%q): %w", e, err)
		}
		res.LoweredNames[e] = C.GoString((*C.char)(unsafe.Pointer(lowered)))
	}
	return nil
}

// programLog returns the compiler's log of prog.
func programLog(prog raw.NvrtcProgram) (string, error) {
	b, err := output(prog, raw.GetProgramLogSize, raw.GetProgramLog, "log")
	if err != nil {
		return "", err
	}
	return string(bytes.TrimRight(b, "\x00\n")), nil
}

// output reads one of a program's outputs with its size and copy functions.
func output(prog raw.NvrtcProgram, size func(raw.NvrtcProgram, *uint64) error, get func(raw.NvrtcProgram, *byte) error, what string) ([]byte, error) {
	var n uint64
	if err := size(prog, &n); err != nil {
		return nil, fmt.Errorf("nvrtc: size of the %s: %w", what, err)
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if err := get(prog, &b[0]); err != nil {
		return nil, fmt.Errorf("nvrtc: the %s: %w", what, err)
	}
	return b, nil
}

// Version returns the version of the NVRTC library loaded, e.g. 12, 4.
func Version() (major, minor int, err error) {
	var ma, mi int32
	if err := raw.Version(&ma, &mi); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}
