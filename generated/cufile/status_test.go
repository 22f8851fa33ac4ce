//go:build linux && (amd64 || arm64)

package cufile

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/cbuild"
)

//go:embed testdata/statusfake.c
var statusFake embed.FS

// TestMain points the package at a stand-in library built from
// testdata/statusfake.c, whose functions return known statuses; the
// library loads once per process, so before any test calls it.
func TestMain(m *testing.M) {
	lib := cbuild.Library{Name: "cufile-statusfake", What: "the stand-in cuFile", Sources: statusFake, Dir: "testdata", Flags: []string{"-shared", "-fPIC", "-O1"}}
	path, err := lib.Build("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cufile tests:", err)
		os.Exit(2)
	}
	os.Setenv(LibraryEnv, path)
	os.Exit(m.Run())
}

// TestStatusStructComesBackWhole calls through the bindings functions that
// return CUfileError_t by value and checks each field arrives: success is
// nil, cuFile's own code is matched by errors.Is and named in the message,
// and the driver's code it carries is matched too.
func TestStatusStructComesBackWhole(t *testing.T) {
	err := DriverClose()
	var st CUfileError_t
	if !errors.As(err, &st) || st.Err != CU_FILE_DRIVER_NOT_INITIALIZED || st.Cu_err != 0 {
		t.Fatalf("DriverClose before DriverOpen = %#v, want CU_FILE_DRIVER_NOT_INITIALIZED", err)
	}
	if !errors.Is(err, CU_FILE_DRIVER_NOT_INITIALIZED) || errors.Is(err, CU_FILE_CUDA_DRIVER_ERROR) || !strings.Contains(err.Error(), "CU_FILE_DRIVER_NOT_INITIALIZED (5001)") {
		t.Errorf("errors.Is or the message of %v do not follow its code", err)
	}
	if err := DriverOpen(); err != nil {
		t.Fatalf("DriverOpen = %v, want nil for CU_FILE_SUCCESS", err)
	}
	if err := DriverClose(); err != nil {
		t.Fatalf("DriverClose after DriverOpen = %v, want nil", err)
	}
	err = BufDeregister(nil)
	if !errors.Is(err, CU_FILE_CUDA_DRIVER_ERROR) || !errors.Is(err, cu.CUDA_ERROR_INVALID_CONTEXT) || errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("BufDeregister = %v, want CU_FILE_CUDA_DRIVER_ERROR carrying CUDA_ERROR_INVALID_CONTEXT", err)
	}
	if !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_CONTEXT") {
		t.Errorf("message %q does not name the driver's code", err)
	}
	// A function the stand-in lacks is missing, not a crash.
	if err := DriverSetMaxCacheSize(1); !errors.Is(err, ErrMissingFunction) {
		t.Errorf("DriverSetMaxCacheSize on a library without it = %v, want ErrMissingFunction", err)
	}
}
