package cuda

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// busyStream returns a stream with a memset of size bytes to v enqueued,
// and the memory, both closed when t ends.
func busyStream(t *testing.T, ctx *Context, size int, v uint8) (*Stream, *DeviceMemory) {
	t.Helper()
	s, err := NewStream(ctx)
	must(t, err)
	m, err := Alloc(ctx, size)
	must(t, err)
	t.Cleanup(func() {
		must(t, s.Synchronize())
		must(t, m.Close())
		must(t, s.Close())
	})
	must(t, m.MemsetD8Async(s, v))
	return s, m
}

func TestStreamDoneClosesAfterTheWork(t *testing.T) {
	_, ctx := needGPU(t)
	s, m := busyStream(t, ctx, 64<<20, 7)
	memset, err := NewEvent(ctx)
	must(t, err)
	defer memset.Close()
	must(t, memset.Record(s))
	done, err := s.Done()
	must(t, err)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Done's channel not closed 10 s after a memset")
	}
	// The memset is done, and so is the event recorded after it; the host
	// function that reported it may still be retiring, so the stream is
	// not asked. The event's query is also what orders the copy below
	// after the memset for the fake driver's race detector, which sees no
	// receive from a channel.
	if ok, err := memset.Query(); err != nil || !ok {
		t.Fatalf("Done closed before the event recorded ahead of it completed: %v, %v", ok, err)
	}
	got := make([]byte, 64<<20)
	must(t, CopyFromDevice(got, m))
	if got[0] != 7 || got[len(got)-1] != 7 {
		t.Fatalf("Done closed before the memset landed: bytes %d … %d", got[0], got[len(got)-1])
	}
}

// TestStreamThenRunsInStreamOrder: functions run after the work before
// them, in the order they were enqueued.
func TestStreamThenRunsInStreamOrder(t *testing.T) {
	_, ctx := needGPU(t)
	s, m := busyStream(t, ctx, 1<<20, 0)
	var mu sync.Mutex
	var order []int
	const n = 100
	for i := range n {
		must(t, m.MemsetD32Async(s, uint32(i)))
		must(t, s.Then(func() {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		}))
	}
	must(t, s.WaitIdle(t.Context()))
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		k := len(order)
		mu.Unlock()
		if k == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != n {
		t.Fatalf("%d of %d functions ran", len(order), n)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("function %d ran in place %d: %v", v, i, order)
		}
	}
}

// TestWaitIdleDoesNotPoll: waiting on a busy stream asks the driver once,
// then waits for its report.
func TestWaitIdleDoesNotPoll(t *testing.T) {
	_, ctx := needGPU(t)
	if !cudatest.Active() {
		t.Skip("counting driver calls needs the fake driver")
	}
	s, _ := busyStream(t, ctx, 256<<20, 1)
	before, polls := cudatest.Calls("cuStreamQuery"), faultQueries.Load()
	must(t, s.WaitIdle(t.Context()))
	// The dispatcher's coarse polls for failures do not count.
	q := cudatest.Calls("cuStreamQuery") - before - int(faultQueries.Load()-polls)
	if q > 2 {
		t.Errorf("WaitIdle made %d cuStreamQuery calls: it polls", q)
	}
}

// TestWaitIdleCancelled: a cancelled wait returns at once, and the
// completion it left behind is delivered and forgotten later.
func TestWaitIdleCancelled(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 256<<20, 1)
	c, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.WaitIdle(c)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitIdle with a cancelled context = %v", err)
	}
	must(t, s.Synchronize())
	noDispatcher(t)
}

