//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"errors"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/jpeg"
)

// A nil decoder fails every call that reaches it with cuda.ErrClosed, so
// an error that is not ErrClosed from one came from the checks before
// nvJPEG: these tests need no GPU and no library.
var nilDecoder *jpeg.Decoder

// refusedBefore calls every entry point that takes JPEG bytes on data
// with a nil decoder and fails t unless each refuses it with an error
// matching kind and containing want.
func refusedBefore(t *testing.T, data []byte, kind error, want string) {
	t.Helper()
	_, infoErr := nilDecoder.Info(data)
	_, decErr := nilDecoder.Decode(data, jpeg.RGBI)
	intoErr := nilDecoder.DecodeInto(data, &jpeg.Image{Format: jpeg.RGBI})
	_, batchErr := nilDecoder.DecodeBatch([][]byte{data}, jpeg.RGB)
	for name, err := range map[string]error{"Info": infoErr, "Decode": decErr, "DecodeInto": intoErr, "DecodeBatch": batchErr} {
		if !errors.Is(err, kind) || errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s(%d bytes): %v; want an error matching %v, containing %q, before the decoder", name, len(data), err, kind, want)
		}
	}
}

func TestEmptyAndNonJPEGBytesAreRefusedBeforeNvJPEG(t *testing.T) {
	refusedBefore(t, nil, jpeg.ErrBadJPEG, "no data")
	refusedBefore(t, []byte{}, jpeg.ErrBadJPEG, "no data")
	refusedBefore(t, []byte{0xFF}, jpeg.ErrBadJPEG, "start marker")
	refusedBefore(t, []byte("\x89PNG\r\n\x1a\n"), jpeg.ErrBadJPEG, "start marker")
	refusedBefore(t, []byte{0xFF, 0xD8}, jpeg.ErrBadJPEG, "truncated")
	refusedBefore(t, []byte{0xFF, 0xD8, 0x12, 0x34}, jpeg.ErrBadJPEG, "where a marker")
	refusedBefore(t, []byte{0xFF, 0xD8, 0xFF, 0xD9}, jpeg.ErrBadJPEG, "before the first scan")
	refusedBefore(t, []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01}, jpeg.ErrBadJPEG, "gives its segment 1 bytes")
	// A scan header with no frame header before it.
	refusedBefore(t, []byte{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9}, jpeg.ErrBadJPEG, "before any frame header")
}

// TestEveryTruncationIsRefusedBeforeNvJPEG cuts valid JPEGs at every
// length short of the whole: each prefix is refused before nvJPEG (the
// end marker, at least, is missing), while the whole passes the checks
// and reaches the decoder, which is nil: ErrClosed.
func TestEveryTruncationIsRefusedBeforeNvJPEG(t *testing.T) {
	for _, kind := range []string{"420", "444", "gray"} {
		s := makeSample(t, kind, 17, 9)
		for n := range len(s.data) {
			_, err := nilDecoder.Info(s.data[:n])
			if !errors.Is(err, jpeg.ErrBadJPEG) || errors.Is(err, cuda.ErrClosed) {
				t.Fatalf("%s cut to %d of %d bytes: %v; want an error matching ErrBadJPEG before the decoder", s.name, n, len(s.data), err)
			}
		}
		if _, err := nilDecoder.Info(s.data); !errors.Is(err, cuda.ErrClosed) {
			t.Fatalf("%s whole: %v; want the checks passed and ErrClosed from the nil decoder", s.name, err)
		}
		withTail := append(bytes.Clone(s.data), "trailing bytes"...)
		if _, err := nilDecoder.Info(withTail); !errors.Is(err, cuda.ErrClosed) {
			t.Fatalf("%s with bytes after its end marker: %v; want the checks passed and ErrClosed", s.name, err)
		}
	}
}

// TestDNLHeightIsUnsupportedBeforeNvJPEG gives a frame header a height of
// 0 (the height then comes from a DNL marker, which nvJPEG does not read).
func TestDNLHeightIsUnsupportedBeforeNvJPEG(t *testing.T) {
	s := makeSample(t, "420", 17, 9)
	data := bytes.Clone(s.data)
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("no SOF0 in image/jpeg's output")
	}
	data[i+5], data[i+6] = 0, 0 // the height, after length and precision
	refusedBefore(t, data, jpeg.ErrUnsupported, "height 0")
}

