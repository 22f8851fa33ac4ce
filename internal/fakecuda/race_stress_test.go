package fakecuda_test

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Synchronizing a stream that has never had work gives it its thread of
// the detector's clock there and then, which grows the table of threads:
// the join into the host's clock must read the stream's clock from the
// table as it is after that growth. Many live streams (so that no slot of
// a destroyed one can be reused and the table keeps growing, past the size
// where the allocator moves it with mremap) synchronized while fresh,
// while other goroutines create, use and destroy streams and events.
func TestRaceClocksWhileStreamsComeAndGo(t *testing.T) {
	if !lib.RaceDetector() {
		t.Skip("the race detector is off (FAKECUDA_RACE=0)")
	}
	ctx := primary(t)
	const live = 3000
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := cu.CtxPushCurrent(ctx); err != nil {
				t.Error(err)
				return
			}
			defer cu.CtxPopCurrent(new(cu.CUcontext))
			var p cu.CUdeviceptr
			if err := cu.MemAlloc(&p, 4096); err != nil {
				t.Error(err)
				return
			}
			defer cu.MemFree(p)
			var host unsafe.Pointer
			if err := cu.MemAllocHost(&host, 64); err != nil {
				t.Error(err)
				return
			}
			defer cu.MemFreeHost(host)
			for i := range 200 {
				var s1, s2, s3 cu.CUstream
				var ev cu.CUevent
				for _, err := range []error{
					cu.StreamCreate(&s1, nb),
					cu.StreamCreate(&s2, nb),
					cu.StreamCreate(&s3, nb),
					cu.EventCreate(&ev, uint32(cu.CU_EVENT_DISABLE_TIMING)),
					cu.StreamSynchronize(s3), // fresh: grows the table too
					cu.MemsetD8Async(p, uint8(g+i), 4096, s1),
					cu.EventRecord(ev, s1),
					cu.StreamWaitEvent(s2, ev, 0),
					cu.MemcpyDtoHAsync(host, p, 64, s2),
					cu.EventDestroy(ev), // the wait queued on s2 still holds it
					cu.StreamDestroy(s1),
					cu.StreamSynchronize(s2),
					cu.StreamDestroy(s2),
					cu.StreamDestroy(s3),
				} {
					if err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	streams := make([]cu.CUstream, 0, live)
	defer func() {
		for _, s := range streams {
			must(t, cu.StreamDestroy(s))
		}
	}()
	for range live {
		var s cu.CUstream
		must(t, cu.StreamCreate(&s, nb))
		streams = append(streams, s)
		must(t, cu.StreamSynchronize(s))
	}
	wg.Wait()
}
