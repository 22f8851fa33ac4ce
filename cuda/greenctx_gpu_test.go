//go:build linux && (amd64 || arm64) && !cuda11080

package cuda_test

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// spinSrc is a kernel that records, per block, the SM it ran on (%smid)
// and when it started and ended (%globaltimer, in ns), spinning for ns
// nanoseconds in between.
const spinSrc = `
extern "C" __global__ void spin(unsigned *smid, unsigned long long *start, unsigned long long *end, unsigned long long ns) {
	unsigned id;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	if (threadIdx.x == 0) {
		smid[blockIdx.x] = id;
		start[blockIdx.x] = t0;
		end[blockIdx.x] = t;
	}
}`

func greenOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// greenRun is one green context's launch of spin and what it recorded.
type greenRun struct {
	ctx                *cuda.Context
	s                  *cuda.Stream
	smid               *cuda.Slice[uint32]
	start, end         *cuda.Slice[uint64]
	sms                map[uint32]bool
	first, last        uint64
	partition, nblocks int
}

// Two green contexts on disjoint halves of the device's SMs run a long
// kernel each, at the same time: each kernel's blocks ran on its own
// partition's SMs only, and the two kernels' runs overlapped in time.
func TestGreenContextsOnGPU(t *testing.T) {
	dev := exampleDevice(t, 0, 0)
	all, err := cuda.DeviceSMs(dev)
	if errors.Is(err, cuda.ErrMissingFunction) {
		t.Skipf("the driver has no green contexts: %v", err)
	}
	greenOK(t, err)
	needNVRTC(t)
	total := all.SMCount()
	if total < 4 {
		t.Skipf("device 0 has %d SMs: too few to split in two", total)
	}
	parts, rest, err := all.SplitByCount(2, total/4)
	greenOK(t, err)
	if len(parts) != 2 {
		t.Fatalf("%d groups of %d SMs, want 2", len(parts), total/4)
	}
	if got := parts[0].SMCount() + parts[1].SMCount() + rest.SMCount(); got != total {
		t.Errorf("the split holds %d SMs, the device %d", got, total)
	}
	t.Logf("%d SMs: partitions of %d and %d, %d left", total, parts[0].SMCount(), parts[1].SMCount(), rest.SMCount())

	// The primary context, which the green contexts hold, made first so
	// that they need not make it.
	primary, err := cuda.PrimaryContext(dev)
	greenOK(t, err)
	defer primary.Close()
	res, err := nvrtc.Compile(spinSrc)
	greenOK(t, err)

	before := cuda.LiveObjects()
	const spinNs = 200_000_000 // 0.2 s: far longer than launching both
	runs := make([]*greenRun, 2)
	for i, p := range parts {
		ctx, err := cuda.NewGreenContext(p)
		greenOK(t, err)
		defer ctx.Close()
		if !ctx.IsGreen() || primary.IsGreen() {
			t.Errorf("IsGreen: green %v, primary %v", ctx.IsGreen(), primary.IsGreen())
		}
		s, err := cuda.NewStream(ctx)
		greenOK(t, err)
		defer s.Close()
		// Several blocks per SM of the partition: enough to spread over
		// all of them, few enough to run in one wave.
		r := &greenRun{ctx: ctx, s: s, partition: p.SMCount(), nblocks: 2 * p.SMCount(), sms: map[uint32]bool{}}
		r.smid, err = cuda.AllocSlice[uint32](ctx, r.nblocks)
		greenOK(t, err)
		defer r.smid.Close()
		r.start, err = cuda.AllocSlice[uint64](ctx, r.nblocks)
		greenOK(t, err)
		defer r.start.Close()
		r.end, err = cuda.AllocSlice[uint64](ctx, r.nblocks)
		greenOK(t, err)
		defer r.end.Close()
		runs[i] = r
	}
	if got := cuda.LiveObjects(); got.GreenContexts != before.GreenContexts+2 {
		t.Errorf("%d green contexts live, want %d", got.GreenContexts, before.GreenContexts+2)
	}
	kernels := make([]*cuda.Kernel, 2)
	for i, r := range runs {
		mod, err := cuda.LoadModule(r.ctx, res.PTX)
		greenOK(t, err)
		defer mod.Close()
		kernels[i], err = mod.Function("spin")
		greenOK(t, err)
	}
	for i, r := range runs {
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(r.nblocks)}, Block: cuda.Dim3{X: 64}}
		greenOK(t, kernels[i].Launch(r.s, cfg, r.smid, r.start, r.end, uint64(spinNs)))
	}
	for _, r := range runs {
		greenOK(t, r.s.Synchronize())
		smid := make([]uint32, r.nblocks)
		start := make([]uint64, r.nblocks)
		end := make([]uint64, r.nblocks)
		greenOK(t, r.smid.CopyTo(smid))
		greenOK(t, r.start.CopyTo(start))
		greenOK(t, r.end.CopyTo(end))
		r.first, r.last = start[0], end[0]
		for b := range smid {
			r.sms[smid[b]] = true
			r.first, r.last = min(r.first, start[b]), max(r.last, end[b])
		}
	}
	for i, r := range runs {
		if len(r.sms) > r.partition {
			t.Errorf("green context %d: its kernel ran on %d SMs, its partition has %d", i, len(r.sms), r.partition)
		}
		t.Logf("green context %d: %d blocks on %d SMs, from %d to %d ns", i, r.nblocks, len(r.sms), r.first, r.last)
	}
	for id := range runs[0].sms {
		if runs[1].sms[id] {
			t.Errorf("SM %d ran blocks of both green contexts", id)
		}
	}
	a, b := runs[0], runs[1]
	if max(a.first, b.first) >= min(a.last, b.last) {
		t.Errorf("the kernels did not run at the same time: [%d, %d] and [%d, %d] ns", a.first, a.last, b.first, b.last)
	}
}
