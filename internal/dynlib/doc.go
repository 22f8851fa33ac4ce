// Package dynlib loads a CUDA library at run time for a raw binding package
// under generated/ (nvrtc, nvjitlink, cublas, …): dlopen of the library's
// sonames or of the path in the package's environment variable, dlsym of
// every function of the generated table once, on first use, and the errors
// of a library that cannot be loaded (*LoadError) or lacks a function
// (*MissingFunctionError).
//
// A binding package declares one Library, a Spec and the generated array
// of entry points, and delegates to it (generated/nvrtc/lib.go is the
// model): its proc(i), on the path of every call, is Library.Ensure and an
// index of that array, an atomic load, a branch and a load, inlined. Each
// Library has sentinels of its own, so errors.Is(err, cublas.ErrNoLibrary)
// is false for an error of NVRTC's. Package generated/cu loads the driver differently
// (cuGetProcAddress) and does not use this package.
//
// This file has no build constraint so that the package exists everywhere;
// everything else builds for Linux on amd64 and arm64 only, as the binding
// packages do (their platform.go stops the build elsewhere).
package dynlib