// noDispatcher waits until no completion is pending and the dispatcher
// goroutine, and those that run functions of Then, have exited: an idle
// program keeps no goroutine of this package. (TestMain checks that no
// goroutine of the package is left at all.)
func noDispatcher(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found []string
		for _, st := range goroutineStacks() {
			if strings.Contains(st, "cuda.dispatchCompletions") || strings.Contains(st, "cuda.runThens") {
				found = append(found, st)
			}
		}
		if len(found) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the completion dispatcher still runs with nothing pending:\n%s", strings.Join(found, "\n\n"))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCompletionLeavesNoGoroutine(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 1<<20, 1)
	ran := make(chan struct{})
	must(t, s.Then(func() { close(ran) }))
	done, err := s.Done()
	must(t, err)
	<-done
	<-ran
	noDispatcher(t)
	if _, err := s.Done(); err != nil { // and it starts again
		t.Fatal(err)
	}
	must(t, s.Synchronize())
	noDispatcher(t)
}

func TestThenRefusesNilAndClosed(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	if err := s.Then(nil); err == nil {
		t.Error("Then(nil) = nil")
	}
	must(t, s.Close())
	if err := s.Then(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Then on a closed stream = %v, want ErrClosed", err)
	}
	if _, err := s.Done(); !errors.Is(err, ErrClosed) {
		t.Errorf("Done on a closed stream = %v, want ErrClosed", err)
	}
}

// TestThenGoexitKeepsDelivering: a function that ends its goroutine
// (runtime.Goexit, as t.FailNow does) does not stop later completions.
func TestThenGoexitKeepsDelivering(t *testing.T) {
	_, ctx := needGPU(t)
	s, _ := busyStream(t, ctx, 1<<20, 1)
	must(t, s.Then(func() { runtime.Goexit() }))
	ran := make(chan struct{})
	must(t, s.Then(func() { close(ran) }))
	done, err := s.Done()
	must(t, err)
	for _, ch := range []<-chan struct{}{ran, done} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("a completion after a Goexit was never delivered")
		}
	}
	noDispatcher(t)
}

// TestCompletionRefusedInCapture: a completion would become a graph node,
// run once per launch or never: a capturing stream refuses it, and nothing
// is left pending.
func TestCompletionRefusedInCapture(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	var thenErr, doneErr error
	g, err := s.Capture(CaptureThreadLocal, func() error {
		thenErr = s.Then(func() {})
		_, doneErr = s.Done()
		return nil
	})
	must(t, err)
	must(t, g.Close())
	for what, err := range map[string]error{"Then": thenErr, "Done": doneErr} {
		if !errors.Is(err, cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) {
			t.Errorf("%s during a capture = %v, want CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", what, err)
		}
	}
	noDispatcher(t)
}

// gatePTX declares gateKernelName, which the fake driver runs as
// runGateKernel (registerTestKernels).
const gatePTX = `//
// Held on a gate. On the fake driver runGateKernel runs instead, gate
// naming a channel; on a GPU the kernel spins until the word of page-locked
// memory at gate is not 0, and then, if fault is not 0, stores to address
// 0.
.version 7.0
.target sm_75
.address_size 64

.visible .entry gocuda_test_gate(
	.param .u64 gate,
	.param .u32 fault
)
{
	.reg .u64 %a;
	.reg .u32 %v, %f;
	.reg .pred %p;
	ld.param.u64 %a, [gate];
	ld.param.u32 %f, [fault];
spin:
	ld.volatile.u32 %v, [%a];
	setp.eq.u32 %p, %v, 0;
	@%p bra spin;
	setp.eq.u32 %p, %f, 0;
	@%p bra done;
	mov.u64 %a, 0;
	st.global.u32 [%a], %v;
done:
	ret;
}
`

const gateKernelName = "gocuda_test_gate"

var (
	gates    sync.Map // id (uint64) → chan struct{}
	lastGate atomic.Uint64
)

// runGateKernel holds its stream until the gate its first parameter names
// is opened, and then, if its second is not 0, loads from address 0: a
// fault, CUDA_ERROR_ILLEGAL_ADDRESS, sticky in the launch's context.
func runGateKernel(l *cudatest.Launch) {
	if g, ok := gates.Load(l.Param(0).Uint64()); ok {
		<-g.(chan struct{})
	}
	if l.Param(1).Uint32() != 0 {
		_ = cudatest.Load[uint32](l.Ptr(0), 0)
	}
}

