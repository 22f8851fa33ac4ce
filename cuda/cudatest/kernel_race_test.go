package cudatest_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// kernelRaceFixture is a context with two streams, the kernels of
// example_pipeline_test.go loaded (the fake runs their PTX), and three buffers (in
// holding 0, 1, 2, …); races found before it are dropped.
type kernelRaceFixture struct {
	ctx              *cuda.Context
	a, b             *cuda.Stream
	produce, consume *cuda.Kernel
	cfg              cuda.LaunchConfig
	n                int
	in, x, z         *cuda.DeviceMemory
}

func newKernelRaceFixture(t *testing.T) *kernelRaceFixture {
	t.Helper()
	if !cudatest.RaceDetectorEnabled() {
		t.Skip("the race detector is off")
	}
	dev, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(dev)
	must(t, err)
	t.Cleanup(func() { must(t, ctx.Close()) })
	f := &kernelRaceFixture{ctx: ctx, n: 1000}
	for _, s := range []**cuda.Stream{&f.a, &f.b} {
		*s, err = cuda.NewStream(ctx)
		must(t, err)
		st := *s
		t.Cleanup(func() { must(t, st.Close()) })
	}
	mod, err := cuda.LoadModule(ctx, []byte(pipelinePTX))
	must(t, err)
	t.Cleanup(func() { must(t, mod.Close()) })
	f.produce, err = mod.Function("produce")
	must(t, err)
	f.consume, err = mod.Function("consume")
	must(t, err)
	f.cfg = cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(f.n, 128)}, Block: cuda.Dim3{X: 128}}
	for _, m := range []**cuda.DeviceMemory{&f.in, &f.x, &f.z} {
		*m, err = cuda.Alloc(ctx, 4*f.n)
		must(t, err)
		mem := *m
		t.Cleanup(func() { must(t, mem.Close()) })
	}
	in := make([]float32, f.n)
	for i := range in {
		in[i] = float32(i)
	}
	must(t, cuda.CopyToDevice(f.in, in))
	cudatest.TakeRaces() // not this test's
	return f
}

// races waits for the fixture's streams and returns the races found.
func (f *kernelRaceFixture) races(t *testing.T) []cudatest.Race {
	t.Helper()
	must(t, f.a.Synchronize())
	must(t, f.b.Synchronize())
	return cudatest.TakeRaces()
}

