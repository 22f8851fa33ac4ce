package cuda

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The parts benchmarks take what this package adds to a call apart, on the
// real driver: each step of the package's path is a call of its own,
// alternated in chunks with the raw call (runChunks), so that the
// difference of each from raw says what that step costs beside the
// driver's work, which is more than it costs alone (the driver's calls take
// the package's memory out of the nearest caches).
//
//	GOCUDA_TEST_DRIVER=real go test -run '^$' -bench Parts ./cuda

// boxSink keeps the boxes of BenchmarkLifecycleParts reachable, as a
// stream's handle is, so that the allocation is not optimised away; so do
// small and noscan for the allocations of other sizes and kinds.
var (
	boxSink    *streamBox
	smallSink  *smallBox
	noscanSink *[unsafe.Sizeof(streamBox{}) / 8]uint64
)

// smallBox is an allocation of 16 bytes with a pointer, as a handle that
// held only a pointer to a core allocated apart would be.
type smallBox struct {
	_ *byte
	_ uint64
}

// The boxes of the variants that write a box without allocating it: one
// always (boxhot), or each in turn from a ring larger than the caches hold
// of it between two uses (boxring); and the batch of boxbatch8.
var (
	partsRing = make([]streamBox, 1<<14)
	ringAt    int
	batch     = new([8]streamBox)
	batchAt   int
)

// BenchmarkLifecycleParts is a stream's create and destroy, against raw
// (package cu, the context current):
//
//   - bound: the package's bound create and unbound destroy alone (the C
//     side's cuCtxGetCurrent, the locked thread);
//   - boundbox: with the allocation of a handle's box;
//   - boxhot, boxring: with a box written instead, the same one each time
//     or each of a ring in turn, so that its lines are in the cache or not;
//   - boxbatch8: with a box from an allocation of eight;
//   - small16, noscan: with an allocation of 16 bytes holding a pointer,
//     or of a box's size holding none, which the collector does not scan;
//   - refs: with the reference on the context and the count of live
//     streams, no box;
//   - boxlive, boxqueue: with the allocation and the count of live
//     streams, or the allocation and the cleanups' queue;
//   - stream: NewStream and Close.
func BenchmarkLifecycleParts(b *testing.B) {
	_, ctx := needGPU(b)
	f, err := procs("bench", "cuStreamCreate")
	must(b, err)
	cr := ctx.Raw()
	bound := func() error {
		h, err := boundCreate("bench", "cuStreamCreate", cr, f.streamCreate, uint32(cu.CU_STREAM_NON_BLOCKING))
		if err != nil {
			return err
		}
		return destroyUnbound("bench", "cuStreamDestroy", cr, f.streamDestroy, h)
	}
	// The raw calls need the context current: they run inside bind, which
	// keeps the thread locked with the context pushed for the whole
	// benchmark, and so do the others.
	err = bind("bench", cr, func() error {
		runChunks(b, []chunkCall{
			{"raw", 0, func() error {
				var s cu.CUstream
				if err := check("bench", "cuStreamCreate", cu.StreamCreate(&s, uint32(cu.CU_STREAM_NON_BLOCKING))); err != nil {
					return err
				}
				return check("bench", "cuStreamDestroy", cu.StreamDestroy(s))
			}},
			{"bound", 0, bound},
			{"boundbox", 0, func() error {
				boxSink = &streamBox{}
				return bound()
			}},
			{"boxhot", 0, func() error {
				hot := &partsRing[0]
				*hot = streamBox{}
				boxSink = hot
				return bound()
			}},
			{"boxring", 0, func() error {
				ringAt = (ringAt + 1) % len(partsRing)
				r := &partsRing[ringAt]
				*r = streamBox{}
				boxSink = r
				return bound()
			}},
			{"boxbatch8", 0, func() error {
				if batchAt == len(batch) {
					batch, batchAt = new([8]streamBox), 0
				}
				boxSink = &batch[batchAt]
				batchAt++
				return bound()
			}},
			{"small16", 0, func() error {
				smallSink = &smallBox{}
				return bound()
			}},
			{"noscan", 0, func() error {
				noscanSink = new([unsafe.Sizeof(streamBox{}) / 8]uint64)
				return bound()
			}},
			{"refs", 0, func() error {
				cc, err := ctx.ref("bench")
				if err != nil {
					return err
				}
				streamKind.live.Add(1)
				err = bound()
				streamKind.live.Add(-1)
				if rerr := cc.release(); err == nil {
					err = rerr
				}
				return err
			}},
			{"boxlive", 0, func() error {
				b := &streamBox{}
				b.core.init(&streamKind)
				boxSink = b
				err := bound()
				streamKind.live.Add(-1)
				return err
			}},
			{"boxqueue", 0, func() error {
				b := &streamBox{}
				b.core.val.owned = true
				b.s.h.core = &b.core
				b.core.kind = &streamKind
				queueAttach(unsafe.Pointer(b), &b.s.h)
				boxSink = b
				err := bound()
				unqueueAttach(&b.s.h)
				return err
			}},
			{"stream", 0, func() error {
				s, err := NewStream(ctx)
				if err != nil {
					return err
				}
				return s.Close()
			}},
		}, nil)
		return nil
	})
	must(b, err)
}

// BenchmarkGraphLaunchParts is an executable graph's launch: raw, the C
// side of the hot call alone (the thread's mark, the closed bits), and
// GraphExec.Launch.
func BenchmarkGraphLaunchParts(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	defer s.Close()
	e, err := NewEvent(ctx)
	must(b, err)
	defer e.Close()
	g, err := s.Capture(CaptureThreadLocal, func() error { return e.Record(s) })
	must(b, err)
	defer g.Close()
	x, err := g.Instantiate()
	must(b, err)
	defer x.Close()
	xh, sh := x.handle(), s.handle()
	hotReady(xh)
	hotReady(sh)
	rx, rs := x.Raw(), s.Raw()
	runChunks(b, []chunkCall{
		{"raw", 0, func() error { return check("bench", "cuGraphLaunch", cu.GraphLaunch(rx, rs)) }},
		{"hotc", 0, func() error {
			return hotResult("bench", "cuGraphLaunch", "", hot2(xh, sh, hotGraphLaunch, uintptr(rx), uintptr(rs)))
		}},
		{"launch", 0, func() error { return x.Launch(s) }},
	}, func() { must(b, s.Synchronize()) })
}