// gated is a stream held by a launch of the gate kernel, in a context of
// the test's own (a fault is sticky in its context, which other tests must
// not share), and the module of the kernel.
type gated struct {
	ctx  *Context
	mod  *Module
	k    *Kernel
	s    *Stream
	open func() // lets the kernel go on: to return, or to fault
}

// gatedStream returns a gated stream whose kernel faults once let go if
// fault is set. The gate is opened, and the stream, module and context
// closed, when t ends, if the test has not done so.
func gatedStream(t *testing.T, fault bool) *gated {
	t.Helper()
	if !cudatest.Active() {
		needGPU(t)
		t.Skip("a kernel held on a gate, or made to fault, needs the fake driver")
	}
	return heldStream(t, fault)
}

// heldStream is gatedStream on any driver: on a GPU, the kernel spins on
// page-locked memory (for tests that hold a stream without a fault, which
// would end the context on a GPU).
func heldStream(t *testing.T, fault bool) *gated {
	t.Helper()
	dev, _ := needGPU(t)
	ctx, err := NewContext(dev)
	must(t, err)
	t.Cleanup(func() { must(t, ctx.Close()) })
	mod, err := LoadModule(ctx, []byte(gatePTX))
	must(t, err)
	t.Cleanup(func() { must(t, mod.Close()) })
	k, err := mod.Function(gateKernelName)
	must(t, err)
	s, err := NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { must(t, s.Close()) })
	g := &gated{ctx: ctx, mod: mod, k: k, s: s}
	g.open = g.hold(t, fault)
	return g
}

// hold launches the gate kernel on g's stream again, and returns the
// function that opens its gate, which is opened when t ends if the test
// has not done so.
func (g *gated) hold(t *testing.T, fault bool) (open func()) {
	t.Helper()
	var f uint32
	if !cudatest.Active() {
		if fault {
			t.Fatal("a fault would end the context on a GPU")
		}
		word, err := AllocHost[uint32](g.ctx, 1)
		must(t, err)
		var once sync.Once
		open = func() { once.Do(func() { atomic.StoreUint32(&word.Slice()[0], 1) }) }
		t.Cleanup(func() {
			open()
			must(t, g.s.Synchronize()) // the kernel reads word until it returns
			must(t, word.Close())
		})
		// The page-locked word has the same address on the device.
		must(t, g.k.Launch(g.s, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}, uint64(uintptr(word.Ptr())), f))
		return open
	}
	id := lastGate.Add(1)
	gate := make(chan struct{})
	gates.Store(id, gate)
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() {
		open()
		gates.Delete(id)
	})
	if fault {
		f = 1
	}
	must(t, g.k.Launch(g.s, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}, id, f))
	return open
}

// The driver calls no host function once a kernel's fault has failed the
// context (cuda.h): Done's channel, Then's function and WaitIdle must not
// wait for one.
const failureBound = 5 * time.Second

// TestCompletionsOfAFailedContext: with a completion pending behind a
// kernel that faults, WaitIdle (with a context that lasts a minute)
// returns the fault's error, Done's channel closes, Then's function is
// dropped, all within failureBound, and no dispatcher is left; later
// calls report the failure at once.
func TestCompletionsOfAFailedContext(t *testing.T) {
	g := gatedStream(t, true)
	s := g.s
	ran := make(chan struct{}, 2)
	must(t, s.Then(func() { ran <- struct{}{} }))
	done, err := s.Done()
	must(t, err)
	wctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- s.WaitIdle(wctx) }()
	// WaitIdle finds the stream busy and waits on a completion of its own.
	time.Sleep(20 * time.Millisecond)
	g.open()
	select {
	case err := <-waited:
		if !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
			t.Errorf("WaitIdle after the kernel's fault = %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
		}
	case <-time.After(failureBound):
		t.Fatalf("WaitIdle still waits %v after the stream's kernel faulted", failureBound)
	}
	select {
	case <-done:
	case <-time.After(failureBound):
		t.Fatalf("Done's channel still open %v after the stream's kernel faulted", failureBound)
	}
	noDispatcher(t)

	// Known now, the failure is reported at once, and later completions
	// do not wait either (the fake's cuLaunchHostFunc accepts them).
	if err := s.WaitIdle(wctx); !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Errorf("WaitIdle of a failed stream = %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
	}
	if _, err := s.Query(); !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Errorf("Query of a failed stream = %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
	}
	if err := s.Then(func() { ran <- struct{}{} }); err != nil && !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Errorf("Then on a failed stream = %v", err)
	}
	if d, err := s.Done(); err != nil {
		if !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
			t.Errorf("Done on a failed stream = %v", err)
		}
	} else {
		select {
		case <-d:
		case <-time.After(failureBound):
			t.Fatalf("Done's channel on a failed stream still open after %v", failureBound)
		}
	}
	noDispatcher(t)
	if n := len(ran); n != 0 {
		t.Errorf("%d function(s) of Then ran though their stream's context had failed", n)
	}
}

