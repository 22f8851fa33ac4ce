package cudatest

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/internal/fakecuda"
	"github.com/gocuda/gocuda/internal/hostorder"
)

// Option is a setting of the fake driver, given to Setup or
// UseFakeDriver. Settings are read when the driver is loaded, from the
// environment, so child processes started with the parent's environment
// inherit them.
type Option func(*config)

type config struct {
	race bool
	seed *uint64
}

// WithRaceDetector turns the fake driver's race detector on (the
// environment variable FAKECUDA_RACE=1 does the same): device, managed
// and page-locked memory is checked for accesses by operations that no
// stream order, event, synchronization or graph edge orders. See
// TakeRaces, CheckRaces and the package documentation.
func WithRaceDetector() Option { return func(c *config) { c.race = true } }

// WithSeed makes the fake's stream workers run one operation at a time, in
// an order drawn from a PRNG seeded with seed (FAKECUDA_SEED=seed does the
// same). See the package documentation for what is then deterministic.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = &seed } }

// applyOptions puts the options in the environment, for the library to
// read as it loads.
func applyOptions(opts []Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.race {
		if err := os.Setenv(fakecuda.RaceEnv, "1"); err != nil {
			return err
		}
	}
	if c.seed != nil {
		if err := os.Setenv(fakecuda.SeedEnv, strconv.FormatUint(*c.seed, 10)); err != nil {
			return err
		}
	}
	return nil
}

// checkOptions reports options that the loaded driver does not have: they
// were given after it was loaded.
func checkOptions(l *fakecuda.Lib, opts []Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.race && !l.RaceDetector() {
		return fmt.Errorf("cudatest: WithRaceDetector given after the fake driver was loaded without it")
	}
	if s, ok := l.Seed(); c.seed != nil && (!ok || s != *c.seed) {
		return fmt.Errorf("cudatest: WithSeed(%d) given after the fake driver was loaded with another seed", *c.seed)
	}
	return nil
}

// RaceDetectorEnabled reports whether this process uses the fake driver
// with its race detector on.
func RaceDetectorEnabled() bool {
	l := driver()
	return l != nil && l.RaceDetector()
}

// Race is a data race the fake driver's detector found: two accesses to
// the same bytes of device, managed or page-locked memory, at least one a
// write, that nothing orders. Access is the one that ran second, and
// found it.
type Race struct {
	Access, Previous RaceAccess
}

// RaceAccess is one side of a Race.
type RaceAccess struct {
	// Op is "memset", "copy", "kernel", "host access" (HostRead,
	// HostWrite) or "host function" (the work of the fake cuBLAS);
	// CopyDir a copy's direction ("HtoD", "DtoH", "DtoD",
	// "HtoH"); API the driver function that queued it ("" for the host).
	Op, CopyDir, API string
	Write            bool
	// Stream is the stream's id (Stream.ID, cuStreamGetId), 0 for the
	// host; Legacy marks a context's NULL stream.
	Stream uint64
	Legacy bool
	// GraphNode is the index of the operation's node in a launched graph,
	// -1 for an operation that is not a graph's.
	GraphNode int
	// Addr and Size are the bytes both accesses touched; Alloc* the
	// allocation they are in ("device", "managed", "page-locked host",
	// "registered host").
	Addr      uintptr
	Size      uint64
	AllocBase uintptr
	AllocSize uint64
	AllocKind string
	// Seq orders operations as they were queued.
	Seq uint64
	// Stack is where the operation was queued, innermost call first: the
	// Go frames of the call into the driver, from the function that made
	// it (package cu's binding, or the caller of HostRead or HostWrite).
	Stack []runtime.Frame
}

func convertAccess(a fakecuda.RaceAccess) RaceAccess {
	return RaceAccess{
		Op: a.Op, CopyDir: a.CopyDir, API: a.API, Write: a.Write,
		Stream: a.Stream, Legacy: a.Legacy, GraphNode: a.GraphNode,
		Addr: a.Addr, Size: a.Size, AllocBase: a.AllocBase, AllocSize: a.AllocSize, AllocKind: a.AllocKind,
		Seq: a.Seq, Stack: goFrames(a.PCs),
	}
}

