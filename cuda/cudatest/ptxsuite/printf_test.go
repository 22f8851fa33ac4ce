package ptxsuite_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const printfSrc = `
extern "C" __global__ void hello(int base, double scale) {
	if (threadIdx.x % 16 == 0)
		printf("block %d thread %2d: %d %.3f %s %c %x\n", blockIdx.x, threadIdx.x, base + threadIdx.x, scale * threadIdx.x, "ok", 'A' + blockIdx.x, 255);
}`

// captureStdout runs f with file descriptor 1 writing to a file, and
// returns what was written: a GPU's printf goes to the process's standard
// output when the stream synchronizes, and the fake's too.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	saved, err := syscall.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(tmp.Fd()), 1, 0); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			syscall.Dup3(saved, 1, 0)
			syscall.Close(saved)
		}()
		f()
	}()
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// printf from a kernel: integers, doubles with a precision, strings,
// characters and hex, one line per printing thread.
func TestPrintf(t *testing.T) {
	forArchs(t, func(e *env) {
		k := e.kernel(printfSrc, "hello")
		out := captureStdout(e.t, func() {
			e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 48}}, int32(100), 0.5)
			if err := e.s.Synchronize(); err != nil {
				e.t.Fatal(err)
			}
		})
		var want []string
		for b := range 2 {
			for th := 0; th < 48; th += 16 {
				want = append(want, fmt.Sprintf("block %d thread %2d: %d %.3f %s %c %x", b, th, 100+th, 0.5*float64(th), "ok", 'A'+b, 255))
			}
		}
		got := strings.Split(strings.TrimSpace(out), "\n")
		// a GPU prints blocks in no fixed order: compare as sets
		seen := map[string]int{}
		for _, l := range got {
			seen[l]++
		}
		for _, w := range want {
			if seen[w] != 1 {
				e.t.Errorf("line %q printed %d times; output:\n%s", w, seen[w], out)
			}
		}
		if len(got) != len(want) {
			e.t.Errorf("%d lines printed, want %d:\n%s", len(got), len(want), out)
		}
	})
}