// TestCompletionsOutliveTheirHandles: completions pending on a stream
// whose last handle is closed, and whose context's too, are still
// delivered, each function once (or dropped, once the context fails);
// meanwhile they hold the stream, which the last of them destroys, and
// nothing is left.
func TestCompletionsOutliveTheirHandles(t *testing.T) {
	for _, tc := range []struct {
		name            string
		closeCtx, fault bool
	}{
		{"stream", false, false},
		{"stream and context", true, false},
		{"stream then fault", false, true},
		{"stream and context then fault", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gatedStream(t, tc.fault)
			var runs atomic.Int32
			must(t, g.s.Then(func() { runs.Add(1) }))
			done, err := g.s.Done()
			must(t, err)
			held := LiveObjects()
			must(t, g.s.Close())
			if tc.closeCtx {
				must(t, g.ctx.Close())
			}
			if n := LiveObjects(); n.Streams != held.Streams || n.Contexts != held.Contexts {
				t.Errorf("live objects with completions pending after the Close %+v, before it %+v: the stream must be kept", n, held)
			}
			if err := g.s.Then(func() { runs.Add(1) }); !errors.Is(err, ErrClosed) {
				t.Errorf("Then on the closed handle = %v, want ErrClosed", err)
			}
			g.open()
			select {
			case <-done:
			case <-time.After(failureBound):
				t.Fatalf("Done's channel still open %v after the gate opened", failureBound)
			}
			noDispatcher(t)
			want := int32(1)
			if tc.fault {
				want = 0
			}
			if got := runs.Load(); got != want {
				t.Errorf("Then's function ran %d times, want %d", got, want)
			}
			if n := LiveObjects(); n.Streams != held.Streams-1 || n.Contexts != held.Contexts {
				t.Errorf("live objects after the completions %+v, before them %+v: the stream alone must be gone", n, held)
			}
			must(t, g.mod.Close()) // the context's last reference if it is closed
			if n := LiveObjects(); tc.closeCtx && n.Contexts != held.Contexts-1 {
				t.Errorf("live contexts after the last reference %d, before %d", n.Contexts, held.Contexts)
			}
		})
	}
}

