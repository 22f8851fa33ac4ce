package cuda_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// The fault sweep: run a scenario that uses every kind of object once
// against the fake driver, counting its driver calls; then, for every call
// (function f, nth call), rerun it in a fresh process with that one call
// failing. Each run must return an error that names f, not panic, and
// leak nothing: a failed release may leave the one object it was
// releasing, nothing else. Each run is a process of its own because
// package cu loads its driver once per process (and cuda's cuInit once).

const (
	faultChildEnv = "GOCUDA_FAULT_CHILD" // "count" or "fault" in a child
	faultMarker   = "FAULTRESULT "
	// The result every injected fault returns: distinctive, never a
	// result the layer treats as something other than failure.
	faultResult = cu.CUDA_ERROR_UNKNOWN
)

// faultRun is what a child reports.
type faultRun struct {
	Err      string          // the scenario's error
	Funcs    []string        // C functions named by every *cuda.Error in it
	Release  string          // kind of object a failed release was releasing, if one failed
	Injected bool            // the error matches faultResult
	Panic    string          // a recovered panic
	Live     cudatest.Counts // the fake's objects after the scenario
	Handles  [3]int          // cuda.LiveHandles after the scenario
	Calls    map[string]int  // driver calls of the scenario
	// Deferred is set when a release the driver refused was kept for a
	// retry (cuda.ErrDeferred); the child then retries it, once the fault
	// has passed, before counting what is left.
	Deferred bool
}

func TestFaultSweep(t *testing.T) {
	if os.Getenv(faultChildEnv) != "" {
		t.Skip("in a child of the sweep")
	}
	lib, err := fakecuda.Build("")
	if err != nil {
		t.Skipf("cannot build the fake driver: %v", err)
	}
	base := runFaultChild(t, lib, "")
	if base.Err != "" || base.Panic != "" || !base.Live.IsZero() || base.Handles != [3]int{} {
		t.Fatalf("the scenario without faults: %+v", base)
	}
	type fault struct {
		fn string
		n  int
	}
	var faults []fault
	for fn, n := range base.Calls {
		for i := 1; i <= n; i++ {
			faults = append(faults, fault{fn, i})
		}
	}
	sort.Slice(faults, func(i, j int) bool {
		return faults[i].fn < faults[j].fn || faults[i].fn == faults[j].fn && faults[i].n < faults[j].n
	})

	var (
		mu       sync.Mutex
		survived int
		wg       sync.WaitGroup
		next     = make(chan fault)
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range next {
				spec := fmt.Sprintf("%s:%d:%d", f.fn, f.n, faultResult)
				r := runFaultChild(t, lib, spec)
				if problem := judgeFault(f.fn, r); problem != "" {
					t.Errorf("%s: %s\n\terror: %s", spec, problem, r.Err)
					continue
				}
				mu.Lock()
				survived++
				mu.Unlock()
			}
		}()
	}
	for _, f := range faults {
		next <- f
	}
	close(next)
	wg.Wait()
	fmt.Printf("fault sweep: %d faults injected, %d survived\n", len(faults), survived)
	if len(faults) < 50 {
		t.Errorf("only %d driver calls in the scenario: it no longer covers what it should", len(faults))
	}
}

// judgeFault returns what is wrong with the run that failed fn, or "".
func judgeFault(fn string, r faultRun) string {
	// cuCtxGetCurrent only tells the bound calls whether they may skip the
	// push and pop: when it fails they push, and the scenario succeeds.
	tolerated := fn == "cuCtxGetCurrent" && r.Err == ""
	switch {
	case r.Panic != "":
		return "panic: " + r.Panic
	case tolerated:
		if !r.Live.IsZero() || r.Handles != [3]int{} {
			return fmt.Sprintf("leaked: %v, handles %v", r.Live, r.Handles)
		}
		return ""
	case r.Err == "":
		return "the scenario succeeded despite the fault"
	case !r.Injected:
		return "the error does not wrap the injected result"
	case !slices.Contains(r.Funcs, fn) && !strings.Contains(r.Err, fn):
		return "the error does not name " + fn
	case r.Handles != [3]int{}:
		return fmt.Sprintf("cuda.LiveHandles = %v after every Close", r.Handles)
	case r.Deferred && !r.Live.IsZero():
		// A refused release was kept and retried: nothing may be left.
		return fmt.Sprintf("leaked after the deferred release was retried: %v", r.Live)
	}
	left := r.Live
	// A release that failed may leave the one object it was releasing,
	// alive or reaped with its context; nothing else may be left.
	extra := 0
	switch r.Release {
	case "context":
		extra, left.Contexts, left.PrimaryRetains = left.Contexts+left.PrimaryRetains, 0, 0
	case "stream":
		extra, left.Streams = left.Streams, 0
	case "event":
		extra, left.Events = left.Events, 0
	case "device":
		extra, left.DeviceAllocs = left.DeviceAllocs, 0
	case "host":
		extra, left.HostAllocs = left.HostAllocs, 0
	}
	if r.Release != "" {
		extra += left.Reaped
		left.Reaped = 0
	}
	if extra > 1 || !left.IsZero() {
		return fmt.Sprintf("leaked: %v (release of %q failed)", r.Live, r.Release)
	}
	return ""
}

