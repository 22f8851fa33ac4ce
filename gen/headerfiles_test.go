package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

// TestHeaderFilesReadOnce checks that a run reads each cached header from
// disk once: after the first read, a file changed on disk is not seen by
// the same run, though it is by a new one, whose checksum check refuses it.
func TestHeaderFilesReadOnce(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCUDA_HEADER_CACHE", cache)
	main, lib := []byte("#define CUDA_VERSION 12040\n"), []byte("int nvrtcX(void);\n")
	v := manifest.Version{Version: "12.4", Tag: "cuda12040", SHA256: sha(main),
		Headers: []manifest.Header{{Name: "nvrtc.h", Path: "include/nvrtc.h", SHA256: sha(lib)}}}
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(cache, "12.4", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cuda.h", main)
	write("nvrtc.h", lib)

	files := newHeaderFiles()
	for name, want := range map[string][]byte{"cuda.h": main, "nvrtc.h": lib} {
		got, path, err := files.read(v, name)
		if err != nil || string(got) != string(want) || path != filepath.Join(cache, "12.4", name) {
			t.Fatalf("%s: got %q at %s, %v", name, got, path, err)
		}
		write(name, []byte("/* changed on disk */\n"))
		if got, _, err := files.read(v, name); err != nil || string(got) != string(want) {
			t.Errorf("%s read again: got %q, %v; want what was read first", name, got, err)
		}
		var ce *manifest.ChecksumError
		if _, _, err := newHeaderFiles().read(v, name); !errors.As(err, &ce) {
			t.Errorf("%s in a new run: error %v, want a checksum mismatch", name, err)
		}
	}

	if _, _, err := files.read(v, "curand.h"); err == nil || !strings.Contains(err.Error(), "provides no curand.h") {
		t.Errorf("a header the version does not list: error %v", err)
	}
	other := v
	other.Version, other.Tag = "12.5", "cuda12050"
	if _, _, err := files.read(other, "cuda.h"); !errors.Is(err, manifest.ErrNotCached) {
		t.Errorf("another version's header, not cached: error %v, want ErrNotCached", err)
	}
}

// TestCheckVersion checks that a header whose version macro disagrees with
// the manifest is refused with an error naming both, and that CUDA_VERSION
// is held to the CUDA version the headers are parsed as, which for NCCL is
// not NCCL's own.
func TestCheckVersion(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	cuda, err := m.Lookup("12.4")
	if err != nil {
		t.Fatal(err)
	}
	nccl := m.Matrix(manifest.NCCL).DefaultVersion()
	with := m.ParsedWith(nccl)
	constant := func(name string, value int) []Constant {
		return []Constant{{Name: name, Value: strconv.Itoa(value)}}
	}
	for _, c := range []struct {
		name    string
		l       *library
		mod     Module
		v, with manifest.Version
		want    []string // empty: no error
	}{
		{"cuda.h agrees", cuLib, Module{CUDAVersion: 12040, Constants: constant("CUDA_VERSION", 12040)}, cuda, cuda, nil},
		{"cuda.h disagrees", cuLib, Module{CUDAVersion: 12050, Constants: constant("CUDA_VERSION", 12050)}, cuda, cuda,
			[]string{"cuda.h says CUDA_VERSION 12050", "CUDA 12.4 (12040)"}},
		{"cuda.h without CUDA_VERSION", cuLib, Module{}, cuda, cuda, []string{"cuda.h defines no CUDA_VERSION"}},
		{"a library's headers without CUDA_VERSION", cublasLib, Module{}, cuda, cuda, nil},
		{"a library's headers agree", cublasLib, Module{CUDAVersion: 12040}, cuda, cuda, nil},
		{"a library's headers disagree", cublasLib, Module{CUDAVersion: 12050}, cuda, cuda,
			[]string{"cublas_v2.h", "CUDA_VERSION 12050", "CUDA 12.4 (12040)"}},
		{"nccl.h agrees", ncclLib, Module{CUDAVersion: with.Number(), Constants: constant("NCCL_VERSION_CODE", nccl.Number())}, nccl, with, nil},
		{"nccl.h disagrees", ncclLib, Module{Constants: constant("NCCL_VERSION_CODE", nccl.Number()+1)}, nccl, with,
			[]string{"nccl.h says NCCL_VERSION_CODE " + strconv.Itoa(nccl.Number()+1), nccl.Name() + " (" + strconv.Itoa(nccl.Number()) + ")"}},
		{"nccl.h parsed with other CUDA headers", ncclLib, Module{CUDAVersion: with.Number() + 10, Constants: constant("NCCL_VERSION_CODE", nccl.Number())}, nccl, with,
			[]string{"nccl.h", "CUDA_VERSION " + strconv.Itoa(with.Number()+10), with.Name()}},
	} {
		err := checkVersion(c.l, &c.mod, c.v, c.with)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}
