// Package cublaslt is the raw binding of cuBLASLt, the lightweight cuBLAS: matrix multiplies with layouts, epilogues, FP8 and the algorithm search of its heuristic: every function of
// cublasLt.h for one CUDA version, generated from the header by gen/ with the
// conventions of package cu.
//
// # Versions
//
// The build tags of package cu pick the header (cuda11080, cuda12040, …; no
// tag is CUDA 12.4). A version of the matrix without the header of its own
// uses the newest one before it. HeaderVersion() returns which was built.
//
// # Names and types
//
// Functions drop the library prefix: cublasLtMatmul is Matmul. Its functions return cuBLAS's status, cublas.CublasStatus_t, and take cuBLAS's enums (cublas.CublasOperation_t), as in C. Types take their C spelling
// with the first letter upper-cased so that Go exports them; enum values
// keep theirs. A type another header declares is that header's Go type:
// cudaStream_t is cu.CUstream (a *cuda.Stream's Raw passes straight in),
// cudaDataType is libtypes.CudaDataType, cuComplex is complex64 and
// cuDoubleComplex complex128.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// cublas.CublasStatus_t itself (errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) works), a *LoadError
// (matches ErrNoLibrary) when no cuBLASLt library can be opened, or a
// *MissingFunctionError (matches ErrMissingFunction) when the installed
// library lacks the function. A function that returns a value rather than
// a status returns it with an error that says only whether the call could
// be made.
//
// # Loading
//
// On the first call the package dlopens libcublasLt.so.11, .12 or .13 by major version, or the path in
// GOCUDA_LIBCUBLASLT, and resolves every function with dlsym once. Building needs
// only a C compiler; a program that never calls the package never needs
// the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cublaslt
