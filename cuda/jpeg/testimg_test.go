//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"math"
	mrand "math/rand/v2"
	"testing"
)

// sample is a test JPEG and how it was made.
type sample struct {
	name        string
	kind        string // "420", "444" or "gray"
	w, h        int
	data        []byte
	subsampling string // Subsampling.String() of what nvJPEG should report
	components  int
}

// smooth is a colour image whose channels change by under one level per
// pixel, each along another direction (so that a swapped channel or a
// plane at the wrong place shows): chroma upsampled by nearest sample
// (image/jpeg) and by interpolation (nvJPEG may) then differ by under a
// level.
func smooth(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x), float64(y)
			img.SetRGBA(x, y, color.RGBA{
				R: uint8(110 + 40*math.Sin(fx/80)),
				G: uint8(130 + 40*math.Sin(fy/80+1)),
				B: uint8(150 + 40*math.Cos((fx+fy)/120)),
				A: 255,
			})
		}
	}
	return img
}

// noisy is smooth with noise of ±24 levels on every sample: every DCT
// coefficient is used, so that the decoders' IDCTs are compared in full.
func noisy(w, h int, seed uint64) *image.RGBA {
	r := mrand.New(mrand.NewPCG(seed, 7))
	img := smooth(w, h)
	for i := range img.Pix {
		if i%4 != 3 {
			img.Pix[i] = uint8(min(255, max(0, int(img.Pix[i])+r.IntN(49)-24)))
		}
	}
	return img
}

func grayOf(src *image.RGBA) *image.Gray {
	g := image.NewGray(src.Bounds())
	for i := range g.Pix {
		g.Pix[i] = src.Pix[4*i+1]
	}
	return g
}

// makeSample encodes a test image of w×h: "420" (image/jpeg, smooth
// content), "444" (encode444, noisy content) or "gray" (image/jpeg,
// noisy content), at quality 90.
func makeSample(t testing.TB, kind string, w, h int) sample {
	t.Helper()
	s := sample{name: fmt.Sprintf("%s-%dx%d", kind, w, h), kind: kind, w: w, h: h}
	var buf bytes.Buffer
	var err error
	switch kind {
	case "420":
		s.subsampling, s.components = "4:2:0", 3
		err = stdjpeg.Encode(&buf, smooth(w, h), &stdjpeg.Options{Quality: 90})
	case "444":
		s.subsampling, s.components = "4:4:4", 3
		var data []byte
		data, err = encode444(noisy(w, h, uint64(w*h)), 90)
		buf.Write(data)
	case "gray":
		s.subsampling, s.components = "gray", 1
		err = stdjpeg.Encode(&buf, grayOf(noisy(w, h, uint64(w+h))), &stdjpeg.Options{Quality: 90})
	default:
		t.Fatalf("unknown sample kind %q", kind)
	}
	if err != nil {
		t.Fatalf("encoding %s: %v", s.name, err)
	}
	s.data = buf.Bytes()
	return s
}

// The sizes of the test images: a block, odd sizes that end inside a
// block and inside a 4:2:0 macroblock, and larger ones.
var sampleSizes = [][2]int{{8, 8}, {17, 9}, {33, 65}, {250, 131}, {640, 480}, {1023, 767}}

// reference is image/jpeg's decoding of a sample: its samples, and its
// pixels as RGB with the JFIF conversion in float64 rounded once.
type reference struct {
	img     image.Image
	w, h    int
	planes  [3][]byte // Y, Cb, Cr (Y alone for gray), rows without padding
	pw, ph  [3]int    // each plane's size
	rgb     []byte    // interleaved, w·h·3
	isGray  bool
	ratio   image.YCbCrSubsampleRatio
	ncolour int
}