// checkRace fails t unless races is the one race between the operations of
// apis, each queued from this file's line in lines (the same order).
func checkRace(t *testing.T, races []cudatest.Race, apis [2]string, lines [2]int) {
	t.Helper()
	if len(races) != 1 {
		t.Fatalf("%d races, want 1: %v", len(races), races)
	}
	r := races[0]
	sides := []cudatest.RaceAccess{r.Previous, r.Access}
	if sides[0].Seq > sides[1].Seq {
		sides[0], sides[1] = sides[1], sides[0]
	}
	if !sides[0].Write && !sides[1].Write {
		t.Errorf("a race of two reads:\n%s", r)
	}
	for i, a := range sides {
		if !strings.HasPrefix(a.API, apis[i]) {
			t.Errorf("access %d by %s, want %s:\n%s", i, a.API, apis[i], r)
		}
		if len(a.Stack) == 0 {
			t.Fatalf("access %d has no stack:\n%s", i, r)
		}
		// The first frame in this file: below it, package cuda's and the
		// binding's frames (some inlined into the test's).
		var top runtime.Frame
		for _, fr := range a.Stack {
			if filepath.Base(fr.File) == "kernel_race_test.go" {
				top = fr
				break
			}
		}
		test := strings.SplitN(t.Name(), "/", 2)[0]
		if top.Line != lines[i] || !strings.Contains(top.Function, "cudatest_test."+test) {
			t.Errorf("access %d (%s) was queued at kernel_race_test.go:%d in %s, want line %d in %s:\n%s",
				i, a.API, top.Line, top.Function, lines[i], test, r)
		}
	}
	report := r.String()
	for _, want := range []string{"WARNING: CUDA DATA RACE", "by kernel (cuLaunchKernel) on stream", "kernel_race_test.go:"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// line returns the line after the caller's: the line of the call that
// queues the operation a race report must point at.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l + 1
}

// A consumer kernel on stream b reading what a producer kernel on stream a
// writes: without an event between them it is reported, with both
// launches' lines; with the WaitEvent it is clean and its results right.
func TestKernelRaceProducerConsumer(t *testing.T) {
	f := newKernelRaceFixture(t)
	ev, err := cuda.NewEvent(f.ctx)
	must(t, err)
	defer ev.Close()
	for _, wait := range []bool{false, true} {
		lp := line()
		must(t, f.produce.Launch(f.a, f.cfg, f.in, f.x, uint32(f.n)))
		must(t, ev.Record(f.a))
		if wait {
			must(t, f.b.WaitEvent(ev))
		}
		lc := line()
		must(t, f.consume.Launch(f.b, f.cfg, f.x, f.z, uint32(f.n)))
		races := f.races(t)
		if !wait {
			checkRace(t, races, [2]string{"cuLaunchKernel", "cuLaunchKernel"}, [2]int{lp, lc})
			continue
		}
		if len(races) != 0 {
			t.Fatalf("with the WaitEvent: %d races, the first:\n%s", len(races), races[0])
		}
		got := make([]float32, f.n)
		must(t, cuda.CopyFromDevice(got, f.z))
		for i, v := range got {
			if v != 2*(float32(i)+1) {
				t.Fatalf("z[%d] = %v, want %v", i, v, 2*(float32(i)+1))
			}
		}
	}
}

// A kernel writing memory that a memset on another stream writes too, or
// reading memory a device-to-device copy on another stream writes.
func TestKernelRaceMemsetAndCopy(t *testing.T) {
	f := newKernelRaceFixture(t)
	other, err := cuda.Alloc(f.ctx, 4*f.n)
	must(t, err)
	defer other.Close()
	must(t, other.MemsetD32(0))
	f.races(t)
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("memset, ordered %v", ordered), func(t *testing.T) {
			lk := line()
			must(t, f.produce.Launch(f.a, f.cfg, f.in, f.x, uint32(f.n)))
			if ordered {
				must(t, f.a.Synchronize())
			}
			lm := line()
			must(t, f.x.MemsetD32Async(f.b, 0))
			races := f.races(t)
			if ordered {
				if len(races) != 0 {
					t.Fatalf("%d races, the first:\n%s", len(races), races[0])
				}
				return
			}
			checkRace(t, races, [2]string{"cuLaunchKernel", "cuMemsetD32Async"}, [2]int{lk, lm})
		})
		t.Run(fmt.Sprintf("copy, ordered %v", ordered), func(t *testing.T) {
			lc := line()
			must(t, cuda.CopyDeviceAsync(f.a, f.x, other))
			if ordered {
				ev, err := cuda.NewEvent(f.ctx)
				must(t, err)
				defer ev.Close()
				must(t, ev.Record(f.a))
				must(t, f.b.WaitEvent(ev))
			}
			lk := line()
			must(t, f.consume.Launch(f.b, f.cfg, f.x, f.z, uint32(f.n)))
			races := f.races(t)
			if ordered {
				if len(races) != 0 {
					t.Fatalf("%d races, the first:\n%s", len(races), races[0])
				}
				return
			}
			checkRace(t, races, [2]string{"cuMemcpy", "cuLaunchKernel"}, [2]int{lc, lk})
		})
	}
}

// A kernel reading memory that an asynchronous copy from the host on
// another stream writes: reported unless the kernel's stream waits for it.
func TestKernelRaceHostToDevice(t *testing.T) {
	f := newKernelRaceFixture(t)
	in, err := cuda.AllocHost[float32](f.ctx, f.n)
	must(t, err)
	defer in.Close()
	for i := range in.Slice() {
		in.Slice()[i] = float32(i)
	}
	for _, ordered := range []bool{false, true} {
		ev, err := cuda.NewEvent(f.ctx)
		must(t, err)
		lc := line()
		must(t, cuda.CopyToDeviceAsync(f.a, f.x, in))
		must(t, ev.Record(f.a))
		if ordered {
			must(t, f.b.WaitEvent(ev))
		}
		lk := line()
		must(t, f.consume.Launch(f.b, f.cfg, f.x, f.z, uint32(f.n)))
		races := f.races(t)
		must(t, ev.Close())
		if !ordered {
			checkRace(t, races, [2]string{"cuMemcpyHtoDAsync", "cuLaunchKernel"}, [2]int{lc, lk})
			continue
		}
		if len(races) != 0 {
			t.Fatalf("ordered: %d races, the first:\n%s", len(races), races[0])
		}
		got := make([]float32, f.n)
		must(t, cuda.CopyFromDevice(got, f.z))
		if got[3] != 6 || got[f.n-1] != 2*float32(f.n-1) {
			t.Fatalf("z[3] = %v, z[%d] = %v", got[3], f.n-1, got[f.n-1])
		}
	}
}