// goFrames turns the PCs of a frame-pointer walk from the fake's C code
// into the Go frames of the caller: the C frames, the cgo trampolines and
// the runtime's cgo call are left out.
func goFrames(pcs []uintptr) []runtime.Frame {
	var out []runtime.Frame
	if len(pcs) == 0 {
		return nil
	}
	frames := runtime.CallersFrames(pcs)
	started := false
	for {
		f, more := frames.Next()
		internal := f.Function == "" || strings.HasPrefix(f.Function, "runtime.") ||
			strings.Contains(f.Function, "._Cfunc_") || strings.Contains(f.Function, "_cgo_") ||
			strings.HasPrefix(f.Function, "github.com/gocuda/gocuda/internal/fakecuda.") ||
			strings.HasPrefix(f.Function, "github.com/gocuda/gocuda/cuda/cudatest.hostAccess") ||
			strings.HasPrefix(f.Function, "github.com/gocuda/gocuda/cuda/cudatest.HostRead") ||
			strings.HasPrefix(f.Function, "github.com/gocuda/gocuda/cuda/cudatest.HostWrite")
		if !internal {
			started = true
		}
		if started && f.Function != "" && f.Function != "runtime.goexit" {
			out = append(out, f)
		}
		if !more {
			return out
		}
	}
}

func (a RaceAccess) what() string {
	op := a.Op
	if a.CopyDir != "" {
		op += " " + a.CopyDir
	}
	if a.API != "" {
		op += " (" + a.API + ")"
	}
	return op
}

func (a RaceAccess) where() string {
	var s string
	switch {
	case a.Op == "host access":
		return "the host"
	case a.Legacy:
		s = fmt.Sprintf("the legacy default stream (id %d)", a.Stream)
	default:
		s = fmt.Sprintf("stream %d", a.Stream)
	}
	if a.GraphNode >= 0 {
		s = fmt.Sprintf("node %d of a graph launched on %s", a.GraphNode, s)
	}
	return s
}

func (a RaceAccess) rw() string {
	if a.Write {
		return "write"
	}
	return "read"
}

// String formats the race as Go's race detector does: both accesses, with
// where they were queued.
func (r Race) String() string {
	var b strings.Builder
	b.WriteString("==================\nWARNING: CUDA DATA RACE\n")
	for i, a := range []RaceAccess{r.Access, r.Previous} {
		verb := strings.ToUpper(a.rw()[:1]) + a.rw()[1:]
		if i == 1 {
			b.WriteString("\nPrevious " + a.rw())
		} else {
			b.WriteString(verb)
		}
		fmt.Fprintf(&b, " of %d bytes at %#x by %s on %s:\n", a.Size, a.Addr, a.what(), a.where())
		if len(a.Stack) == 0 {
			b.WriteString("  (no stack: the frame-pointer walk found no Go frames)\n")
		}
		for _, f := range a.Stack {
			fmt.Fprintf(&b, "  %s()\n      %s:%d\n", f.Function, f.File, f.Line)
		}
	}
	a := r.Access
	fmt.Fprintf(&b, "\nBytes %d to %d of a %d-byte %s allocation at %#x.\n==================\n",
		a.Addr-a.AllocBase, uint64(a.Addr-a.AllocBase)+a.Size, a.AllocSize, a.AllocKind, a.AllocBase)
	return b.String()
}

// Summary is one line about the race that names no address or stream id,
// the same from run to run: the two accesses in the order they were
// queued.
func (r Race) Summary() string {
	first, second := r.Previous, r.Access
	if second.Seq < first.Seq {
		first, second = second, first
	}
	side := func(a RaceAccess) string {
		s := a.rw() + " by " + a.what()
		switch {
		case a.Op == "host access":
			return s + " on the host"
		case a.GraphNode >= 0:
			return s + " in a graph launch"
		case a.Legacy:
			return s + " on the legacy stream"
		}
		return s
	}
	return fmt.Sprintf("CUDA data race: %s and %s, unordered, on %d bytes of %s memory",
		side(first), side(second), r.Access.Size, r.Access.AllocKind)
}

