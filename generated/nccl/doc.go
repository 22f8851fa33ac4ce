// Package nccl is the raw binding of NCCL, NVIDIA's collective
// communication library (all-reduce, all-gather, broadcast, send and
// receive across GPUs and processes): every function of nccl.h for one NCCL
// version, generated from the header by gen/ with the conventions of
// package cu. The safe layer is package cuda/nccl.
//
// # Versions
//
// NCCL is numbered apart from CUDA and keeps one ABI, libnccl.so.2, across
// its releases, so its headers are a matrix of their own: the "nccl" list
// of headers/versions.json: NCCL 2.22.3 (Debian's, which CI fetches) and
// 2.28.3 (the GPU machine's /usr/include/nccl.h). Build tag nccl22203
// selects the bindings of 2.22.3 (the tag is NCCL_VERSION_CODE); with no
// NCCL tag the newest version of the list is built, whatever the CUDA tag. HeaderVersion says
// which was built. Adding a version is one entry in that list and
// `make generate`. The bindings of a newer header work with an older
// library: a function the library lacks returns a *MissingFunctionError
// that names the NCCL version that introduced it.
//
// nccl.h includes the CUDA runtime's headers; the generator parses it with
// those of the manifest's default CUDA version. It takes only cudaStream_t
// from them, which is cu.CUstream here as in every library package.
//
// # Names and types
//
// Functions drop the library prefix: ncclAllReduce is AllReduce. Types take
// their C spelling with the first letter upper-cased so that Go exports
// them (ncclComm_t is NcclComm_t, ncclUniqueId NcclUniqueId, a struct of
// 128 bytes passed by value as C passes it); enum values keep theirs. The
// pncclX symbols, NCCL's profiling aliases of the same functions, are not
// bound.
//
// # Errors
//
// Every binding returns error: nil on success, otherwise the NcclResult_t
// itself (errors.Is(err, NcclInvalidArgument) works; ncclInProgress, the
// answer of a non-blocking communicator still at work, is an error value
// too), a *LoadError (matches ErrNoLibrary) when no NCCL library can be
// opened, or a *MissingFunctionError (matches ErrMissingFunction) when the
// installed library lacks the function.
//
// # Loading
//
// On the first call the package dlopens libnccl.so.2, or the path in
// GOCUDA_LIBNCCL, and resolves every function with dlsym once. Building
// needs only a C compiler; a program that never calls the package never
// needs the library. NCCL's calls may block (ncclCommInitRank waits for
// its peers, ncclCommDestroy for the device) and start threads of their
// own; every binding is an ordinary cgo call, which allows both.
//
// Pointer arguments follow cgo's rules: pass C, device or pinned memory,
// or pointer-free Go memory that the call does not keep.
package nccl
