package fakecuda

/*
#include <stdint.h>
#include <stdlib.h>

#include "csrc/abi.h"

// The exports of kernel_export.go.
extern int fakecudaRunKernel(struct fakecuda_kernel_call *);
extern int fakecudaCheckPTX(struct fakecuda_ptx_check *);

static void fk_set_runner(void *set) { ((void (*)(fakecuda_kernel_runner))set)(fakecudaRunKernel); }
static void fk_set_checker(void *set) { ((void (*)(fakecuda_ptx_checker))set)(fakecudaCheckPTX); }
static int fk_register(void *fn, const char *name, int n, const unsigned *sizes) {
	return ((int (*)(const char *, int, const unsigned *))fn)(name, n, sizes);
}
static int fk_unregister(void *fn, const char *name) { return ((int (*)(const char *))fn)(name); }
// The result comes back by value: a Go pointer argument would make the
// Go side allocate at every call.
struct fk_pin_result {
	int r;
	uint64_t base, size;
};
static struct fk_pin_result fk_pin(void *fn, void *op, uint64_t ptr, size_t n) {
	unsigned long long b = 0;
	size_t size = 0;
	int r = ((int (*)(void *, unsigned long long, size_t, unsigned long long *, size_t *))fn)(op, ptr, n, &b, &size);
	struct fk_pin_result res = {r, b, size};
	return res;
}
static void fk_note(void *fn, void *op, uint64_t ptr, size_t n, int write) {
	((void (*)(void *, unsigned long long, size_t, int))fn)(op, ptr, n, write);
}
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// cudaErrorLaunchFailed is CUDA_ERROR_LAUNCH_FAILED.
const cudaErrorLaunchFailed = 719

// KernelCall is one run of a launch of a Go kernel, as a stream's worker
// thread of the fake hands it over, in stream order. It is valid during
// the call only.
type KernelCall struct {
	// Op is the running operation, the token of Pin and NoteAccess.
	Op unsafe.Pointer
	// Name is the kernel's name, C memory (strings.Clone keeps it).
	Name           string
	Grid, Block    [3]uint32
	SharedMemBytes uint32
	// ParamsKnown says whether Sizes and Offsets give the parameter layout
	// (from the PTX's .param list or the registration); Params is the
	// parameter buffer the launch copied. Sizes, Offsets and Params are C
	// memory, valid during the call only.
	ParamsKnown     bool
	Sizes, Offsets  []uint32
	Params          []byte
	Stream, Context uint64 // the launch's stream handle (0 for the NULL stream) and its context's
	// PTX is the text of the kernel's module, C memory valid during the
	// call only, when the module was loaded from PTX; PTXID names that
	// text, one per module load (0 for a binary image).
	PTX   string
	PTXID uint64
	// Cooperative is a cooperative launch's: its blocks run at once.
	Cooperative bool
}

var kernelRunner atomic.Pointer[func(*KernelCall) int]

// PTXCheck is what the fake hands its PTX checker: a module's PTX as it
// loads, or one entry of it before the entry's first launch.
type PTXCheck struct {
	// PTX is the module's text, C memory valid during the call only
	// (strings.Clone keeps it); PTXID is KernelCall's.
	PTX   string
	PTXID uint64
	// Entry is the entry to check, "" for the load of the module; C
	// memory too.
	Entry string
}

var ptxChecker atomic.Pointer[func(*PTXCheck) int]

// kernelSyms are the controls of Go kernels, resolved once.
type kernelSyms struct {
	setRunner, register, unregister, pin, note, setChecker unsafe.Pointer
}

func (l *Lib) kernelSyms() (*kernelSyms, error) {
	s := l.syms()
	return &s.kernel, s.kernelErr
}

// SetKernelRunner makes run the function that runs Go kernels: the fake's
// stream threads call it for each launch of a function resolved from a
// module, in stream order, and leave the result it returns (0, or a
// CUresult) sticky in the launch's context. run must not call the driver.
func (l *Lib) SetKernelRunner(run func(*KernelCall) int) error {
	s, err := l.kernelSyms()
	if err != nil {
		return err
	}
	kernelRunner.Store(&run)
	C.fk_set_runner(s.setRunner)
	return nil
}

// SetPTXChecker makes check the function that vets PTX ahead of running
// it: the fake calls it, on a thread of its own while the caller waits,
// with each module's PTX as it loads (a result other than 0, normally
// CUDA_ERROR_INVALID_PTX, fails the load), and with each entry of a PTX
// module before its first launch, cuGraphAddKernelNode or
// cuGraphExecKernelNodeSetParams (a result other than 0, normally
// CUDA_ERROR_NOT_SUPPORTED, is that call's, and the check is made again
// next time; success is remembered). check must not call the driver.
func (l *Lib) SetPTXChecker(check func(*PTXCheck) int) error {
	s, err := l.kernelSyms()
	if err != nil {
		return err
	}
	ptxChecker.Store(&check)
	C.fk_set_checker(s.setChecker)
	return nil
}

// RegisterKernel makes name resolvable in modules: an entry of that name
// of a PTX module, or any name of a cubin or fatbin, whose parameter
// sizes are then sizes (nil: unknown; PTX gives its own).
func (l *Lib) RegisterKernel(name string, sizes []int) error {
	s, err := l.kernelSyms()
	if err != nil {
		return err
	}
	cs := make([]C.unsigned, len(sizes)+1)
	for i, v := range sizes {
		if v <= 0 || v > 4096 {
			return fmt.Errorf("fakecuda: kernel %s: parameter %d of %d bytes", name, i, v)
		}
		cs[i] = C.unsigned(v)
	}
	n := C.int(len(sizes))
	if sizes == nil {
		n = -1
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if C.fk_register(s.register, cn, n, &cs[0]) != 0 {
		return fmt.Errorf("fakecuda: cannot register kernel %q", name)
	}
	return nil
}

// UnregisterKernel undoes RegisterKernel; it reports whether name was
// registered.
func (l *Lib) UnregisterKernel(name string) bool {
	s, err := l.kernelSyms()
	if err != nil {
		return false
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.fk_unregister(s.unregister, cn) == 0
}

// Pin checks that the running kernel op may reach [ptr, ptr+n), which
// must lie in one live allocation, and keeps that allocation mapped until
// op completes; it returns the allocation's bounds.
func (l *Lib) Pin(op unsafe.Pointer, ptr, n uint64) (base, size uint64, ok bool) {
	s, err := l.kernelSyms()
	if err != nil {
		return 0, 0, false
	}
	res := C.fk_pin(s.pin, op, C.uint64_t(ptr), C.size_t(n))
	if res.r != 0 {
		return 0, 0, false
	}
	return uint64(res.base), uint64(res.size), true
}

// NoteAccess reports to the race detector that op read (or wrote)
// [ptr, ptr+n) (fakecuda_note_access).
func (l *Lib) NoteAccess(op unsafe.Pointer, ptr, n uint64, write bool) {
	s, err := l.kernelSyms()
	if err != nil {
		return
	}
	w := C.int(0)
	if write {
		w = 1
	}
	C.fk_note(s.note, op, C.uint64_t(ptr), C.size_t(n), w)
}
