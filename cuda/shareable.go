package cuda

/*
#include "zfused.h"

// The driver takes a POSIX file descriptor as the value of a pointer
// parameter. Cast here, it is never a pointer on the Go side, where the
// runtime would take a small integer in a pointer slot for a bad pointer.
static int gocuda_import_fd(uintptr_t fn, void *out, int fd, int type) {
	return ((gocuda_cuMemImportFromShareableHandle_fn)fn)(out, (void *)(intptr_t)fd, type);
}

static int gocuda_pool_import_fd(uintptr_t fn, void *out, int fd, int type) {
	return ((gocuda_cuMemPoolImportFromShareableHandle_fn)fn)(out, (void *)(intptr_t)fd, type, 0);
}
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// importFD imports the file descriptor of f (cuMemImportFromShareableHandle,
// or cuMemPoolImportFromShareableHandle when pool) into *out, a
// CUmemGenericAllocationHandle or a CUmemoryPool, with ctx bound.
func importFD(op string, ctx cu.CUcontext, f *os.File, pool bool, out unsafe.Pointer) error {
	name := "cuMemImportFromShareableHandle"
	if pool {
		name = "cuMemPoolImportFromShareableHandle"
	}
	fn, err := cu.Proc(name)
	if err != nil {
		return newError(op, name, err)
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	typ := C.int(cu.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
	var r C.int
	err = bind(op, ctx, func() error {
		cerr := sc.Control(func(fd uintptr) {
			if pool {
				r = C.gocuda_pool_import_fd(C.uintptr_t(fn), out, C.int(fd), typ)
			} else {
				r = C.gocuda_import_fd(C.uintptr_t(fn), out, C.int(fd), typ)
			}
		})
		if cerr != nil {
			return &Error{Op: op, Err: cerr}
		}
		if r != 0 {
			return newError(op, name, cu.CUresult(r))
		}
		return nil
	})
	return err
}