var (
	raceMu    sync.Mutex
	raceTaken int // races handed out by TakeRaces, CheckRaces and ReportRaces
	// unclaimed are races found before a CheckRaces began: not that
	// test's, they wait for ReportRaces at the end of the run.
	unclaimed []Race
)

// quiesceWait bounds the wait for queued work before races are read: a
// stream blocked for longer (a host function waiting for the test, say)
// is left running.
const quiesceWait = 10 * time.Second

// TakeRaces returns the races found since the last call (of it, CheckRaces
// or ReportRaces), after waiting for the operations queued so far to run:
// races are found as operations execute. The wait orders nothing, so it
// hides no race. Without the fake driver or its detector it returns nil.
func TakeRaces() []Race {
	l := driver()
	if l == nil || !l.RaceDetector() {
		return nil
	}
	l.Quiesce(quiesceWait)
	raceMu.Lock()
	defer raceMu.Unlock()
	var out []Race
	n := l.RaceCount()
	for ; raceTaken < n; raceTaken++ {
		r, ok := l.Race(raceTaken)
		if !ok {
			continue // past the races kept: counted, not shown
		}
		out = append(out, Race{Access: convertAccess(r.Access), Previous: convertAccess(r.Previous)})
	}
	return out
}

// CheckRaces makes tb fail with the report of every race found between
// now and its end, as Go's race detector fails a test. Call it first in a
// test: the check is a cleanup, and runs after the test's other cleanups
// (which may close streams that still have work). Races found while
// parallel tests run are reported by whichever check runs first. Races
// found before it began are not this test's: they are kept for the report
// at the end of the run (ReportRaces), as if no check had taken them.
// Without the detector it checks nothing.
func CheckRaces(tb testing.TB) {
	tb.Helper()
	if !RaceDetectorEnabled() {
		return
	}
	if earlier := TakeRaces(); len(earlier) > 0 {
		raceMu.Lock()
		unclaimed = append(unclaimed, earlier...)
		raceMu.Unlock()
	}
	tb.Cleanup(func() {
		for _, r := range TakeRaces() {
			tb.Errorf("cudatest: race detected during execution of test:\n%s", r)
		}
		for _, r := range TakeSharedRaces() {
			tb.Errorf("cudatest: shared-memory race detected during execution of test:\n%s", r)
		}
	})
}

// ReportRaces writes to w the report of every race not yet taken (those
// found before a CheckRaces began included) and returns their number: the
// check at the end of a test binary's run, as UseFakeDriver makes it.
func ReportRaces(w io.Writer) int {
	taken := TakeRaces()
	raceMu.Lock()
	races := append(unclaimed, taken...)
	unclaimed = nil
	raceMu.Unlock()
	for _, r := range races {
		fmt.Fprint(w, r)
	}
	shared := TakeSharedRaces()
	for _, r := range shared {
		fmt.Fprint(w, r)
	}
	return len(races) + len(shared)
}

// HostRead and HostWrite tell the race detector that the host read or
// wrote n bytes at p: page-locked memory (cuMemAllocHost, cuMemHostAlloc,
// cuMemHostRegister; cuda.HostBuffer's Slice) or managed memory, which Go
// code reaches without the driver. An access the host has not
// synchronized with device work touching the same bytes is a race, like
// one between two streams. Other memory, another driver or the detector
// off: they do nothing.
func HostRead(p unsafe.Pointer, n int) { hostAccess(p, n, false) }

// HostWrite: see HostRead.
func HostWrite(p unsafe.Pointer, n int) { hostAccess(p, n, true) }

func hostAccess(p unsafe.Pointer, n int, write bool) {
	if l := driver(); l != nil && l.RaceDetector() {
		l.HostAccess(uintptr(p), n, write)
	}
}

// attachHostOrder has the functions of Stream.Then run ordered after the
// completion that delivered them, under the race detector: what a function
// reads or writes, and the work it queues, come after its stream's work.
func attachHostOrder(l *fakecuda.Lib) {
	if !l.RaceDetector() {
		return
	}
	hostorder.SetThen(func(fn, arg uintptr, body func()) { l.ObserveHostFunc(fn, arg, body) })
}
