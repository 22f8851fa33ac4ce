// Package cu is the raw binding of the CUDA Driver API: every function of
// NVIDIA's cuda.h for one CUDA version, generated from the header (see
// gen/), with its types, enums, structs and unions in their exact C layout
// and its integer macros.
//
// # Versions
//
// Build tags pick the header the bindings follow, one version per build:
// cuda11080, cuda12040, cuda13000 (and the others of headers/versions.json);
// no tag is the manifest's default, CUDA 12.4. HeaderVersion() returns
// which was built (12040 for CUDA 12.4). A newer driver runs older bindings: each function is resolved
// through cuGetProcAddress for the header's CUDA_VERSION, so the driver hands
// back the ABI the header declares.
//
// # Names
//
// Functions drop the cu prefix and bind the versioned symbol the header
// selects: cuMemAlloc is MemAlloc, calling cuMemAlloc_v2. Types, enum values
// and constants keep their C spelling (CUcontext, CUDA_ERROR_INVALID_VALUE).
// Each function's doc comment names the C function, the symbol and the
// first version of the matrix that declares it.
//
// # Errors
//
// Every function returns error: nil on CUDA_SUCCESS, otherwise the CUresult
// itself (err == CUDA_ERROR_NOT_READY and errors.Is both work), a
// *LoadError (matching ErrNoDriver) when no driver library can be loaded,
// or a *MissingFunctionError (matching ErrMissingFunction) naming the
// function and the version it needs when the installed driver is older.
// Nothing here panics or crashes for want of a driver: the library is
// opened at run time (dlopen of libcuda.so.1, or the path in
// GOCUDA_LIBCUDA), and building needs only a C compiler.
//
// # The current context
//
// Like C, these functions use the calling OS thread's current context, and
// goroutines move between threads at any call: lock the goroutine to its
// thread (runtime.LockOSThread) around a sequence that sets a context and
// uses it. Package github.com/gocuda/gocuda/cuda does that for you.
//
// # Pointers
//
// Pointer arguments follow cgo's rules, and cgo checks the whole Go
// allocation a pointer points into: pass the address of a variable or of
// pointer-free memory (a numeric slice, C memory), never of a field of a
// struct that also holds Go pointers. Memory the driver keeps using after
// the call returns (asynchronous copies, registered host memory, kernel
// arguments) must be C memory or pinned (runtime.Pinner) page-locked
// memory. Which bindings let cgo keep their pointer arguments on the stack
// (#cgo noescape and nocallback) is the reviewed table of gen/cgopolicy.go.
//
// Proc returns the entry point of a function for C code of the caller's
// own.
package cu
