// Package nvrtc is the raw binding of NVRTC, NVIDIA's run-time compiler of
// CUDA C++ to PTX and CUBIN: every function of nvrtc.h for one CUDA
// version, generated from the header by gen/ with the conventions of
// package cu. NVRTC runs on the CPU: compiling needs no GPU and no driver.
//
// # Versions
//
// The build tags of package cu pick the header (cuda11080, cuda12040, …; no
// tag is CUDA 12.4). A version of the matrix without nvrtc.h of its own
// (12.8 today) uses the newest nvrtc.h before it. HeaderVersion says
// which was built.
//
// # Names
//
// Functions drop the nvrtc prefix (nvrtcCompileProgram is CompileProgram);
// types take their C spelling with the first letter upper-cased so that Go
// exports them (NvrtcProgram, NvrtcResult); enum values keep theirs
// (NVRTC_ERROR_COMPILATION).
//
// # Errors
//
// Every binding returns error: nil on NVRTC_SUCCESS, otherwise the
// NvrtcResult itself (errors.Is(err, NVRTC_ERROR_COMPILATION) works), a
// *LoadError (matches ErrNoLibrary) when no NVRTC library can be opened,
// or a *MissingFunctionError (matches ErrMissingFunction) when the
// installed library lacks the function. GetErrorString, which returns a
// pointer, also returns an error for those two cases.
//
// # Loading
//
// On the first call the package dlopens the soname of its version
// (libnvrtc.so.11.2 for 11.x, .12 for 12.x, .13 for 13.x), or the path in
// GOCUDA_LIBNVRTC, and resolves every function with dlsym once.
//
// Pointer arguments follow cgo's rules: pass C memory or pointer-free Go
// memory; package cuda/nvrtc wraps these calls safely.
package nvrtc
