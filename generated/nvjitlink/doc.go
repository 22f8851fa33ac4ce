// Package nvjitlink is the raw binding of nvJitLink, NVIDIA's JIT linker: it links LTO-IR (from NVRTC with -dlto), PTX and cubins into one image that the driver loads. It runs on the CPU: every function of
// nvJitLink.h for one CUDA version, generated from the header by gen/ with the
// conventions of package cu.
//
// # Versions
//
// The build tags of package cu pick the header (cuda11080, cuda12040, …; no
// tag is CUDA 12.4). A version of the matrix without the header of its own
// uses the newest one before it (CUDA 12.4 is the first with one). HeaderVersion() returns which was built.
//
// # Names and types
//
// Functions drop the library prefix: nvJitLinkCreate is Create; the header binds each API name to the symbol of its own version (nvJitLinkCreate → __nvJitLinkCreate_12_4), so a library older than the header is a MissingFunctionError, never a wrong call. Types take their C spelling
// with the first letter upper-cased so that Go exports them; enum values
// keep theirs. A type another header declares is that header's Go type:
// cudaStream_t is cu.CUstream (a *cuda.Stream's Raw passes straight in),
// cudaDataType is libtypes.CudaDataType, cuComplex is complex64 and
// cuDoubleComplex complex128.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// NvJitLinkResult itself (errors.Is(err, NVJITLINK_ERROR_INVALID_INPUT) works), a *LoadError
// (matches ErrNoLibrary) when no nvJitLink library can be opened, or a
// *MissingFunctionError (matches ErrMissingFunction) when the installed
// library lacks the function. A function that returns a value rather than
// a status returns it with an error that says only whether the call could
// be made.
//
// # Loading
//
// On the first call the package dlopens libnvJitLink.so.12 for 12.x, libnvJitLink.so.13 for 13.x, or the path in
// GOCUDA_LIBNVJITLINK, and resolves every function with dlsym once. Building needs
// only a C compiler; a program that never calls the package never needs
// the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package nvjitlink
