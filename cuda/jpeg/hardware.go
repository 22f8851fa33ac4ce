//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// hardware is the batch decoder of the GPU's JPEG engines: a handle of
// NVJPEG_BACKEND_HARDWARE, its batch state, a JPEG stream through which
// each image's headers are put to nvjpegDecodeBatchedSupportedEx, and
// the decode parameters that carry the output format to that question.
// nvJPEG's batched decoder on the default backend is not used at all:
// it runs the Huffman decoding of the batch on the host, slower than
// decoding the images one by one, which nvJPEG does on the GPU.
type hardware struct {
	h      nvjpeg.NvjpegHandle_t
	state  nvjpeg.NvjpegJpegState_t
	stream nvjpeg.NvjpegJpegStream_t
	params nvjpeg.NvjpegDecodeParams_t
	format Format // the params' output format, 0 before the first batch
}

// openHardware makes the hardware decoder on the first batch, once: a
// GPU without JPEG engines refuses the handle (NVJPEG_STATUS_ARCH_MISMATCH),
// and that answer does not change, so st.hwErr keeps why there is none
// and every batch then goes image by image.
func (st *decoderState) openHardware(op string) {
	if st.hw != nil || st.hwErr != nil {
		return
	}
	hw := &hardware{}
	if err := nvjpeg.CreateEx(nvjpeg.NVJPEG_BACKEND_HARDWARE, nil, nil, 0, &hw.h); err != nil {
		st.hwErr = check(op, "nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE)", err)
		return
	}
	err := check(op, "nvjpegJpegStateCreate", api.stateCreate(hw.h, &hw.state))
	if err == nil {
		err = check(op, "nvjpegJpegStreamCreate", nvjpeg.JpegStreamCreate(hw.h, &hw.stream))
	}
	if err == nil {
		err = check(op, "nvjpegDecodeParamsCreate", nvjpeg.DecodeParamsCreate(hw.h, &hw.params))
	}
	if err != nil {
		st.hwErr = errors.Join(err, hw.close(op))
		return
	}
	st.hw = hw
}

// close destroys what of hw was made.
func (hw *hardware) close(op string) error {
	var err error
	if hw.params != 0 {
		err = errors.Join(err, check(op, "nvjpegDecodeParamsDestroy", nvjpeg.DecodeParamsDestroy(hw.params)))
	}
	if hw.stream != 0 {
		err = errors.Join(err, check(op, "nvjpegJpegStreamDestroy", nvjpeg.JpegStreamDestroy(hw.stream)))
	}
	if hw.state != 0 {
		err = errors.Join(err, check(op, "nvjpegJpegStateDestroy", api.stateDestroy(hw.state)))
	}
	return errors.Join(err, check(op, "nvjpegDestroy", api.destroy(hw.h)))
}

// supports reports whether the engines decode data into format f. Any
// error of the question is a no: the image then goes through nvjpegDecode,
// whose verdict on it is the one the caller sees.
func (hw *hardware) supports(data []byte, f Format) bool {
	if hw.format != f {
		if nvjpeg.DecodeParamsSetOutputFormat(hw.params, rawFormats[f]) != nil {
			return false
		}
		hw.format = f
	}
	if nvjpeg.JpegStreamParseHeader(hw.h, &data[0], uint64(len(data)), hw.stream) != nil {
		return false
	}
	// nvJPEG answers 0 for an image the batched decoder takes.
	no := int32(-1)
	if nvjpeg.DecodeBatchedSupportedEx(hw.h, hw.stream, hw.params, &no) != nil {
		return false
	}
	return no == 0
}

// decodeSome decodes the images of data at idx into their dsts in one
// batch on the engines. The state is set up on every call: nvJPEG
// requires it for each new batch length, and the length here is how many
// of the caller's images the engines take, which changes from batch to
// batch.
func (hw *hardware) decodeSome(op string, data [][]byte, idx []int, dsts []nvjpeg.NvjpegImage_t, f Format, stream cu.CUstream) error {
	// nvJPEG takes an array of pointers to the JPEGs: Go memory that
	// holds Go pointers, which cgo allows only when they are pinned.
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]*uint8, len(idx))
	lens := make([]uint64, len(idx))
	out := make([]nvjpeg.NvjpegImage_t, len(idx))
	for j, i := range idx {
		ptrs[j] = &data[i][0]
		pin.Pin(ptrs[j])
		lens[j] = uint64(len(data[i]))
		out[j] = dsts[i]
	}
	// max_cpu_threads is not read by nvJPEG; 1 is valid for every version.
	if err := nvjpeg.DecodeBatchedInitialize(hw.h, hw.state, int32(len(ptrs)), 1, rawFormats[f]); err != nil {
		return check(op, "nvjpegDecodeBatchedInitialize", err)
	}
	return check(op, "nvjpegDecodeBatched", nvjpeg.DecodeBatched(hw.h, hw.state, &ptrs[0], &lens[0], &out[0], stream))
}
