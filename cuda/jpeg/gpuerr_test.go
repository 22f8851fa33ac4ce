//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"errors"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/jpeg"
)

// decodesAfter checks that d still decodes a good JPEG correctly.
func decodesAfter(t *testing.T, d *jpeg.Decoder, st *cuda.Stream, after string) {
	t.Helper()
	s := makeSample(t, "420", 33, 65)
	img, err := d.Decode(s.data, jpeg.RGBI)
	if err != nil {
		t.Fatalf("Decode of a good JPEG after %s: %v", after, err)
	}
	defer img.Close()
	checkImage(t, st, s, decodeReference(t, s), img)
}

// TestBadBytesAreRefusedBeforeNvJPEGOnAGPU gives a real decoder empty,
// truncated and random bytes: each is an error matching ErrBadJPEG that
// is not nvJPEG's (no *jpeg.Error), and the decoder decodes afterwards.
func TestBadBytesAreRefusedBeforeNvJPEGOnAGPU(t *testing.T) {
	d, _, st := newDecoder(t)
	good := makeSample(t, "444", 250, 131).data
	r := mrand.New(mrand.NewPCG(5, 6))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	for name, data := range map[string][]byte{
		"empty":            nil,
		"truncated header": good[:40],
		"truncated scan":   good[:len(good)/2],
		"no end marker":    good[:len(good)-2],
		"random":           random,
		"start and random": append([]byte{0xFF, 0xD8}, random...),
	} {
		for _, call := range []func() error{
			func() error { _, err := d.Info(data); return err },
			func() error { _, err := d.Decode(data, jpeg.RGB); return err },
			func() error { _, err := d.DecodeBatch([][]byte{good, data}, jpeg.RGB); return err },
		} {
			err := call()
			var lerr *jpeg.Error
			if !errors.Is(err, jpeg.ErrBadJPEG) || errors.As(err, &lerr) {
				t.Fatalf("%s: %v; want ErrBadJPEG from the checks before nvJPEG", name, err)
			}
		}
	}
	decodesAfter(t, d, st, "bad bytes")
}

// TestNvJPEGRefusesArithmeticCoding marks a JPEG's frame as arithmetic
// coded (SOF9), which nvJPEG does not decode: the headers pass the
// package's checks, and nvJPEG's status is an *Error matching
// ErrUnsupported or ErrBadJPEG (which one is nvJPEG's choice).
func TestNvJPEGRefusesArithmeticCoding(t *testing.T) {
	d, _, st := newDecoder(t)
	data := bytes.Clone(makeSample(t, "420", 33, 65).data)
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("no SOF0 in image/jpeg's output")
	}
	data[i+1] = 0xC9
	img, err := d.Decode(data, jpeg.RGBI)
	var lerr *jpeg.Error
	if err == nil {
		img.Close()
		t.Fatal("Decode of an arithmetic-coded frame succeeded")
	}
	if !errors.As(err, &lerr) || !(errors.Is(err, jpeg.ErrUnsupported) || errors.Is(err, jpeg.ErrBadJPEG)) {
		t.Fatalf("Decode: %v; want nvJPEG's error, matching ErrUnsupported or ErrBadJPEG", err)
	}
	t.Logf("Decode: %v", err)
	decodesAfter(t, d, st, "an arithmetic-coded frame")
}

// TestClosedDecoder checks the handle rules: a clone outlives the
// original's Close, closing the stream given to New does not end the
// decoder, and every call after the last handle's Close is ErrClosed.
func TestClosedDecoder(t *testing.T) {
	d, _, st := newDecoder(t)
	s := makeSample(t, "420", 17, 9)
	c, err := d.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil { // the test's handle; the decoder has its own
		t.Fatal(err)
	}
	img, err := c.Decode(s.data, jpeg.Y)
	if err != nil {
		t.Fatalf("Decode on a clone after the original's Close: %v", err)
	}
	host := make([]byte, img.Planes[0].Data.Len())
	if err := img.Planes[0].Data.CopyTo(host); err != nil {
		t.Fatal(err)
	}
	compareBytes(t, "decoded by the clone", host, img.Planes[0].Pitch, decodeReference(t, s).planes[0], s.w, s.h, planeTolerance)
	img.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Info":        func() error { _, err := c.Info(s.data); return err }(),
		"Decode":      func() error { _, err := c.Decode(s.data, jpeg.RGB); return err }(),
		"DecodeInto":  c.DecodeInto(s.data, &jpeg.Image{Format: jpeg.RGB}),
		"DecodeBatch": func() error { _, err := c.DecodeBatch([][]byte{s.data}, jpeg.RGB); return err }(),
		"Clone":       func() error { _, err := c.Clone(); return err }(),
		"Hardware":    func() error { _, err := c.Hardware(); return err }(),
		"Info on d":   func() error { _, err := d.Info(s.data); return err }(),
	} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s after Close: %v; want ErrClosed", name, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v; want nil, as closing a handle twice does nothing", err)
	}
	if c.Stream() != nil {
		t.Error("Stream after Close is not nil")
	}
}

