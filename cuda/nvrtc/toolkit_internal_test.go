//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIncludeArgs(t *testing.T) {
	found := func() ([]string, error) { return []string{"/tk/include", "/tk/include/cccl"}, nil }
	var c config
	WithIncludeDir("/mine")(&c)
	WithToolkitHeaders()(&c)
	WithIncludeDir("/also mine")(&c)
	got, err := c.includeArgs(found)
	want := []string{"-I/mine", "-I/also mine", "-I/tk/include", "-I/tk/include/cccl"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("includeArgs = %q, %v; want %q", got, err, want)
	}

	none := errors.New("none found")
	if _, err := c.includeArgs(func() ([]string, error) { return nil, none }); !errors.Is(err, none) {
		t.Errorf("includeArgs with no toolkit: %v, want the finder's error", err)
	}
	var empty config
	WithIncludeDir("")(&empty)
	if _, err := empty.includeArgs(found); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("includeArgs of an empty directory: %v, want ErrInvalidArgument", err)
	}
	var plain config
	if got, err := plain.includeArgs(func() ([]string, error) { t.Fatal("looked for a toolkit unasked"); return nil, nil }); err != nil || got != nil {
		t.Errorf("includeArgs without options = %q, %v", got, err)
	}
}

func TestToolkitIncludeDirsTakesTheFirstWithTheHeaders(t *testing.T) {
	bare, old, cuda13 := t.TempDir(), t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(old, "cuda_fp16.h"), filepath.Join(cuda13, "cuda_fp16.h")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(cuda13, "cccl"), 0o755); err != nil {
		t.Fatal(err)
	}
	absent := filepath.Join(bare, "absent")
	for _, tt := range []struct {
		candidates, want []string
	}{
		{[]string{absent, bare, old, cuda13}, []string{old}},
		{[]string{cuda13, old}, []string{cuda13, filepath.Join(cuda13, "cccl")}},
	} {
		got, err := toolkitIncludeDirs(tt.candidates)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("toolkitIncludeDirs(%q) = %q, %v; want %q", tt.candidates, got, err, tt.want)
		}
	}
	_, err := toolkitIncludeDirs([]string{absent, bare})
	if !errors.Is(err, ErrNoToolkitHeaders) || !strings.Contains(err.Error(), absent) || !strings.Contains(err.Error(), bare) {
		t.Errorf("toolkitIncludeDirs of no toolkit: %v, want ErrNoToolkitHeaders naming both places", err)
	}
}
