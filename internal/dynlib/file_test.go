//go:build linux && (amd64 || arm64)

package dynlib

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileIsTheFileTheSonameFound(t *testing.T) {
	l := newLib(t, []string{"libgocuda-nonexistent.so.1", "libc.so.6"}, "strlen")
	file, err := l.File()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(file) || !strings.HasPrefix(filepath.Base(file), "libc") {
		t.Fatalf("File() = %q, want the absolute path of libc (Path() %q)", file, l.Path())
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("File() = %q, which does not exist: %v", file, err)
	}

	// The same file named by the environment variable is what File reports.
	byEnv := newLib(t, []string{"libgocuda-nonexistent.so.1"}, "strlen")
	t.Setenv(testEnv, file)
	got, err := byEnv.File()
	if err != nil || got != file {
		t.Fatalf("File() with %s=%s: %q, %v", testEnv, file, got, err)
	}
}

func TestFileOfALibraryThatDoesNotLoad(t *testing.T) {
	l := newLib(t, []string{"libgocuda-nonexistent.so.1"}, "strlen")
	file, err := l.File()
	if !errors.Is(err, l.ErrNoLibrary()) || file != "" {
		t.Fatalf("File() = %q, %v; want \"\" and an error matching ErrNoLibrary", file, err)
	}
}

func TestLoadedFileLoadsNothing(t *testing.T) {
	// libgocuda-nonexistent exists nowhere; libanl.so.1, where it exists,
	// is a library a Go test binary has no reason to load.
	for _, name := range []string{"libgocuda-nonexistent.so.1", "libanl.so.1", ""} {
		if file, err := LoadedFile(name); err == nil {
			t.Errorf("LoadedFile(%q) = %q, want an error: nothing loaded it", name, file)
		}
	}
}

// TestExportsFindsOnlyDefinedSymbols: a library that loads is asked for
// a symbol it defines and one it does not; a path that does not load
// exports nothing.
func TestExportsFindsOnlyDefinedSymbols(t *testing.T) {
	if !Exports("libc.so.6", "malloc") {
		t.Error("libc.so.6 does not export malloc")
	}
	if Exports("libc.so.6", "gocuda_no_such_symbol") {
		t.Error("libc.so.6 exports a symbol nobody defines")
	}
	if Exports("/nonexistent/libx.so", "malloc") || Exports("", "malloc") {
		t.Error("a library that does not load exports something")
	}
}
