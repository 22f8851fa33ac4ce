package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

const fileHeader = "#define CUDA_VERSION 12080\n"

// fileManifest is a matrix of a file version (12.8, whose header is pinned
// to fileHeader and expected at path) and a toolkit version.
func fileManifest(t *testing.T, path string) string {
	m := fmt.Sprintf(`{"default": "12.8", "versions": [
		{"version": "12.8", "tag": "cuda12080", "source": {"kind": "file", "path": %q}, "sha256": %q},
		{"version": "13.0", "tag": "cuda13000", "source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": %q}]}`,
		path, sum(fileHeader), sum(fakeHeader))
	p := filepath.Join(t.TempDir(), "versions.json")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "cuda.h")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunFile checks where a file version's header is read from (the
// manifest's path, the variable, the flag, in rising precedence) and that a
// missing one is skipped unless named, a wrong one fails.
func TestRunFile(t *testing.T) {
	v := manifest.Version{Version: "12.8", Tag: "cuda12080", SHA256: sum(fileHeader)}
	good := writeFile(t, fileHeader)
	wrong := writeFile(t, "#define CUDA_VERSION 12040\n")
	absent := filepath.Join(t.TempDir(), "absent", "cuda.h")
	noToolkit := []string{"-cuda-home", t.TempDir()}

	tests := []struct {
		name     string
		manifest string // the manifest's path for 12.8
		env      string // $GOCUDA_HEADER_CUDA12080
		args     []string
		code     int
		stdout   string
		stderr   string
		cached   bool
	}{
		{"at the manifest's path", good, "", []string{"-v"}, 0, "CUDA 12.8: ok ", "CUDA 13.0: skipped: no toolkit", true},
		{"missing, all", absent, "", []string{"-v"}, 0, "", "CUDA 12.8: skipped: no header at " + absent + " (set -file 12.8=PATH or $GOCUDA_HEADER_CUDA12080)", false},
		{"missing, all, summed up", absent, "", nil, 0, "not on this machine: CUDA 12.8, CUDA 13.0 (-v says", "", false},
		{"missing, named", absent, "", []string{"-version", "12.8"}, 1, "", "CUDA 12.8: error: no header at " + absent, false},
		{"missing, no skip", absent, "", []string{"-skip-missing=false"}, 1, "", "CUDA 12.8: error: no header at", false},
		{"wrong header", wrong, "", nil, 1, "", "CUDA 12.8: error: " + wrong + ": SHA-256 mismatch", false},
		{"variable", absent, good, nil, 0, "CUDA 12.8: fetched ", "", true},
		{"flag over variable", absent, wrong, []string{"-file", "12.8=" + good}, 0, "CUDA 12.8: fetched ", "", true},
		{"flag by tag", wrong, "", []string{"-file", "cuda12080=" + good}, 0, "CUDA 12.8: fetched ", "", true},
		{"flag for a toolkit version", good, "", []string{"-file", "13.0=" + good}, 2, "", "fetch: -file: CUDA 13.0 comes from a toolkit source, not a file", false},
		{"flag for an unknown version", good, "", []string{"-file", "9.9=" + good}, 2, "", "fetch: -file: unknown CUDA version", false},
		{"flag without a path", good, "", []string{"-file", "12.8"}, 2, "", "want VERSION=PATH", false},
		{"flag twice", good, "", []string{"-file", "12.8=" + good, "-file", "cuda12080=" + good}, 2, "", "CUDA 12.8 given twice", false},
		{"a directory", filepath.Dir(good), "", nil, 1, "", "is not a regular file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
			t.Setenv("GOCUDA_HEADER_CUDA12080", tt.env)
			args := append([]string{"-manifest", fileManifest(t, tt.manifest)}, noToolkit...)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(args, tt.args...), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
			data, _, err := v.ReadHeader()
			if (err == nil) != tt.cached || err == nil && string(data) != fileHeader {
				t.Errorf("after the run: ReadHeader = %q, %v", data, err)
			}
		})
	}
}

func TestImportFileRefusesFIFO(t *testing.T) {
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	v := manifest.Version{Version: "12.8", Tag: "cuda12080", SHA256: sum(fileHeader)}
	// Opening a FIFO with no writer would block: the test hangs if it is.
	if _, err := importFile(v, p); err == nil || errors.Is(err, errNoFile) {
		t.Errorf("importFile of a FIFO: %v, want an error that is not errNoFile", err)
	}
}

// TestFileVersionHeadersAreReadBesideItsMainHeader: the headers a file
// version lists come from the directory its main header was read from, so
// a flag or variable that moves the main header moves them too, and a
// wrong one fails the fetch.
func TestFileVersionHeadersAreReadBesideItsMainHeader(t *testing.T) {
	const main, extra = "#define CUDNN_VERSION 91400\n", "#define CUDNN_MAJOR 9\n"
	m := fmt.Sprintf(`{"default": "13.0", "versions": [
		{"version": "13.0", "tag": "cuda13000", "source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": %q}],
		"cudnn": [{"version": "9.14.0", "tag": "cudnn91400", "source": {"kind": "file", "path": "/nowhere/cudnn.h"}, "sha256": %q,
			"headers": [{"name": "cudnn_version.h", "path": "/nowhere/cudnn_version.h", "sha256": %q}]}]}`,
		sum(fakeHeader), sum(main), sum(extra))
	mp := filepath.Join(t.TempDir(), "versions.json")
	if err := os.WriteFile(mp, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, extra string
		code        int
	}{{"right", extra, 0}, {"wrong", "#define CUDNN_MAJOR 8\n", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("GOCUDA_HEADER_CACHE", cache)
			dir := t.TempDir()
			for name, content := range map[string]string{"cudnn.h": main, "cudnn_version.h": tt.extra} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("GOCUDA_HEADER_CUDNN91400", filepath.Join(dir, "cudnn.h"))
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"-manifest", mp, "-cuda-home", t.TempDir()}, &stdout, &stderr)
			got, err := os.ReadFile(filepath.Join(cache, "cudnn-9.14.0", "cudnn_version.h"))
			if code != tt.code || tt.code == 0 && (err != nil || string(got) != extra) || tt.code != 0 && !strings.Contains(stderr.String(), "SHA-256 mismatch") {
				t.Errorf("exit %d (want %d), cached cudnn_version.h %q (%v), stderr %q", code, tt.code, got, err, stderr.String())
			}
		})
	}
}
