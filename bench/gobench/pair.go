package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// runPair measures what package cuda adds to the raw call on the hot paths
// by alternating short chunks of raw and cuda calls on the same objects, so
// that the machine's drift (large on a VM) hits both alike, and reporting
// the median of the paired differences.
func runPair() {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()
	rs, rev := s.Raw(), ev.Raw()

	const chunks, per = 400, 2000
	pair := func(op string, raw, layer func() error) {
		var diffs, raws, layers []float64
		chunk := func(f func() error) float64 {
			t := time.Now()
			for i := 0; i < per; i++ {
				must(op, f())
			}
			d := float64(time.Since(t).Nanoseconds()) / per
			must("Stream.Synchronize", s.Synchronize())
			return d
		}
		for c := 0; c < chunks; c++ {
			var r, l float64
			if c%2 == 0 {
				r, l = chunk(raw), chunk(layer)
			} else {
				l, r = chunk(layer), chunk(raw)
			}
			raws, layers, diffs = append(raws, r), append(layers, l), append(diffs, l-r)
		}
		fmt.Printf("PAIR op=%s raw_median=%.1f cuda_median=%.1f delta_median=%+.1f delta_p25=%+.1f delta_p75=%+.1f unit=ns/op chunks=%d calls_per_chunk=%d\n",
			op, median(raws), median(layers), median(diffs), quantile(diffs, 0.25), quantile(diffs, 0.75), chunks, per)
	}
	pair("event_record", func() error { return cu.EventRecord(rev, rs) }, func() error { return ev.Record(s) })
	pair("event_query", func() error { return cu.EventQuery(rev) }, func() error { _, err := ev.Query(); return err })
	pair("stream_wait_event", func() error { return cu.StreamWaitEvent(rs, rev, 0) }, func() error { return s.WaitEvent(ev) })
}

func median(v []float64) float64 { return quantile(v, 0.5) }

func quantile(v []float64, q float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[int(q*float64(len(c)-1)+0.5)]
}
