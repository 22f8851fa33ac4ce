package libtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Library is what the version checks need of a library package: its
// Version and LibraryPath, and its raw package's loader.
type Library struct {
	Name         string // in messages: "cuRAND"
	Env          string // the raw package's LibraryEnv
	ErrNoLibrary error
	Load         func() error
	Version      func() (int, error)
	LibraryPath  func() (string, error)
	// PerMajor is what Version's number counts per major version: 1000
	// for cuRAND's 10303, 10000 for cuBLAS's 120403.
	PerMajor int
}

// childEnv marks the child process of CheckWithoutLibrary.
const childEnv = "GOCUDA_LIBTEST_NO_LIBRARY_CHILD"

// CheckWithoutLibrary runs t's test again in a child process whose
// library path names a file that does not exist, and there checks that
// Version and LibraryPath return the load error: it matches
// ErrNoLibrary and names the path. A library loads once per process,
// hence the child. Call it from a test of its own, first: it returns true
// in the child, where the test may check more of the package without its
// library, and false in the parent once the child has passed.
func CheckWithoutLibrary(t *testing.T, l Library) (child bool) {
	t.Helper()
	nowhere := "/nonexistent/lib" + strings.ToLower(l.Name) + ".so"
	if os.Getenv(childEnv) == t.Name() {
		v, err := l.Version()
		if !errors.Is(err, l.ErrNoLibrary) || v != 0 {
			t.Fatalf("Version() = %d, %v; want 0 and an error matching ErrNoLibrary", v, err)
		}
		path, err := l.LibraryPath()
		if !errors.Is(err, l.ErrNoLibrary) || path != "" || !strings.Contains(err.Error(), nowhere) {
			t.Fatalf("LibraryPath() = %q, %v; want \"\" and an error matching ErrNoLibrary naming %s", path, err, nowhere)
		}
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), l.Env+"="+nowhere)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child did not pass:\n%s", out)
	}
	return false
}

// CheckVersionAndPath checks the installed library, or is Unavailable:
// its file exists at an absolute path, and its version's major number is
// the one of the file's soname (libcurand.so.N).
func CheckVersionAndPath(t *testing.T, l Library) {
	t.Helper()
	if err := l.Load(); err != nil {
		Unavailable(t, "no %s library: %v", l.Name, err)
	}
	v, err := l.Version()
	if err != nil || v <= 0 {
		t.Fatalf("Version() = %d, %v", v, err)
	}
	path, err := l.LibraryPath()
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
		if m, err := strconv.Atoi(major); err == nil && m != v/l.PerMajor {
			t.Errorf("Version() = %d (major %d), but the file is %s", v, v/l.PerMajor, base)
		}
	}
	t.Logf("%s %d at %s", l.Name, v, path)
}
