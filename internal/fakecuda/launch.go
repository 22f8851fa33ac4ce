package fakecuda

/*
#include <stdint.h>

#include "csrc/abi.h"

static uint64_t fk_func_new(void *fn, int regs, int shared, unsigned n, const unsigned *sizes) {
	return ((uint64_t (*)(int, int, unsigned, const unsigned *))fn)(regs, shared, n, sizes);
}
static int fk_func_free(void *fn, uint64_t h) { return ((int (*)(uint64_t))fn)(h); }
static long fk_last_launch(void *fn, struct fakecuda_launch *out) { return ((long (*)(struct fakecuda_launch *))fn)(out); }
*/
import "C"

import (
	"errors"
	"fmt"
)

// Function describes a kernel function of the fake driver's own: it has no
// modules, so a test makes its functions with NewFunction. The function
// answers cuFuncGetAttribute, cuFuncSetAttribute (maximum dynamic shared
// memory, non-portable cluster sizes) and
// cuOccupancyMaxActiveBlocksPerMultiprocessor, and cuLaunchKernelEx checks
// and records launches of it without running anything.
type Function struct {
	Registers    int   // registers per thread (0 to 255)
	StaticShared int   // static shared memory per block, in bytes
	Params       []int // the sizes of its parameters in bytes, 1 to 8 each; at most 32
}

// NewFunction makes a function and returns its handle (a CUfunction).
func (l *Lib) NewFunction(f Function) (uint64, error) {
	fn := l.syms().funcNew
	if fn == nil {
		return 0, errors.New("fakecuda: the library has no fakecuda_function_new")
	}
	sizes := make([]C.unsigned, len(f.Params)+1) // never empty: &sizes[0] is valid
	for i, s := range f.Params {
		sizes[i] = C.unsigned(s)
	}
	h := C.fk_func_new(fn, C.int(f.Registers), C.int(f.StaticShared), C.unsigned(len(f.Params)), &sizes[0])
	if h == 0 {
		return 0, fmt.Errorf("fakecuda: bad function %+v", f)
	}
	return uint64(h), nil
}

// FreeFunction frees a function of NewFunction.
func (l *Lib) FreeFunction(h uint64) error {
	fn := l.syms().funcFree
	if fn == nil || C.fk_func_free(fn, C.uint64_t(h)) != 0 {
		return fmt.Errorf("fakecuda: %#x is no function of the fake's", h)
	}
	return nil
}

// Launch is a launch cuLaunchKernelEx accepted.
type Launch struct {
	Function, Stream uint64
	Grid, Block      [3]uint32
	SharedMemBytes   uint32
	Attrs            []LaunchAttr
	// Params are the values of the function's parameters, each in the low
	// bytes of its element.
	Params []uint64
}

// LaunchAttr is a launch attribute as the fake received it: the
// CUlaunchAttributeID and the bytes of its value (a CUlaunchAttributeValue).
type LaunchAttr struct {
	ID    int
	Value [64]byte
}

// LastLaunch returns the last launch cuLaunchKernelEx accepted and how
// many it accepted so far (0: none, and Launch is zero).
func (l *Lib) LastLaunch() (Launch, int) {
	fn := l.syms().lastLaunch
	if fn == nil {
		return Launch{}, 0
	}
	var out C.struct_fakecuda_launch
	n := int(C.fk_last_launch(fn, &out))
	if n == 0 {
		return Launch{}, 0
	}
	r := Launch{
		Function:       uint64(out.function),
		Stream:         uint64(out.stream),
		SharedMemBytes: uint32(out.shmem),
	}
	for d := range 3 {
		r.Grid[d], r.Block[d] = uint32(out.grid[d]), uint32(out.block[d])
	}
	for i := range int(out.nattrs) {
		a := LaunchAttr{ID: int(out.attr_ids[i])}
		for j := range a.Value {
			a.Value[j] = byte(out.attr_values[i][j])
		}
		r.Attrs = append(r.Attrs, a)
	}
	for i := range int(out.nparams) {
		r.Params = append(r.Params, uint64(out.params[i]))
	}
	return r, n
}