// TestRandomBytesAreRefusedOrReachTheDecoder feeds random bytes, with and
// without a start marker: every call returns an error, ErrBadJPEG from the
// checks or ErrClosed from the nil decoder, and none panics.
func TestRandomBytesAreRefusedOrReachTheDecoder(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	for i := range 2000 {
		data := make([]byte, r.IntN(300))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		if i%2 == 0 && len(data) >= 2 {
			data[0], data[1] = 0xFF, 0xD8
		}
		_, err := nilDecoder.Info(data)
		if !errors.Is(err, jpeg.ErrBadJPEG) && !errors.Is(err, cuda.ErrClosed) {
			t.Fatalf("%x: %v; want ErrBadJPEG or ErrClosed", data, err)
		}
	}
}

func FuzzHeaderChecks(f *testing.F) {
	f.Add(makeSample(f, "420", 8, 8).data)
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xD9})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := nilDecoder.Info(data)
		switch {
		case errors.Is(err, cuda.ErrClosed):
			// Passed the checks: it must at least look like a JPEG.
			if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 || !bytes.Contains(data, []byte{0xFF, 0xD9}) {
				t.Fatalf("%x passed the checks", data)
			}
		case errors.Is(err, jpeg.ErrBadJPEG), errors.Is(err, jpeg.ErrUnsupported):
		default:
			t.Fatalf("%x: %v", data, err)
		}
	})
}

func TestUnknownFormatsAreRefusedBeforeNvJPEG(t *testing.T) {
	data := makeSample(t, "420", 8, 8).data
	_, decErr := nilDecoder.Decode(data, jpeg.Format(0))
	intoErr := nilDecoder.DecodeInto(data, &jpeg.Image{Format: jpeg.Format(42)})
	_, batchErr := nilDecoder.DecodeBatch([][]byte{data}, jpeg.Format(-1))
	for name, err := range map[string]error{"Decode": decErr, "DecodeInto": intoErr, "DecodeBatch": batchErr} {
		if err == nil || errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), "unknown format") {
			t.Errorf("%s: %v; want an unknown format error before the decoder", name, err)
		}
	}
	if err := nilDecoder.DecodeInto(data, nil); err == nil || !strings.Contains(err.Error(), "nil destination") {
		t.Errorf("DecodeInto(nil image): %v; want a nil destination error", err)
	}
}

// TestBatchNamesTheBadImage puts a truncated JPEG third in a batch: the
// error names image 2, and the batch fails before the decoder.
func TestBatchNamesTheBadImage(t *testing.T) {
	good := makeSample(t, "420", 8, 8).data
	batch := [][]byte{good, good, good[:len(good)/2], good}
	_, err := nilDecoder.DecodeBatch(batch, jpeg.RGBI)
	if !errors.Is(err, jpeg.ErrBadJPEG) || !strings.Contains(err.Error(), "image 2") {
		t.Fatalf("DecodeBatch: %v; want ErrBadJPEG naming image 2", err)
	}
}

func TestNilDecoderIsClosed(t *testing.T) {
	data := makeSample(t, "420", 8, 8).data
	if _, err := nilDecoder.Info(data); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Info: %v", err)
	}
	if _, err := nilDecoder.Decode(data, jpeg.RGB); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Decode: %v", err)
	}
	if _, err := nilDecoder.DecodeBatch(nil, jpeg.RGB); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("DecodeBatch of none: %v", err)
	}
	if _, err := nilDecoder.Clone(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Clone: %v", err)
	}
	if err := nilDecoder.Close(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Close: %v", err)
	}
	if s := nilDecoder.Stream(); s != nil {
		t.Errorf("Stream: %v, want nil", s)
	}
}

func TestFormatNamesAndPlanes(t *testing.T) {
	for _, c := range []struct {
		f             jpeg.Format
		name          string
		planes, bytes int
	}{
		{jpeg.RGBI, "RGBI", 1, 3}, {jpeg.BGRI, "BGRI", 1, 3}, {jpeg.RGB, "RGB", 3, 1},
		{jpeg.BGR, "BGR", 3, 1}, {jpeg.YUV, "YUV", 3, 1}, {jpeg.Y, "Y", 1, 1}, {jpeg.Format(9), "Format(9)", 0, 0},
	} {
		if c.f.String() != c.name || c.f.Planes() != c.planes || c.f.PixelBytes() != c.bytes {
			t.Errorf("%d: %q, %d planes, %d bytes a pixel; want %q, %d, %d", int(c.f), c.f.String(), c.f.Planes(), c.f.PixelBytes(), c.name, c.planes, c.bytes)
		}
	}
}
