//go:build linux && (amd64 || arm64)

package jpeg

import "fmt"

// Backend is the part of nvJPEG that decoded an image: an Image's
// Backend field says which, so that a program can tell whether its
// batches reach the GPU's JPEG engines.
type Backend int

const (
	// BackendNone is an image no decoding has written: one NewImage made.
	BackendNone Backend = iota
	// BackendDefault is nvjpegDecode on a handle of nvJPEG's default
	// backend, one image per call; nvJPEG runs the Huffman decoding on
	// the GPU or, for small images, on the calling thread.
	BackendDefault
	// BackendHardware is nvjpegDecodeBatched on a handle of
	// NVJPEG_BACKEND_HARDWARE: the GPU's JPEG engines (A100, H100, H200
	// and their kin) decode the batch, Huffman decoding included.
	BackendHardware
)

var backendNames = [...]string{BackendNone: "none", BackendDefault: "default", BackendHardware: "hardware"}

func (b Backend) String() string {
	if b >= 0 && int(b) < len(backendNames) {
		return backendNames[b]
	}
	return fmt.Sprintf("Backend(%d)", int(b))
}
