// Package cudnn is the raw binding of cuDNN, NVIDIA's library of deep
// learning primitives (convolutions, attention through the backend graph
// API, normalization, softmax, pooling): every function of cudnn.h and the
// headers it includes (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h,
// cudnn_adv.h) for one cuDNN version, generated from the headers by gen/
// with the conventions of package cu.
//
// # Versions
//
// cuDNN is numbered apart from CUDA, so its headers are a matrix of their
// own: the "cudnn" list of headers/versions.json. cuDNN 9.14.0's headers
// are those of the GPU machine's /usr/include/x86_64-linux-gnu (no Debian
// package carries them), pinned by checksum; `make headers` takes them
// from there, or from the directory that GOCUDA_HEADER_CUDNN91400 names.
// With one version listed, no build tag is needed; HeaderVersion says
// which was built. The bindings of a newer header work with an older 9.x
// library: a function the library lacks returns a *MissingFunctionError.
//
// The headers include the CUDA runtime's; the generator parses them with
// those of the manifest's default CUDA version, and takes cudaStream_t
// (cu.CUstream) and the library types (package libtypes) from them.
//
// # Names and types
//
// Functions drop the library prefix: cudnnConvolutionForward is
// ConvolutionForward. Types take their C spelling with the first letter
// upper-cased so that Go exports them (cudnnHandle_t is CudnnHandle_t);
// enum values keep theirs.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the
// CudnnStatus_t itself (errors.Is(err, CUDNN_STATUS_BAD_PARAM) works), a
// *LoadError (matches ErrNoLibrary) when no cuDNN library can be opened,
// or a *MissingFunctionError (matches ErrMissingFunction) when the
// installed library lacks the function. A function that returns a value
// rather than a status (GetVersion) returns it with an error that says
// only whether the call could be made.
//
// # Loading
//
// On the first call the package dlopens libcudnn.so.9, or the path in
// GOCUDA_LIBCUDNN, and resolves every function with dlsym once.
// libcudnn.so.9 loads its sub-libraries (libcudnn_graph.so.9,
// libcudnn_ops.so.9, the engines) itself, by soname, from the library
// search path: a copy named by GOCUDA_LIBCUDNN needs its directory on
// LD_LIBRARY_PATH too. Building needs only a C compiler; a program that
// never calls the package never needs the library.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package cudnn
