//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/nvrtctest"
)

func TestMain(m *testing.M) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") == "" {
		nvrtctest.UseCached(HeaderVersion() / 1000)
	}
	os.Exit(m.Run())
}

// The loader itself (internal/dynlib) is tested there; these tests check
// this package's glue: its table, its sentinels, its messages, its proc.

// runChild runs test name in a child process with GOCUDA_LIBNVRTC=lib:
// the library is loaded once per process.
func runChild(t *testing.T, name, lib string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_NVRTC_CHILD=1", LibraryEnv+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

func TestLoadErrorNamesWhatWasTried(t *testing.T) {
	runChild(t, "TestChildNoLibrary", "/nonexistent/libnvrtc.so.12")
}

func TestChildNoLibrary(t *testing.T) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") == "" {
		t.Skip("run by TestLoadErrorNamesWhatWasTried")
	}
	var major, minor int32
	err := Version(&major, &minor)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Version: %v, want a *LoadError matching ErrNoLibrary", err)
	}
	if len(le.Tried) != 1 || le.Tried[0] != "/nonexistent/libnvrtc.so.12" || !strings.Contains(err.Error(), "/nonexistent/libnvrtc.so.12") {
		t.Errorf("LoadError %v does not name the path tried", err)
	}
	if want := "nvrtc: cannot load the NVRTC library (install it, or set GOCUDA_LIBNVRTC to its path): tried /nonexistent/libnvrtc.so.12 ("; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("LoadError says %q, want it to start %q", err, want)
	}
	if errors.Is(err, ErrMissingFunction) {
		t.Error("a LoadError matches ErrMissingFunction")
	}
	if _, err := GetErrorString(NVRTC_ERROR_COMPILATION); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("GetErrorString: %v, want ErrNoLibrary", err)
	}
}

func TestMissingFunction(t *testing.T) {
	// libc opens, and has none of NVRTC's functions.
	runChild(t, "TestChildMissingFunction", "libc.so.6")
}

func TestChildMissingFunction(t *testing.T) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") == "" {
		t.Skip("run by TestMissingFunction")
	}
	var major, minor int32
	err := Version(&major, &minor)
	var me *MissingFunctionError
	if !errors.As(err, &me) || !errors.Is(err, ErrMissingFunction) || me.Function != "nvrtcVersion" {
		t.Fatalf("Version: %v, want a *MissingFunctionError for nvrtcVersion", err)
	}
	if want := "nvrtc: nvrtcVersion is not in libc.so.6; it needs NVRTC of CUDA 11.8 or later"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if _, err := Proc("nvrtcCompileProgram"); !errors.As(err, &me) || me.Function != "nvrtcCompileProgram" {
		t.Errorf("Proc(nvrtcCompileProgram): %v", err)
	}
}

func TestProcOfUnknownName(t *testing.T) {
	_, err := Proc("nvrtcNoSuchFunction")
	want := "nvrtc: nvrtcNoSuchFunction is not a function of the nvrtc.h of CUDA "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Proc: %v, want %q…", err, want)
	}
}

// TestProcInlines: proc, on the path of every binding, stays an inlined
// atomic load, branch and array index (see dynlib.Library).
func TestProcInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package: skipped in -short mode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	out, err := exec.Command(goTool, "build", "-gcflags=-m=2", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m=2: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^\S*\bznvrtc_lib\.go:\d+:\d+: (can|cannot) inline proc\b.*$`).Find(out)
	if !bytes.Contains(line, []byte(": can inline proc")) {
		t.Errorf("proc no longer inlines: %q", line)
	}
	t.Logf("%s", line)
}

// BenchmarkProc measures proc on the loaded library; ns/proc is one call.
func BenchmarkProc(b *testing.B) {
	_ = Load()
	var s uintptr
	for b.Loop() {
		for i := range len(procTable) {
			s += proc(i)
		}
	}
	sinkProc = s
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(procTable)), "ns/proc")
}

var sinkProc uintptr

func TestResultError(t *testing.T) {
	if resultError(NVRTC_SUCCESS) != nil {
		t.Error("NVRTC_SUCCESS is an error")
	}
	err := resultError(NVRTC_ERROR_COMPILATION)
	if !errors.Is(err, NVRTC_ERROR_COMPILATION) || err.Error() != "NVRTC_ERROR_COMPILATION (6)" {
		t.Errorf("resultError = %v", err)
	}
}

// TestLibrary calls the real library, from the header cache or the system.
func TestLibrary(t *testing.T) {
	if err := Load(); err != nil {
		if nvrtctest.Required(HeaderVersion() / 1000) {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: %v", err)
		}
		t.Skipf("no NVRTC library (make headers caches one on amd64): %v", err)
	}
	var major, minor int32
	if err := Version(&major, &minor); err != nil {
		t.Fatal(err)
	}
	if int(major) != HeaderVersion()/1000 {
		t.Errorf("library %s is NVRTC %d.%d, the bindings follow %d", LibraryPath(), major, minor, HeaderVersion())
	}
	p, err := GetErrorString(NVRTC_ERROR_COMPILATION)
	if err != nil || p == nil {
		t.Fatalf("GetErrorString: %v, %v", p, err)
	}
	var n int32
	if err := GetNumSupportedArchs(&n); err != nil || n == 0 {
		t.Errorf("GetNumSupportedArchs: %d, %v", n, err)
	}
	t.Logf("%s: NVRTC %d.%d, %d architectures", LibraryPath(), major, minor, n)
}