// TestFaultPollSparesACapture: the dispatcher's fault polls do not query
// a stream that is capturing, which would invalidate its capture.
func TestFaultPollSparesACapture(t *testing.T) {
	g := gatedStream(t, false)
	m, err := Alloc(g.ctx, 4096)
	must(t, err)
	defer m.Close()
	defer g.open() // first: the free waits for the device
	ran := make(chan struct{})
	must(t, g.s.Then(func() { close(ran) }))
	polls := faultQueries.Load()
	graph, err := g.s.Capture(CaptureThreadLocal, func() error {
		for faultQueries.Load()-polls < 3 { // 10, 20, 40 ms
			if err := m.MemsetD8Async(g.s, 1); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	must(t, err)
	must(t, graph.Close())
	g.open()
	select {
	case <-ran:
	case <-time.After(failureBound):
		t.Fatal("Then's function not run after the gate opened")
	}
	must(t, g.s.Synchronize())
	noDispatcher(t)
}

// TestFailedEnqueueLeavesNoDispatcher: a dispatcher that reads the pipe
// while the one completion pending is one whose cuLaunchHostFunc then
// fails must not go on reading with nothing pending.
func TestFailedEnqueueLeavesNoDispatcher(t *testing.T) {
	_, ctx := needGPU(t)
	if !cudatest.Active() {
		t.Skip("failing cuLaunchHostFunc needs the fake driver")
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	noDispatcher(t)
	// The state that a launch failing while the dispatcher looks at what
	// is pending leaves, made here: the dispatcher is started for the
	// token that the next enqueue takes, which then fails.
	core := s.handle().core
	if !core.acquire() {
		t.Fatal("no reference on the stream")
	}
	completions.Lock()
	if err := openCompletionPipe(); err != nil {
		completions.Unlock()
		t.Fatal(err)
	}
	completions.pending[completions.next+1] = completion{stream: core, done: make(chan struct{})}
	completions.running = true
	go dispatchCompletions(completions.pipe)
	completions.Unlock()
	time.Sleep(20 * time.Millisecond) // the dispatcher reads the pipe
	cudatest.FailCall("cuLaunchHostFunc", 1, cu.CUDA_ERROR_UNKNOWN)
	_, err = s.Done()
	must(t, core.release()) // the enqueue replaced the placeholder
	if !errors.Is(err, cu.CUDA_ERROR_UNKNOWN) {
		t.Fatalf("Done with cuLaunchHostFunc failing = %v, want CUDA_ERROR_UNKNOWN", err)
	}
	noDispatcher(t)
}

const thenPanicChildEnv = "GOCUDA_TEST_THEN_PANIC_CHILD"

// thenPanicValue is what the child's function panics with.
const thenPanicValue = "gocuda test: a panic in a function of Then"

// TestThenPanicEndsTheProgram: a panic in a function of Then ends the
// program like a panic in any goroutine, from the goroutine that runs its
// stream's functions, with no driver or cgo callback frame under it (the
// driver's thread only recorded the completion).
func TestThenPanicEndsTheProgram(t *testing.T) {
	if os.Getenv(thenPanicChildEnv) != "" {
		t.Skip("in the child")
	}
	needGPU(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestThenPanicChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), thenPanicChildEnv+"=1", "GOTRACEBACK=single")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child ended with %v, want exit status 2 (a Go panic):\n%s", err, out)
	}
	_, trace, ok := strings.Cut(string(out), "panic: "+thenPanicValue)
	if !ok {
		t.Fatalf("the child did not panic with %q:\n%s", thenPanicValue, out)
	}
	for _, want := range []string{"cuda.TestThenPanicChild.func", "cuda.runThen", "cuda.runThens",
		"created by github.com/gocuda/gocuda/cuda.handOver"} {
		if !strings.Contains(trace, want) {
			t.Errorf("the panic's stack lacks %s:\n%s", want, trace)
		}
	}
	for _, bad := range []string{"cgocallback", "_cgoexp", "crosscall2"} {
		if strings.Contains(trace, bad) {
			t.Errorf("the panic's stack has a cgo callback frame (%s):\n%s", bad, trace)
		}
	}
}

func TestThenPanicChild(t *testing.T) {
	if os.Getenv(thenPanicChildEnv) == "" {
		t.Skip("runs only as TestThenPanicEndsTheProgram's child process")
	}
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	must(t, s.Then(func() { panic(thenPanicValue) }))
	must(t, s.Synchronize())
	time.Sleep(10 * time.Second) // the panic ends the process first
	t.Error("the process outlived a panic in a function of Then by 10 s")
}

// TestFaultPollsLeaveAHealthyStreamAlone: on the real driver, a stream held
// back through several fault polls (waiting on a word of host memory,
// cuStreamWaitValue32) is not taken for failed: Done stays open, and once
// the word is written Then's function runs once and WaitIdle returns nil.
// The polls ask the driver about the stream from the dispatcher's thread,
// with no context current there.
func TestFaultPollsLeaveAHealthyStreamAlone(t *testing.T) {
	_, ctx := needGPU(t)
	if cudatest.Active() {
		t.Skip("the fake driver has no cuStreamWaitValue32; its gate kernel holds a stream in the other completion tests")
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	word, err := AllocHost[uint32](ctx, 1)
	must(t, err)
	defer word.Close()
	w := &word.Slice()[0]
	err = ctx.Do(func() error {
		var d cu.CUdeviceptr
		if err := cu.MemHostGetDevicePointer(&d, unsafe.Pointer(w), 0); err != nil {
			return err
		}
		return cu.StreamWaitValue32(s.Raw(), d, 1, uint32(cu.CU_STREAM_WAIT_VALUE_EQ))
	})
	if errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		// Bindings for CUDA 11 call the first version of the stream memory
		// operations, which drivers since CUDA 12 serve only where the
		// device's CAN_USE_STREAM_MEM_OPS attribute is enabled.
		t.Skipf("the driver refuses cuStreamWaitValue32 of these bindings (CUDA %d): %v", cu.HeaderVersion(), err)
	}
	must(t, err)
	var runs atomic.Int32
	ran := make(chan struct{})
	must(t, s.Then(func() {
		runs.Add(1)
		close(ran)
	}))
	done, err := s.Done()
	must(t, err)
	polls := faultQueries.Load()
	deadline := time.Now().Add(failureBound)
	for faultQueries.Load()-polls < 3 { // 10, 20, 40 ms
		if time.Now().After(deadline) {
			t.Fatalf("%d fault polls in %v with completions pending, want 3", faultQueries.Load()-polls, failureBound)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("Done closed while the stream still waits for its word: a poll took the healthy stream for failed")
	case <-ran:
		t.Fatal("Then's function ran while the stream still waits for its word")
	default:
	}
	atomic.StoreUint32(w, 1)
	wctx, cancel := context.WithTimeout(context.Background(), failureBound)
	defer cancel()
	must(t, s.WaitIdle(wctx))
	select {
	case <-ran:
	case <-time.After(failureBound):
		t.Fatal("Then's function not run after the word was written")
	}
	<-done
	if n := runs.Load(); n != 1 {
		t.Fatalf("Then's function ran %d times, want 1", n)
	}
	noDispatcher(t)
}

// TestBlockedThenHoldsBackOnlyItsStream: while a function of Then blocks,
// the Done channels of a thousand other streams close as soon as their
// work is done, and a Done behind the blocked function on its own stream
// waits for it. The latency of each is measured from the Done call, so it
// includes the stream's (tiny) work and the waiter's wake-up; the bound is
// far below the blocked function's 5 s and generous for a loaded host
// under the race detector, and -v logs the figures.
func TestBlockedThenHoldsBackOnlyItsStream(t *testing.T) {
	_, ctx := needGPU(t)
	const streams, block, bound = 1000, 5 * time.Second, 500 * time.Millisecond
	blocked, err := NewStream(ctx)
	must(t, err)
	defer blocked.Close()
	started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(release)
	must(t, blocked.Then(func() {
		close(started)
		select {
		case <-release:
		case <-time.After(block):
		}
		close(returned)
	}))
	behind, err := blocked.Done()
	must(t, err)
	select {
	case <-started:
	case <-time.After(failureBound):
		t.Fatalf("the function of Then not started %v after it was enqueued", failureBound)
	}

	ss := make([]*Stream, streams)
	ms := make([]*DeviceMemory, streams)
	for i := range ss {
		ss[i], err = NewStream(ctx)
		must(t, err)
		defer ss[i].Close()
		ms[i], err = Alloc(ctx, 256)
		must(t, err)
		defer ms[i].Close()
		defer ss[i].Synchronize()
		// The stream's first work starts the fake driver's thread for
		// it, which is not what is measured.
		must(t, ms[i].MemsetD8Async(ss[i], 0))
		must(t, ss[i].Synchronize())
	}
	latency := make([]time.Duration, streams)
	var wg sync.WaitGroup
	for i, s := range ss {
		must(t, ms[i].MemsetD8Async(s, uint8(i)))
		done, err := s.Done()
		must(t, err)
		t0 := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-done:
				latency[i] = time.Since(t0)
			case <-returned:
				latency[i] = -1
			}
		}()
	}
	wg.Wait()
	var worst time.Duration
	within10ms := 0
	for i, l := range latency {
		if l < 0 {
			t.Fatalf("the Done channel of stream %d still open when the function of Then on another stream returned, %v after it started", i, block)
		}
		worst = max(worst, l)
		if l <= 10*time.Millisecond {
			within10ms++
		}
	}
	t.Logf("%d streams' Done channels closed at most %v after their Done call (%d within 10 ms) while another stream's function of Then blocked",
		streams, worst, within10ms)
	if worst > bound {
		t.Errorf("a Done channel closed %v after its Done call while another stream's function of Then blocked, want at most %v", worst, bound)
	}
	select {
	case <-returned:
		t.Fatalf("the function of Then returned before the measurement ended: it did not block for %v", block)
	case <-behind:
		t.Error("a Done behind a blocked function of Then on its stream closed before the function returned")
	default:
	}
	select {
	case release <- struct{}{}:
	case <-returned:
	}
	select {
	case <-behind:
	case <-time.After(failureBound):
		t.Fatalf("a Done behind a function of Then still open %v after the function returned", failureBound)
	}
}

// A waitWay is one way to wait for a stream from a function of Then.
type waitWay struct {
	name string
	wait func(*Stream) error
}

var waitWays = []waitWay{
	{"WaitIdle", func(s *Stream) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*failureBound)
		defer cancel()
		return s.WaitIdle(ctx)
	}},
	{"Synchronize", (*Stream).Synchronize},
	{"Done", func(s *Stream) error {
		done, err := s.Done()
		if err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		case <-time.After(2 * failureBound):
			return errors.New("Done's channel still open")
		}
	}},
}