func runFaultChild(t *testing.T, lib, spec string) faultRun {
	t.Helper()
	mode := "count"
	if spec != "" {
		mode = "fault"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultSweepChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), faultChildEnv+"="+mode, cu.LibraryEnv+"="+lib, "FAKECUDA_FAIL="+spec,
		fakecuda.QuickRaceExit())
	out, err := cmd.CombinedOutput()
	var r faultRun
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), faultMarker); ok {
			if jerr := json.Unmarshal([]byte(line), &r); jerr != nil {
				t.Fatalf("%s: bad result %q: %v", spec, line, jerr)
			}
			return r
		}
	}
	r.Panic = fmt.Sprintf("the child crashed (%v):\n%s", err, out)
	return r
}

func TestFaultSweepChild(t *testing.T) {
	mode := os.Getenv(faultChildEnv)
	if mode == "" {
		t.Skip("runs as a child of TestFaultSweep")
	}
	if err := cu.Load(); err != nil {
		t.Fatal(err)
	}
	if mode == "count" {
		cudatest.ResetCalls() // the loader's own calls are not the scenario's
	}
	var r faultRun
	// The scenario runs on a goroutine of its own, which then exits: a
	// thread whose context stack could not be restored (a failed pop)
	// stays locked to it and must end with it.
	errc := make(chan error)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.Panic = fmt.Sprint(p)
				errc <- nil
			}
		}()
		errc <- faultScenario()
	}()
	err := <-errc
	for i := 0; i < 200 && cudatest.Live().BoundThreads != 0; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		r.Err = err.Error()
		r.Injected = errors.Is(err, faultResult)
		r.Funcs = cudaFuncs(err)
		r.Release = releaseKind(err)
		r.Deferred = errors.Is(err, cuda.ErrDeferred)
	}
	if r.Deferred {
		// The scenario's later releases retry it already, so it may be gone.
		if n := cuda.LiveObjects().Deferred; n > 1 {
			r.Panic = fmt.Sprintf("LiveObjects().Deferred = %d after one refused release, want at most 1", n)
		}
		if n := cuda.RetryDeferred(); n != 0 {
			r.Panic = fmt.Sprintf("RetryDeferred left %d objects after the fault passed", n)
		}
	}
	r.Live = cudatest.Live()
	r.Handles[0], r.Handles[1], r.Handles[2] = cuda.LiveHandles()
	r.Calls = cudatest.CalledFunctions()
	out, _ := json.Marshal(r)
	fmt.Printf("\n%s%s\n", faultMarker, out)
}

// releaseError marks a failure of the scenario's own releases.
type releaseError struct {
	kind string
	err  error
}

func (e *releaseError) Error() string { return "releasing " + e.kind + ": " + e.err.Error() }
func (e *releaseError) Unwrap() error { return e.err }

// cudaFuncs returns the Func of every *cuda.Error in err's tree.
func cudaFuncs(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if e, ok := err.(*cuda.Error); ok && e.Func != "" {
			out = append(out, e.Func)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			if w := u.Unwrap(); w != nil {
				walk(w)
			}
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				walk(w)
			}
		}
	}
	walk(err)
	return out
}

