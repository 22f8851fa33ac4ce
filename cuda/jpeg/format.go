//go:build linux && (amd64 || arm64)

package jpeg

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Format is the layout of a decoded image in device memory: one byte per
// sample, rows Pitch bytes apart.
type Format int

const (
	// RGBI is interleaved RGB: one plane of Width×Height pixels of three
	// bytes, R, G, B (NVJPEG_OUTPUT_RGBI).
	RGBI Format = iota + 1
	// BGRI is interleaved BGR, as OpenCV lays images out
	// (NVJPEG_OUTPUT_BGRI).
	BGRI
	// RGB is planar RGB: three planes of Width×Height, R, G and B
	// (NVJPEG_OUTPUT_RGB).
	RGB
	// BGR is planar BGR: three planes, B, G and R (NVJPEG_OUTPUT_BGR).
	BGR
	// YUV is the image's own samples, without colour conversion: the
	// planes Y, Cb and Cr, the chroma planes at their subsampled size
	// (NVJPEG_OUTPUT_YUV). Grayscale images have no chroma: decode them
	// as Y.
	YUV
	// Y is the luma plane alone, Width×Height (NVJPEG_OUTPUT_Y): a
	// grayscale image, whatever the JPEG's colours.
	Y
)

var formatNames = [...]string{RGBI: "RGBI", BGRI: "BGRI", RGB: "RGB", BGR: "BGR", YUV: "YUV", Y: "Y"}

var rawFormats = [...]nvjpeg.NvjpegOutputFormat_t{
	RGBI: nvjpeg.NVJPEG_OUTPUT_RGBI,
	BGRI: nvjpeg.NVJPEG_OUTPUT_BGRI,
	RGB:  nvjpeg.NVJPEG_OUTPUT_RGB,
	BGR:  nvjpeg.NVJPEG_OUTPUT_BGR,
	YUV:  nvjpeg.NVJPEG_OUTPUT_YUV,
	Y:    nvjpeg.NVJPEG_OUTPUT_Y,
}

func (f Format) valid() bool { return f >= RGBI && f <= Y }

func (f Format) String() string {
	if f.valid() {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Planes returns how many planes an image of the format has: 1 or 3.
func (f Format) Planes() int {
	switch f {
	case RGBI, BGRI, Y:
		return 1
	case RGB, BGR, YUV:
		return 3
	}
	return 0
}

// PixelBytes returns the bytes of one pixel of a plane: 3 for the
// interleaved formats, 1 for the planar ones.
func (f Format) PixelBytes() int {
	switch f {
	case RGBI, BGRI:
		return 3
	case RGB, BGR, YUV, Y:
		return 1
	}
	return 0
}

// planeSizes returns the width and height in pixels of each plane of an
// image of info decoded as f, or an error if f cannot hold it.
func (f Format) planeSizes(op string, info Info) ([][2]int, error) {
	if !f.valid() {
		return nil, invalid(op, "unknown format %v", f)
	}
	sizes := make([][2]int, f.Planes())
	for i := range sizes {
		sizes[i] = [2]int{info.Width, info.Height}
	}
	if f == YUV {
		if info.Components != 3 {
			return nil, badData(op, ErrUnsupported, "YUV of an image of %d component(s) (%v): YUV needs 3; decode a grayscale image as Y", info.Components, info.Subsampling)
		}
		for i := range sizes {
			sizes[i] = [2]int{info.Widths[i], info.Heights[i]}
		}
	}
	return sizes, nil
}
