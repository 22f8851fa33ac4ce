package nvtx_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

// The benchmarks measure a range (start and end) and a mark as the
// process finds them: with no tool, the disabled path. To measure with a
// tool attached, keep the variable TestMain otherwise unsets:
//
//	GOCUDA_NVTX_KEEP_TOOL=1 NVTX_INJECTION64_PATH=/path/to/tool.so \
//		go test -run '^$' -bench . ./cuda/nvtx
//
// A run with a tool attached shows a column "1 attached".

func reportTool(b *testing.B) {
	b.Helper()
	attached := 0.0
	if nvtx.Enabled() {
		attached = 1
	}
	b.ReportMetric(attached, "attached")
}

func BenchmarkStartEnd(b *testing.B) {
	for b.Loop() {
		nvtx.Start("decode").End()
	}
	reportTool(b)
}

func BenchmarkRangeDefer(b *testing.B) {
	for b.Loop() {
		func() {
			defer nvtx.Range("decode")()
		}()
	}
	reportTool(b)
}

func BenchmarkDomainStartWith(b *testing.B) {
	d := nvtx.NewDomain("bench")
	a := nvtx.Attributes{Registered: d.RegisterString("decode"), Color: nvtx.Green, Payload: nvtx.Int64(3)}
	for b.Loop() {
		d.StartWith(a).End()
	}
	reportTool(b)
}

func BenchmarkMark(b *testing.B) {
	for b.Loop() {
		nvtx.Mark("tick")
	}
	reportTool(b)
}
