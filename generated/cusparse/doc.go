// Package cusparse is the raw binding of cuSPARSE, NVIDIA's sparse linear algebra: the generic API (SpMV, SpMM, SpGEMM on CSR, COO, blocked formats) and the legacy routines each version still declares: every function of
// cusparse.h for one CUDA version, generated from the header by gen/ with the
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
// Functions drop the library prefix: cusparseSpMV is SpMV. Types take their C spelling
// with the first letter upper-cased so that Go exports them; enum values
// keep theirs. A type another header declares is that header's Go type:
// cudaStream_t is cu.CUstream (a *cuda.Stream's Raw passes straight in),
// cudaDataType is libtypes.CudaDataType, cuComplex is complex64 and
// cuDoubleComplex complex128.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// CusparseStatus_t itself (errors.Is(err, CUSPARSE_STATUS_INVALID_VALUE) works), a *LoadError
// (matches ErrNoLibrary) when no cuSPARSE library can be opened, or a
// *MissingFunctionError (matches ErrMissingFunction) when the installed
// library lacks the function. A function that returns a value rather than
// a status returns it with an error that says only whether the call could
// be made.
//
// # Loading
//
// On the first call the package dlopens libcusparse.so.11 for 11.x, .12 for 12.x and 13.x, or the path in
// GOCUDA_LIBCUSPARSE, and resolves every function with dlsym once. Building needs
// only a C compiler; a program that never calls the package never needs
// the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cusparse
