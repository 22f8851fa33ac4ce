package cbuild

import (
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSharedSourcesAreBuiltInAndNamesMayNotRepeat builds a library from
// its own source and a shared one that defines what the first calls, and
// refuses a shared source whose name the library's own already has.
func TestSharedSourcesAreBuiltInAndNamesMayNotRepeat(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	own := fstest.MapFS{"c/own.c": {Data: []byte("#include \"shared.h\"\nint own(void) { return shared() + 1; }\n")}}
	shared := fstest.MapFS{
		"s/shared.h": {Data: []byte("int shared(void);\n")},
		"s/shared.c": {Data: []byte("#include \"shared.h\"\nint shared(void) { return 41; }\n")},
	}
	l := Library{Name: "cbuildtest", What: "a test library", Sources: own, Dir: "c", Flags: []string{"-shared", "-fPIC", "-Wl,--no-undefined"},
		Shared: []Sources{{FS: shared, Dir: "s"}}}
	if _, err := l.Build(t.TempDir()); err != nil {
		t.Fatalf("Build with a shared source: %v", err)
	}
	l.Shared = append(l.Shared, Sources{FS: fstest.MapFS{"x/own.c": {Data: []byte("int x;\n")}}, Dir: "x"})
	if _, err := l.Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), "two sources named own.c") {
		t.Fatalf("Build with a repeated name = %v, want an error naming it", err)
	}
}
