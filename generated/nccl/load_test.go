//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// The loader itself (internal/dynlib) is tested there; these tests check
// this package's glue: its table, its sentinels, its messages, its proc,
// and that they run without NCCL or a GPU.

const childEnv = "GOCUDA_NCCL_CHILD"

// runChild runs test name in a child process with GOCUDA_LIBNCCL=lib: the
// library is loaded once per process.
func runChild(t *testing.T, name, lib string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", LibraryEnv+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

func TestLoadErrorNamesWhatWasTried(t *testing.T) {
	runChild(t, "TestChildNoLibrary", "/nonexistent/libnccl.so.2")
}

func TestChildNoLibrary(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestLoadErrorNamesWhatWasTried")
	}
	var v int32
	err := GetVersion(&v)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("GetVersion: %v, want a *LoadError matching ErrNoLibrary", err)
	}
	if len(le.Tried) != 1 || le.Tried[0] != "/nonexistent/libnccl.so.2" {
		t.Errorf("LoadError %v does not name the path tried", err)
	}
	if want := "nccl: cannot load the NCCL library (install it, or set GOCUDA_LIBNCCL to its path): tried /nonexistent/libnccl.so.2 ("; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("LoadError says %q, want it to start %q", err, want)
	}
	if errors.Is(err, ErrMissingFunction) {
		t.Error("a LoadError matches ErrMissingFunction")
	}
	var id NcclUniqueId
	if err := GetUniqueId(&id); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("GetUniqueId: %v, want ErrNoLibrary", err)
	}
	if _, err := GetErrorString(NcclInvalidArgument); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("GetErrorString: %v, want ErrNoLibrary", err)
	}
	if Load() == nil || LibraryPath() != "" {
		t.Errorf("Load() = %v, LibraryPath() = %q without a library", Load(), LibraryPath())
	}
}

func TestMissingFunction(t *testing.T) {
	// libc opens, and has none of NCCL's functions.
	runChild(t, "TestChildMissingFunction", "libc.so.6")
}

func TestChildMissingFunction(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestMissingFunction")
	}
	var v int32
	err := GetVersion(&v)
	var me *MissingFunctionError
	if !errors.As(err, &me) || !errors.Is(err, ErrMissingFunction) || me.Function != "ncclGetVersion" {
		t.Fatalf("GetVersion: %v, want a *MissingFunctionError for ncclGetVersion", err)
	}
	// NCCL's own version numbers, not CUDA's.
	if want := "nccl: ncclGetVersion is not in libc.so.6; it needs NCCL 2.22.3 or later"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if _, err := Proc("ncclAllReduce"); !errors.As(err, &me) || me.Function != "ncclAllReduce" {
		t.Errorf("Proc(ncclAllReduce): %v", err)
	}
}

func TestProcOfUnknownName(t *testing.T) {
	_, err := Proc("ncclNoSuchFunction")
	want := "nccl: ncclNoSuchFunction is not a function of the nccl.h of NCCL 2."
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Proc: %v, want %q…", err, want)
	}
}

// TestResultIsError: a status is its own error value, nil for success.
func TestResultIsError(t *testing.T) {
	if resultError(NcclSuccess) != nil {
		t.Error("ncclSuccess is an error")
	}
	err := resultError(NcclInProgress)
	if !errors.Is(err, NcclInProgress) || errors.Is(err, NcclSystemError) {
		t.Errorf("resultError(ncclInProgress) = %v", err)
	}
	if got, want := err.Error(), "ncclInProgress (7)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestUniqueIdIsItsBytes: ncclUniqueId crosses by value as NCCL_UNIQUE_ID_BYTES
// bytes, the form the safe package hands between processes.
func TestUniqueIdIsItsBytes(t *testing.T) {
	if unsafe.Sizeof(NcclUniqueId{}) != NCCL_UNIQUE_ID_BYTES || unsafe.Alignof(NcclUniqueId{}) != 1 {
		t.Errorf("NcclUniqueId: %d bytes aligned to %d, want %d aligned to 1", unsafe.Sizeof(NcclUniqueId{}), unsafe.Alignof(NcclUniqueId{}), NCCL_UNIQUE_ID_BYTES)
	}
	if HeaderVersion() < 22203 {
		t.Errorf("HeaderVersion() = %d, want NCCL_VERSION_CODE of 2.22.3 or later", HeaderVersion())
	}
}
