//go:build linux && (amd64 || arm64)

package fakenvtx_test

// The fake's behaviour as a tool is tested by package cuda/nvtx, whose
// child processes it attaches to; here, its build and its log reader.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/internal/fakenvtx"
)

// Both variants build, to different files, and a second build reuses the
// first.
func TestBuildGivesTwoVariants(t *testing.T) {
	dir := t.TempDir()
	tool, err := fakenvtx.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	noentry, err := fakenvtx.BuildWithoutEntry(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tool == noentry {
		t.Fatalf("both variants built to %s", tool)
	}
	for _, p := range []string{tool, noentry} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	again, err := fakenvtx.Build(dir)
	if err != nil || again != tool {
		t.Errorf("second build: %s, %v; first %s", again, err, tool)
	}
}

func TestLinesSplitsTheLog(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"one\n", []string{"one"}},
		{"one\ntwo\n", []string{"one", "two"}},
	} {
		p := filepath.Join(dir, "log")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := fakenvtx.Lines(p)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Lines of %q = %q, %v; want %q", c.text, got, err, c.want)
		}
	}
	if _, err := fakenvtx.Lines(filepath.Join(dir, "missing")); err == nil {
		t.Error("Lines of a missing file gave no error")
	}
}
