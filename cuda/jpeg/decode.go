//go:build linux && (amd64 || arm64)

package jpeg

import (
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Decode decodes a JPEG into new device memory in format f
// (nvjpegGetImageInfo, then nvjpegDecode on the decoder's stream). The
// image's memory is allocated on that stream, so work queued there after
// Decode may read it, and a synchronous copy from it (Plane.Data.CopyTo)
// waits for the decoding. Close the image when done with it.
//
// nvJPEG reads data on the host during the call; the package keeps no
// reference to it after Decode returns. Data that is empty, not a JPEG,
// or cut short is refused before nvJPEG with an error matching ErrBadJPEG;
// a JPEG that nvJPEG finds damaged gives an error matching ErrBadJPEG too,
// and one it does not decode an error matching ErrUnsupported. On an
// error no image is returned and none is left allocated.
func (d *Decoder) Decode(data []byte, f Format) (*Image, error) {
	const op = "jpeg.Decoder.Decode"
	if !f.valid() {
		return nil, invalid(op, "unknown format %v", f)
	}
	info, err := d.decodable(op, data, f)
	if err != nil {
		return nil, err
	}
	s := d.Stream()
	if s == nil {
		return nil, closedErr(op)
	}
	img, err := newImage(op, s, f, info)
	if err != nil {
		return nil, err
	}
	if err := d.decode(op, data, img); err != nil {
		_ = img.Close() // freed in stream order, after anything nvJPEG queued
		return nil, err
	}
	return img, nil
}

// DecodeInto decodes a JPEG into dst, an image of the JPEG's size in
// dst.Format: made by NewImage, or by hand from the caller's slices
// (planes of any pitch at least their rows' bytes). dst is checked
// against the JPEG's Info before nvJPEG is called: the plane count and
// sizes of the format, the pitches, the slices' lengths. The decoding is
// queued on the decoder's stream; order other streams' use of dst after
// it (an event). What Decode says of data holds here too.
func (d *Decoder) DecodeInto(data []byte, dst *Image) error {
	const op = "jpeg.Decoder.DecodeInto"
	if dst == nil {
		return invalid(op, "nil destination image")
	}
	if !dst.Format.valid() {
		return invalid(op, "unknown format %v", dst.Format)
	}
	info, err := d.decodable(op, data, dst.Format)
	if err != nil {
		return err
	}
	if err := dst.checkFor(op, info); err != nil {
		return err
	}
	return d.decode(op, data, dst)
}

// decodable checks data's headers and returns its Info, checked against
// what format f can hold.
func (d *Decoder) decodable(op string, data []byte, f Format) (Info, error) {
	if _, err := walkHeaders(op, data); err != nil {
		return Info{}, err
	}
	var info Info
	err := d.call(op, func(st *decoderState, _ cu.CUstream) error {
		var err error
		info, err = st.info(op, data)
		return err
	})
	if err != nil {
		return Info{}, err
	}
	if _, err := f.planeSizes(op, info); err != nil {
		return Info{}, err
	}
	return info, nil
}

// decode runs nvjpegDecode of data, checked, into img, checked.
func (d *Decoder) decode(op string, data []byte, img *Image) error {
	dst, hold := img.raw()
	format := rawFormats[img.Format]
	err := d.call(op, func(st *decoderState, stream cu.CUstream) error {
		return st.decodeOne(op, data, format, &dst, stream)
	}, hold...)
	if err == nil {
		img.Backend = BackendDefault
	}
	return err
}

// decodeOne runs nvjpegDecode of data into dst on the single-image state.
func (st *decoderState) decodeOne(op string, data []byte, format nvjpeg.NvjpegOutputFormat_t, dst *nvjpeg.NvjpegImage_t, stream cu.CUstream) error {
	return check(op, "nvjpegDecode", nvjpeg.Decode(st.h, st.single, &data[0], uint64(len(data)), format, dst, stream))
}

// closedErr is the error of a call on a closed or nil decoder that fails
// before it would reach the decoder's object.
func closedErr(op string) error {
	return fmt.Errorf("jpeg: %s: decoder: %w", strings.TrimPrefix(op, "jpeg."), cuda.ErrClosed)
}
