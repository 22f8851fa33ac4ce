package cuda

import (
	"slices"
	"testing"
	"time"
)

// chunkCall is one call of a Go-side benchmark: f, compared with the call
// at index raw of the same list (itself for a baseline).
type chunkCall struct {
	name string
	raw  int
	f    func() error
}

// runChunks measures calls the way the Go-side benchmarks do: chunks of
// each call in turn, after (if not nil) between chunks, for as long as
// the benchmark runs. It reports each call's median time per call
// (name-ns) and, for the calls that are not a baseline, the median of its
// differences from its baseline in the same round (name-raw-ns), so that
// the machine's drift hits both sides alike.
func runChunks(b *testing.B, calls []chunkCall, after func()) {
	const chunk = 64
	per := make([][]float64, len(calls))
	diff := make([][]float64, len(calls))
	round := make([]float64, len(calls))
	b.ReportAllocs()
	for b.Loop() {
		for j, c := range calls {
			t0 := time.Now()
			for range chunk {
				if err := c.f(); err != nil {
					b.Fatal(c.name, ": ", err)
				}
			}
			round[j] = float64(time.Since(t0).Nanoseconds()) / chunk
			if after != nil {
				after()
			}
		}
		for j, c := range calls {
			per[j] = append(per[j], round[j])
			diff[j] = append(diff[j], round[j]-round[c.raw])
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for j, c := range calls {
		b.ReportMetric(med(per[j]), c.name+"-ns")
		if j != c.raw {
			b.ReportMetric(med(diff[j]), c.name+"-raw-ns")
		}
	}
	b.ReportMetric(0, "ns/op")
}
