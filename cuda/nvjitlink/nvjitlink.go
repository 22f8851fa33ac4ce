//go:build linux && (amd64 || arm64)

// Package nvjitlink links device code at run time with NVIDIA's nvJitLink
// library: LTO-IR (from nvrtc.Compile with nvrtc.WithLTO), PTX and CUBINs
// into one CUBIN for a GPU architecture, which cuda.LoadModule loads. Like
// NVRTC it runs on the CPU: linking needs no GPU and no toolkit.
//
//	a, err := nvrtc.Compile(kernels, nvrtc.WithArch("sm_90"), nvrtc.WithLTO())
//	b, err := nvrtc.Compile(helpers, nvrtc.WithArch("sm_90"), nvrtc.WithLTO())
//	img, err := nvjitlink.Link("sm_90", []nvjitlink.Input{
//		{Kind: nvjitlink.LTOIR, Name: "kernels", Data: a.LTOIR},
//		{Kind: nvjitlink.LTOIR, Name: "helpers", Data: b.LTOIR},
//	})
//	mod, err := cuda.LoadModule(ctx, img.CUBIN)
//
// Link may be called from any number of goroutines at once.
//
// The library is found as package generated/nvjitlink finds it
// (GOCUDA_LIBNVJITLINK overrides).
package nvjitlink

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	raw "github.com/gocuda/gocuda/generated/nvjitlink"
)

// ErrNoLibrary is matched (errors.Is) when no nvJitLink library can be
// loaded.
var ErrNoLibrary = raw.ErrNoLibrary

// Kind says what an input is.
type Kind int

// The kinds of input nvJitLink links.
const (
	CUBIN  = Kind(raw.NVJITLINK_INPUT_CUBIN)
	PTX    = Kind(raw.NVJITLINK_INPUT_PTX)
	LTOIR  = Kind(raw.NVJITLINK_INPUT_LTOIR)
	FATBIN = Kind(raw.NVJITLINK_INPUT_FATBIN)
	Object = Kind(raw.NVJITLINK_INPUT_OBJECT) // a host object holding device code
	// Library is an archive of the above (a .a of device code).
	Library = Kind(raw.NVJITLINK_INPUT_LIBRARY)
)

func (k Kind) String() string {
	return strings.TrimPrefix(raw.NvJitLinkInputType(k).String(), "NVJITLINK_INPUT_")
}

// Input is one piece to link.
type Input struct {
	Kind Kind
	Name string // names the input in the linker's log
	Data []byte
}

// Result is what a link made.
type Result struct {
	CUBIN []byte
	Log   string // the linker's information log, if any
}

// LinkError is the error of a link that failed: Log is nvJitLink's error
// log, Err its result, which errors.Is matches
// (raw.NVJITLINK_ERROR_PTX_COMPILE, say).
type LinkError struct {
	Err error
	Log string
}

func (e *LinkError) Error() string { return "nvjitlink: link: " + e.Err.Error() + "; log:\n" + e.Log }

func (e *LinkError) Unwrap() error { return e.Err }

