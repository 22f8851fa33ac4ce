//go:build linux && (amd64 || arm64) && !cuda11080

package nvrtc

import raw "github.com/gocuda/gocuda/generated/nvrtc"

// ltoIR returns the LTO-IR of a program compiled with -dlto.
func ltoIR(prog raw.NvrtcProgram) ([]byte, error) {
	return output(prog, raw.GetLTOIRSize, raw.GetLTOIR, "LTO-IR")
}
