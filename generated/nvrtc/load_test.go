//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"errors"
	"os"
	"os/exec"
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
}

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
