//go:build linux && (amd64 || arm64)

package jpeg

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Subsampling is a JPEG's chroma subsampling: the size of its chroma
// planes against its luma plane.
type Subsampling int

// The subsamplings nvJPEG reports (nvjpegChromaSubsampling_t).
const (
	Subsampling444     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_444)
	Subsampling422     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_422)
	Subsampling420     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_420)
	Subsampling440     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_440)
	Subsampling411     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_411)
	Subsampling410     Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_410)
	SubsamplingGray    Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_GRAY)
	Subsampling410V    Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_410V)
	SubsamplingUnknown Subsampling = Subsampling(nvjpeg.NVJPEG_CSS_UNKNOWN)
)

func (s Subsampling) String() string {
	switch s {
	case Subsampling444:
		return "4:4:4"
	case Subsampling422:
		return "4:2:2"
	case Subsampling420:
		return "4:2:0"
	case Subsampling440:
		return "4:4:0"
	case Subsampling411:
		return "4:1:1"
	case Subsampling410:
		return "4:1:0"
	case SubsamplingGray:
		return "gray"
	case Subsampling410V:
		return "4:1:0V"
	case SubsamplingUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Subsampling(%d)", int(s))
}

// Info is what a JPEG's headers say of its image.
type Info struct {
	Width, Height int // of the image, in pixels
	Components    int // 1 for grayscale, 3 for YCbCr, 4 for CMYK
	Subsampling   Subsampling
	// Widths and Heights are each component's size in pixels, the
	// chroma's subsampled; components past Components are 0.
	Widths, Heights [4]int
}

// Info returns the size, components and subsampling of a JPEG's image,
// read by nvJPEG from its headers (nvjpegGetImageInfo); no device work.
// Data that is empty, not a JPEG or cut short is refused before nvJPEG
// with an error matching ErrBadJPEG.
func (d *Decoder) Info(data []byte) (Info, error) {
	const op = "jpeg.Decoder.Info"
	if _, err := walkHeaders(op, data); err != nil {
		return Info{}, err
	}
	var info Info
	err := d.call(op, func(st *decoderState, _ cu.CUstream) error {
		var err error
		info, err = st.info(op, data)
		return err
	})
	return info, err
}

// info is Info on data that passed walkHeaders, with the decoder held.
func (st *decoderState) info(op string, data []byte) (Info, error) {
	var n int32
	var css nvjpeg.NvjpegChromaSubsampling_t
	var w, h [4]int32
	if err := nvjpeg.GetImageInfo(st.h, &data[0], uint64(len(data)), &n, &css, &w[0], &h[0]); err != nil {
		return Info{}, check(op, "nvjpegGetImageInfo", err)
	}
	info := Info{Width: int(w[0]), Height: int(h[0]), Components: int(n), Subsampling: Subsampling(css)}
	for i := range min(int(n), 4) {
		info.Widths[i], info.Heights[i] = int(w[i]), int(h[i])
	}
	if info.Width <= 0 || info.Height <= 0 || info.Components <= 0 {
		return Info{}, badData(op, ErrBadJPEG, "nvJPEG reads an image of %d×%d with %d components", info.Width, info.Height, info.Components)
	}
	return info, nil
}