// releaseKind returns the kind of object whose release failed in err, or "".
func releaseKind(err error) string {
	var re *releaseError
	if errors.As(err, &re) {
		return re.kind
	}
	var ce *cuda.Error
	if errors.As(err, &ce) {
		switch ce.Op {
		case "Context.Close":
			return "context"
		case "Stream.Close":
			return "stream"
		case "Event.Close":
			return "event"
		}
	}
	return ""
}

// faultScenario makes and uses one of everything, checks the data, and
// releases everything it made, whatever failed; it returns every error.
func faultScenario() (err error) {
	var undo []func() error
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			err = errors.Join(err, undo[i]())
		}
	}()
	closeLater := func(c interface{ Close() error }) { undo = append(undo, c.Close) }
	raw := func(fn string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", fn, err)
		}
		return nil
	}

	dev, err := cuda.GetDevice(0)
	if err != nil {
		return err
	}
	primary, err := cuda.PrimaryContext(dev)
	if err != nil {
		return err
	}
	closeLater(primary)
	own, err := cuda.NewContext(dev)
	if err != nil {
		return err
	}
	closeLater(own)
	_, greatest, err := primary.StreamPriorityRange()
	if err != nil {
		return err
	}
	s, err := cuda.NewStreamWithPriority(primary, greatest)
	if err != nil {
		return err
	}
	closeLater(s)
	s2, err := s.Clone()
	if err != nil {
		return err
	}
	closeLater(s2)
	other, err := cuda.NewStream(own)
	if err != nil {
		return err
	}
	closeLater(other)
	start, err := cuda.NewEvent(primary, cuda.WithTiming())
	if err != nil {
		return err
	}
	closeLater(start)
	end, err := cuda.NewEvent(primary, cuda.WithTiming())
	if err != nil {
		return err
	}
	closeLater(end)
	done, err := cuda.NewEvent(own)
	if err != nil {
		return err
	}
	closeLater(done)

	const words = 1 << 16
	var d cu.CUdeviceptr
	err = primary.Do(func() error { return cu.MemAlloc(&d, words*4) })
	if d != 0 { // even when Do failed after the allocation
		undo = append(undo, func() error {
			if err := primary.Do(func() error { return cu.MemFree(d) }); err != nil {
				return &releaseError{"device", raw("cuMemFree", err)}
			}
			return nil
		})
	}
	if err != nil {
		return raw("cuMemAlloc", err)
	}
	var h unsafe.Pointer
	err = primary.Do(func() error { return cu.MemAllocHost(&h, words*4) })
	if h != nil {
		undo = append(undo, func() error {
			if err := primary.Do(func() error { return cu.MemFreeHost(h) }); err != nil {
				return &releaseError{"host", raw("cuMemFreeHost", err)}
			}
			return nil
		})
	}
	if err != nil {
		return raw("cuMemAllocHost", err)
	}

	// Fill on one handle of s, copy on another context's stream after an
	// event, time the fill, and wait in every way there is.
	if err := start.Record(s); err != nil {
		return err
	}
	if err := primary.Do(func() error { return cu.MemsetD32Async(d, 7, words, s2.Raw()) }); err != nil {
		return raw("cuMemsetD32Async", err)
	}
	if err := end.Record(s2); err != nil {
		return err
	}
	if err := other.WaitEvent(end); err != nil {
		return err
	}
	if err := own.Do(func() error { return cu.MemcpyDtoHAsync(h, d, words*4, other.Raw()) }); err != nil {
		return raw("cuMemcpyDtoHAsync", err)
	}
	if err := done.Record(other); err != nil {
		return err
	}
	if _, err := s.Query(); err != nil {
		return err
	}
	if err := done.Synchronize(); err != nil {
		return err
	}
	if ok, err := done.Query(); err != nil || !ok {
		return errors.Join(err, errors.New("event not done after Synchronize"))
	}
	if err := other.Synchronize(); err != nil {
		return err
	}
	if err := primary.Synchronize(); err != nil {
		return err
	}
	if _, err := cuda.Elapsed(start, end); err != nil {
		return err
	}
	// The stream is idle: WaitIdle's first query ends it, so the number
	// of calls does not depend on timing.
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.WaitIdle(wctx); err != nil {
		return err
	}
	got := unsafe.Slice((*uint32)(h), words)
	if got[0] != 7 || got[words-1] != 7 {
		return fmt.Errorf("copied %d, %d; want 7", got[0], got[words-1])
	}
	return nil
}
