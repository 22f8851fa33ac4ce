//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/jpeg"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// A JPEG decoded on the GPU into interleaved RGB, and its first pixel
// copied back. It needs a GPU and nvJPEG, so it is compiled, not run, by
// go test.
func Example() {
	s, err := cuda.OpenStream(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		return
	}
	defer s.Close()
	d, err := jpeg.New(s)
	if errors.Is(err, nvjpeg.ErrNoLibrary) {
		fmt.Println("no nvJPEG:", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	// A JPEG to decode: 64×48 of one colour.
	src := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := 0; i < len(src.Pix); i += 4 {
		copy(src.Pix[i:], []byte{200, 100, 50, 255})
	}
	var buf bytes.Buffer
	if err := stdjpeg.Encode(&buf, src, nil); err != nil {
		log.Fatal(err)
	}

	info, err := d.Info(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d×%d, %d components, %v\n", info.Width, info.Height, info.Components, info.Subsampling)
	img, err := d.Decode(buf.Bytes(), jpeg.RGBI)
	if err != nil {
		log.Fatal(err)
	}
	defer img.Close()
	p := img.Planes[0]
	row := make([]byte, p.Pitch)
	if err := p.Data.CopyTo(row); err != nil { // waits for the decoding
		log.Fatal(err)
	}
	fmt.Println("first pixel:", color.RGBA{row[0], row[1], row[2], 255})
}

// Check runs the checks every decoding makes before nvJPEG, with no GPU:
// here on a JPEG cut short and on bytes of another format.
func ExampleCheck() {
	var buf bytes.Buffer
	if err := stdjpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		log.Fatal(err)
	}
	whole := buf.Bytes()
	fmt.Println(jpeg.Check(whole))
	err := jpeg.Check(whole[:len(whole)-1]) // the end marker cut
	fmt.Println(errors.Is(err, jpeg.ErrBadJPEG), err)
	fmt.Println(jpeg.Check([]byte("GIF89a")))
	// Output:
	// <nil>
	// true jpeg: Check: no end marker (FF D9) after the first scan: truncated: not a JPEG, or a damaged one
	// jpeg: Check: 6 bytes without the JPEG start marker FF D8: not a JPEG, or a damaged one
}

// The layouts of the formats: planes, and bytes of a pixel in a plane.
func ExampleFormat() {
	for _, f := range []jpeg.Format{jpeg.RGBI, jpeg.BGRI, jpeg.RGB, jpeg.BGR, jpeg.YUV, jpeg.Y} {
		fmt.Println(f, f.Planes(), f.PixelBytes())
	}
	// Output:
	// RGBI 1 3
	// BGRI 1 3
	// RGB 3 1
	// BGR 3 1
	// YUV 3 1
	// Y 1 1
}
