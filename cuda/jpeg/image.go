//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Image is a decoded image in device memory: Planes in the layout of
// Format. An image from Decode or NewImage owns its planes' memory, one
// allocation, freed by Close. One made by hand, for DecodeInto, holds
// the caller's slices.
type Image struct {
	Format        Format
	Width, Height int // of the image, in pixels
	Planes        []Plane
	// Backend is what decoded the image last: set by Decode, DecodeInto
	// and DecodeBatch.
	Backend Backend
}

// Plane is one plane of an image: Height rows of Width pixels of
// Format.PixelBytes() bytes each, row r starting at byte r·Pitch of Data.
type Plane struct {
	Data          *cuda.Slice[uint8]
	Width, Height int // in pixels
	Pitch         int // in bytes, at least Width·PixelBytes
}

// RowBytes returns the bytes of a row of p's pixels in format f.
func (p Plane) RowBytes(f Format) int { return p.Width * f.PixelBytes() }

// span is the bytes the plane's rows cover, the last without padding.
func (p Plane) span(f Format) int {
	if p.Height == 0 {
		return 0
	}
	return (p.Height-1)*p.Pitch + p.RowBytes(f)
}

// NewImage allocates an image of info's size in format f, planes of
// rows without padding (Pitch = Width·PixelBytes), on a stream or in a
// context (cuda.AllocSlice's Allocator): the destination of DecodeInto.
func NewImage(on cuda.Allocator, f Format, info Info) (*Image, error) {
	return newImage("jpeg.NewImage", on, f, info)
}

func newImage(op string, on cuda.Allocator, f Format, info Info) (*Image, error) {
	sizes, err := f.planeSizes(op, info)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, s := range sizes {
		total += s[0] * f.PixelBytes() * s[1]
	}
	mem, err := cuda.AllocSlice[uint8](on, total)
	if err != nil {
		return nil, err
	}
	img := &Image{Format: f, Width: info.Width, Height: info.Height}
	off := 0
	for _, s := range sizes {
		pitch := s[0] * f.PixelBytes()
		data, err := mem.Sub(off, off+pitch*s[1])
		if err != nil {
			return nil, errors.Join(err, img.Close(), mem.Close())
		}
		img.Planes = append(img.Planes, Plane{Data: data, Width: s[0], Height: s[1], Pitch: pitch})
		off += pitch * s[1]
	}
	// The planes' views keep the allocation; the image needs no handle
	// of its own on the whole.
	if err := mem.Close(); err != nil {
		return nil, errors.Join(err, img.Close())
	}
	return img, nil
}

// Close closes the planes' slices: for an image of Decode or NewImage,
// the last of them frees its memory, in stream order where it was
// allocated on a stream. Closing a nil image, or one twice, is no error.
func (img *Image) Close() error {
	if img == nil {
		return nil
	}
	var err error
	for i := range img.Planes {
		if img.Planes[i].Data != nil {
			err = errors.Join(err, img.Planes[i].Data.Close())
		}
		img.Planes[i].Data = nil
	}
	return err
}

// checkFor reports an error unless img can take the decoding of an
// image of info: its format's planes, each at least the size the image
// needs, rows not overlapping, every slice open and long enough.
func (img *Image) checkFor(op string, info Info) error {
	if img == nil {
		return invalid(op, "nil destination image")
	}
	sizes, err := img.Format.planeSizes(op, info)
	if err != nil {
		return err
	}
	if img.Width != info.Width || img.Height != info.Height {
		return invalid(op, "a destination of %d×%d for an image of %d×%d", img.Width, img.Height, info.Width, info.Height)
	}
	if len(img.Planes) != len(sizes) {
		return invalid(op, "%d plane(s) for format %v, which has %d", len(img.Planes), img.Format, len(sizes))
	}
	for i, p := range img.Planes {
		if p.Width != sizes[i][0] || p.Height != sizes[i][1] {
			return invalid(op, "plane %d is %d×%d; the image's is %d×%d", i, p.Width, p.Height, sizes[i][0], sizes[i][1])
		}
		if p.Pitch < p.RowBytes(img.Format) {
			return invalid(op, "plane %d's pitch %d is less than its row of %d bytes", i, p.Pitch, p.RowBytes(img.Format))
		}
		if p.Data == nil || p.Data.Context().Raw() == 0 {
			return fmt.Errorf("jpeg: %s: plane %d's slice: %w", strings.TrimPrefix(op, "jpeg."), i, cuda.ErrClosed)
		}
		if n := p.span(img.Format); p.Data.Len() < n {
			return invalid(op, "plane %d needs %d bytes (%d rows, pitch %d), but its slice has %d", i, n, p.Height, p.Pitch, p.Data.Len())
		}
	}
	return nil
}

// raw returns img as nvJPEG takes it, the device addresses read now (see
// cuda.LibraryObject.Call), and the slices to hold for the call.
func (img *Image) raw() (nvjpeg.NvjpegImage_t, []cuda.Holder) {
	var r nvjpeg.NvjpegImage_t
	hold := make([]cuda.Holder, len(img.Planes))
	for i, p := range img.Planes {
		r.Channel[i] = (*uint8)(devptr.Of(p.Data.Ptr()))
		r.Pitch[i] = uint64(p.Pitch)
		hold[i] = p.Data
	}
	return r, hold
}
