//go:build linux && (amd64 || arm64) && cuda11080

package libgputest

import "testing"

// TestNVRTCLTOIRLinkedByNVJitLinkRunsOnGPU needs nvrtcGetLTOIR, which NVRTC
// has from CUDA 12.0: the 11.8 bindings do not have it (lto_test.go is the
// test of every later version).
func TestNVRTCLTOIRLinkedByNVJitLinkRunsOnGPU(t *testing.T) {
	t.Skip("the CUDA 11.8 bindings of NVRTC have no nvrtcGetLTOIR (CUDA 12.0+): build with a later version's tag")
}