// thenWaits enqueues on s a function of Then that waits, the way way
// does, for waited; then hold, which holds waited busy and returns the
// function that lets it go, called once the function of Then is waiting.
// The wait must last until then and return nil after; a guard makes a
// hang fail the test.
func thenWaits(t *testing.T, s, waited *Stream, way waitWay, hold func() (open func())) {
	t.Helper()
	waiting, result := make(chan struct{}), make(chan error, 1)
	must(t, s.Then(func() {
		close(waiting)
		result <- way.wait(waited)
	}))
	open := hold()
	select {
	case <-waiting:
	case <-time.After(failureBound):
		t.Fatalf("the function of Then not started %v after it was enqueued", failureBound)
	}
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-result:
		t.Fatalf("%s from a function of Then returned %v while the stream it waits for is busy", way.name, err)
	default:
	}
	open()
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("%s from a function of Then = %v, want nil", way.name, err)
		}
	case <-time.After(failureBound):
		t.Fatalf("%s from a function of Then still waits %v after the stream it waits for was let go", way.name, failureBound)
	}
}

// TestThenWaitsOnItsOwnStream: a function of Then may wait for the work
// enqueued after it on its own stream, by WaitIdle, Synchronize or Done.
func TestThenWaitsOnItsOwnStream(t *testing.T) {
	for _, way := range waitWays {
		t.Run(way.name, func(t *testing.T) {
			g := heldStream(t, false)
			// The function runs once the first gate opens, with the
			// stream held by a second one.
			thenWaits(t, g.s, g.s, way, func() func() {
				open := g.hold(t, false)
				g.open()
				return open
			})
		})
	}
}

// TestThenWaitsOnAnotherStream: a function of Then may wait for another
// stream, by WaitIdle, Synchronize or Done.
func TestThenWaitsOnAnotherStream(t *testing.T) {
	for _, way := range waitWays {
		t.Run(way.name, func(t *testing.T) {
			g := heldStream(t, false)
			s, err := NewStream(g.ctx)
			must(t, err)
			defer s.Close()
			thenWaits(t, s, g.s, way, func() func() { return g.open })
		})
	}
}
