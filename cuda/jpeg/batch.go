//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// DecodeBatch decodes many JPEGs, of any sizes and subsamplings, in one
// call of nvJPEG's batched decoder (nvjpegDecodeBatched), which spreads
// the Huffman decoding of the batch over the GPU and the host and the
// rest over the GPU: the way to decode many images fast. Each image is
// allocated on the decoder's stream in format f, as Decode does; the
// decoder's batch state is set up (nvjpegDecodeBatchedInitialize) when
// the batch's length or format differs from the last batch's.
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
	if err := d.decodeBatch(op, data, f, dsts); err != nil {
		return nil, errors.Join(err, release())
	}
	return imgs, nil
}

// maxBatch bounds a batch: nvJPEG takes its length as a C int, and the
// pointers to the data are pinned for the call.
const maxBatch = 1 << 20

// decodeBatch runs nvjpegDecodeBatched of data into dsts, the images'
// memory kept open by the images the caller holds.
func (d *Decoder) decodeBatch(op string, data [][]byte, f Format, dsts []nvjpeg.NvjpegImage_t) error {
	// nvJPEG takes an array of pointers to the JPEGs: Go memory that
	// holds Go pointers, which cgo allows only when they are pinned.
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]*uint8, len(data))
	lens := make([]uint64, len(data))
	for i, b := range data {
		ptrs[i] = &b[0]
		pin.Pin(ptrs[i])
		lens[i] = uint64(len(b))
	}
	return d.call(op, func(st *decoderState, stream cu.CUstream) error {
		if err := st.setUpBatch(op, len(data), f); err != nil {
			return err
		}
		return check(op, "nvjpegDecodeBatched", nvjpeg.DecodeBatched(st.h, st.batch, &ptrs[0], &lens[0], &dsts[0], stream))
	})
}

// setUpBatch makes the batch state on first use and sets it up for n
// images of format f unless it is already. A failed set-up leaves the
// state to be set up again on the next batch.
func (st *decoderState) setUpBatch(op string, n int, f Format) error {
	if st.batch == 0 {
		if err := api.stateCreate(st.h, &st.batch); err != nil {
			st.batch = 0
			return check(op, "nvjpegJpegStateCreate", err)
		}
	}
	if st.batchSize == n && st.batchFormat == f {
		return nil
	}
	st.batchSize, st.batchFormat = 0, 0
	// max_cpu_threads is no longer read by nvJPEG; 1 is a valid value
	// for every version.
	if err := nvjpeg.DecodeBatchedInitialize(st.h, st.batch, int32(n), 1, rawFormats[f]); err != nil {
		return check(op, "nvjpegDecodeBatchedInitialize", err)
	}
	st.batchSize, st.batchFormat = n, f
	return nil
}

// imageOp names image i of a batch in errors.
func imageOp(op string, i int) string { return fmt.Sprintf("%s: image %d", op, i) }
