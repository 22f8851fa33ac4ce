//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Encoder is an nvJPEG library handle with an encoder state and its
// parameters, bound to a stream: it compresses images in device memory
// to JPEG bytes on the host.
//
// All methods are safe for concurrent use; the calls on one encoder and
// its clones take turns, since nvJPEG allows an encoder state to one
// thread at a time.
type Encoder struct {
	o *cuda.LibraryObject[*encoderState]
}

type encoderState struct {
	h      nvjpeg.NvjpegHandle_t
	mu     sync.Mutex // held for every use of state and params
	state  nvjpeg.NvjpegEncoderState_t
	params nvjpeg.NvjpegEncoderParams_t
}

// EncodeOptions are the choices of a JPEG's encoding.
type EncodeOptions struct {
	// Quality is 1 (smallest) to 100 (best); 0 is DefaultQuality.
	Quality int
	// Subsampling is the JPEG's chroma subsampling: Subsampling444 (the
	// zero value), 422, 420, 440, 411, 410, or SubsamplingGray for a
	// grayscale JPEG of the image's luma.
	Subsampling Subsampling
}

// DefaultQuality is the quality of EncodeOptions{}.
const DefaultQuality = 90

// NewEncoder makes an encoder whose work goes to s (nvjpegCreateSimple,
// nvjpegEncoderStateCreate, nvjpegEncoderParamsCreate). It keeps its own
// clone of s: closing s does not end it.
func NewEncoder(s *cuda.Stream) (*Encoder, error) {
	const op = "jpeg.NewEncoder"
	raw := s.Raw()
	o, err := cuda.NewLibraryObject(s, func() (*encoderState, error) {
		st := &encoderState{}
		if err := api.create(&st.h); err != nil {
			return nil, check(op, "nvjpegCreateSimple", err)
		}
		if err := nvjpeg.EncoderStateCreate(st.h, &st.state, raw); err != nil {
			_ = api.destroy(st.h)
			return nil, check(op, "nvjpegEncoderStateCreate", err)
		}
		if err := nvjpeg.EncoderParamsCreate(st.h, &st.params, raw); err != nil {
			_ = nvjpeg.EncoderStateDestroy(st.state)
			_ = api.destroy(st.h)
			return nil, check(op, "nvjpegEncoderParamsCreate", err)
		}
		return st, nil
	}, func(st *encoderState) error {
		const op = "Encoder.Close"
		err := check(op, "nvjpegEncoderParamsDestroy", nvjpeg.EncoderParamsDestroy(st.params))
		err = errors.Join(err, check(op, "nvjpegEncoderStateDestroy", nvjpeg.EncoderStateDestroy(st.state)))
		return errors.Join(err, check(op, "nvjpegDestroy", api.destroy(st.h)))
	})
	if err != nil {
		return nil, err
	}
	return &Encoder{o: o}, nil
}

func (e *Encoder) object() *cuda.LibraryObject[*encoderState] {
	if e == nil {
		return nil
	}
	return e.o
}

// Clone returns another handle to the same encoder, to be closed on its
// own.
func (e *Encoder) Clone() (*Encoder, error) {
	o, err := e.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Encoder{o: o}, nil
}

// Close releases this handle, after the calls in flight on it; the last
// Close destroys the encoder's parameters, state and nvJPEG handle and
// releases the stream.
func (e *Encoder) Close() error { return e.object().Close() }

// Stream returns the encoder's stream, owned by the encoder (no Close
// needed), or nil once this handle is closed.
func (e *Encoder) Stream() *cuda.Stream { return e.object().Stream() }

var rawInputs = map[Format]nvjpeg.NvjpegInputFormat_t{
	RGBI: nvjpeg.NVJPEG_INPUT_RGBI,
	BGRI: nvjpeg.NVJPEG_INPUT_BGRI,
	RGB:  nvjpeg.NVJPEG_INPUT_RGB,
	BGR:  nvjpeg.NVJPEG_INPUT_BGR,
}

