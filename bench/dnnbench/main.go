// Command dnnbench measures cuda/dnn's convolution forward on shapes of
// the kind image models run (ResNet-50's layers at batch 32, a MobileNet
// depthwise layer), in float32, TF32, float16 and bfloat16, and prints
// per shape and type a RESULT line in TFLOP/s, the median of its samples:
//
//	RESULT impl=go op=conv_<type>_<shape> value=V unit=TFLOP/s
//
// bench/python/conv.py times torch.nn.functional.conv2d on the same
// shapes the same way (one stream, a warm-up, samples of back-to-back
// convolutions between two CUDA events) and prints impl=torch lines.
// bench/dnn.sh runs the two in turn, round after round, so that the
// GPU's clocks and neighbours weigh on both alike, then gives all the
// lines to dnnbench -report, which prints the median over the rounds of
// each and their ratio.
//
// With -ops attention (or conv,attention) it times fused scaled
// dot-product attention (dnn.AttentionForward) too, in float16 and
// bfloat16, as op=sdpa_<type>_<shape>; bench/python/sdpa.py times torch's
// scaled_dot_product_attention on the same shapes.
//
//	dnnbench [-ops conv,attention] [-types f32,tf32,f16,bf16] [-samples 15] [-ms 100] [-search exhaustive] [-workspace-mib 1024]
//	dnnbench -report results.txt
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
)

// shape is a convolution: x N×C×H×W, K filters of C/Groups×R×S.
type shape struct {
	name             string
	n, c, h, w       int
	k, r, s          int
	pad, stride, grp int
}

// shapes: conv.py has the same list, in the same order.
var shapes = []shape{
	{"r50_conv1", 32, 3, 224, 224, 64, 7, 7, 3, 2, 1},
	{"r50_3x3_56", 32, 64, 56, 56, 64, 3, 3, 1, 1, 1},
	{"r50_1x1_56", 32, 256, 56, 56, 64, 1, 1, 0, 1, 1},
	{"r50_3x3_s2_56", 32, 128, 56, 56, 128, 3, 3, 1, 2, 1},
	{"r50_3x3_14", 32, 256, 14, 14, 256, 3, 3, 1, 1, 1},
	{"r50_1x1_14", 32, 1024, 14, 14, 256, 1, 1, 0, 1, 1},
	{"r50_3x3_7", 32, 512, 7, 7, 512, 3, 3, 1, 1, 1},
	{"mbv2_dw_28", 32, 192, 28, 28, 192, 3, 3, 1, 1, 192},
}

func (s shape) conv() dnn.Conv {
	return dnn.Conv{PadH: s.pad, PadW: s.pad, StrideH: s.stride, StrideW: s.stride, Groups: s.grp}
}

