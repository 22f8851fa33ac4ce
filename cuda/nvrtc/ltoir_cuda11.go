//go:build linux && (amd64 || arm64) && cuda11080

package nvrtc

import (
	"errors"

	raw "github.com/gocuda/gocuda/generated/nvrtc"
)

// ltoIR: the nvrtc.h of CUDA 11.8 has no nvrtcGetLTOIR; LTO-IR came with
// NVRTC 12.0.
func ltoIR(raw.NvrtcProgram) ([]byte, error) {
	return nil, errors.New("nvrtc: LTO-IR needs NVRTC 12.0 or later; these bindings follow the nvrtc.h of CUDA 11.8")
}
