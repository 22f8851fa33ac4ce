//go:build linux && (amd64 || arm64)

package sparse_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// TestVersionWithoutLibrary runs in a child process with
// GOCUDA_LIBCUSPARSE pointing nowhere: Version, LibraryPath and New
// return the load error, which matches ErrNoLibrary and names the path.
func TestVersionWithoutLibrary(t *testing.T) {
	const child = "GOCUDA_SPARSE_VERSION_CHILD"
	const nowhere = "/nonexistent/libcusparse.so"
	if os.Getenv(child) != "" {
		v, err := sparse.Version()
		if !errors.Is(err, cusparse.ErrNoLibrary) || v != 0 {
			t.Fatalf("Version() = %d, %v; want 0 and an error matching ErrNoLibrary", v, err)
		}
		path, err := sparse.LibraryPath()
		if !errors.Is(err, cusparse.ErrNoLibrary) || path != "" || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("LibraryPath() = %q, %v; want \"\" and an error matching ErrNoLibrary naming %s", path, err, nowhere)
		}
		_, s := libtest.Stream(t)
		if h, err := sparse.New(s); !errors.Is(err, cusparse.ErrNoLibrary) || h != nil {
			t.Fatalf("New = %v, %v; want nil and an error matching ErrNoLibrary", h, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVersionWithoutLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", cusparse.LibraryEnv+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestVersionWithoutLibrary") {
		t.Fatalf("child did not pass:\n%s", out)
	}
}

// TestVersionAndLibraryPath checks the installed library: its file
// exists, its version's major number is the one of the file's soname
// (libcusparse.so.N), and a handle reports the same version.
func TestVersionAndLibraryPath(t *testing.T) {
	if err := cusparse.Load(); err != nil {
		libtest.Unavailable(t, "no cuSPARSE library: %v", err)
	}
	v, err := sparse.Version()
	if err != nil || v <= 0 {
		t.Fatalf("Version() = %d, %v", v, err)
	}
	path, err := sparse.LibraryPath()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(path) {
		t.Errorf("LibraryPath() = %q, not an absolute path", path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("LibraryPath() = %q: %v", path, err)
	}
	base := filepath.Base(path)
	if _, rest, ok := strings.Cut(base, ".so."); ok {
		major, _, _ := strings.Cut(rest, ".")
		if m, err := strconv.Atoi(major); err == nil && m != v/1000 {
			t.Errorf("Version() = %d (major %d), but the file is %s", v, v/1000, base)
		}
	}
	_, s := libtest.Stream(t)
	h := newHandle(t, s)
	hv, err := h.Version()
	if err != nil || hv != v {
		t.Errorf("Handle.Version() = %d, %v; Version() = %d", hv, err, v)
	}
	t.Logf("cuSPARSE %d at %s", v, path)
}
