package fakecuda

/*
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "csrc/abi.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// calls recycles KernelCall values: a run allocates nothing, so that the
// kernels running in the background do not count in the allocation
// measurements of tests (testing.AllocsPerRun counts the whole process).
var calls = sync.Pool{New: func() any { return new(KernelCall) }}

// fakecudaRunKernel is the fake driver's callback (fakecuda_set_kernel_runner):
// a stream's worker thread calls it to run one launch of a Go kernel, and
// the result it returns is left sticky in the launch's context.
//
//export fakecudaRunKernel
func fakecudaRunKernel(c *C.struct_fakecuda_kernel_call) C.int {
	run := kernelRunner.Load()
	if run == nil {
		return cudaErrorLaunchFailed
	}
	k := calls.Get().(*KernelCall)
	defer calls.Put(k)
	*k = KernelCall{
		Op:             unsafe.Pointer(c.op),
		Name:           unsafe.String((*byte)(unsafe.Pointer(c.name)), int(C.strlen(c.name))),
		SharedMemBytes: uint32(c.shmem),
		ParamsKnown:    c.params_known != 0,
		Stream:         uint64(c.stream),
		Context:        uint64(c.ctx),
		Cooperative:    c.cooperative != 0,
	}
	for d := range 3 {
		k.Grid[d], k.Block[d] = uint32(c.grid[d]), uint32(c.block[d])
	}
	if k.ParamsKnown && c.nparams > 0 {
		k.Sizes = unsafe.Slice((*uint32)(unsafe.Pointer(c.psize)), int(c.nparams))
		k.Offsets = unsafe.Slice((*uint32)(unsafe.Pointer(c.poff)), int(c.nparams))
	}
	if c.ptx != nil {
		k.PTX = unsafe.String((*byte)(unsafe.Pointer(c.ptx)), int(c.ptx_len))
		k.PTXID = uint64(c.ptx_id)
	}
	if c.bytes > 0 {
		k.Params = unsafe.Slice((*byte)(unsafe.Pointer(c.params)), int(c.bytes))
	}
	return C.int((*run)(k))
}

// fakecudaCheckPTX is the fake driver's callback (fakecuda_set_ptx_checker):
// it runs the checker on a module's PTX or on an entry of it.
//
//export fakecudaCheckPTX
func fakecudaCheckPTX(c *C.struct_fakecuda_ptx_check) C.int {
	check := ptxChecker.Load()
	if check == nil {
		return 0
	}
	p := &PTXCheck{
		PTX:   unsafe.String((*byte)(unsafe.Pointer(c.ptx)), int(c.ptx_len)),
		PTXID: uint64(c.ptx_id),
	}
	if c.entry != nil {
		p.Entry = unsafe.String((*byte)(unsafe.Pointer(c.entry)), int(C.strlen(c.entry)))
	}
	return C.int((*check)(p))
}
