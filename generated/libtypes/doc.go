// Package libtypes holds the types the CUDA libraries share, bound from
// library_types.h: cudaDataType (CudaDataType, with CUDA_R_32F and kin),
// libraryPropertyType and, from CUDA 13.0, the emulation settings. cuBLAS,
// cuBLASLt, cuSPARSE, cuSOLVER and cuFFT take these one Go type, so a value
// passes between their packages unchanged.
//
// The build tags of package cu pick the header, as for every generated
// package.
package libtypes
