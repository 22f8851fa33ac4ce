package cudatest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
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
