package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// testDriverEnv picks the driver this package's tests run against:
//
//	fake       the fake driver of package cudatest (failing if it cannot be built)
//	real, none never the fake: the tests that need a driver skip without libcuda
//	(unset)    the real driver where libcuda.so.1 can be opened, else the fake,
//	           else none (no C compiler to build the fake: the tests skip)
//
// GOCUDA_LIBCUDA, when set, is used as it is, whatever this says: the child
// processes of TestNoDriver and TestFaultSweep rely on that.
const testDriverEnv = "GOCUDA_TEST_DRIVER"

// The main goroutine keeps the main thread: the Go runtime cannot end that
// thread, so a goroutine that exits while locked to it leaves it parked
// instead. Locked here, it never runs a test's goroutine, and a thread a
// test leaves locked (as bind does when it cannot restore the context
// stack) ends with its goroutine, which the fake driver's count of threads
// with a context bound then shows.
func init() { runtime.LockOSThread() }

func TestMain(m *testing.M) {
	fake, err := chooseDriver()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests:", err)
		os.Exit(2)
	}
	before := goroutineIDs()
	code := m.Run()
	if code == 0 {
		code = checkNoGoroutineLeft(before)
	}
	if fake && code == 0 {
		code = checkNothingLeaked()
	}
	if fake {
		// The race detector is on (see chooseDriver): the tests must
		// order all their device work.
		if n := cudatest.ReportRaces(os.Stderr); n > 0 {
			fmt.Fprintf(os.Stderr, "cuda tests: %d CUDA data race(s) detected during execution of the tests\n", n)
			code = 1
		}
	}
	os.Exit(code)
}

// chooseDriver sets up the fake driver when the environment asks for it or
// there is no real one, and reports whether it did.
func chooseDriver() (bool, error) {
	if os.Getenv(cu.LibraryEnv) != "" {
		return false, nil
	}
	mode := os.Getenv(testDriverEnv)
	switch mode {
	case "fake":
	case "real", "none":
		return false, nil
	case "":
		if fakecuda.CanOpen("libcuda.so.1") == nil {
			return false, nil
		}
	default:
		return false, fmt.Errorf("%s=%q: want fake, real or none", testDriverEnv, mode)
	}
	// Two devices, so that the peer-access tests run too.
	if os.Getenv("FAKECUDA_DEVICES") == "" {
		os.Setenv("FAKECUDA_DEVICES", "2")
	}
	// The race detector is on unless FAKECUDA_RACE says otherwise.
	var opts []cudatest.Option
	if os.Getenv(fakecuda.RaceEnv) == "" {
		opts = append(opts, cudatest.WithRaceDetector())
	}
	path, err := cudatest.Setup(opts...)
	if err != nil && mode == "" {
		fmt.Printf("cuda tests: no driver (libcuda.so.1 cannot be opened, and %v): the tests that need one skip\n", err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fmt.Printf("cuda tests: using the fake driver at %s\n", path)
	registerTestKernels()
	return true, nil
}

// registerTestKernels gives the fake driver Go versions of the kernels of
// package testkernels, so that the tests that launch them run without a
// GPU too.
func registerTestKernels() {
	cudatest.RegisterKernel(testkernels.VectorAddName, cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		a, b, c := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Ptr()
		if i := t.GlobalX(); i < int(t.Param(3).Uint32()) {
			cudatest.Store(c, i, cudatest.Load[float32](a, i)+cudatest.Load[float32](b, i))
		}
	}})
	empty := cudatest.Kernel{Launch: func(*cudatest.Launch) {}}
	cudatest.RegisterKernel(testkernels.EmptyName1, empty)
	cudatest.RegisterKernel(testkernels.EmptyName16, empty)
	cudatest.RegisterKernel(gateKernelName, cudatest.Kernel{Launch: runGateKernel})
}

// The frames of this package and of its external tests: a goroutine
// that shows one, or was created by one, is this package's.
var packageFrames = []string{"github.com/gocuda/gocuda/cuda.", "github.com/gocuda/gocuda/cuda_test."}

// goroutineStacks returns the stack of every goroutine, by id.
func goroutineStacks() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := map[int]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := strings.Cut(string(g), " [")
		if id, err := strconv.Atoi(strings.TrimPrefix(head, "goroutine ")); err == nil {
			stacks[id] = string(g)
		}
	}
	return stacks
}

// goroutineIDs returns the ids of the goroutines now.
func goroutineIDs() map[int]bool {
	ids := map[int]bool{}
	for id := range goroutineStacks() {
		ids[id] = true
	}
	return ids
}

// packageGoroutines returns the stacks of the goroutines of this package
// (packageFrames) that are not in before: the runtime's and the testing
// package's own, and those that were there already, do not count.
func packageGoroutines(before map[int]bool) []string {
	var left []string
	for id, st := range goroutineStacks() {
		if before[id] {
			continue
		}
		for _, f := range packageFrames {
			if strings.Contains(st, f) {
				left = append(left, st)
				break
			}
		}
	}
	return left
}

// checkNoGoroutineLeft fails the run if a goroutine of this package that
// was not there before the tests is still there after them: a completion
// dispatcher with nothing to deliver, say, or a test's goroutine that
// never ended. Goroutines that are ending get a grace period.
func checkNoGoroutineLeft(before map[int]bool) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := packageGoroutines(before)
		if len(left) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "cuda tests: %d goroutine(s) of package cuda left after every test:\n\n%s\n",
				len(left), strings.Join(left, "\n\n"))
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNothingLeaked fails the run if, after every test, the fake driver
// still holds an object or had to reap one, or this package still counts a
// live handle.
func checkNothingLeaked() int {
	if diff := cudatest.WaitNoLeaks(cudatest.Counts{}); diff != "" {
		fmt.Fprintf(os.Stderr, "cuda tests: the fake driver holds objects after every test: %s\n", diff)
		return 1
	}
	if n := LiveObjects(); n != (LiveCounts{}) {
		fmt.Fprintf(os.Stderr, "cuda tests: driver objects still held after every test: %+v\n", n)
		return 1
	}
	return 0
}

// skipIfMissing skips tb when err says the driver lacks a function (the
// fake driver built for an old driver version lacks cuLaunchKernelEx,
// say), and returns err otherwise.
// Tests that need such functions call it on the first error they get.
func skipIfMissing(tb testing.TB, err error) error {
	tb.Helper()
	if errors.Is(err, ErrMissingFunction) {
		tb.Skipf("the driver lacks a function this test needs: %v", err)
	}
	return err
}

// runChildTest runs the test named name of this binary in a child process,
// with env added to this process's environment, and fails t unless the
// child passed it. It returns the child's output.
func runChildTest(t *testing.T, name string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return out
}
