package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

// The generator under bad input: every failure is a clear error, and the
// output directory is left byte for byte as it was.

// realHeader returns the default version's cached cuda.h, or testdata's
// small header (also CUDA 12.4) where none is cached.
func realHeader(t *testing.T) []byte {
	t.Helper()
	if m, err := manifest.Load("../headers/versions.json"); err == nil {
		if src, _, err := m.DefaultVersion().ReadHeader(); err == nil {
			return src
		}
	}
	src, err := os.ReadFile("testdata/small.h")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// badRoot makes a module root whose one-version manifest (12.4) pins
// pinned, a header cache holding header for it, and an output directory
// with files in it. It returns the root and the output directory.
func badRoot(t *testing.T, header []byte, pinned string) (root, out string) {
	t.Helper()
	root = t.TempDir()
	m := manifest.Manifest{Default: "12.4", Versions: []manifest.Version{{
		Version: "12.4", Tag: "cuda12040", SHA256: pinned,
		Source: manifest.Source{Kind: manifest.SourceToolkit, Path: "include/cuda.h"},
	}}}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, "cache")
	for path, content := range map[string][]byte{
		"headers/versions.json":          data,
		"cache/12.4/cuda.h":              header,
		"out/zcu_cuda12040_types.go":     []byte("package cu // an older generation\n"),
		"out/zcu_cuda12040_symbols.txt":  []byte("cuInit\n"),
		"out/errors.go":                  []byte("package cu\n"),
		"out/sub/zcu_cuda12040_funcs.go": []byte("not the generator's\n"),
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOCUDA_HEADER_CACHE", cache)
	return root, filepath.Join(root, "out")
}

// snapshot returns every file and directory under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// failsCleanly runs the generator with args and checks that it fails with
// an error containing every one of want, leaving out as it was.
func failsCleanly(t *testing.T, out string, args []string, want ...string) error {
	t.Helper()
	before := snapshot(t, out)
	err := run(args)
	if err == nil {
		t.Fatalf("gen %s succeeded", strings.Join(args, " "))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	after := snapshot(t, out)
	for name, data := range before {
		if got, ok := after[name]; !ok || got != data {
			t.Errorf("%s changed or vanished", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		}
	}
	t.Logf("gen %s: %v", strings.Join(args, " "), err)
	return err
}

func TestBadInputTruncatedHeader(t *testing.T) {
	src := realHeader(t)
	cut := src[:len(src)/2]
	root, out := badRoot(t, cut, sha(cut)) // pinned: the parser, not the checksum, must object
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "CUDA 12.4", "cuda.h:")
}

func TestBadInputCorruptedHeader(t *testing.T) {
	src := bytes.Clone(realHeader(t))
	for i := 100; i < len(src); i += 997 {
		src[i] ^= 0x55
	}
	root, out := badRoot(t, src, sha(src))
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "CUDA 12.4", "cuda.h:")
}

func TestBadInputUnknownVersion(t *testing.T) {
	src := realHeader(t)
	root, out := badRoot(t, src, sha(src))
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "9.9"}, `unknown CUDA version "9.9"`, "12.4")
}

func TestBadInputChecksumMismatch(t *testing.T) {
	src := realHeader(t)
	changed := append(bytes.Clone(src), "\n/* edited */\n"...)
	root, out := badRoot(t, changed, sha(src))
	err := failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "SHA-256 mismatch", sha(src))
	var ce *manifest.ChecksumError
	if !errors.As(err, &ce) {
		t.Errorf("error %v is not a *manifest.ChecksumError", err)
	}
}

// The output directory cannot be made: its parent is a file. (Tests may
// run as root, for whom a read-only directory is writable.)
func TestBadInputUnwritableOutput(t *testing.T) {
	src := realHeader(t)
	root, _ := badRoot(t, src, sha(src))
	parent := filepath.Join(root, "afile")
	if err := os.WriteFile(parent, []byte("a file, not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(parent, "cu")
	failsCleanly(t, root, []string{"-root", root, "-out", out, "-version", "12.4"}, parent, "not a directory")
}
