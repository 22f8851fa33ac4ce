//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// DecodeBatch decodes many JPEGs, of any sizes and subsamplings, into
// new images in format f, allocated on the decoder's stream as Decode
// allocates them.
//
// Where the GPU has JPEG engines (A100, H100, H200 and their kin), the
// images they decode (baseline JPEGs of one scan, 1 or 3 components, in
// the subsamplings nvjpegDecodeBatchedSupportedEx accepts for f) go to
// them in one nvjpegDecodeBatched call, Huffman decoding and all; the
// rest, and every image on other GPUs, are decoded one by one as Decode
// does. Each image's Backend says which. Should the engines refuse the
// batch, its images are decoded one by one too. So DecodeBatch is never
// slower than a loop of Decode by more than the questions it puts to
// nvJPEG about each image's headers, and on a GPU with engines it frees
// the SMs and the host of the decoding: it wins there, the more so the
// bigger and more numerous the images.
//
// Every JPEG is checked first (its headers, its Info against f) and the
// first bad one is an error naming its index, before any device work.
// An error from nvJPEG fails the whole batch: no image is returned and
// none is left allocated. An empty batch is no work and no error.
func (d *Decoder) DecodeBatch(data [][]byte, f Format) ([]*Image, error) {
	const op = "jpeg.Decoder.DecodeBatch"
	if !f.valid() {
		return nil, invalid(op, "unknown format %v", f)
	}
	if len(data) == 0 {
		if d.Stream() == nil {
			return nil, closedErr(op)
		}
		return nil, nil
	}
	if len(data) > maxBatch {
		return nil, invalid(op, "a batch of %d images, more than %d", len(data), maxBatch)
	}
	for i, b := range data {
		if _, err := walkHeaders(imageOp(op, i), b); err != nil {
			return nil, err
		}
	}
	infos := make([]Info, len(data))
	err := d.call(op, func(st *decoderState, _ cu.CUstream) error {
		for i, b := range data {
			info, err := st.info(imageOp(op, i), b)
			if err != nil {
				return err
			}
			if _, err := f.planeSizes(imageOp(op, i), info); err != nil {
				return err
			}
			infos[i] = info
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := d.Stream()
	if s == nil {
		return nil, closedErr(op)
	}
	imgs := make([]*Image, 0, len(data))
	release := func() error {
		var err error
		for _, img := range imgs {
			err = errors.Join(err, img.Close())
		}
		return err
	}
	dsts := make([]nvjpeg.NvjpegImage_t, len(data))
	for i, info := range infos {
		img, err := newImage(op, s, f, info)
		if err != nil {
			return nil, errors.Join(err, release())
		}
		imgs = append(imgs, img)
		dsts[i], _ = img.raw()
	}
	backends, err := d.decodeBatch(op, data, f, dsts)
	if err != nil {
		return nil, errors.Join(err, release())
	}
	for i, img := range imgs {
		img.Backend = backends[i]
	}
	return imgs, nil
}

// Hardware reports whether DecodeBatch uses the GPU's JPEG engines, and
// if not, why not: nvJPEG's refusal of a hardware handle
// (NVJPEG_STATUS_ARCH_MISMATCH on a GPU without engines). It makes the
// hardware decoder if no batch has yet. On a closed decoder it returns
// false and an error matching cuda.ErrClosed.
func (d *Decoder) Hardware() (bool, error) {
	const op = "jpeg.Decoder.Hardware"
	var why error
	err := d.call(op, func(st *decoderState, _ cu.CUstream) error {
		st.openHardware(op)
		why = st.hwErr
		return nil
	})
	if err != nil {
		return false, err
	}
	return why == nil, why
}

// maxBatch bounds a batch: nvJPEG takes its length as a C int, and the
// pointers to the data are pinned for the call.
const maxBatch = 1 << 20

// decodeBatch decodes data into dsts, the images' memory kept open by the
// images the caller holds, and returns the backend of each.
func (d *Decoder) decodeBatch(op string, data [][]byte, f Format, dsts []nvjpeg.NvjpegImage_t) ([]Backend, error) {
	backends := make([]Backend, len(data))
	err := d.call(op, func(st *decoderState, stream cu.CUstream) error {
		st.openHardware(op)
		var hwIdx []int
		if st.hw != nil {
			for i, b := range data {
				if st.hw.supports(b, f) {
					hwIdx = append(hwIdx, i)
					backends[i] = BackendHardware
				}
			}
		}
		if len(hwIdx) > 0 && st.hw.decodeSome(op, data, hwIdx, dsts, f, stream) != nil {
			// The engines' verdict is not the caller's: nvjpegDecode
			// decodes these images, or says what is wrong with them.
			for _, i := range hwIdx {
				backends[i] = BackendNone
			}
		}
		format := rawFormats[f]
		for i, b := range data {
			if backends[i] == BackendHardware {
				continue
			}
			if err := st.decodeOne(imageOp(op, i), b, format, &dsts[i], stream); err != nil {
				return err
			}
			backends[i] = BackendDefault
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return backends, nil
}

// imageOp names image i of a batch in errors.
func imageOp(op string, i int) string { return fmt.Sprintf("%s: image %d", op, i) }
