// Package cublas is the raw binding of cuBLAS, NVIDIA's BLAS on the GPU: every function of
// cublas_v2.h (with cublas_api.h) for one CUDA version, generated from the header by gen/ with the
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
// Functions drop the library prefix: cublasSgemm is Sgemm, bound to the symbol cublas_v2.h selects (cublasSgemm_v2); the 64-bit-index variants keep their suffix (Sgemm_64). The functions cuBLAS declares only for C++ (the __half ones such as cublasHgemm) are not in C and not bound; GemmEx and the Lt package reach half precision. Types take their C spelling
// with the first letter upper-cased so that Go exports them; enum values
// keep theirs. A type another header declares is that header's Go type:
// cudaStream_t is cu.CUstream (a *cuda.Stream's Raw passes straight in),
// cudaDataType is libtypes.CudaDataType, cuComplex is complex64 and
// cuDoubleComplex complex128.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// CublasStatus_t itself (errors.Is(err, CUBLAS_STATUS_NOT_INITIALIZED) works), a *LoadError
// (matches ErrNoLibrary) when no cuBLAS library can be opened, or a
// *MissingFunctionError (matches ErrMissingFunction) when the installed
// library lacks the function. A function that returns a value rather than
// a status returns it with an error that says only whether the call could
// be made.
//
// # Loading
//
// On the first call the package dlopens libcublas.so.11, .12 or .13 by major version, or the path in
// GOCUDA_LIBCUBLAS, and resolves every function with dlsym once. Building needs
// only a C compiler; a program that never calls the package never needs
// the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cublas
