// Package cufile is the raw binding of cuFile, NVIDIA's GPUDirect Storage
// API: file handles registered with the driver, buffers registered for
// DMA, and reads and writes between a file and device memory (synchronous,
// batched, and stream-ordered from CUDA 12.2): every function of cufile.h
// for one CUDA version, generated from the header by gen/ with the
// conventions of package cu. Where the machine has no GPUDirect Storage,
// cuFile works in compatibility mode, through the page cache.
//
// # Versions
//
// The build tags of package cu pick the header (cuda11080, cuda12040, …; no
// tag is CUDA 12.4). A version of the matrix without the header of its own
// uses the newest one before it: cuda12080 builds 12.5's. Debian ships
// cufile.h in libcufile-dev, apart from the other headers:
// headers/versions.json names that package for it (13.0's comes from the
// toolkit, with the rest).
// HeaderVersion() returns which was built.
//
// # Names and types
//
// Functions drop the library prefix: cuFileRead is Read. Types and enum
// values keep their C spelling. A type another header declares is that
// header's Go type: CUstream is cu.CUstream, CUresult cu.CUresult.
//
// # Errors
//
// cuFile's functions return a struct, CUfileError_t: cuFile's own code
// (Err, a CUfileOpError) and, when that code is CU_FILE_CUDA_DRIVER_ERROR,
// the driver's (Cu_err). A binding returns nil when Err is
// CU_FILE_SUCCESS, otherwise the CUfileError_t itself, which errors.Is
// matches against either field's values (errors.Is(err,
// CU_FILE_DRIVER_NOT_INITIALIZED), errors.Is(err,
// cu.CUDA_ERROR_INVALID_VALUE)); a *LoadError (matches ErrNoLibrary) when
// no cuFile library can be opened; a *MissingFunctionError (matches
// ErrMissingFunction) when the installed library lacks the function.
// Read and Write return cuFile's byte count as it is, negative on failure
// (-1 with errno set, or a negated CUfileOpError), with an error that
// says only whether the call could be made.
//
// # Loading
//
// On the first call the package dlopens libcufile.so.0, or the path in
// GOCUDA_LIBCUFILE, and resolves every function with dlsym once. Building
// needs only a C compiler; a program that never calls the package never
// needs the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cufile
