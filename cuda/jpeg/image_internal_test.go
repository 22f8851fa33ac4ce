//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

// info420 is what nvJPEG reports of a 4:2:0 JPEG of 17×9.
var info420 = Info{Width: 17, Height: 9, Components: 3, Subsampling: Subsampling420,
	Widths: [4]int{17, 9, 9}, Heights: [4]int{9, 5, 5}}

var infoGray = Info{Width: 17, Height: 9, Components: 1, Subsampling: SubsamplingGray,
	Widths: [4]int{17}, Heights: [4]int{9}}

// TestNewImageLaysPlanesOutWithoutPadding allocates images of each format
// (on the fake driver where there is no GPU) and checks their planes:
// count, size, pitch of a row without padding, and slices of exactly the
// plane's bytes.
func TestNewImageLaysPlanesOutWithoutPadding(t *testing.T) {
	ctx := libtest.Context(t)
	for _, c := range []struct {
		f     Format
		info  Info
		sizes [][3]int // width, height, pitch
	}{
		{RGBI, info420, [][3]int{{17, 9, 51}}},
		{BGRI, infoGray, [][3]int{{17, 9, 51}}},
		{RGB, info420, [][3]int{{17, 9, 17}, {17, 9, 17}, {17, 9, 17}}},
		{BGR, infoGray, [][3]int{{17, 9, 17}, {17, 9, 17}, {17, 9, 17}}},
		{YUV, info420, [][3]int{{17, 9, 17}, {9, 5, 9}, {9, 5, 9}}},
		{Y, info420, [][3]int{{17, 9, 17}}},
	} {
		img, err := NewImage(ctx, c.f, c.info)
		if err != nil {
			t.Fatalf("NewImage(%v): %v", c.f, err)
		}
		if img.Format != c.f || img.Width != 17 || img.Height != 9 || len(img.Planes) != len(c.sizes) {
			t.Fatalf("NewImage(%v) = %v %d×%d with %d planes", c.f, img.Format, img.Width, img.Height, len(img.Planes))
		}
		for i, p := range img.Planes {
			want := c.sizes[i]
			if p.Width != want[0] || p.Height != want[1] || p.Pitch != want[2] || p.Data.Len() != want[1]*want[2] {
				t.Errorf("%v plane %d: %d×%d pitch %d, %d bytes; want %d×%d pitch %d, %d bytes",
					c.f, i, p.Width, p.Height, p.Pitch, p.Data.Len(), want[0], want[1], want[2], want[1]*want[2])
			}
		}
		if err := img.checkFor("test", c.info); err != nil {
			t.Errorf("%v: NewImage's image refused for its own info: %v", c.f, err)
		}
		if err := img.Close(); err != nil {
			t.Fatal(err)
		}
		if err := img.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}

func TestYUVOfGrayIsUnsupported(t *testing.T) {
	ctx := libtest.Context(t)
	_, err := NewImage(ctx, YUV, infoGray)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "decode a grayscale image as Y") {
		t.Fatalf("NewImage(YUV, gray): %v; want ErrUnsupported", err)
	}
}

// TestDestinationChecks gives checkFor, which DecodeInto runs before
// nvJPEG, destinations that cannot take a 17×9 4:2:0 image in RGBI.
func TestDestinationChecks(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[uint8] {
		s, err := cuda.AllocSlice[uint8](ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	closed := alloc(64 * 9)
	closed.Close()
	plane := func(data *cuda.Slice[uint8], w, h, pitch int) []Plane {
		return []Plane{{Data: data, Width: w, Height: h, Pitch: pitch}}
	}
	padded := alloc(60*8 + 51)
	for _, c := range []struct {
		name string
		img  *Image
		want string
	}{
		{"nil", nil, "nil destination"},
		{"wrong size", &Image{Format: RGBI, Width: 16, Height: 9, Planes: plane(padded, 16, 9, 60)}, "a destination of 16×9 for an image of 17×9"},
		{"no planes", &Image{Format: RGBI, Width: 17, Height: 9}, "0 plane(s) for format RGBI, which has 1"},
		{"plane size", &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(padded, 17, 8, 60)}, "plane 0 is 17×8; the image's is 17×9"},
		{"pitch", &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(padded, 17, 9, 50)}, "pitch 50 is less than its row of 51 bytes"},
		{"short", &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(alloc(60*8+50), 17, 9, 60)}, "needs 531 bytes (9 rows, pitch 60), but its slice has 530"},
		{"nil slice", &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(nil, 17, 9, 60)}, "plane 0's slice: handle is closed"},
		{"closed slice", &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(closed, 17, 9, 60)}, "plane 0's slice: handle is closed"},
		{"gray as YUV", &Image{Format: YUV, Width: 17, Height: 9}, "YUV of an image of 1 component(s)"},
	} {
		info := info420
		if c.name == "gray as YUV" {
			info = infoGray
		}
		err := c.img.checkFor("DecodeInto", info)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, err, c.want)
		}
	}
	ok := &Image{Format: RGBI, Width: 17, Height: 9, Planes: plane(padded, 17, 9, 60)}
	if err := ok.checkFor("DecodeInto", info420); err != nil {
		t.Errorf("a padded destination of exactly its bytes: %v", err)
	}
}
