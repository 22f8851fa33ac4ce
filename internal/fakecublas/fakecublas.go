//go:build linux && (amd64 || arm64)

// Package fakecublas builds a fake cuBLAS and cuBLASLt: one shared
// library with the entry points of both that packages generated/cublas
// and generated/cublaslt load, for tests of package cuda/blas on machines
// without a GPU, on top of the fake CUDA driver of internal/fakecuda
// (which it needs: its device memory is host memory). Setup points
// GOCUDA_LIBCUBLAS and GOCUDA_LIBCUBLASLT at it.
//
// The library is C (csrc/), written from the ABI of cublas_api.h and
// cublasLt.h as the generated bindings describe it, and compiled at test
// time with the machine's C compiler, like the fake driver. What it
// models:
//
//   - cuBLAS handles (cublasCreate, cublasDestroy, which waits for the
//     handle's stream), cublasSetStream and cublasGetStream,
//     cublasSetWorkspace (checked, kept, unused), cublasSetMathMode and
//     cublasGetMathMode, cublasSetPointerMode and cublasGetPointerMode,
//     cublasGetVersion, cublasGetProperty, cublasGetStatusName and
//     cublasGetStatusString; cuBLASLt handles, cublasLtGetVersion and
//     cublasLtGetProperty. The version is FAKECUBLAS_VERSION
//     (10000·major + 100·minor + patch; Setup sets the CUDA version of the
//     bindings, 130000 for 13.0).
//   - GEMM: cublasSgemm, cublasDgemm, cublasHgemm (for C callers: the
//     bindings have no half type to bind it with) and their
//     strided-batched forms; cublasGemmEx, cublasGemmStridedBatchedEx and
//     cublasGemmBatchedEx with float32, float64, float16 and bfloat16
//     operands and the compute types 16F, 32F (with its FAST_16F,
//     FAST_16BF and FAST_TF32 forms) and 64F; the operations N, T and C
//     (C is T: the types are real); alpha and beta in host or device
//     memory (the handle's pointer mode). CUBLAS_TF32_TENSOR_OP_MATH and
//     CUBLAS_COMPUTE_32F_FAST_TF32 round float32 inputs to TF32 (to
//     nearest, ties away from zero, as PTX's cvt.rna.tf32.f32).
//   - Level 1 and 2 in float32 and float64: AXPY, SCAL, DOT, NRM2 (a
//     result in host memory is waited for, as cuBLAS does) and GEMV.
//   - cuBLASLt: matmul descriptors (compute and scale type, pointer mode,
//     the operations, the epilogue, the bias pointer, type and batch
//     stride, the A and B scale pointers; FAST_ACCUM is taken and changes
//     nothing), matrix layouts (type, column or row order, rows, columns,
//     leading dimension, batch count and stride), preferences (the
//     workspace bound; the other preferences are taken and narrow
//     nothing), cublasLtMatmul with the epilogues DEFAULT, RELU, BIAS,
//     RELU_BIAS, GELU (the tanh form) and GELU_BIAS, float32, float16,
//     bfloat16 and FP8 (E4M3×E4M3, E4M3×E5M2, E5M2×E4M3, column order, A
//     transposed and B not, as cuBLASLt takes them, with a bfloat16 bias
//     for a float32 result and one of the result's type otherwise) inputs,
//     and float32, float16 or bfloat16 results.
//   - One algorithm, id 0, which needs no workspace:
//     cublasLtMatmulAlgoGetHeuristic answers it, cublasLtMatmulAlgoGetIds
//     lists it for the types it models, cublasLtMatmulAlgoInit makes it,
//     its capabilities read as none (no split-K, tiles, stages, swizzling
//     or custom options) and its configuration attributes read and set as
//     cuBLASLt's; cublasLtMatmulAlgoCheck takes only the default
//     configuration (any cluster shape), so that LtHandle.Tune works and
//     finds candidates that differ in the cluster shape only.
//
// Every computation runs in stream order on the caller's stream as a host
// function of the fake driver (cuLaunchHostFunc), reading and writing
// device memory directly, and its accesses are reported to the fake
// driver's race detector. A stream that is capturing gets the host
// function as a graph node: the work is kept for the process's life, as a
// graph may launch it any number of times.
//
// Where it is simpler than cuBLAS: each element of a product is summed in
// double precision, in the order of k, and rounded once to the result's
// type (a GPU accumulates in the compute type, in an order of its own):
// results agree with cuBLAS within the float32 rounding of the sum.
// float16 compute (CUBLAS_COMPUTE_16F) also sums in double. Nothing is
// tuned, so every algorithm, tile and configuration runs the same code.
// The arguments are checked as cuBLAS documents: a NULL or destroyed
// handle gives CUBLAS_STATUS_NOT_INITIALIZED; negative sizes, a leading
// dimension shorter than a column, an unknown operation, or memory that
// lies in no allocation of the fake driver give
// CUBLAS_STATUS_INVALID_VALUE; types, attributes and epilogues it does not
// model give CUBLAS_STATUS_NOT_SUPPORTED. The message of the last failed
// call of a thread, naming the function, is kept for LastError
// (FAKECUBLAS_VERBOSE=1 also prints it on standard error). A pointer of cublasGemmBatchedEx's arrays, read when
// the product runs, that lies in no allocation skips its product with a
// message on standard error, where a GPU would fault.
//
// Every other function of cublas_api.h and cublasLt.h is absent, so a call
// of it gets an error matching cublas.ErrMissingFunction (or
// cublaslt.ErrMissingFunction).
package fakecublas

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>


