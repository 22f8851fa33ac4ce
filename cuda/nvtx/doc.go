// Package nvtx marks ranges and instants in a Go program for NVIDIA's
// profilers (Nsight Systems, Nsight Compute): NVTX, the NVIDIA Tools
// Extension.
package nvtx