func main() {
	ops := flag.String("ops", "conv", "what to time: conv, attention, or both (conv,attention)")
	types := flag.String("types", "f32,tf32,f16,bf16", "element types: f32, tf32 (float32 with TF32 allowed), f16, bf16")
	samples := flag.Int("samples", 15, "timed samples per case")
	ms := flag.Float64("ms", 100, "GPU time per sample, in milliseconds")
	search := flag.String("search", "exhaustive", "algorithm choice: exhaustive (as torch.backends.cudnn.benchmark) or heuristic")
	wsMiB := flag.Int("workspace-mib", 1024, "workspace limit of the algorithms, MiB")
	report := flag.String("report", "", "print the medians and ratios of the RESULT lines of this file instead")
	flag.Parse()
	if *report != "" {
		if err := printReport(*report); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *samples < 1 || *ms <= 0 {
		log.Fatalf("-samples %d -ms %g: both must be positive", *samples, *ms)
	}
	if *search != "exhaustive" && *search != "heuristic" {
		log.Fatalf("-search %q: exhaustive or heuristic", *search)
	}
	s, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	h, err := dnn.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	v, _ := dnn.Version()
	path, _ := dnn.LibraryPath()
	name, _ := s.Context().Device().Name()
	fmt.Printf("INFO conv cudnn=%d lib=%s device=%q\n", v, path, name)
	sr := dnn.Heuristic
	if *search == "exhaustive" {
		sr = dnn.Exhaustive
	}
	if err := h.SetSearch(sr); err != nil {
		log.Fatal(err)
	}
	if err := h.SetWorkspaceLimit(*wsMiB << 20); err != nil {
		log.Fatal(err)
	}
	b := bench{s: s, h: h, samples: *samples, sampleTime: time.Duration(*ms * float64(time.Millisecond))}
	for _, op := range strings.Split(*ops, ",") {
		switch op {
		case "conv":
			convResults(b, h, strings.Split(*types, ","))
		case "attention":
			attentionResults(b, strings.Split(*types, ","))
		default:
			log.Fatalf("unknown op %q (conv, attention)", op)
		}
	}
}

// convResults prints a RESULT line per convolution shape and type.
func convResults(b bench, h *dnn.Handle, types []string) {
	for _, t := range types {
		for _, sh := range shapes {
			var tf float64
			var algo string
			var err error
			switch t {
			case "f32", "tf32":
				if err = h.SetTF32(t == "tf32"); err == nil {
					tf, algo, err = run[float32](b, sh, dnn.NCHW)
				}
			case "f16":
				tf, algo, err = run[cuda.Float16](b, sh, dnn.NHWC)
			case "bf16":
				tf, algo, err = run[cuda.BFloat16](b, sh, dnn.NHWC)
			default:
				log.Fatalf("unknown type %q", t)
			}
			if err != nil {
				fmt.Printf("INFO conv op=conv_%s_%s impl=go: %v\n", t, sh.name, err)
				continue
			}
			fmt.Printf("INFO conv op=conv_%s_%s impl=go %s\n", t, sh.name, algo)
			fmt.Printf("RESULT impl=go op=conv_%s_%s value=%.2f unit=TFLOP/s\n", t, sh.name, tf)
		}
	}
}

type bench struct {
	s          *cuda.Stream
	h          *dnn.Handle
	samples    int
	sampleTime time.Duration
}

// run times sh in T and layout l, and returns the median's TFLOP/s and
// the algorithm that ran, with its workspace.
func run[T dnn.Float](b bench, sh shape, l dnn.Layout) (float64, string, error) {
	r := rand.New(rand.NewPCG(2026, uint64(sh.c)))
	rnd := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = conv32[T](float32(2*r.Float64() - 1))
		}
		return v
	}
	xs, err := cuda.AllocSliceFrom(b.s, rnd(sh.n*sh.c*sh.h*sh.w))
	if err != nil {
		return 0, "", err
	}
	defer xs.Close()
	ws, err := cuda.AllocSliceFrom(b.s, rnd(sh.k*(sh.c/sh.grp)*sh.r*sh.s))
	if err != nil {
		return 0, "", err
	}
	defer ws.Close()
	x := dnn.NewTensor(xs, l, sh.n, sh.c, sh.h, sh.w)
	w := dnn.NewFilter(ws, l, sh.k, sh.c/sh.grp, sh.r, sh.s)
	n, k, p, q, err := dnn.ConvOutput(sh.conv(), x, w)
	if err != nil {
		return 0, "", err
	}
	ys, err := cuda.AllocSlice[T](b.s, n*k*p*q)
	if err != nil {
		return 0, "", err
	}
	defer ys.Close()
	y := dnn.NewTensor(ys, l, n, k, p, q)
	conv := func(count int) error {
		for range count {
			if err := dnn.ConvForward(b.h, sh.conv(), x, w, y); err != nil {
				return err
			}
		}
		return nil
	}
	// The first call chooses the algorithm; the next ones warm up.
	if err := conv(3); err != nil {
		return 0, "", err
	}
	algo, need, err := dnn.ConvAlgorithm(b.h, sh.conv(), x, w, y)
	if err != nil {
		return 0, "", err
	}
	one, err := timed(b.s, 1, conv)
	if err != nil {
		return 0, "", err
	}
	count := max(1, int(b.sampleTime/max(one, time.Microsecond)))
	var times []time.Duration
	for range b.samples {
		d, err := timed(b.s, count, conv)
		if err != nil {
			return 0, "", err
		}
		times = append(times, d/time.Duration(count))
	}
	med := medianTime(times)
	flops := 2.0 * float64(n*k*p*q) * float64(sh.c/sh.grp*sh.r*sh.s)
	return flops / med.Seconds() / 1e12, fmt.Sprintf("algo=%v workspace=%d", algo, need), nil
}

// timed runs f(count) between two events on s and returns the GPU time.
func timed(s *cuda.Stream, count int, f func(int) error) (time.Duration, error) {
	ctx := s.Context()
	start, err := cuda.NewEvent(ctx, cuda.WithTiming())
	if err != nil {
		return 0, err
	}
	defer start.Close()
	stop, err := cuda.NewEvent(ctx, cuda.WithTiming())
	if err != nil {
		return 0, err
	}
	defer stop.Close()
	if err := start.Record(s); err != nil {
		return 0, err
	}
	if err := f(count); err != nil {
		return 0, err
	}
	if err := stop.Record(s); err != nil {
		return 0, err
	}
	if err := stop.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.Elapsed(start, stop)
}

// medianTime is the middle of times, or the mean of the middle two of an
// even count, as Python's statistics.median in conv.py and sdpa.py.
func medianTime(times []time.Duration) time.Duration {
	slices.Sort(times)
	m := len(times) / 2
	if len(times)%2 == 0 {
		return (times[m-1] + times[m]) / 2
	}
	return times[m]
}

func conv32[T dnn.Float](v float32) T {
	var z T
	switch any(z).(type) {
	case cuda.Float16:
		return any(cuda.ToFloat16(v)).(T)
	case cuda.BFloat16:
		return any(cuda.ToBFloat16(v)).(T)
	}
	return any(v).(T)
}
