//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Decoder is an nvJPEG library handle and its decoding states, bound to a
// stream: see the package comment.
//
// All methods are safe for concurrent use; the calls on one decoder and
// its clones take turns.
type Decoder struct {
	o *cuda.LibraryObject[*decoderState]
}

// decoderState is what a decoder's handles share. nvJPEG allows a JPEG
// state to one thread at a time, so mu is held for every call that uses
// one: the calls of a decoder take turns, and goroutines that want to
// decode at once use decoders of their own (a decoder per stream, which
// is where their work would run in parallel on the device anyway).
type decoderState struct {
	h nvjpeg.NvjpegHandle_t

	mu sync.Mutex
	// single decodes one image at a time (nvjpegDecode). hw is the
	// batch decoder of the GPU's JPEG engines, made on the first batch;
	// hwErr is why there is none, once that is known.
	single nvjpeg.NvjpegJpegState_t
	hw     *hardware
	hwErr  error
}

// api is the part of nvJPEG the decoder's life cycle calls.
var api = struct {
	create       func(*nvjpeg.NvjpegHandle_t) error
	destroy      func(nvjpeg.NvjpegHandle_t) error
	stateCreate  func(nvjpeg.NvjpegHandle_t, *nvjpeg.NvjpegJpegState_t) error
	stateDestroy func(nvjpeg.NvjpegJpegState_t) error
}{nvjpeg.CreateSimple, nvjpeg.Destroy, nvjpeg.JpegStateCreate, nvjpeg.JpegStateDestroy}

// New makes a decoder whose work goes to s: an nvJPEG handle with the
// default backend and allocators (nvjpegCreateSimple) and a JPEG state
// (nvjpegJpegStateCreate). The decoder keeps its own clone of s: closing s
// does not end it. nvJPEG takes the stream on each call, and the decoder
// passes its own.
func New(s *cuda.Stream) (*Decoder, error) {
	const op = "jpeg.New"
	o, err := cuda.NewLibraryObject(s, func() (*decoderState, error) {
		st := &decoderState{}
		if err := api.create(&st.h); err != nil {
			return nil, check(op, "nvjpegCreateSimple", err)
		}
		if err := api.stateCreate(st.h, &st.single); err != nil {
			_ = api.destroy(st.h)
			return nil, check(op, "nvjpegJpegStateCreate", err)
		}
		return st, nil
	}, func(st *decoderState) error {
		var err error
		if st.hw != nil {
			err = st.hw.close("Decoder.Close")
		}
		err = errors.Join(err, check("Decoder.Close", "nvjpegJpegStateDestroy", api.stateDestroy(st.single)))
		return errors.Join(err, check("Decoder.Close", "nvjpegDestroy", api.destroy(st.h)))
	})
	if err != nil {
		return nil, err
	}
	return &Decoder{o: o}, nil
}

func (d *Decoder) object() *cuda.LibraryObject[*decoderState] {
	if d == nil {
		return nil
	}
	return d.o
}

// call runs fn with the decoder held, its context current and its states
// to itself, after the calls of other goroutines on the decoder, and
// with hold held (cuda.LibraryObject.CallOnStream).
func (d *Decoder) call(op string, fn func(st *decoderState, stream cu.CUstream) error, hold ...cuda.Holder) error {
	return d.object().CallOnStream(op, func(st *decoderState, stream cu.CUstream) error {
		st.mu.Lock()
		defer st.mu.Unlock()
		return fn(st, stream)
	}, hold...)
}

// Clone returns another handle to the same decoder, to be closed on its
// own.
func (d *Decoder) Clone() (*Decoder, error) {
	o, err := d.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Decoder{o: o}, nil
}

// Close releases this handle, after the calls in flight on it; the last
// Close destroys the JPEG states and the nvJPEG handle and releases the
// stream. Images already decoded are memory of their own and stay valid.
// As with device memory, synchronize the stream before the last Close if
// a decoding may still be running.
func (d *Decoder) Close() error { return d.object().Close() }

// Stream returns the decoder's stream, owned by the decoder (no Close
// needed), or nil once this handle is closed.
func (d *Decoder) Stream() *cuda.Stream { return d.object().Stream() }
