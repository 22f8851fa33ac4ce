// Package nvjpeg is the raw binding of nvJPEG, NVIDIA's JPEG codec on the GPU: decoding (one image, batches, and the phased decoupled API), encoding, and the handles, states and buffers both need: every function of
// nvjpeg.h for one CUDA version, generated from the header by gen/ with the
// conventions of package cu.
//
// # Versions
//
// The build tags of package cu pick the header (cuda11080, cuda12040, …; no
// tag is CUDA 12.4). A version of the matrix without the header of its own
// uses the newest one before it: cuda12080 builds 12.5's.
// HeaderVersion() returns which was built.
//
// # Names and types
//
// Functions drop the library prefix: nvjpegDecode is Decode. Types take
// their C spelling with the first letter upper-cased so that Go exports
// them; enum values keep theirs. A type another header declares is that
// header's Go type: cudaStream_t is cu.CUstream (a *cuda.Stream's Raw
// passes straight in), libraryPropertyType is libtypes.LibraryPropertyType.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// NvjpegStatus_t itself (errors.Is(err, NVJPEG_STATUS_BAD_JPEG) works), a
// *LoadError (matches ErrNoLibrary) when no nvJPEG library can be opened,
// or a *MissingFunctionError (matches ErrMissingFunction) when the
// installed library lacks the function.
//
// # Loading
//
// On the first call the package dlopens libnvjpeg.so.11 for 11.x, .12 for
// 12.x, .13 for 13.x, or the path in GOCUDA_LIBNVJPEG, and resolves every
// function with dlsym once. Building needs only a C compiler; a program
// that never calls the package never needs the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package nvjpeg
