//go:build linux && (amd64 || arm64)

package nvjitlink_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvjitlink"
	raw "github.com/gocuda/gocuda/generated/nvjitlink"
)

// TestVersionWithoutLibrary runs in a child process with GOCUDA_LIBNVJITLINK pointing
// nowhere: Version and LibraryPath return the load error, which matches
// ErrNoLibrary and names the path.
func TestVersionWithoutLibrary(t *testing.T) {
	const nowhere = "/nonexistent/libnvJitLink.so"
	if os.Getenv("GOCUDA_NVJITLINK_VERSION_CHILD") != "" {
		major, minor, err := nvjitlink.Version()
		if !errors.Is(err, nvjitlink.ErrNoLibrary) || major != 0 || minor != 0 {
			t.Fatalf("Version() = %d, %d, %v; want 0, 0 and an error matching ErrNoLibrary", major, minor, err)
		}
		path, err := nvjitlink.LibraryPath()
		if !errors.Is(err, nvjitlink.ErrNoLibrary) || path != "" || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("LibraryPath() = %q, %v; want \"\" and an error matching ErrNoLibrary naming %s", path, err, nowhere)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVersionWithoutLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_NVJITLINK_VERSION_CHILD=1", raw.LibraryEnv+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestVersionWithoutLibrary") {
		t.Fatalf("child did not pass:\n%s", out)
	}
}

// TestVersionAndLibraryPath checks the library the tests load: its file
// exists and is the one the soname or GOCUDA_LIBNVJITLINK names, and its major version
// is the soname's (libnvJitLink.so.N).
func TestVersionAndLibraryPath(t *testing.T) {
	needLibraries(t)
	major, minor, err := nvjitlink.Version()
	if err != nil || major <= 0 || minor < 0 {
		t.Fatalf("Version() = %d, %d, %v", major, minor, err)
	}
	path, err := nvjitlink.LibraryPath()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || !filepath.IsAbs(path) {
		t.Fatalf("LibraryPath() = %q, not an absolute path of a file: %v", path, err)
	}
	if env := os.Getenv(raw.LibraryEnv); env != "" {
		if want, err := os.Stat(env); err != nil || !os.SameFile(st, want) {
			t.Errorf("LibraryPath() = %q, not the file %s=%s names (%v)", path, raw.LibraryEnv, env, err)
		}
	}
	if base := filepath.Base(path); strings.HasPrefix(base, "libnvJitLink.so.") && !strings.HasPrefix(base, fmt.Sprintf("libnvJitLink.so.%d", major)) {
		t.Errorf("Version() = %d.%d, but the file is %s", major, minor, base)
	}
	t.Logf("nvJitLink %d.%d at %s", major, minor, path)
}
