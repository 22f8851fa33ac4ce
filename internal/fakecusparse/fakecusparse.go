//go:build linux && (amd64 || arm64)

// Package fakecusparse builds a fake cuSPARSE: a shared library with the
// entry points of cuSPARSE's generic API that package cuda/sparse calls,
// which package generated/cusparse loads, for tests on machines without a
// GPU, on top of the fake CUDA driver of internal/fakecuda (which it
// needs: its device memory is host memory). Setup points
// GOCUDA_LIBCUSPARSE at it.
//
// The library is C (csrc/), written from the ABI of cusparse.h as the
// generated bindings describe it (11.8 to 13.0 agree on every entry point
// here), and compiled at test time with the machine's C compiler, like
// the fake driver. What it models:
//
//   - handles: cusparseCreate, cusparseDestroy, cusparseSetStream,
//     cusparseGetStream, cusparseGetVersion and cusparseGetProperty (the
//     version is FAKECUSPARSE_VERSION, as CUSPARSE_VERSION spells it; Setup
//     sets the bindings' CUSPARSE_VERSION);
//   - descriptors: cusparseCreateCsr, cusparseCreateCsc, cusparseCreateCoo,
//     cusparseCreateBsr (blocks of any shape, in either order; 32- and
//     64-bit indices, base zero or one), cusparseDestroySpMat,
//     cusparseSpMatGetSize, cusparseCsrSetPointers,
//     cusparseSpMatSetAttribute (fill mode and diagonal type),
//     cusparseCreateDnVec, cusparseDestroyDnVec, cusparseCreateDnMat
//     (column or row order) and cusparseDestroyDnMat, with float32,
//     float64, complex64 and complex128 values;
//   - cusparseSpMV and cusparseSpMM with their bufferSize calls, every
//     operation on A (and on B), every format above (cuSPARSE's SpMM takes
//     no BSR: cuda/sparse refuses it before the call);
//   - cusparseSpGEMM_createDescr, _destroyDescr, _workEstimation,
//     _compute and _copy for CSR operands, not transposed: C = alpha·A·B
//     with each row's columns in increasing order;
//   - cusparseSpSV_createDescr, _destroyDescr, _bufferSize, _analysis and
//     _solve, and the same of cusparseSpSM, for CSR and COO triangles,
//     every operation (on A, and on SpSM's B).
//
// Each step that needs a buffer asks for a small one and refuses NULL or
// memory outside the fake driver's allocations; values, operand types and
// the compute type must be one type (cuSPARSE's mixed types are
// CUSPARSE_STATUS_NOT_SUPPORTED). A handle or descriptor that is not live
// is refused rather than followed. The message of a thread's last failed
// call is kept for LastError (FAKECUSPARSE_VERBOSE=1 prints it).
//
// Every computation runs in stream order on the handle's stream as a host
// function of the fake driver (cuLaunchHostFunc), reading and writing
// device memory directly, and its accesses (buffers included) are
// reported to the fake driver's race detector. SpGEMM's compute step
// waits for its stream, as cuSPARSE's does to learn C's size, and so
// refuses a stream being captured.
//
// Where it is simpler than cuSPARSE: results are summed in double
// (complex) precision and rounded once, in the order of the matrix's
// entries; a GPU sums in the compute type in an order of its own, so
// results agree within the rounding of the sum. Malformed index arrays
// (offsets that do not run from 0 to the number of entries, indices
// outside the matrix) are reported on standard error and leave the
// output as it was, where
// a GPU's result is undefined. Every other function of cusparse.h is
// absent, so a call of it gets an error matching
// cusparse.ErrMissingFunction.
package fakecusparse

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// fs_live calls fakecusparse_live of the library at path, already
// loaded; -1 when it is not.
static long fs_live(const char *path, int kind) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return -1;
	long (*fn)(int) = (long (*)(int))dlsym(h, "fakecusparse_live");
	long n = fn != NULL ? fn(kind) : -1;
	dlclose(h);
	return n;
}

static const char *fs_last_error(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return NULL;
	const char *(*fn)(void) = (const char *(*)(void))dlsym(h, "fakecusparse_last_error");
	const char *msg = fn != NULL ? fn() : NULL;
	dlclose(h);
	return msg;
}
*/
import "C"

import (
	"embed"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/fakelib"
)

// VersionEnv names the variable whose value the fake reports as its
// version (cusparseGetVersion, cusparseGetProperty).
const VersionEnv = "FAKECUSPARSE_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// fake is the fake's build and what loads it. Frame pointers let the
// fake driver's race detector walk from the driver's frames through the
// fake's into those of the Go code that called it.
var fake = fakelib.Fake{
	Library: cbuild.Library{
		Name:    "fakecusparse",
		What:    "the fake cuSPARSE",
		Sources: sources,
		Dir:     "csrc",
		Shared:  []cbuild.Sources{fakelib.CSources},
		Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
		Libs:    []string{"-ldl", "-lm"},
	},
	Env:        cusparse.LibraryEnv,
	VersionEnv: VersionEnv,
	Version:    cusparse.CUSPARSE_VERSION,
	Load:       cusparse.Load,
	Path:       cusparse.LibraryPath,
}

// Build compiles the fake cuSPARSE into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change.
func Build(dir string) (string, error) { return fake.Build(dir) }

// Setup builds the fake cuSPARSE and points cusparse.LibraryEnv
// (GOCUDA_LIBCUSPARSE) at it, with VersionEnv set to the bindings'
// cusparse.CUSPARSE_VERSION unless it is set already. Call it before
// anything in the process calls generated/cusparse, which opens its
// library once, and only where the process uses the fake CUDA driver.
func Setup() (string, error) { return fake.Setup() }

// Is reports whether the library at path is the fake cuSPARSE.
func Is(path string) bool { return fake.Is(path) }

// Active reports whether generated/cusparse loaded the fake cuSPARSE
// (loading the library if it has not).
func Active() bool { return fake.Active() }

// Counts are the fake's live objects.
type Counts struct {
	Handles, SpMats, DnVecs, DnMats, SpGEMMDescrs, SpSVDescrs, SpSMDescrs int
}

// Live returns the objects of the loaded fake that are not destroyed, or
// an error when generated/cusparse did not load the fake.
func Live() (Counts, error) {
	if !Active() {
		return Counts{}, fmt.Errorf("fakecusparse: the loaded cuSPARSE is not the fake")
	}
	cp := C.CString(cusparse.LibraryPath())
	defer C.free(unsafe.Pointer(cp))
	var n [7]int
	for i := range n {
		v := C.fs_live(cp, C.int(i))
		if v < 0 {
			return Counts{}, fmt.Errorf("fakecusparse: cannot count the live objects of %s", cusparse.LibraryPath())
		}
		n[i] = int(v)
	}
	return Counts{n[0], n[1], n[2], n[3], n[4], n[5], n[6]}, nil
}

// LastError returns the message the fake kept of the last call that failed
// on the calling OS thread ("" when none has). The message is per thread:
// lock the goroutine to its thread (runtime.LockOSThread) around the call
// and this one.
func LastError() string {
	if !Active() {
		return ""
	}
	cp := C.CString(cusparse.LibraryPath())
	defer C.free(unsafe.Pointer(cp))
	if msg := C.fs_last_error(cp); msg != nil {
		return C.GoString(msg)
	}
	return ""
}