// TestConcurrentDecodes decodes from many goroutines at once: on one
// decoder, on clones of it, and batches among them; every image matches
// image/jpeg's. Run with -race.
func TestConcurrentDecodes(t *testing.T) {
	d, _, _ := newDecoder(t)
	var samples []sample
	var refs []*reference
	for _, size := range [][2]int{{17, 9}, {250, 131}, {33, 65}} {
		for _, kind := range []string{"420", "444", "gray"} {
			s := makeSample(t, kind, size[0], size[1])
			samples = append(samples, s)
			refs = append(refs, decodeReference(t, s))
		}
	}
	const goroutines, rounds = 8, 6
	errs := make(chan error, goroutines*rounds*len(samples))
	var wg sync.WaitGroup
	for g := range goroutines {
		dec := d
		if g%2 == 1 {
			c, err := d.Clone()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			dec = c
		}
		wg.Go(func() {
			for r := range rounds {
				var imgs []*jpeg.Image
				var err error
				if (g+r)%3 == 0 {
					data := make([][]byte, len(samples))
					for i, s := range samples {
						data[i] = s.data
					}
					imgs, err = dec.DecodeBatch(data, jpeg.RGBI)
				} else {
					for _, s := range samples {
						var img *jpeg.Image
						if img, err = dec.Decode(s.data, jpeg.RGBI); err != nil {
							break
						}
						imgs = append(imgs, img)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				for i, img := range imgs {
					p := img.Planes[0]
					host := make([]byte, p.Data.Len())
					if err := p.Data.CopyTo(host); err != nil { // waits for the decoder's stream
						errs <- err
						return
					}
					if _, err := diffBytes(samples[i].name, host, p.Pitch, refs[i].rgb, 3*samples[i].w, samples[i].h, colourTolerance(samples[i])); err != nil {
						errs <- err
					}
					img.Close()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDamagedJPEGsGiveErrorsOrImagesNotCrashes damages JPEGs where only
// nvJPEG can see it: a Huffman table whose counts cannot be codes, and
// scan data replaced by random bytes. nvJPEG may refuse them (an *Error,
// whatever its status: ErrBadJPEG is the likely one) or decode
// something; it must not crash, and the decoder must decode a good JPEG
// afterwards. It is the last test of the GPU that decodes, so that a
// library that broke the context would fail it alone.
func TestDamagedJPEGsGiveErrorsOrImagesNotCrashes(t *testing.T) {
	d, _, st := newDecoder(t)
	base := makeSample(t, "420", 250, 131).data
	badTable := bytes.Clone(base)
	h := bytes.Index(badTable, []byte{0xFF, 0xC4})
	if h < 0 {
		t.Fatal("no DHT in image/jpeg's output")
	}
	// The first table's counts of codes of lengths 1, 2, 3: three codes
	// of one bit cannot be, and the total is kept so the segment parses.
	counts := badTable[h+5 : h+8]
	moved := int(counts[2])
	if moved < 3 {
		t.Fatalf("the first table has %d codes of 3 bits; the damage needs 3", moved)
	}
	counts[0], counts[2] = counts[0]+3, counts[2]-3
	randomScan := bytes.Clone(base)
	sos := bytes.Index(randomScan, []byte{0xFF, 0xDA})
	start := sos + 2 + (int(randomScan[sos+2])<<8 | int(randomScan[sos+3]))
	r := mrand.New(mrand.NewPCG(8, 9))
	for i := start; i < len(randomScan)-2; i++ {
		randomScan[i] = byte(r.IntN(0xFF)) // never FF: no markers
	}
	for name, data := range map[string][]byte{"bad Huffman table": badTable, "random scan data": randomScan} {
		for _, f := range []jpeg.Format{jpeg.RGBI, jpeg.YUV} {
			img, err := d.Decode(data, f)
			var lerr *jpeg.Error
			switch {
			case err == nil:
				if err := st.Synchronize(); err != nil {
					t.Fatalf("%s as %v: the stream after the decoding: %v", name, f, err)
				}
				img.Close()
				t.Logf("%s as %v: nvJPEG decodes it", name, f)
			case errors.As(err, &lerr):
				t.Logf("%s as %v: %v (ErrBadJPEG: %v)", name, f, err, errors.Is(err, jpeg.ErrBadJPEG))
			default:
				t.Fatalf("%s as %v: %v; want an error of nvJPEG, or an image", name, f, err)
			}
		}
		decodesAfter(t, d, st, name)
	}
}
