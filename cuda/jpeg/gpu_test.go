//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/jpeg"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// newDecoder makes a decoder on a new stream of the first GPU; it skips
// (or fails, with GOCUDA_TEST_LIBS=required) on the fake driver, which
// has no nvJPEG, and where nvJPEG cannot be loaded.
func newDecoder(t testing.TB) (*jpeg.Decoder, *cuda.Context, *cuda.Stream) {
	t.Helper()
	ctx, s := libtest.GPU(t, "nvJPEG")
	d, err := jpeg.New(s)
	if errors.Is(err, nvjpeg.ErrNoLibrary) {
		libtest.Unavailable(t, "no nvJPEG library (build with the tag of the toolkit's CUDA version, or point %s at its libnvjpeg): %v", nvjpeg.LibraryEnv, err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil && !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return d, ctx, s
}

// allSamples is every kind of test JPEG at every size.
func allSamples(t testing.TB) []sample {
	var out []sample
	for _, size := range sampleSizes {
		for _, kind := range []string{"420", "444", "gray"} {
			out = append(out, makeSample(t, kind, size[0], size[1]))
		}
	}
	return out
}

// download copies plane p of img to the host after the stream's work.
func download(t testing.TB, s *cuda.Stream, p jpeg.Plane) []byte {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	host := make([]byte, p.Data.Len())
	if err := p.Data.CopyTo(host); err != nil {
		t.Fatalf("CopyTo: %v", err)
	}
	return host
}

// channel returns channel c of interleaved RGB pixels.
func channel(rgb []byte, c int) []byte {
	out := make([]byte, len(rgb)/3)
	for i := range out {
		out[i] = rgb[3*i+c]
	}
	return out
}

// bgr returns interleaved RGB pixels as BGR.
func bgr(rgb []byte) []byte {
	out := make([]byte, len(rgb))
	for i := 0; i < len(rgb); i += 3 {
		out[i], out[i+1], out[i+2] = rgb[i+2], rgb[i+1], rgb[i]
	}
	return out
}

// colourTolerance is the tolerance of RGB output for the sample's kind.
func colourTolerance(s sample) tolerance {
	switch s.kind {
	case "gray":
		return planeTolerance // R = G = B = Y
	case "420":
		return rgb420Tolerance
	}
	return rgbTolerance
}

// checkImage compares img, a decoding of s, with image/jpeg's.
func checkImage(t testing.TB, st *cuda.Stream, s sample, ref *reference, img *jpeg.Image) {
	t.Helper()
	what := s.name + " as " + img.Format.String()
	if img.Width != s.w || img.Height != s.h || len(img.Planes) != img.Format.Planes() {
		t.Fatalf("%s: %d×%d with %d planes", what, img.Width, img.Height, len(img.Planes))
	}
	tol := colourTolerance(s)
	switch img.Format {
	case jpeg.RGBI, jpeg.BGRI:
		want := ref.rgb
		if img.Format == jpeg.BGRI {
			want = bgr(want)
		}
		p := img.Planes[0]
		compareBytes(t, what, download(t, st, p), p.Pitch, want, 3*s.w, s.h, tol)
	case jpeg.RGB, jpeg.BGR:
		for i, p := range img.Planes {
			c := i
			if img.Format == jpeg.BGR {
				c = 2 - i
			}
			compareBytes(t, what+" plane "+"RGB"[c:c+1], download(t, st, p), p.Pitch, channel(ref.rgb, c), s.w, s.h, tol)
		}
	case jpeg.Y:
		p := img.Planes[0]
		compareBytes(t, what, download(t, st, p), p.Pitch, ref.planes[0], s.w, s.h, planeTolerance)
	case jpeg.YUV:
		for i, p := range img.Planes {
			if p.Width != ref.pw[i] || p.Height != ref.ph[i] {
				t.Fatalf("%s plane %d: %d×%d; image/jpeg's is %d×%d", what, i, p.Width, p.Height, ref.pw[i], ref.ph[i])
			}
			compareBytes(t, what+" plane "+"YUV"[i:i+1], download(t, st, p), p.Pitch, ref.planes[i], p.Width, p.Height, planeTolerance)
		}
	}
}

var allFormats = []jpeg.Format{jpeg.RGBI, jpeg.BGRI, jpeg.RGB, jpeg.BGR, jpeg.YUV, jpeg.Y}

// formatsFor are the formats a sample decodes to: all but YUV for gray.
func formatsFor(s sample) []jpeg.Format {
	if s.kind == "gray" {
		return []jpeg.Format{jpeg.RGBI, jpeg.BGRI, jpeg.RGB, jpeg.BGR, jpeg.Y}
	}
	return allFormats
}

func TestInfoMatchesTheHeaders(t *testing.T) {
	d, _, _ := newDecoder(t)
	for _, s := range allSamples(t) {
		info, err := d.Info(s.data)
		if err != nil {
			t.Fatalf("%s: Info: %v", s.name, err)
		}
		if info.Width != s.w || info.Height != s.h || info.Components != s.components || info.Subsampling.String() != s.subsampling {
			t.Fatalf("%s: Info = %+v; want %d×%d, %d components, %s", s.name, info, s.w, s.h, s.components, s.subsampling)
		}
		cw, ch := s.w, s.h
		if s.kind == "420" {
			cw, ch = (s.w+1)/2, (s.h+1)/2
		}
		for c := range s.components {
			ww, wh := s.w, s.h
			if c > 0 {
				ww, wh = cw, ch
			}
			if info.Widths[c] != ww || info.Heights[c] != wh {
				t.Fatalf("%s: component %d is %d×%d; want %d×%d", s.name, c, info.Widths[c], info.Heights[c], ww, wh)
			}
		}
	}
}

// TestDecodeMatchesImageJPEG decodes every sample in every format it
// has and compares with image/jpeg's decoding (see tolerance).
func TestDecodeMatchesImageJPEG(t *testing.T) {
	d, _, st := newDecoder(t)
	for _, s := range allSamples(t) {
		ref := decodeReference(t, s)
		for _, f := range formatsFor(s) {
			img, err := d.Decode(s.data, f)
			if err != nil {
				t.Fatalf("%s: Decode(%v): %v", s.name, f, err)
			}
			checkImage(t, st, s, ref, img)
			if img.Backend != jpeg.BackendDefault {
				t.Errorf("%s as %v: Backend %v; want %v", s.name, f, img.Backend, jpeg.BackendDefault)
			}
			if err := img.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDecodeIntoPaddedRowsLeavesThePaddingAlone decodes into planes whose
// rows are 13 bytes longer than the image's, filled with a marker value
// first: the pixels match image/jpeg's and the padding still holds the
// marker.
func TestDecodeIntoPaddedRowsLeavesThePaddingAlone(t *testing.T) {
	d, ctx, st := newDecoder(t)
	const pad, marker = 13, 0xA5
	for _, kind := range []string{"420", "444", "gray"} {
		s := makeSample(t, kind, 33, 65)
		ref := decodeReference(t, s)
		info, err := d.Info(s.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range formatsFor(s) {
			dst := &jpeg.Image{Format: f, Width: s.w, Height: s.h}
			for i := range f.Planes() {
				w, h := info.Width, info.Height
				if f == jpeg.YUV {
					w, h = info.Widths[i], info.Heights[i]
				}
				pitch := w*f.PixelBytes() + pad
				mem, err := cuda.AllocSlice[uint8](ctx, pitch*h)
				if err != nil {
					t.Fatal(err)
				}
				defer mem.Close()
				if err := mem.Fill(marker); err != nil {
					t.Fatal(err)
				}
				dst.Planes = append(dst.Planes, jpeg.Plane{Data: mem, Width: w, Height: h, Pitch: pitch})
			}
			if err := d.DecodeInto(s.data, dst); err != nil {
				t.Fatalf("%s: DecodeInto(%v): %v", s.name, f, err)
			}
			checkImage(t, st, s, ref, dst)
			for i, p := range dst.Planes {
				host := download(t, st, p)
				for y := range p.Height {
					for x := p.RowBytes(f); x < p.Pitch; x++ {
						if host[y*p.Pitch+x] != marker {
							t.Fatalf("%s as %v plane %d: padding byte %d of row %d is %#x, was %#x", s.name, f, i, x, y, host[y*p.Pitch+x], marker)
						}
					}
				}
			}
		}
	}
}

// TestDecodeIntoRefusesWrongDestinationsUntouched gives DecodeInto
// destinations that cannot take the image: each is refused, and the
// memory still holds what it held.
func TestDecodeIntoRefusesWrongDestinationsUntouched(t *testing.T) {
	d, ctx, st := newDecoder(t)
	s := makeSample(t, "420", 17, 9)
	mem, err := cuda.AllocSlice[uint8](ctx, 64*9)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Fill(7); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []*jpeg.Image{
		{Format: jpeg.RGBI, Width: 16, Height: 9, Planes: []jpeg.Plane{{Data: mem, Width: 16, Height: 9, Pitch: 64}}},
		{Format: jpeg.RGBI, Width: 17, Height: 9, Planes: []jpeg.Plane{{Data: mem, Width: 17, Height: 9, Pitch: 50}}},
		{Format: jpeg.RGBI, Width: 17, Height: 9, Planes: []jpeg.Plane{{Data: mem, Width: 17, Height: 9, Pitch: 70}}},
		{Format: jpeg.RGB, Width: 17, Height: 9, Planes: []jpeg.Plane{{Data: mem, Width: 17, Height: 9, Pitch: 64}}},
	} {
		if err := d.DecodeInto(s.data, dst); err == nil {
			t.Fatalf("DecodeInto(%+v) succeeded", *dst)
		}
	}
	host := download(t, st, jpeg.Plane{Data: mem})
	for i, v := range host {
		if v != 7 {
			t.Fatalf("byte %d of a refused destination is %d, was 7", i, v)
		}
	}
}

// TestDecodeBatchMatchesImageJPEG decodes a mix of sizes and kinds in
// batches of three lengths and three formats, which set the batch state
// up again, then the first batch once more.
func TestDecodeBatchMatchesImageJPEG(t *testing.T) {
	d, _, st := newDecoder(t)
	samples := allSamples(t)
	refs := make([]*reference, len(samples))
	for i, s := range samples {
		refs[i] = decodeReference(t, s)
	}
	colour := []int{}
	for i, s := range samples {
		if s.kind != "gray" {
			colour = append(colour, i)
		}
	}
	for _, run := range []struct {
		f   jpeg.Format
		idx []int
	}{
		{jpeg.RGBI, indices(len(samples))},
		{jpeg.RGB, indices(len(samples))[:5]},
		{jpeg.Y, colour},
		{jpeg.RGBI, indices(len(samples))},
	} {
		data := make([][]byte, len(run.idx))
		for j, i := range run.idx {
			data[j] = samples[i].data
		}
		imgs, err := d.DecodeBatch(data, run.f)
		if err != nil {
			t.Fatalf("DecodeBatch of %d as %v: %v", len(data), run.f, err)
		}
		if len(imgs) != len(data) {
			t.Fatalf("DecodeBatch of %d returned %d images", len(data), len(imgs))
		}
		for j, i := range run.idx {
			checkImage(t, st, samples[i], refs[i], imgs[j])
			imgs[j].Close()
		}
	}
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestEmptyBatchIsNoWork(t *testing.T) {
	d, _, _ := newDecoder(t)
	imgs, err := d.DecodeBatch(nil, jpeg.RGB)
	if err != nil || imgs != nil {
		t.Fatalf("DecodeBatch(nil) = %v, %v; want nil, nil", imgs, err)
	}
}
