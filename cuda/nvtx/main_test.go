package nvtx_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

// childEnv names the scenario a child process of the tests runs in place
// of the tests (child_test.go): a tool attaches once per process, so each
// test with a tool runs the test binary again with NVTX_INJECTION64_PATH
// set.
const childEnv = "GOCUDA_NVTX_TEST_CHILD"

// keepToolEnv, set, keeps NVTX_INJECTION64_PATH for the test process, to
// run the benchmarks with a tool; the tests that need no tool then skip.
const keepToolEnv = "GOCUDA_NVTX_KEEP_TOOL"

// TestMain runs a child's scenario, or the tests with no tool: a profiler
// running the tests themselves (nsys profile go test) would otherwise
// attach to them.
func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		run, ok := scenarios[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no scenario %q\n", name)
			os.Exit(2)
		}
		run()
		os.Exit(0)
	}
	if os.Getenv(keepToolEnv) == "" {
		os.Unsetenv(nvtx.InjectionEnv)
	}
	// Attach (or not) before any benchmark's timing starts.
	nvtx.Enabled()
	os.Exit(m.Run())
}

// needNoTool skips a test of the disabled path where a tool is attached.
func needNoTool(t *testing.T) {
	t.Helper()
	if nvtx.Enabled() {
		t.Skipf("a tool is attached (%s with %s set)", nvtx.InjectionEnv, keepToolEnv)
	}
}
