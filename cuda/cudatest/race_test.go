package cudatest_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// raceTB is a testing.TB whose failures and cleanups a test inspects.
type raceTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *raceTB) Helper()          {}
func (r *raceTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *raceTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *raceTB) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// raceContext skips t when the race detector is off, and otherwise
// returns the primary context of device 0, closed when t ends.
func raceContext(t *testing.T) *cuda.Context {
	t.Helper()
	if !cudatest.RaceDetectorEnabled() {
		t.Skip("the race detector is off")
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// CheckRaces fails the test with the report of a race found while it ran,
// with both stacks, and passes the same work once it is ordered.
func TestCheckRaces(t *testing.T) {
	ctx := raceContext(t)

	racy := &raceTB{TB: t}
	cudatest.CheckRaces(racy)
	produceAndConsume(ctx, false)
	racy.end()
	if len(racy.errs) != 1 {
		t.Fatalf("%d failures, want 1: %q", len(racy.errs), racy.errs)
	}
	report := racy.errs[0]
	for _, want := range []string{
		"race detected during execution of test", "WARNING: CUDA DATA RACE",
		"by memset (cuMemsetD32Async) on stream", "by copy DtoH (cuMemcpyDtoHAsync) on stream",
		"cudatest_test.produceAndConsume()", "example_race_test.go:", "cudatest_test.TestCheckRaces()",
		"of a 4096-byte device allocation",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}

	fixed := &raceTB{TB: t}
	cudatest.CheckRaces(fixed)
	produceAndConsume(ctx, true)
	fixed.end()
	if len(fixed.errs) != 0 {
		t.Fatalf("the ordered version failed: %q", fixed.errs)
	}
}

// A race found before a test's CheckRaces is not that test's, and is not
// lost either: ReportRaces, the check at the end of the run, reports it.
func TestCheckRacesKeepsEarlierRaces(t *testing.T) {
	ctx := raceContext(t)
	var before strings.Builder
	if n := cudatest.ReportRaces(&before); n != 0 {
		t.Fatalf("%d races from the tests before:\n%s", n, before.String())
	}
	produceAndConsume(ctx, false) // a race no check has taken

	later := &raceTB{TB: t}
	cudatest.CheckRaces(later)
	produceAndConsume(ctx, true)
	later.end()
	if len(later.errs) != 0 {
		t.Fatalf("the later test failed with the earlier race: %q", later.errs)
	}
	var report strings.Builder
	if n := cudatest.ReportRaces(&report); n != 1 || !strings.Contains(report.String(), "by memset (cuMemsetD32Async) on stream") {
		t.Fatalf("ReportRaces = %d, want the earlier race:\n%s", n, report.String())
	}
}

// HostWrite of page-locked memory an asynchronous copy still reads races;
// after the stream's synchronization it does not.
func TestHostWrite(t *testing.T) {
	ctx := raceContext(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, err := cuda.AllocHost[float32](ctx, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := cuda.Alloc(ctx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for _, synced := range []bool{false, true} {
		cudatest.TakeRaces()
		if err := cuda.CopyToDeviceAsync(s, dst, src); err != nil {
			t.Fatal(err)
		}
		if synced {
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
		cudatest.HostWrite(src.Ptr(), 1024)
		src.Slice()[0] = 1
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		races := cudatest.TakeRaces()
		if synced != (len(races) == 0) {
			t.Errorf("synchronized %v: %d races", synced, len(races))
		}
		for _, r := range races {
			if !strings.Contains(r.Summary(), "write by host access on the host") {
				t.Errorf("summary %q", r.Summary())
			}
		}
	}
}

// gatePTX declares an entry without parameters, run as a Go kernel that
// holds its stream on a channel.
const gatePTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry race_test_gate() { ret; }
`

// A completion nobody waits for (Stream.Then, Stream.Done) orders nothing
// of the host's: a host read of what a copy wrote, after one, is a race
// whether its host function had already run or was still held behind a
// kernel, and after Synchronize it is none. The run under seeds is
// TestUnwaitedCompletionUnderSeeds.
func TestUnwaitedCompletionOrdersNothing(t *testing.T) {
	ctx := raceContext(t)
	gate := make(chan struct{})
	cudatest.RegisterKernel("race_test_gate", cudatest.Kernel{Launch: func(*cudatest.Launch) { <-gate }})
	defer cudatest.UnregisterKernel("race_test_gate")
	mod, err := cuda.LoadModule(ctx, []byte(gatePTX))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	k, err := mod.Function("race_test_gate")
	if err != nil {
		t.Fatal(err)
	}
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf, err := cuda.Alloc(ctx, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	out, err := cuda.AllocHost[uint32](ctx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	completions := map[string]func() error{
		"Then": func() error { return s.Then(func() {}) },
		"Done": func() error { _, err := s.Done(); return err },
	}
	for _, name := range []string{"Then", "Done"} {
		for _, held := range []bool{false, true} {
			for _, synced := range []bool{false, true} {
				cudatest.TakeRaces()
				if held {
					gate = make(chan struct{})
					if err := k.Launch(s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}); err != nil {
						t.Fatal(err)
					}
				}
				if err := cuda.CopyFromDeviceAsync(s, out, buf); err != nil {
					t.Fatal(err)
				}
				if err := completions[name](); err != nil {
					t.Fatal(err)
				}
				if !held {
					cudatest.TakeRaces() // waits until the host function has run, ordering nothing
				}
				if synced {
					if held {
						close(gate)
					}
					if err := s.Synchronize(); err != nil {
						t.Fatal(err)
					}
				}
				cudatest.HostRead(out.Ptr(), 4096)
				if held && !synced {
					close(gate)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				races := cudatest.TakeRaces()
				if want := map[bool]int{false: 1, true: 0}[synced]; len(races) != want {
					t.Errorf("%s, host function held %v, synchronized %v: %d races, want %d", name, held, synced, len(races), want)
				}
				for _, r := range races {
					if !strings.Contains(r.Summary(), "read by host access on the host") {
						t.Errorf("%s: summary %q", name, r.Summary())
					}
				}
			}
		}
	}
}

// TestUnwaitedCompletionOrdersNothing's verdicts are the same under the
// seeded scheduler, whatever order its seeds run the streams in.
func TestUnwaitedCompletionUnderSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	if !cudatest.RaceDetectorEnabled() {
		t.Skip("the race detector is off")
	}
	if os.Getenv(fakecuda.SeedEnv) != "" {
		t.Skip("seeded already: a child of this test")
	}
	for seed := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnwaitedCompletionOrdersNothing$", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", fakecuda.SeedEnv, seed), fakecuda.QuickRaceExit())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUnwaitedCompletionOrdersNothing") {
			t.Errorf("seed %d: %v\n%s", seed, err, out)
		}
	}
}

// A function of Then reads what its stream's earlier work wrote: ordered,
// with no race, whether the function ran before the test looked or not;
// the same read from the test's goroutine with nothing observed is a race.
func TestThenBodyIsOrderedAfterItsStream(t *testing.T) {
	ctx := raceContext(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := cuda.AllocHost[uint32](ctx, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	buf, err := cuda.Alloc(ctx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	host := out.Slice()
	read := func() uint32 {
		cudatest.HostRead(unsafe.Pointer(&host[0]), 4*len(host))
		return host[0]
	}

	ordered := &raceTB{TB: t}
	cudatest.CheckRaces(ordered)
	if err := buf.MemsetD32Async(s, 5); err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopyFromDeviceAsync(s, out, buf); err != nil {
		t.Fatal(err)
	}
	got := make(chan uint32, 1)
	if err := s.Then(func() { got <- read() }); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != 5 {
		t.Errorf("the function of Then read %d, want 5", v)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	ordered.end()
	if len(ordered.errs) != 0 {
		t.Fatalf("a function of Then reading its stream's results: %q, want no race", ordered.errs)
	}

	racy := &raceTB{TB: t}
	cudatest.CheckRaces(racy)
	if err := cuda.CopyFromDeviceAsync(s, out, buf); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{})
	if err := s.Then(func() { close(ran) }); err != nil {
		t.Fatal(err)
	}
	<-ran // the copy is done, but the detector saw nothing order it
	read()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	racy.end()
	if len(racy.errs) != 1 {
		t.Fatalf("a read outside the function of Then: %d failures, want 1: %q", len(racy.errs), racy.errs)
	}
}
