package cuda

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// BenchmarkCompletion measures the delivery of completions under load:
// the goroutines of b.RunParallel, four per CPU, each enqueue on a stream
// of their own and wait for every batch of completionBatch, so that many
// streams complete at once and the driver's threads, the pipe and the
// dispatcher all carry traffic. An op is one completion, enqueued and
// delivered. "done" waits for each channel of Done; "then" counts the
// functions of Then that have run once a Done behind them is closed.
//
//	FAKECUDA_RACE=0 GOCUDA_TEST_DRIVER=fake go test -run '^$' -bench Completion ./cuda
func BenchmarkCompletion(b *testing.B) {
	_, ctx := needGPU(b)
	const parallelism = 4
	const completionBatch = 64
	newStreams := func(b *testing.B) []*Stream {
		streams := make([]*Stream, parallelism*runtime.GOMAXPROCS(0))
		for i := range streams {
			s, err := NewStream(ctx)
			must(b, err)
			b.Cleanup(func() { must(b, s.Close()) })
			streams[i] = s
		}
		return streams
	}
	// onStreams runs body in the goroutines of b.RunParallel, each with
	// a stream of its own.
	onStreams := func(b *testing.B, body func(pb *testing.PB, s *Stream)) {
		streams := newStreams(b)
		var next atomic.Int64
		b.SetParallelism(parallelism)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) { body(pb, streams[next.Add(1)-1]) })
	}
	b.Run("done", func(b *testing.B) {
		onStreams(b, func(pb *testing.PB, s *Stream) {
			chans := make([]<-chan struct{}, 0, completionBatch)
			wait := func() {
				for _, ch := range chans {
					<-ch
				}
				chans = chans[:0]
			}
			for pb.Next() {
				ch, err := s.Done()
				if err != nil {
					b.Error(err)
					return
				}
				if chans = append(chans, ch); len(chans) == completionBatch {
					wait()
				}
			}
			wait()
		})
	})
	b.Run("then", func(b *testing.B) {
		onStreams(b, func(pb *testing.PB, s *Stream) {
			var ran atomic.Int64
			count := func() { ran.Add(1) }
			enqueued := int64(0)
			wait := func() bool {
				ch, err := s.Done()
				if err != nil {
					b.Error(err)
					return false
				}
				<-ch
				if got := ran.Load(); got != enqueued {
					b.Errorf("%d functions of Then ran before the Done behind them closed, want %d", got, enqueued)
					return false
				}
				return true
			}
			for pb.Next() {
				if err := s.Then(count); err != nil {
					b.Error(err)
					return
				}
				if enqueued++; enqueued%completionBatch == 0 && !wait() {
					return
				}
			}
			wait()
		})
	})
}
