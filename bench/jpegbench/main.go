// Command jpegbench measures JPEG decoding throughput: batches of a mix
// of photo sizes decoded on the GPU by cuda/jpeg (DecodeBatch, into
// interleaved RGB and into planar YUV, each image allocated and freed on
// the decoder's stream, the stream waited for) against Go's image/jpeg
// on every CPU core (one goroutine per core decoding its share; it
// returns YCbCr planes, so it does no colour conversion: the YUV row is
// the like-for-like one). The two alternate round by round, and each
// figure is the median of the rounds. It prints one RESULT line per
// measurement, after lines saying which part of nvJPEG decoded the
// images of each GPU row (Image.Backend: the JPEG engines, or nvjpegDecode):
//
//	## backend gpu-batch-rgbi hardware=64
//	RESULT jpeg-decode impl=gpu-batch-rgbi images=64 mpix=... images_per_s=... mpix_per_s=...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"log"
	"math"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/jpeg"
)

// sizes is the mix: what cameras, phones and datasets (ImageNet's are
// about 500×375) give, small to full HD.
var sizes = [][2]int{{500, 375}, {640, 480}, {800, 600}, {1024, 768}, {1280, 720}, {1920, 1080}, {375, 500}, {320, 240}}

func main() {
	n := flag.Int("images", 64, "images in a batch")
	rounds := flag.Int("rounds", 7, "rounds of each measurement, interleaved")
	quality := flag.Int("quality", 85, "JPEG quality of the images")
	flag.Parse()

	data, mpix := makeImages(*n, *quality)
	fmt.Printf("## %d images, %.1f megapixels, %.1f MB of JPEG, quality %d, 4:2:0; %d CPU cores (GOMAXPROCS)\n",
		len(data), mpix, float64(total(data))/1e6, *quality, runtime.GOMAXPROCS(0))

	s, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	d, err := jpeg.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	if maj, min, patch, err := jpeg.Version(); err == nil {
		path, _ := jpeg.LibraryPath()
		fmt.Printf("## nvJPEG %d.%d.%d (%s)\n", maj, min, patch, path)
	}

	hw, why := d.Hardware()
	if hw {
		fmt.Println("## DecodeBatch: the GPU's JPEG engines (NVJPEG_BACKEND_HARDWARE) for the images they take")
	} else {
		fmt.Printf("## DecodeBatch: no JPEG engines (%v): image by image, nvjpegDecode\n", why)
	}

	impls := []struct {
		name string
		run  func() error
	}{
		{"gpu-batch-rgbi", func() error { return gpuBatch(d, s, data, jpeg.RGBI) }},
		{"gpu-batch-yuv", func() error { return gpuBatch(d, s, data, jpeg.YUV) }},
		{"gpu-single-rgbi", func() error { return gpuSingle(d, s, data, jpeg.RGBI) }},
		{"cpu-imagejpeg", func() error { return cpuDecode(data) }},
	}
	// One warm-up of each: nvJPEG sets its batch state and buffers up on
	// first use. The warm-up also says which backends decoded the images.
	for _, im := range impls {
		used = map[jpeg.Backend]int{}
		if err := im.run(); err != nil {
			log.Fatalf("%s: %v", im.name, err)
		}
		fmt.Printf("## backend %s %s\n", im.name, describe(used))
	}
	used = nil
	times := make([][]time.Duration, len(impls))
	for r := range *rounds {
		for i, im := range impls {
			runtime.GC()
			start := time.Now()
			if err := im.run(); err != nil {
				log.Fatalf("%s: %v", im.name, err)
			}
			el := time.Since(start)
			times[i] = append(times[i], el)
			fmt.Printf("## round %d %s %.2f ms\n", r, im.name, el.Seconds()*1e3)
		}
	}
	for i, im := range impls {
		med := median(times[i])
		fmt.Printf("RESULT jpeg-decode impl=%s images=%d mpix=%.2f ms=%.3f images_per_s=%.0f mpix_per_s=%.0f\n",
			im.name, len(data), mpix, med.Seconds()*1e3, float64(len(data))/med.Seconds(), mpix/med.Seconds())
	}
}

