//go:build linux && (amd64 || arm64)

package dynlib

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Each test builds Libraries of its own: loading is once per Library, not
// per process, so no test needs a child process. libc.so.6 stands for a
// library that opens: it has strlen and none of the functions made up here.

const testEnv = "GOCUDA_DYNLIB_TEST_LIB"

// newLib returns an unloaded Library of the functions named, with the
// environment variable unset for the test.
func newLib(t *testing.T, sonames []string, funcs ...string) *Library {
	t.Helper()
	t.Setenv(testEnv, "")
	l := &Library{Spec: Spec{
		Package: "testlib", Name: "TestLib", Env: testEnv,
		Header: "testlib.h", HeaderVersion: 12040, Sonames: sonames,
	}}
	for _, f := range funcs {
		l.Spec.Funcs = append(l.Spec.Funcs, Func{API: f, Symbol: f, Since: "13.0"})
	}
	l.Addrs = make([]uintptr, len(funcs))
	return l
}

func TestLoadErrorNamesWhatWasTried(t *testing.T) {
	tried := []string{"/nonexistent/libtest.so.1", "libgocuda-nonexistent.so.2"}
	l := newLib(t, tried, "strlen")
	err := l.Load()
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, l.ErrNoLibrary()) {
		t.Fatalf("Load: %v, want a *LoadError matching ErrNoLibrary", err)
	}
	if !slices.Equal(le.Tried, tried) || len(le.Reasons) != len(tried) {
		t.Fatalf("LoadError tried %q for %q (reasons %q)", le.Tried, tried, le.Reasons)
	}
	msg := err.Error()
	for _, want := range append([]string{"testlib: cannot load the TestLib library", testEnv}, tried...) {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	for _, r := range le.Reasons {
		if r == "" {
			t.Errorf("an empty reason: %q", le.Reasons)
		}
	}
	if l.Ensure(); l.Addrs[0] != 0 || l.Path() != "" {
		t.Errorf("after a failed load: Addrs %v, Path %q", l.Addrs, l.Path())
	}
	// Every later call returns the same error; nothing is retried.
	if l.Missing(0) != err || l.Load() != err {
		t.Errorf("Missing(0) = %v, Load() = %v, want the load's error", l.Missing(0), l.Load())
	}
	if _, perr := l.Proc("strlen"); perr != err {
		t.Errorf("Proc: %v, want the load's error", perr)
	}
	if errors.Is(err, l.ErrMissingFunction()) {
		t.Error("a LoadError matches ErrMissingFunction")
	}
}

func TestEnvOverridesSonames(t *testing.T) {
	l := newLib(t, []string{"/nonexistent/libtest.so.1"}, "strlen")
	t.Setenv(testEnv, "libc.so.6")
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	if l.Path() != "libc.so.6" || l.Addrs[0] == 0 {
		t.Errorf("Path %q, Addrs %v, want libc.so.6 with strlen", l.Path(), l.Addrs)
	}
	if fn, err := l.Proc("strlen"); fn != l.Addrs[0] || err != nil {
		t.Errorf("Proc(strlen) = %#x, %v", fn, err)
	}

	// The variable replaces the sonames: a bad path is the only one tried.
	l = newLib(t, []string{"libc.so.6"}, "strlen")
	t.Setenv(testEnv, "/nonexistent/override.so")
	var le *LoadError
	if err := l.Load(); !errors.As(err, &le) || !slices.Equal(le.Tried, []string{"/nonexistent/override.so"}) {
		t.Errorf("Load with %s set to a bad path: %v", testEnv, err)
	}
}

func TestSonamesInOrder(t *testing.T) {
	l := newLib(t, []string{"/nonexistent/libtest.so.1", "libc.so.6", "libm.so.6"}, "strlen")
	var preloaded []string
	l.Spec.Preload = func(path string) { preloaded = append(preloaded, path) }
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	if l.Path() != "libc.so.6" || !slices.Equal(preloaded, []string{"/nonexistent/libtest.so.1", "libc.so.6"}) {
		t.Errorf("opened %q after preloading %q; want libc.so.6, each path preloaded before it is tried", l.Path(), preloaded)
	}
}

func TestMissingFunction(t *testing.T) {
	l := newLib(t, []string{"libc.so.6"}, "strlen", "gocudaNoSuchFunction")
	l.Ensure()
	if l.Addrs[0] == 0 || l.Addrs[1] != 0 {
		t.Fatalf("Addrs %v, want strlen only", l.Addrs)
	}
	err := l.Missing(1)
	var me *MissingFunctionError
	if !errors.As(err, &me) || !errors.Is(err, l.ErrMissingFunction()) || errors.Is(err, l.ErrNoLibrary()) {
		t.Fatalf("Missing: %v, want a *MissingFunctionError matching ErrMissingFunction only", err)
	}
	if *me != (MissingFunctionError{Function: "gocudaNoSuchFunction", Since: "13.0", Library: "libc.so.6", lib: l}) {
		t.Errorf("MissingFunctionError %+v", *me)
	}
	if want := "testlib: gocudaNoSuchFunction is not in libc.so.6; it needs TestLib of CUDA 13.0 or later"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if _, perr := l.Proc("gocudaNoSuchFunction"); !errors.As(perr, &me) || me.Function != "gocudaNoSuchFunction" {
		t.Errorf("Proc of a missing function: %v", perr)
	}
	if _, perr := l.Proc("memcpy"); perr == nil || !strings.Contains(perr.Error(), "testlib: memcpy is not a function of the testlib.h of CUDA 12.4") {
		t.Errorf("Proc of a function not in the table: %v", perr)
	}
}