// fb_live calls fakecublas_live of the library at path, already loaded;
// -1 when it is not.
static long fb_live(const char *path, int kind) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return -1;
	long (*fn)(int) = (long (*)(int))dlsym(h, "fakecublas_live");
	long n = fn != NULL ? fn(kind) : -1;
	dlclose(h);
	return n;
}

// fb_last_error calls fakecublas_last_error of the library at path,
// already loaded; NULL when it is not.
static const char *fb_last_error(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return NULL;
	const char *(*fn)(void) = (const char *(*)(void))dlsym(h, "fakecublas_last_error");
	const char *msg = fn != NULL ? fn() : NULL;
	dlclose(h);
	return msg;
}
*/
import "C"

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/dynlib"
	"github.com/gocuda/gocuda/internal/fakelib"
)

// VersionEnv names the variable whose value the fake reports as its
// version (cublasGetProperty, cublasGetVersion, cublasLtGetVersion).
const VersionEnv = "FAKECUBLAS_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

var library = cbuild.Library{
	Name:    "fakecublas",
	What:    "the fake cuBLAS",
	Sources: sources,
	Dir:     "csrc",
	Shared:  []cbuild.Sources{fakelib.CSources},
	Flags:   []string{"-shared", "-fPIC", "-O2", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
	Libs:    []string{"-ldl", "-lm"},
}

// Build compiles the fake cuBLAS into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change, as fakecuda.Build's.
func Build(dir string) (string, error) {
	return library.Build(dir)
}

// Version is the version the fake reports for bindings of a CUDA
// version (12040 → 120400: cuBLAS numbers its releases after CUDA's).
func Version(cudaVersion int) int {
	return cudaVersion/1000*10000 + cudaVersion%1000/10*100
}

// Setup builds the fake cuBLAS and points cublas.LibraryEnv
// (GOCUDA_LIBCUBLAS) and cublaslt.LibraryEnv (GOCUDA_LIBCUBLASLT) at it,
// with VersionEnv set to the version of the bindings unless it is set
// already. Call it before anything in the process calls generated/cublas
// or generated/cublaslt, which open their libraries once, and only where
// the process uses the fake CUDA driver.
func Setup() (string, error) {
	path, err := Build("")
	if err != nil {
		return "", err
	}
	if os.Getenv(VersionEnv) == "" {
		if err := os.Setenv(VersionEnv, strconv.Itoa(Version(cublas.HeaderVersion()))); err != nil {
			return "", err
		}
	}
	return path, errors.Join(os.Setenv(cublas.LibraryEnv, path), os.Setenv(cublaslt.LibraryEnv, path))
}

// SetupUnlessSet is Setup for the variables that are not set: a user's
// choice of library (or of none) stays, each of the two on its own. It
// builds nothing when both are set, and returns the path of the fake, or
// "" then.
func SetupUnlessSet() (string, error) {
	envs := []string{cublas.LibraryEnv, cublaslt.LibraryEnv}
	var unset []string
	for _, e := range envs {
		if os.Getenv(e) == "" {
			unset = append(unset, e)
		}
	}
	if len(unset) == 0 {
		return "", nil
	}
	path, err := Build("")
	if err != nil {
		return "", err
	}
	if os.Getenv(VersionEnv) == "" {
		if err := os.Setenv(VersionEnv, strconv.Itoa(Version(cublas.HeaderVersion()))); err != nil {
			return "", err
		}
	}
	for _, e := range unset {
		if err := os.Setenv(e, path); err != nil {
			return "", err
		}
	}
	return path, nil
}

// Is reports whether the library at path is the fake cuBLAS.
func Is(path string) bool { return dynlib.Exports(path, "fakecublas_marker") }

// Active reports whether generated/cublas loaded the fake (loading the
// library if it has not).
func Active() bool {
	return cublas.Load() == nil && Is(cublas.LibraryPath())
}

// Counts are the fake's live objects.
type Counts struct {
	Handles, LtHandles, MatmulDescs, Layouts, Preferences int
}

// Live returns the objects of the loaded fake that are not destroyed, or
// an error when generated/cublas did not load the fake.
func Live() (Counts, error) {
	if !Active() {
		return Counts{}, fmt.Errorf("fakecublas: the loaded cuBLAS is not the fake")
	}
	cp := C.CString(cublas.LibraryPath())
	defer C.free(unsafe.Pointer(cp))
	var n [5]int
	for i := range n {
		v := C.fb_live(cp, C.int(i))
		if v < 0 {
			return Counts{}, fmt.Errorf("fakecublas: cannot count the live objects of %s", cublas.LibraryPath())
		}
		n[i] = int(v)
	}
	return Counts{n[0], n[1], n[2], n[3], n[4]}, nil
}

// LastError returns the message the fake kept of the last call that failed
// on the calling OS thread ("" when none has): which function refused
// what. The message is per thread, as cuBLAS's state is per call: lock
// the goroutine to its thread (runtime.LockOSThread) around the call and
// this one.
func LastError() string {
	if !Active() {
		return ""
	}
	cp := C.CString(cublas.LibraryPath())
	defer C.free(unsafe.Pointer(cp))
	if msg := C.fb_last_error(cp); msg != nil {
		return C.GoString(msg)
	}
	return ""
}
