package cuda

/*
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"errors"
	"os"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Module is a shared handle to a loaded CUDA module (cuModuleLoadDataEx):
// PTX, which the driver compiles for the device, or a cubin or fatbin.
// Clone, Close and the Context reference work as for Stream; the last Close
// unloads the module (cuModuleUnload).
//
// All methods are safe for concurrent use.
type Module struct {
	h handle[moduleState]
}

type moduleState struct {
	raw     cu.CUmodule // first: see shared.val
	ctx     ctxRef
	infoLog string
}

func (m *Module) handle() *handle[moduleState] {
	if m == nil {
		return nil
	}
	return &m.h
}

// JITError is the cause of a LoadModule error when the driver's JIT
// compiler or linker wrote an error log: Log is its text (for PTX, the
// ptxas messages naming lines), Err the driver's result, which errors.Is
// matches (cu.CUDA_ERROR_INVALID_PTX, say).
type JITError struct {
	Err error
	Log string
}

func (e *JITError) Error() string { return e.Err.Error() + "; JIT error log:\n" + e.Log }
func (e *JITError) Unwrap() error { return e.Err }

// jitLogSize is the size of each JIT log buffer; longer logs are cut.
const jitLogSize = 16 << 10

// The magic numbers that tell binary images from PTX text.
var (
	elfMagic    = []byte{0x7f, 'E', 'L', 'F'}
	fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba} // 0xba55ed50, little-endian
)

// LoadModule loads a module into ctx from image: PTX text (with or without
// a terminating NUL), a cubin or a fatbin, as cuModuleLoadDataEx takes
// them. PTX is compiled for the context's device: PTX for an older target
// runs on newer devices. A failure to compile returns an error whose cause
// is a *JITError carrying the compiler's log; InfoLog returns the log of a
// success (register and memory use, for instance).
func LoadModule(ctx *Context, image []byte) (*Module, error) {
	const op = "LoadModule"
	if len(image) == 0 {
		return nil, invalidArg(op, "empty image")
	}
	if !bytes.HasPrefix(image, elfMagic) && !bytes.HasPrefix(image, fatbinMagic) && image[len(image)-1] != 0 {
		// PTX is a C string.
		image = append(image[:len(image):len(image)], 0)
	}
	cc, err := ctx.ref(op)
	if err != nil {
		return nil, err
	}

	// The options, their values and both log buffers live in one block of C
	// memory: the values array holds pointers to the logs, and the driver
	// writes to all of it. Integer options are passed in the pointer-sized
	// value slot itself, and the size options come back holding the number
	// of bytes written.
	const nopt = 4
	const (
		valOff  = 8 * nopt // after the 4-byte option enums, 8-byte aligned
		errOff  = valOff + 8*nopt
		infoOff = errOff + jitLogSize
		total   = infoOff + jitLogSize
	)
	block := C.calloc(1, total)
	defer C.free(block)
	opts := unsafe.Slice((*cu.CUjit_option)(block), nopt)
	vals := unsafe.Slice((*uintptr)(unsafe.Add(block, valOff)), nopt)
	errLog := unsafe.Add(block, errOff)
	infoLog := unsafe.Add(block, infoOff)
	opts[0], vals[0] = cu.CU_JIT_ERROR_LOG_BUFFER, uintptr(errLog)
	opts[1], vals[1] = cu.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, jitLogSize
	opts[2], vals[2] = cu.CU_JIT_INFO_LOG_BUFFER, uintptr(infoLog)
	opts[3], vals[3] = cu.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, jitLogSize

	var raw cu.CUmodule
	var loadErr error
	err = bind(op, cc.val.raw, func() error {
		loadErr = cu.ModuleLoadDataEx(&raw, unsafe.Pointer(unsafe.SliceData(image)), nopt,
			&opts[0], (*unsafe.Pointer)(unsafe.Pointer(&vals[0])))
		return nil
	})
	if err == nil && loadErr != nil {
		if log := cString(errLog, vals[1]); log != "" {
			loadErr = &JITError{Err: loadErr, Log: log}
		}
		err = newError(op, "cuModuleLoadDataEx", loadErr)
	}
	if err != nil {
		if loadErr == nil && raw != 0 { // loaded, then the context's pop failed
			_ = bind(op, cc.val.raw, func() error { return cu.ModuleUnload(raw) })
		}
		_ = cc.release()
		return nil, err
	}
	core := newShared(&moduleKind)
	core.val.raw, core.val.infoLog = raw, cString(infoLog, vals[3])
	core.val.ctx.core = cc
	return newModuleHandle(core), nil
}

// cString returns the NUL-terminated text at p, at most n bytes of it (the
// driver's count, which may or may not include the NUL) and never more than
// one log buffer.
func cString(p unsafe.Pointer, n uintptr) string {
	n = min(n, jitLogSize)
	b := unsafe.Slice((*byte)(p), n)
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(bytes.TrimRight(b, "\n"))
}

// LoadModuleFile is LoadModule with the image read from a file (.ptx,
// .cubin, .fatbin).
func LoadModuleFile(ctx *Context, path string) (*Module, error) {
	image, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Op: "LoadModuleFile", Err: err}
	}
	return LoadModule(ctx, image)
}

func destroyModule(st *moduleState) error {
	const op = "Module.Close"
	return bind(op, st.ctx.raw(), func() error {
		return check(op, "cuModuleUnload", cu.ModuleUnload(st.raw))
	})
}

func dropModule(st *moduleState) error { return st.ctx.release() }

func newModuleHandle(core *shared[moduleState]) *Module {
	m := &Module{}
	attach(m, &m.h, core)
	return m
}

// Clone returns another handle to the same module, to be closed on its own.
func (m *Module) Clone() (*Module, error) {
	return cloneAs(m.handle(), "Module.Clone", newModuleHandle)
}

// Close releases this handle, after the calls in flight on it (launches of
// its kernels included) have returned. Closing a handle again returns nil
// and does nothing. The last Close unloads the module and releases its
// context. Kernels taken from this handle fail with ErrClosed afterwards.
func (m *Module) Close() error { return m.handle().close("Module.Close") }

// Raw returns the driver's module handle, or 0 once this handle is closed.
func (m *Module) Raw() cu.CUmodule {
	st, ok := m.handle().peek()
	if !ok {
		return 0
	}
	return st.raw
}

// Context returns the module's context, owned by the module as
// Stream.Context's is by the stream; a closed handle naming the object
// once this handle is closed (see Stream.Context).
func (m *Module) Context() *Context {
	return contextOf(m.handle(), func(st *moduleState) *ctxRef { return &st.ctx })
}

// InfoLog returns what the JIT compiler reported while loading the module
// (empty for most images).
func (m *Module) InfoLog() string {
	st, ok := m.handle().peek()
	if !ok {
		return ""
	}
	return st.infoLog
}

// Function returns the kernel of the module named name
// (cuModuleGetFunction): the name of an extern "C" __global__ function, or
// the mangled name of a C++ one. Where the driver can say (CUDA 12.4 and
// later, through cuFuncGetParamInfo), the kernel knows its parameters'
// sizes and launches check the arguments against them.
//
// The kernel belongs to this Module handle: it fails with ErrClosed once
// the handle is closed.
func (m *Module) Function(name string) (*Kernel, error) {
	const op = "Module.Function"
	h := m.handle()
	st, ok := h.enter()
	if !ok {
		return nil, h.closedError(op)
	}
	defer h.exit()
	cname := append([]byte(name), 0)
	k := &Kernel{mod: m, name: name}
	err := bind(op, st.ctx.raw(), func() error {
		// A local, not &k.raw: cgo checks the whole object a pointer
		// argument points into, and a Kernel holds Go pointers.
		var raw cu.CUfunction
		err := cu.ModuleGetFunction(&raw, st.raw, &cname[0])
		k.raw = raw
		if err != nil {
			if errors.Is(err, cu.CUDA_ERROR_NOT_FOUND) {
				return newError(op, "cuModuleGetFunction", &notFoundError{name: name, err: err})
			}
			return newError(op, "cuModuleGetFunction", err)
		}
		if sizes, ok := paramSizes(k.raw); ok {
			k.setParams(sizes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string {
	return "no kernel named " + e.name + " in the module: " + e.err.Error()
}
func (e *notFoundError) Unwrap() error { return e.err }

var moduleKind = objectKind[moduleState]{destroy: destroyModule, drop: dropModule, live: &liveModules, grace: hotGrace, name: "module"}