// TestSentinelsPerLibrary: an error of one library matches its own
// sentinels only, so errors.Is(err, cublas.ErrNoLibrary) is false for an
// error of NVRTC's.
func TestSentinelsPerLibrary(t *testing.T) {
	a := newLib(t, []string{"/nonexistent/a.so"})
	b := newLib(t, []string{"/nonexistent/b.so"})
	if a.ErrNoLibrary() != a.ErrNoLibrary() || a.ErrMissingFunction() != a.ErrMissingFunction() {
		t.Fatal("a sentinel changes between calls")
	}
	if a.ErrNoLibrary() == b.ErrNoLibrary() || a.ErrMissingFunction() == b.ErrMissingFunction() || a.ErrNoLibrary() == a.ErrMissingFunction() {
		t.Fatal("two sentinels are the same error")
	}
	if err := a.Load(); !errors.Is(err, a.ErrNoLibrary()) || errors.Is(err, b.ErrNoLibrary()) {
		t.Errorf("a's LoadError %v: matches a's ErrNoLibrary %t, b's %t", err, errors.Is(err, a.ErrNoLibrary()), errors.Is(err, b.ErrNoLibrary()))
	}
	if got := a.ErrNoLibrary().Error(); got != "TestLib library not found" {
		t.Errorf("ErrNoLibrary says %q", got)
	}
	// Errors made by hand belong to no library: they match no sentinel
	// and still print.
	for _, err := range []error{&LoadError{Tried: []string{"x"}}, &MissingFunctionError{Function: "f"}} {
		if errors.Is(err, a.ErrNoLibrary()) || errors.Is(err, a.ErrMissingFunction()) || err.Error() == "" {
			t.Errorf("%T made by hand: %q matches a sentinel", err, err)
		}
	}
}

// TestConcurrentFirstLoad starts many first calls at once: one loads, all
// see every entry point (run with -race).
func TestConcurrentFirstLoad(t *testing.T) {
	l := newLib(t, []string{"libc.so.6"}, "strlen", "memcpy", "gocudaNoSuchFunction")
	var preloads atomic.Int32
	l.Spec.Preload = func(string) { preloads.Add(1) }
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([][3]uintptr, 16)
	for g := range got {
		wg.Go(func() {
			<-start
			switch g % 4 {
			case 0:
				l.Ensure()
			case 1:
				_ = l.Load()
			case 2:
				_ = l.Path()
			case 3:
				_, _ = l.Proc("memcpy")
			}
			got[g] = [3]uintptr(l.Addrs)
			if g%2 == 0 {
				_ = l.Missing(2)
			}
		})
	}
	close(start)
	wg.Wait()
	if preloads.Load() != 1 {
		t.Errorf("loaded %d times", preloads.Load())
	}
	for g, a := range got {
		if a != got[0] || a[0] == 0 || a[1] == 0 || a[2] != 0 {
			t.Errorf("goroutine %d saw %v, goroutine 0 %v", g, a, got[0])
		}
	}
}

func TestTableMismatchPanics(t *testing.T) {
	l := newLib(t, []string{"libc.so.6"}, "strlen")
	l.Addrs = nil
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "0 entry points for 1 functions") {
			t.Errorf("recovered %v", r)
		}
	}()
	l.Ensure()
}

// TestPreloadSiblings builds a library that nothing on the search path
// provides, and checks that, once preloaded from the directory of a path
// about to be opened, dlopen finds it by its soname, as NVRTC finds its
// builtins.
func TestPreloadSiblings(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	dir := t.TempDir()
	const soname = "libgocuda-dynlib-sibling.so.1"
	src := filepath.Join(dir, "sibling.c")
	if err := os.WriteFile(src, []byte("int gocuda_sibling(void) { return 42; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-Wl,-soname,"+soname, "-o", filepath.Join(dir, soname), src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	if _, err := dlopen(soname); err == nil {
		t.Fatalf("%s opens by soname before the preload", soname)
	}
	preload := PreloadSiblings("libgocuda-dynlib-sibling.so.*")
	preload(soname) // a bare name: no directory to look in
	if _, err := dlopen(soname); err == nil {
		t.Fatal("a path without a directory preloaded")
	}
	preload(filepath.Join(dir, "libmain.so"))
	if _, err := dlopen(soname); err != nil {
		t.Errorf("after the preload: %v", err)
	}
}
