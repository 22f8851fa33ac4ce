//go:build linux && (amd64 || arm64)

package solver_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// TestVersionWithoutLibrary runs in a child process with
// GOCUDA_LIBCUSOLVER pointing nowhere: Version and LibraryPath return the
// load error, which matches ErrNoLibrary and names the path.
func TestVersionWithoutLibrary(t *testing.T) {
	const child = "GOCUDA_SOLVER_VERSION_CHILD"
	const nowhere = "/nonexistent/libcusolver.so"
	if os.Getenv(child) != "" {
		v, err := solver.Version()
		if !errors.Is(err, cusolver.ErrNoLibrary) || v != 0 {
			t.Fatalf("Version() = %d, %v; want 0 and an error matching ErrNoLibrary", v, err)
		}
		path, err := solver.LibraryPath()
		if !errors.Is(err, cusolver.ErrNoLibrary) || path != "" || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("LibraryPath() = %q, %v; want \"\" and an error matching ErrNoLibrary naming %s", path, err, nowhere)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVersionWithoutLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", cusolver.LibraryEnv+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestVersionWithoutLibrary") {
		t.Fatalf("child did not pass:\n%s", out)
	}
}

// TestVersionAndLibraryPath checks the installed library: its file
// exists, and its version's major number is the one of the file's soname
// (libcusolver.so.N).
func TestVersionAndLibraryPath(t *testing.T) {
	if err := cusolver.Load(); err != nil {
		libtest.Unavailable(t, "no cuSOLVER library: %v", err)
	}
	v, err := solver.Version()
	if err != nil || v <= 0 {
		t.Fatalf("Version() = %d, %v", v, err)
	}
	path, err := solver.LibraryPath()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(path) {
		t.Errorf("LibraryPath() = %q, not an absolute path", path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("LibraryPath() = %q: %v", path, err)
	}
	if _, rest, ok := strings.Cut(filepath.Base(path), ".so."); ok {
		major, _, _ := strings.Cut(rest, ".")
		if m, err := strconv.Atoi(major); err == nil && m != v/1000 {
			t.Errorf("Version() = %d (major %d), but the file is %s", v, v/1000, filepath.Base(path))
		}
	}
	t.Logf("cuSOLVER %d at %s", v, path)
}
