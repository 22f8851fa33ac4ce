// Package ptxsuite holds a suite of CUDA C++ kernels of the kinds users
// write, compiled at test time with NVRTC for two architectures and run
// by the same test binary on the fake driver, which interprets their PTX
// (internal/ptx), where there is no GPU, and on the GPU where there is
// one. Each result is checked against a Go reference computed on the
// host, with the tolerance its test states, so the two runs agree with
// each other within it. The package has no API: it is its tests.
package ptxsuite
