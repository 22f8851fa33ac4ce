package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
)

// attnShape is a scaled dot-product attention of the kind inference runs:
// prefill of a batch of prompts (SeqQ = SeqKV), causal or not.
type attnShape struct {
	name                       string
	batch, heads, seq, headDim int
	causal                     bool
}

// attnShapes: sdpa.py has the same list, in the same order.
var attnShapes = []attnShape{
	{"b8_h16_s1024_d64", 8, 16, 1024, 64, false},
	{"b8_h16_s1024_d128", 8, 16, 1024, 128, false},
	{"b4_h32_s2048_d128_causal", 4, 32, 2048, 128, true},
	{"b1_h32_s8192_d128_causal", 1, 32, 8192, 128, true},
}

// flops counts the two matrix products, 4·B·H·S²·D, halved where the
// causal mask leaves half the scores out (as torch's and FlashAttention's
// benchmarks count).
func (a attnShape) flops() float64 {
	f := 4.0 * float64(a.batch*a.heads) * float64(a.seq) * float64(a.seq) * float64(a.headDim)
	if a.causal {
		f /= 2
	}
	return f
}

// runAttention times AttentionForward on a in T and returns the median's
// TFLOP/s.
func runAttention[T dnn.Half](b bench, a attnShape) (float64, error) {
	r := rand.New(rand.NewPCG(2026, uint64(a.seq)))
	n := a.batch * a.heads * a.seq * a.headDim
	rnd := func() []T {
		v := make([]T, n)
		for i := range v {
			v[i] = conv32[T](float32(2*r.Float64() - 1))
		}
		return v
	}
	var bufs [4]*cuda.Slice[T]
	for i := range bufs {
		var err error
		if i < 3 {
			bufs[i], err = cuda.AllocSliceFrom(b.s, rnd())
		} else {
			bufs[i], err = cuda.AllocSlice[T](b.s, n)
		}
		if err != nil {
			return 0, err
		}
		defer bufs[i].Close()
	}
	shape := dnn.Attention{Batch: a.batch, Heads: a.heads, SeqQ: a.seq, SeqKV: a.seq, HeadDim: a.headDim, Causal: a.causal}
	attend := func(count int) error {
		for range count {
			if err := dnn.AttentionForward(b.h, shape, bufs[0], bufs[1], bufs[2], bufs[3]); err != nil {
				return err
			}
		}
		return nil
	}
	// The first call builds and caches the plan; the next ones warm up.
	if err := attend(3); err != nil {
		return 0, err
	}
	one, err := timed(b.s, 1, attend)
	if err != nil {
		return 0, err
	}
	count := max(1, int(b.sampleTime/max(one, time.Microsecond)))
	var times []time.Duration
	for range b.samples {
		d, err := timed(b.s, count, attend)
		if err != nil {
			return 0, err
		}
		times = append(times, d/time.Duration(count))
	}
	return a.flops() / medianTime(times).Seconds() / 1e12, nil
}

// attentionResults prints a RESULT line per attention shape and type of
// types (f16, bf16; the others have no fused attention).
func attentionResults(b bench, types []string) {
	for _, t := range types {
		for _, a := range attnShapes {
			var tf float64
			var err error
			switch t {
			case "f16":
				tf, err = runAttention[cuda.Float16](b, a)
			case "bf16":
				tf, err = runAttention[cuda.BFloat16](b, a)
			default:
				continue
			}
			op := "sdpa_" + t + "_" + a.name
			if err != nil {
				fmt.Printf("INFO attention op=%s impl=go: %v\n", op, err)
				continue
			}
			fmt.Printf("RESULT impl=go op=%s value=%.2f unit=TFLOP/s\n", op, tf)
		}
	}
}
