// Package cufft is the raw binding of cuFFT, NVIDIA's fast Fourier transforms: 1-, 2- and 3-D, batched, complex and real plans that execute on a stream: every function of
// cufft.h for one CUDA version, generated from the header by gen/ with the
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
// Functions drop the library prefix: cufftPlan1d is Plan1d; cufftComplex is Go's complex64 and cufftDoubleComplex complex128. Types take their C spelling
// with the first letter upper-cased so that Go exports them; enum values
// keep theirs. A type another header declares is that header's Go type:
// cudaStream_t is cu.CUstream (a *cuda.Stream's Raw passes straight in),
// cudaDataType is libtypes.CudaDataType, cuComplex is complex64 and
// cuDoubleComplex complex128.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// CufftResult itself (errors.Is(err, CUFFT_INVALID_PLAN) works), a *LoadError
// (matches ErrNoLibrary) when no cuFFT library can be opened, or a
// *MissingFunctionError (matches ErrMissingFunction) when the installed
// library lacks the function. A function that returns a value rather than
// a status returns it with an error that says only whether the call could
// be made.
//
// # Loading
//
// On the first call the package dlopens libcufft.so.10 for 11.x, .11 for 12.x, .12 for 13.x, or the path in
// GOCUDA_LIBCUFFT, and resolves every function with dlsym once. Building needs
// only a C compiler; a program that never calls the package never needs
// the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cufft