func decodeReference(t testing.TB, s sample) *reference {
	t.Helper()
	img, err := stdjpeg.Decode(bytes.NewReader(s.data))
	if err != nil {
		t.Fatalf("image/jpeg cannot decode %s: %v", s.name, err)
	}
	r := &reference{img: img, w: s.w, h: s.h}
	r.rgb = make([]byte, 3*s.w*s.h)
	switch m := img.(type) {
	case *image.Gray:
		r.isGray, r.ncolour = true, 1
		r.planes[0] = make([]byte, s.w*s.h)
		r.pw[0], r.ph[0] = s.w, s.h
		for y := range s.h {
			copy(r.planes[0][y*s.w:(y+1)*s.w], m.Pix[y*m.Stride:])
			for x := range s.w {
				v := m.Pix[y*m.Stride+x]
				copy(r.rgb[3*(y*s.w+x):], []byte{v, v, v})
			}
		}
	case *image.YCbCr:
		r.ratio, r.ncolour = m.SubsampleRatio, 3
		cw, ch := chromaSize(m)
		r.pw, r.ph = [3]int{s.w, cw, cw}, [3]int{s.h, ch, ch}
		src := [3][]byte{m.Y, m.Cb, m.Cr}
		strides := [3]int{m.YStride, m.CStride, m.CStride}
		for p := range 3 {
			r.planes[p] = make([]byte, r.pw[p]*r.ph[p])
			for y := range r.ph[p] {
				copy(r.planes[p][y*r.pw[p]:(y+1)*r.pw[p]], src[p][y*strides[p]:])
			}
		}
		for y := range s.h {
			for x := range s.w {
				yy := float64(m.Y[m.YOffset(x, y)])
				cb := float64(m.Cb[m.COffset(x, y)]) - 128
				cr := float64(m.Cr[m.COffset(x, y)]) - 128
				copy(r.rgb[3*(y*s.w+x):], []byte{
					clamp(yy + 1.402*cr),
					clamp(yy - 0.344136*cb - 0.714136*cr),
					clamp(yy + 1.772*cb),
				})
			}
		}
	default:
		t.Fatalf("image/jpeg decodes %s as a %T", s.name, img)
	}
	if b := img.Bounds(); b.Dx() != s.w || b.Dy() != s.h {
		t.Fatalf("image/jpeg decodes %s as %v", s.name, b)
	}
	return r
}

// chromaSize is the size of m's chroma planes.
func chromaSize(m *image.YCbCr) (int, int) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	}
	return w, h
}

func clamp(v float64) byte { return byte(min(255, max(0, math.Round(v)))) }

// tolerance is how far a decoding may be from image/jpeg's: the largest
// difference of one value and the mean difference.
//
// Both decoders read the same coefficients, so they differ only by their
// IDCTs, colour conversion and chroma upsampling. An IDCT accurate to
// IEEE 1180 is within one level of the exact transform, so two differ by
// up to 2 in a sample; planes of samples (Y, YUV) get maxDiff 3. Converted
// to RGB, B = Y + 1.772·(Cb−128) turns differences of 2 in Y and Cb into
// up to 5.5, and the rounding into 6: RGB of colour images gets maxDiff
// 6. The test images' colours change by under a level per pixel, so
// where the decoders upsample 4:2:0 chroma differently (nearest sample or
// interpolated) that adds under 2: 8 for RGB of 4:2:0. Differences this
// size are rare and unsigned: the mean stays well under one level, and
// a mean of 1 is the bound that catches what the maximum might not (a
// swapped channel, a plane or row at the wrong place gives tens).
type tolerance struct {
	maxDiff  int
	meanDiff float64
}

var (
	planeTolerance  = tolerance{3, 1}
	rgbTolerance    = tolerance{6, 1}
	rgb420Tolerance = tolerance{8, 1}
)

// compareBytes checks got against want, both w values a row (of any
// channels) for h rows, got's rows pitch bytes apart.
func compareBytes(t testing.TB, what string, got []byte, pitch int, want []byte, w, h int, tol tolerance) {
	t.Helper()
	msg, err := diffBytes(what, got, pitch, want, w, h, tol)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(msg)
}

// diffBytes is compareBytes for any goroutine: an error where got is
// out of tolerance, else a line saying by how much it differs.
func diffBytes(what string, got []byte, pitch int, want []byte, w, h int, tol tolerance) (string, error) {
	if len(got) < (h-1)*pitch+w {
		return "", fmt.Errorf("%s: %d bytes for %d rows of %d, pitch %d", what, len(got), h, w, pitch)
	}
	worst, wx, wy, sum := 0, 0, 0, 0
	for y := range h {
		for x := range w {
			d := int(got[y*pitch+x]) - int(want[y*w+x])
			if d < 0 {
				d = -d
			}
			sum += d
			if d > worst {
				worst, wx, wy = d, x, y
			}
		}
	}
	mean := float64(sum) / float64(w*h)
	if worst > tol.maxDiff || mean > tol.meanDiff {
		return "", fmt.Errorf("%s: largest difference %d at byte %d of row %d (got %d, want %d), mean %.3f; tolerance %d and mean %.1f",
			what, worst, wx, wy, got[wy*pitch+wx], want[wy*w+wx], mean, tol.maxDiff, tol.meanDiff)
	}
	return fmt.Sprintf("%s: largest difference %d, mean %.3f", what, worst, mean), nil
}
