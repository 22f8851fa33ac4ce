//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"image"
	stdjpeg "image/jpeg"
	"testing"
)

// TestEncode444MakesJPEGsImageJPEGReads checks the tests' 4:4:4 encoder:
// image/jpeg decodes its output as 4:4:4 of the right size, and the
// pixels are those encoded within what quality 90 loses: on smooth
// content a few levels (largest difference 6, mean 1.5); on noisy content
// (±24 levels a sample), which quality 90 quantizes coarsely, more
// (largest 40, mean 8), still far from the 60-level mean difference
// of unrelated images of these colours.
func TestEncode444MakesJPEGsImageJPEGReads(t *testing.T) {
	for _, c := range []struct {
		size [2]int
		src  *image.RGBA
		tol  tolerance
	}{
		{[2]int{8, 8}, smooth(8, 8), tolerance{6, 1.5}},
		{[2]int{33, 65}, smooth(33, 65), tolerance{6, 1.5}},
		{[2]int{17, 9}, noisy(17, 9, 3), tolerance{40, 8}},
		{[2]int{33, 65}, noisy(33, 65, 3), tolerance{40, 8}},
	} {
		size, src := c.size, c.src
		data, err := encode444(src, 90)
		if err != nil {
			t.Fatal(err)
		}
		img, err := stdjpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v: image/jpeg: %v", size, err)
		}
		m, ok := img.(*image.YCbCr)
		if !ok || m.SubsampleRatio != image.YCbCrSubsampleRatio444 || m.Rect != src.Rect {
			t.Fatalf("%v: image/jpeg reads a %T of %v; want 4:4:4 YCbCr of %v", size, img, img.Bounds(), src.Rect)
		}
		s := sample{name: "444", w: size[0], h: size[1], data: data}
		ref := decodeReference(t, s)
		want := make([]byte, 0, 3*size[0]*size[1])
		for i := 0; i < len(src.Pix); i += 4 {
			want = append(want, src.Pix[i:i+3]...)
		}
		compareBytes(t, "encode444 through image/jpeg", ref.rgb, 3*size[0], want, 3*size[0], size[1], c.tol)
	}
}