// Link links inputs into one CUBIN for the real architecture arch
// ("sm_90"). Options are passed to nvJitLink as they are ("-O3",
// "-lineinfo"); -arch comes from arch, and -lto is added when an input is
// LTO-IR.
//
// nvJitLink trusts the structure of its inputs: malformed ones can crash
// the process inside the library instead of failing. Link refuses, with
// an error matching ErrInvalidInput, an input of a kind other than the
// six above and what cheap checks catch: a CUBIN or Object that is not a
// little-endian 64-bit ELF file whose section header table, sections and
// segments lie within Data; a FATBIN whose header (magic 0xba55ed50)
// counts more bytes than Data holds; a Library that is not an ar archive
// of well-formed member headers, or holds an ELF member that fails the
// ELF checks; PTX with a NUL byte before its end, or with a byte outside
// ASCII anywhere. Beyond these checks the contents are not
// validated: corrupt symbol or relocation tables in an ELF file, corrupt
// entries of a fatbin or archive member, and corrupt LTO-IR (nvJitLink
// 12.4 may exit the process on it) still reach nvJitLink, so link only
// inputs that a compiler made.
func Link(arch string, inputs []Input, options ...string) (*Result, error) {
	if !strings.HasPrefix(arch, "sm_") {
		return nil, fmt.Errorf("nvjitlink: architecture %q: want a real one, such as sm_90", arch)
	}
	if len(inputs) == 0 {
		return nil, errors.New("nvjitlink: nothing to link")
	}
	opts := append([]string{"-arch=" + arch}, options...)
	// A C string ends at its first NUL: what follows would be dropped
	// without a word.
	for _, o := range opts {
		if i := strings.IndexByte(o, 0); i >= 0 {
			return nil, fmt.Errorf("nvjitlink: Link: option %q: %w: a NUL byte at offset %d", o, ErrInvalidInput, i)
		}
	}
	for _, in := range inputs {
		if i := strings.IndexByte(in.Name, 0); i >= 0 {
			return nil, fmt.Errorf("nvjitlink: Link: input name %q: %w: a NUL byte at offset %d", in.Name, ErrInvalidInput, i)
		}
	}
	for _, in := range inputs {
		if in.Kind == LTOIR && !slices.Contains(opts, "-lto") {
			opts = append(opts, "-lto")
		}
		if len(in.Data) == 0 {
			return nil, fmt.Errorf("nvjitlink: Link: input %q (%v): %w: empty", in.Name, in.Kind, ErrInvalidInput)
		}
		if err := checkInput(in); err != nil {
			return nil, err
		}
	}
	// Options, names and data go in C memory: the handle may keep any of
	// them until it is destroyed.
	var keep []unsafe.Pointer
	defer func() {
		for _, p := range keep {
			C.free(p)
		}
	}()
	cbytes := func(b []byte) unsafe.Pointer {
		p := C.malloc(C.size_t(len(b) + 1))
		C.memcpy(p, unsafe.Pointer(&b[0]), C.size_t(len(b)))
		*(*byte)(unsafe.Add(p, len(b))) = 0
		keep = append(keep, p)
		return p
	}
	cstr := func(s string) *byte { return (*byte)(cbytes(append([]byte(s), 0))) }
	arr := (**byte)(C.malloc(C.size_t(len(opts)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	keep = append(keep, unsafe.Pointer(arr))
	for i, o := range opts {
		unsafe.Slice(arr, len(opts))[i] = cstr(o)
	}

	// nvJitLink keeps per-thread state from nvJitLinkCreate that
	// nvJitLinkDestroy expects on the same OS thread: destroyed on another,
	// a later link on either thread crashes or hangs inside the library.
	// Go moves a goroutine between threads between cgo calls, so the link
	// holds its thread from Create to Destroy. Links on different threads
	// may run at once.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var h raw.NvJitLinkHandle
	if err := raw.Create(&h, uint32(len(opts)), arr); err != nil {
		return nil, &LinkError{Err: fmt.Errorf("nvJitLinkCreate: %w", err), Log: errorLog(h)}
	}
	defer raw.Destroy(&h)
	for _, in := range inputs {
		if err := raw.AddData(h, raw.NvJitLinkInputType(in.Kind), cbytes(in.Data), uint64(len(in.Data)), cstr(in.Name)); err != nil {
			return nil, &LinkError{Err: fmt.Errorf("nvJitLinkAddData(%q, %v): %w", in.Name, in.Kind, err), Log: errorLog(h)}
		}
	}
	if err := raw.Complete(h); err != nil {
		return nil, &LinkError{Err: err, Log: errorLog(h)}
	}
	var size uint64
	if err := raw.GetLinkedCubinSize(h, &size); err != nil {
		return nil, fmt.Errorf("nvjitlink: nvJitLinkGetLinkedCubinSize: %w", err)
	}
	res := &Result{CUBIN: make([]byte, size)}
	if size > 0 {
		if err := raw.GetLinkedCubin(h, unsafe.Pointer(&res.CUBIN[0])); err != nil {
			return nil, fmt.Errorf("nvjitlink: nvJitLinkGetLinkedCubin: %w", err)
		}
	}
	res.Log = infoLog(h)
	return res, nil
}

// errorLog and infoLog return nvJitLink's logs of h, "" when there is none
// or it cannot be read.
func errorLog(h raw.NvJitLinkHandle) string { return readLog(h, raw.GetErrorLogSize, raw.GetErrorLog) }

func infoLog(h raw.NvJitLinkHandle) string { return readLog(h, raw.GetInfoLogSize, raw.GetInfoLog) }

func readLog(h raw.NvJitLinkHandle, size func(raw.NvJitLinkHandle, *uint64) error, get func(raw.NvJitLinkHandle, *byte) error) string {
	if h == 0 {
		return ""
	}
	var n uint64
	if size(h, &n) != nil || n == 0 {
		return ""
	}
	b := make([]byte, n)
	if get(h, &b[0]) != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}

// Version returns the version of the nvJitLink library loaded, e.g. 12, 4.
func Version() (major, minor int, err error) {
	var ma, mi uint32
	if err := raw.Version(&ma, &mi); err != nil {
		return 0, 0, err
	}
	return int(ma), int(mi), nil
}