// Encode compresses img, of format RGBI, BGRI, RGB or BGR, to a baseline
// JPEG (nvjpegEncoderParamsSetQuality, nvjpegEncoderParamsSetSamplingFactors,
// nvjpegEncodeImage, nvjpegEncodeRetrieveBitstream). The encoding runs on
// the encoder's stream after the work queued there: order img's making on
// another stream before it (an event). Encode waits for the encoding and
// returns the JPEG's bytes, memory of their own. img is checked before
// nvJPEG: its format, its planes' sizes and pitches, its slices' lengths.
func (e *Encoder) Encode(img *Image, opts EncodeOptions) ([]byte, error) {
	const op = "jpeg.Encoder.Encode"
	if err := checkSource(op, img); err != nil {
		return nil, err
	}
	q := opts.Quality
	if q == 0 {
		q = DefaultQuality
	}
	if q < 1 || q > 100 {
		return nil, invalid(op, "quality %d: want 1 to 100", opts.Quality)
	}
	switch opts.Subsampling {
	case Subsampling444, Subsampling422, Subsampling420, Subsampling440, Subsampling411, Subsampling410, SubsamplingGray:
	default:
		return nil, invalid(op, "subsampling %v: want 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, 4:1:0 or gray", opts.Subsampling)
	}
	src, hold := img.raw()
	var out []byte
	err := e.object().CallOnStream(op, func(st *encoderState, stream cu.CUstream) error {
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := nvjpeg.EncoderParamsSetQuality(st.params, int32(q), stream); err != nil {
			return check(op, "nvjpegEncoderParamsSetQuality", err)
		}
		if err := nvjpeg.EncoderParamsSetSamplingFactors(st.params, nvjpeg.NvjpegChromaSubsampling_t(opts.Subsampling), stream); err != nil {
			return check(op, "nvjpegEncoderParamsSetSamplingFactors", err)
		}
		if err := nvjpeg.EncodeImage(st.h, st.state, st.params, &src, rawInputs[img.Format], int32(img.Width), int32(img.Height), stream); err != nil {
			return check(op, "nvjpegEncodeImage", err)
		}
		var n uint64
		if err := nvjpeg.EncodeRetrieveBitstream(st.h, st.state, nil, &n, stream); err != nil {
			return check(op, "nvjpegEncodeRetrieveBitstream", err)
		}
		// The length is known once the encoding has run; the bytes are
		// copied to out, Go memory, so the copy must be over before
		// the call returns.
		if err := cu.StreamSynchronize(stream); err != nil {
			return check(op, "cuStreamSynchronize", err)
		}
		if n == 0 {
			return fmt.Errorf("jpeg: Encoder.Encode: nvJPEG made a JPEG of 0 bytes")
		}
		buf := make([]byte, n)
		if err := nvjpeg.EncodeRetrieveBitstream(st.h, st.state, &buf[0], &n, stream); err != nil {
			return check(op, "nvjpegEncodeRetrieveBitstream", err)
		}
		if err := cu.StreamSynchronize(stream); err != nil {
			return check(op, "cuStreamSynchronize", err)
		}
		out = buf[:min(n, uint64(len(buf)))]
		return nil
	}, hold...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkSource reports an error unless img can be encoded: a format
// nvJPEG encodes from, a size JPEG can hold, and planes of that size with
// pitches of at least a row and slices long enough.
func checkSource(op string, img *Image) error {
	if img == nil {
		return invalid(op, "nil image")
	}
	if _, ok := rawInputs[img.Format]; !ok {
		if img.Format.valid() {
			return badData(op, ErrUnsupported, "an image of format %v: nvJPEG encodes RGBI, BGRI, RGB or BGR", img.Format)
		}
		return invalid(op, "unknown format %v", img.Format)
	}
	if img.Width < 1 || img.Height < 1 || img.Width > 65535 || img.Height > 65535 {
		return invalid(op, "an image of %d×%d: JPEG holds 1 to 65535 pixels a side", img.Width, img.Height)
	}
	info := Info{Width: img.Width, Height: img.Height, Components: 3}
	return img.checkFor(op, info)
}
