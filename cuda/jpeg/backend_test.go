//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/jpeg"
)

func TestBackendNames(t *testing.T) {
	for b, want := range map[jpeg.Backend]string{
		jpeg.BackendNone:     "none",
		jpeg.BackendDefault:  "default",
		jpeg.BackendHardware: "hardware",
		jpeg.Backend(7):      "Backend(7)",
		jpeg.Backend(-1):     "Backend(-1)",
	} {
		if got := b.String(); got != want {
			t.Errorf("Backend(%d).String() = %q; want %q", int(b), got, want)
		}
	}
}

// TestHardwareOfANilDecoderIsErrClosed runs with no GPU: the question is
// refused before nvJPEG.
func TestHardwareOfANilDecoderIsErrClosed(t *testing.T) {
	ok, err := nilDecoder.Hardware()
	if ok || !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Hardware of a nil decoder = %v, %v; want false, ErrClosed", ok, err)
	}
}

// TestDecodeBatchUsesTheJPEGEnginesWhereThereAreSome decodes baseline
// 4:2:0 and 4:4:4 JPEGs of 640×480 in a batch: on a GPU with JPEG
// engines each image says the engines decoded it, elsewhere each says
// nvjpegDecode did and Hardware says why there are no engines; the
// pixels match image/jpeg's either way. A batch that also holds the
// other samples, of every size, decodes right whichever part takes each.
func TestDecodeBatchUsesTheJPEGEnginesWhereThereAreSome(t *testing.T) {
	d, _, st := newDecoder(t)
	hw, why := d.Hardware()
	if errors.Is(why, cuda.ErrClosed) {
		t.Fatalf("Hardware: %v", why)
	}
	if hw != (why == nil) {
		t.Fatalf("Hardware = %v, %v: engines and a reason for none", hw, why)
	}
	t.Logf("JPEG engines: %v (%v)", hw, why)
	want := jpeg.BackendDefault
	if hw {
		want = jpeg.BackendHardware
	}
	big := []sample{makeSample(t, "420", 640, 480), makeSample(t, "444", 640, 480)}
	for _, f := range []jpeg.Format{jpeg.RGBI, jpeg.RGB, jpeg.Y} {
		imgs, err := d.DecodeBatch([][]byte{big[0].data, big[1].data}, f)
		if err != nil {
			t.Fatalf("DecodeBatch as %v: %v", f, err)
		}
		for i, img := range imgs {
			if img.Backend != want {
				t.Errorf("%s as %v: decoded by %v; want %v", big[i].name, f, img.Backend, want)
			}
			checkImage(t, st, big[i], decodeReference(t, big[i]), img)
			img.Close()
		}
	}

	samples := allSamples(t)
	data := make([][]byte, len(samples))
	for i, s := range samples {
		data[i] = s.data
	}
	imgs, err := d.DecodeBatch(data, jpeg.BGRI)
	if err != nil {
		t.Fatalf("DecodeBatch of every sample: %v", err)
	}
	for i, img := range imgs {
		if img.Backend != jpeg.BackendDefault && (!hw || img.Backend != jpeg.BackendHardware) {
			t.Errorf("%s: decoded by %v, with engines %v", samples[i].name, img.Backend, hw)
		}
		t.Logf("%s: %v", samples[i].name, img.Backend)
		checkImage(t, st, samples[i], decodeReference(t, samples[i]), img)
		img.Close()
	}
}
