package cuda

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// The destroy of an object that has seen a hot call waits for the hot
// calls in flight: a grace period does not end while a thread is inside
// one, of one handle or of two.
func TestHotGraceWaitsForCallInside(t *testing.T) {
	for _, c := range []struct {
		name string
		call func(h *handle[fakeState], fn hotFn) int32
	}{
		{"one handle", func(h *handle[fakeState], fn hotFn) int32 { return hot1(h, fn, 0) }},
		{"two handles", func(h *handle[fakeState], fn hotFn) int32 { return hot2(h, h, fn, 0, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newFakeKind()
			x := k.newObject()
			hotReady(&x.h)
			if got := x.h.core.hot.Load(); got == 0 {
				t.Fatal("the core is not marked after hotReady")
			}
			inside := make(chan int32)
			go func() { inside <- c.call(&x.h, hotHold()) }()
			for !hotHolding() {
				time.Sleep(time.Millisecond)
			}
			graced := make(chan struct{})
			go func() {
				hotGrace()
				close(graced)
			}()
			select {
			case <-graced:
				t.Fatal("the grace period ended while a hot call was inside the driver")
			case <-time.After(50 * time.Millisecond):
			}
			hotReleaseHold()
			if r := <-inside; r != 0 {
				t.Fatalf("hot call = %d, want 0", r)
			}
			select {
			case <-graced:
			case <-time.After(10 * time.Second):
				t.Fatal("the grace period did not end after the hot call returned")
			}
		})
	}
}

// A hot call on a closed handle, or with a closed second handle, never
// reaches the driver and names the closed handle.
func TestHotCallOnClosedHandleSkipsDriver(t *testing.T) {
	k := newFakeKind()
	x, y := k.newObject(), k.newObject()
	hotReady(&x.h)
	hotReady(&y.h)
	if err := y.h.close("test"); err != nil {
		t.Fatal(err)
	}
	before := hotHoldCalls()
	if r := hot2(&x.h, &y.h, hotHold(), 0, 0); r != hotClosed2 {
		t.Errorf("hot2 with the second handle closed = %d, want %d", r, hotClosed2)
	}
	if err := x.h.close("test"); err != nil {
		t.Fatal(err)
	}
	if r := hot1(&x.h, hotHold(), 0); r != hotClosed1 {
		t.Errorf("hot1 on a closed handle = %d, want %d", r, hotClosed1)
	}
	if n := hotHoldCalls() - before; n != 0 {
		t.Errorf("closed handles reached the driver %d times", n)
	}
	if err := hotResult("Op", "fn", " (second)", hotClosed2); !errors.Is(err, ErrClosed) || err.Error() == "" {
		t.Errorf("hotResult(closed second) = %v, want ErrClosed", err)
	}
	if k.destroyed.Load() != 2 {
		t.Errorf("%d objects destroyed, want 2", k.destroyed.Load())
	}
}

// BenchmarkHotCall is BenchmarkHandleHold's one- and two-handle cases
// through the hot path: a cgo call to a no-op, with the handles checked
// on the C side after the thread's mark.
func BenchmarkHotCall(b *testing.B) {
	k := newFakeKind()
	x, y := k.newObject(), k.newObject()
	hotReady(&x.h)
	hotReady(&y.h)
	nop := hotNop()
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			if hot1(&x.h, nop, 0) != 0 {
				b.Fatal("closed")
			}
		}
	})
	b.Run("two", func(b *testing.B) {
		for b.Loop() {
			if hot2(&x.h, &y.h, nop, 0, 0) != 0 {
				b.Fatal("closed")
			}
		}
	})
}

const firstHotChildEnv = "GOCUDA_TEST_FIRST_HOT_CHILD"

// The hot calls read the driver's entry points from C (gocuda_hot_fns),
// which the first lifecycle call of a process fills in. A hot call that
// comes first, on a stream the process did not make (WrapStream), fills
// them in itself and reaches the driver. It runs in a child process, where
// nothing has resolved them yet.
func TestFirstHotCallResolvesEntryPoints(t *testing.T) {
	if os.Getenv(firstHotChildEnv) != "" {
		t.Skip("in the child")
	}
	needGPU(t)
	runChildTest(t, "TestFirstHotCallChild", firstHotChildEnv+"=1")
}

func TestFirstHotCallChild(t *testing.T) {
	if os.Getenv(firstHotChildEnv) == "" {
		t.Skip("runs only as TestFirstHotCallResolvesEntryPoints's child process")
	}
	_, ctx := needGPU(t)
	var raw cu.CUstream
	must(t, ctx.Do(func() error {
		return check("test", "cuStreamCreate", cu.StreamCreate(&raw, uint32(cu.CU_STREAM_NON_BLOCKING)))
	}))
	defer ctx.Do(func() error { return cu.StreamDestroy(raw) })
	s, err := WrapStream(ctx, raw)
	must(t, err)
	defer s.Close()
	if boundFnsP.Load() != nil {
		t.Fatal("the entry points were resolved before the first hot call: the test would check nothing")
	}
	idle, err := s.Query()
	if err != nil || !idle {
		t.Fatalf("the first hot call of the process: Stream.Query = %v, %v; want true, nil", idle, err)
	}
	if boundFnsP.Load() == nil {
		t.Error("the first hot call left the entry points unresolved")
	}
}

const firstLaunchChildEnv = "GOCUDA_TEST_FIRST_LAUNCH_CHILD"

// Launch and LaunchArgs read cuLaunchKernel's entry point from C too,
// which only the first launch of a process fills in: that launch finds it
// unset, resolves it and launches again. Each runs first in a child
// process of its own, checked on the data.
func TestFirstLaunchResolvesItsEntryPoint(t *testing.T) {
	if os.Getenv(firstLaunchChildEnv) != "" {
		t.Skip("in the child")
	}
	needGPU(t)
	for _, how := range []string{"values", "args"} {
		t.Run(how, func(t *testing.T) {
			runChildTest(t, "TestFirstLaunchChild", firstLaunchChildEnv+"="+how)
		})
	}
}

func TestFirstLaunchChild(t *testing.T) {
	how := os.Getenv(firstLaunchChildEnv)
	if how == "" {
		t.Skip("runs only as TestFirstLaunchResolvesItsEntryPoint's child process")
	}
	if cudatest.Active() {
		// A child inherits the fake driver from its parent's environment,
		// not the parent's TestMain, which gives it the test kernels.
		registerTestKernels()
	}
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 4099
	a, b, c := vectorInputs(t, ctx, n)
	if hotFnOf(hotLaunch) != 0 {
		t.Fatal("cuLaunchKernel's entry point was resolved before the first launch: the test would check nothing")
	}
	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 128)}, Block: Dim3{X: 128}}
	switch how {
	case "values":
		must(t, k.Launch(s, cfg, a, b, c, uint32(n)))
	default:
		args, err := k.NewArgs(a, b, c, uint32(n))
		must(t, err)
		defer args.Close()
		must(t, k.LaunchArgs(s, cfg, args))
	}
	if hotFnOf(hotLaunch) == 0 {
		t.Error("the first launch left cuLaunchKernel's entry point unresolved")
	}
	must(t, s.Synchronize())
	checkSum(t, "the first launch of the process ("+how+")", c, n)
}
