//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/jpeg"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// TestWithoutLibrary runs in a child process with GOCUDA_LIBNVJPEG
// pointing nowhere: Version, LibraryPath and New return the load error,
// which matches ErrNoLibrary and names the path, and New leaves no
// stream behind (on the fake driver, or a GPU).
func TestWithoutLibrary(t *testing.T) {
	const child = "GOCUDA_JPEG_NOLIB_CHILD"
	const nowhere = "/nonexistent/libnvjpeg.so"
	if os.Getenv(child) != "" {
		if _, _, _, err := jpeg.Version(); !errors.Is(err, nvjpeg.ErrNoLibrary) {
			t.Fatalf("Version: %v; want ErrNoLibrary", err)
		}
		path, err := jpeg.LibraryPath()
		if !errors.Is(err, nvjpeg.ErrNoLibrary) || path != "" || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("LibraryPath() = %q, %v; want \"\" and ErrNoLibrary naming %s", path, err, nowhere)
		}
		_, s := libtest.Stream(t)
		d, err := jpeg.New(s)
		if !errors.Is(err, nvjpeg.ErrNoLibrary) || d != nil {
			t.Fatalf("New = %v, %v; want nil and ErrNoLibrary", d, err)
		}
		if n := cuda.LiveObjects().LibraryObjects; n != 0 {
			t.Fatalf("%d library objects live after a failed New", n)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWithoutLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1", nvjpeg.LibraryEnv+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestWithoutLibrary") {
		t.Fatalf("child did not pass (skipped?):\n%s", out)
	}
}

func TestVersionAndLibraryPath(t *testing.T) {
	major, minor, patch, err := jpeg.Version()
	if errors.Is(err, nvjpeg.ErrNoLibrary) {
		libtest.Unavailable(t, "no nvJPEG library: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	path, err := jpeg.LibraryPath()
	if err != nil || !strings.Contains(path, "libnvjpeg") {
		t.Fatalf("LibraryPath() = %q, %v", path, err)
	}
	if major < 11 || minor < 0 || patch < 0 {
		t.Fatalf("Version() = %d.%d.%d", major, minor, patch)
	}
	t.Logf("nvJPEG %d.%d.%d from %s", major, minor, patch, path)
}
