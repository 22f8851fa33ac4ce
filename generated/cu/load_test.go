//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The driver is loaded once per process, so each scenario runs in a child
// process of the test binary with its own GOCUDA_LIBCUDA.
const childEnv = "GOCUDA_TEST_CHILD"

func runChild(t *testing.T, test, lib string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", LibraryEnv+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s failed: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child %s did not pass:\n%s", test, out)
	}
	return string(out)
}

func TestNoDriver(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	out := runChild(t, "TestChildNoDriver", lib)
	if !strings.Contains(out, lib) {
		t.Errorf("the error does not name the path tried:\n%s", out)
	}
}

func TestChildNoDriver(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as a child of TestNoDriver")
	}
	err := Init(0)
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("Init: got %v, want an error matching ErrNoDriver", err)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Tried) != 1 {
		t.Fatalf("Init: got %#v, want a *LoadError with one path", err)
	}
	var s CUstream
	if err2 := StreamCreate(&s, 0); !errors.Is(err2, ErrNoDriver) {
		t.Fatalf("StreamCreate: got %v, want ErrNoDriver", err2)
	}
	if DriverVersionLoaded() != 0 {
		t.Fatal("a driver version without a driver")
	}
	t.Log(err)
}

// A stand-in driver that has cuInit and cuDriverGetVersion and nothing else:
// no cuGetProcAddress, so lookups fall back to dlsym, and every other
// function is missing.
const stubDriver = `
int cuDriverGetVersion(int *v) { *v = 11040; return 0; }
int cuInit(unsigned int flags) { return flags == 0 ? 0 : 1; }
`

func TestMissingFunction(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build the stand-in driver")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "stub.c")
	lib := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(src, []byte(stubDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("build stub driver: %v\n%s", err, out)
	}
	runChild(t, "TestChildMissingFunction", lib)
}

func TestChildMissingFunction(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as a child of TestMissingFunction")
	}
	if err := Init(0); err != nil {
		t.Fatalf("Init through dlsym: %v", err)
	}
	if err := Init(1); err != CUDA_ERROR_INVALID_VALUE || !errors.Is(err, CUDA_ERROR_INVALID_VALUE) {
		t.Fatalf("Init(1): got %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
	if v := DriverVersionLoaded(); v != 11040 {
		t.Fatalf("driver version %d, want 11040", v)
	}
	var p CUdeviceptr
	err := MemAlloc(&p, 1)
	var mf *MissingFunctionError
	if !errors.As(err, &mf) || !errors.Is(err, ErrMissingFunction) {
		t.Fatalf("MemAlloc: got %v, want a *MissingFunctionError", err)
	}
	if mf.Function != "cuMemAlloc" || mf.Symbol != "cuMemAlloc_v2" || mf.Since == "" {
		t.Fatalf("MemAlloc: error %+v does not name the function, its symbol and its version", mf)
	}
	if !strings.Contains(err.Error(), "CUDA 11.4") {
		t.Errorf("error %q does not give the driver's version", err)
	}
	t.Log(err)

	if fn, err := Proc("cuInit"); err != nil || fn == 0 {
		t.Errorf("Proc(cuInit) = %#x, %v; want the stand-in's entry point", fn, err)
	}
	if fn, err := Proc("cuMemAlloc"); fn != 0 || !errors.As(err, &mf) || mf.Symbol != "cuMemAlloc_v2" {
		t.Errorf("Proc(cuMemAlloc) = %#x, %v; want a *MissingFunctionError for cuMemAlloc_v2", fn, err)
	}
	if fn, err := Proc("cuNoSuchFunction"); fn != 0 || err == nil || !strings.Contains(err.Error(), "cuNoSuchFunction") {
		t.Errorf("Proc of an unknown name = %#x, %v; want an error naming it", fn, err)
	}
}

func TestResultError(t *testing.T) {
	if resultError(CUDA_SUCCESS) != nil {
		t.Fatal("CUDA_SUCCESS is an error")
	}
	err := resultError(CUDA_ERROR_NOT_READY)
	if !errors.Is(err, CUDA_ERROR_NOT_READY) || err.Error() != "CUDA_ERROR_NOT_READY (600)" {
		t.Fatalf("got %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = resultError(CUDA_ERROR_NOT_READY) }); n != 0 {
		t.Fatalf("resultError allocates %v times", n)
	}
	if s := CUresult(123456).String(); s != "CUresult(123456)" {
		t.Fatalf("unknown value prints %q", s)
	}
}