// gpuBatch decodes data in one batch, waits for the stream and frees the
// images.
func gpuBatch(d *jpeg.Decoder, s *cuda.Stream, data [][]byte, f jpeg.Format) error {
	imgs, err := d.DecodeBatch(data, f)
	if err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	for _, img := range imgs {
		count(img)
		img.Close()
	}
	return nil
}

// used counts the images of the warm-up run by backend; nil while timing.
var used map[jpeg.Backend]int

func count(img *jpeg.Image) {
	if used != nil {
		used[img.Backend]++
	}
}

// describe lists backends and their image counts, "hardware=64".
func describe(m map[jpeg.Backend]int) string {
	if len(m) == 0 {
		return "host (image/jpeg)"
	}
	var parts []string
	for _, b := range []jpeg.Backend{jpeg.BackendHardware, jpeg.BackendDefault, jpeg.BackendNone} {
		if m[b] > 0 {
			parts = append(parts, fmt.Sprintf("%v=%d", b, m[b]))
		}
	}
	return strings.Join(parts, " ")
}

// gpuSingle decodes data one image at a time (Decode), then waits.
func gpuSingle(d *jpeg.Decoder, s *cuda.Stream, data [][]byte, f jpeg.Format) error {
	imgs := make([]*jpeg.Image, 0, len(data))
	defer func() {
		for _, img := range imgs {
			count(img)
			img.Close()
		}
	}()
	for _, b := range data {
		img, err := d.Decode(b, f)
		if err != nil {
			return err
		}
		imgs = append(imgs, img)
	}
	return s.Synchronize()
}

// cpuDecode decodes data with image/jpeg on GOMAXPROCS goroutines, each
// taking the next image.
func cpuDecode(data [][]byte) error {
	var next, failed sync.Mutex
	i := 0
	var first error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(data) {
					return
				}
				if _, err := stdjpeg.Decode(bytes.NewReader(data[k])); err != nil {
					failed.Lock()
					first = err
					failed.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// makeImages encodes n photo-like images (smooth shading, edges, and
// noise of a few levels, so that they compress as photos do) of the
// sizes in turn.
func makeImages(n, quality int) ([][]byte, float64) {
	r := mrand.New(mrand.NewPCG(1, 2))
	var out [][]byte
	mpix := 0.0
	for k := range n {
		w, h := sizes[k%len(sizes)][0], sizes[k%len(sizes)][1]
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		cx, cy := r.Float64()*float64(w), r.Float64()*float64(h)
		for y := range h {
			for x := range w {
				dx, dy := float64(x)-cx, float64(y)-cy
				base := 128 + 90*math.Sin(math.Hypot(dx, dy)/40)
				edge := 0.0
				if (x/64+y/48)%2 == 0 {
					edge = 30
				}
				noise := float64(r.IntN(13) - 6)
				img.SetRGBA(x, y, color.RGBA{
					R: clamp(base + edge + noise),
					G: clamp(255 - base + noise),
					B: clamp(base/2 + float64(x%256)/4 + noise),
					A: 255,
				})
			}
		}
		var buf bytes.Buffer
		if err := stdjpeg.Encode(&buf, img, &stdjpeg.Options{Quality: quality}); err != nil {
			log.Fatal(err)
		}
		out = append(out, buf.Bytes())
		mpix += float64(w*h) / 1e6
	}
	return out, mpix
}

func clamp(v float64) uint8 { return uint8(min(255, max(0, v))) }

func total(data [][]byte) int {
	n := 0
	for _, b := range data {
		n += len(b)
	}
	return n
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func init() {
	log.SetFlags(0)
	log.SetOutput(os.Stderr)
	log.SetPrefix("jpegbench: ")
}
