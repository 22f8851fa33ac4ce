//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"errors"
	"image"
	stdjpeg "image/jpeg"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/jpeg"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// TestEncodeChecksBeforeNvJPEG gives a nil encoder images and options
// that cannot be encoded: each is refused before the encoder (not
// ErrClosed), and a good one reaches it (ErrClosed).
func TestEncodeChecksBeforeNvJPEG(t *testing.T) {
	ctx := libtest.Context(t)
	var e *jpeg.Encoder
	img, err := jpeg.NewImage(ctx, jpeg.RGBI, jpeg.Info{Width: 17, Height: 9, Components: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	yuv, err := jpeg.NewImage(ctx, jpeg.Y, jpeg.Info{Width: 17, Height: 9, Components: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer yuv.Close()
	short := *img
	short.Planes = []jpeg.Plane{img.Planes[0]}
	short.Planes[0].Pitch = 60
	for _, c := range []struct {
		img  *jpeg.Image
		opts jpeg.EncodeOptions
		want string
	}{
		{nil, jpeg.EncodeOptions{}, "nil image"},
		{yuv, jpeg.EncodeOptions{}, "nvJPEG encodes RGBI, BGRI, RGB or BGR"},
		{&jpeg.Image{Format: jpeg.Format(0), Width: 1, Height: 1}, jpeg.EncodeOptions{}, "unknown format"},
		{&jpeg.Image{Format: jpeg.RGB, Width: 0, Height: 9}, jpeg.EncodeOptions{}, "an image of 0×9"},
		{&jpeg.Image{Format: jpeg.RGB, Width: 70000, Height: 9}, jpeg.EncodeOptions{}, "an image of 70000×9"},
		{&jpeg.Image{Format: jpeg.RGB, Width: 17, Height: 9, Planes: img.Planes}, jpeg.EncodeOptions{}, "1 plane(s) for format RGB, which has 3"},
		{&short, jpeg.EncodeOptions{}, "plane 0 needs 531 bytes"},
		{img, jpeg.EncodeOptions{Quality: 101}, "quality 101"},
		{img, jpeg.EncodeOptions{Quality: -1}, "quality -1"},
		{img, jpeg.EncodeOptions{Subsampling: jpeg.SubsamplingUnknown}, "subsampling unknown"},
	} {
		_, err := e.Encode(c.img, c.opts)
		if err == nil || errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Encode: %v; want an error containing %q before the encoder", err, c.want)
		}
	}
	if _, err := e.Encode(img, jpeg.EncodeOptions{Quality: 75, Subsampling: jpeg.Subsampling420}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Encode of a good image on a nil encoder: %v; want ErrClosed", err)
	}
}

func newEncoder(t testing.TB, s *cuda.Stream) *jpeg.Encoder {
	t.Helper()
	e, err := jpeg.NewEncoder(s)
	if errors.Is(err, nvjpeg.ErrNoLibrary) {
		libtest.Unavailable(t, "no nvJPEG library: %v", err)
	}
	if err != nil {
		t.Fatalf("NewEncoder: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestEncodeRoundTrip decodes test JPEGs on the GPU, encodes the images
// again with nvJPEG in each input format and several subsamplings, and
// decodes the result with image/jpeg: it reads the subsampling asked for
// and the pixels of the first decoding, within what re-encoding at
// quality 95 loses on the smooth test content (largest difference 12,
// mean 2; a wrong channel order or plane gives tens).
func TestEncodeRoundTrip(t *testing.T) {
	d, _, st := newDecoder(t)
	e := newEncoder(t, st)
	for _, size := range [][2]int{{17, 9}, {250, 131}, {640, 480}} {
		s := makeSample(t, "420", size[0], size[1])
		ref := decodeReference(t, s)
		for _, f := range []jpeg.Format{jpeg.RGBI, jpeg.BGRI, jpeg.RGB, jpeg.BGR} {
			img, err := d.Decode(s.data, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, ss := range []jpeg.Subsampling{jpeg.Subsampling444, jpeg.Subsampling420, jpeg.SubsamplingGray} {
				what := s.name + " from " + f.String() + " to " + ss.String()
				data, err := e.Encode(img, jpeg.EncodeOptions{Quality: 95, Subsampling: ss})
				if err != nil {
					t.Fatalf("%s: Encode: %v", what, err)
				}
				if err := jpeg.Check(data); err != nil {
					t.Fatalf("%s: nvJPEG's JPEG fails Check: %v", what, err)
				}
				info, err := d.Info(data)
				if err != nil || info.Width != s.w || info.Height != s.h || info.Subsampling != ss {
					t.Fatalf("%s: Info of nvJPEG's JPEG: %+v, %v", what, info, err)
				}
				back, err := stdjpeg.Decode(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("%s: image/jpeg: %v", what, err)
				}
				got := make([]byte, 0, 3*s.w*s.h)
				for y := range s.h {
					for x := range s.w {
						r, g, b, _ := back.At(x, y).RGBA()
						got = append(got, byte(r>>8), byte(g>>8), byte(b>>8))
					}
				}
				want := ref.rgb
				if ss == jpeg.SubsamplingGray {
					if _, ok := back.(*image.Gray); !ok {
						t.Fatalf("%s: image/jpeg reads a %T", what, back)
					}
					want = lumaRGB(ref)
				}
				compareBytes(t, what, got, 3*s.w, want, 3*s.w, s.h, tolerance{12, 2})
			}
			img.Close()
		}
	}
}

// lumaRGB is the reference's luma as gray RGB pixels.
func lumaRGB(ref *reference) []byte {
	out := make([]byte, 0, 3*len(ref.planes[0]))
	for _, v := range ref.planes[0] {
		out = append(out, v, v, v)
	}
	return out
}

func TestClosedEncoder(t *testing.T) {
	_, _, st := newDecoder(t)
	e, err := jpeg.NewEncoder(st)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Clone()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	img, err := jpeg.NewImage(st, jpeg.RGBI, jpeg.Info{Width: 16, Height: 16, Components: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if err := img.Planes[0].Data.Fill(128); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Encode(img, jpeg.EncodeOptions{}); err != nil {
		t.Fatalf("Encode on a clone after the original's Close: %v", err)
	}
	c.Close()
	if _, err := c.Encode(img, jpeg.EncodeOptions{}); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Encode after Close: %v; want ErrClosed", err)
	}
	if _, err := e.Clone(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Clone after Close: %v; want ErrClosed", err)
	}
}
