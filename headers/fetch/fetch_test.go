package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocuda/gocuda/internal/manifest"
)

func TestArchiveURIs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // relative to etc/apt
		want  []string
	}{
		{
			name: "deb822 skips security and deb-src",
			files: map[string]string{"sources.list.d/debian.sources": `Types: deb
# a comment
URIs: http://mirror.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.invalid/debian-security
Suites: bookworm-security
Components: main

Types: deb-src
URIs: http://src.invalid/debian
Suites: bookworm
Components: main
`},
			want: []string{"http://mirror.invalid/debian"},
		},
		{
			name: "deb822 disabled stanza, folded field, several URIs",
			files: map[string]string{"sources.list.d/x.sources": `Types: deb
URIs: http://off.invalid/debian
Suites: trixie
Enabled: no

types: deb deb-src
uris: http://a.invalid/debian/
 https://b.invalid/debian
suites: trixie-backports
 trixie
components: main non-free
`},
			want: []string{"http://a.invalid/debian", "https://b.invalid/debian"},
		},
		{
			name: "one-line with options",
			files: map[string]string{"sources.list": `# deb http://commented.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.invalid/debian bookworm main non-free
deb [ arch=amd64 ] http://spaced.invalid/debian trixie main
deb http://mirror.invalid/debian-security bookworm-security main
deb http://mirror.invalid/debian bookworm/updates main
deb-src http://src.invalid/debian bookworm main
deb http://mirror.invalid/debian bookworm-updates main # trailing comment
`},
			want: []string{"http://mirror.invalid/debian", "http://spaced.invalid/debian"},
		},
		{
			name: "both formats, duplicates merged",
			files: map[string]string{
				"sources.list":                "deb http://mirror.invalid/debian bookworm main\n",
				"sources.list.d/extra.list":   "deb http://list.invalid/debian trixie main\n",
				"sources.list.d/main.sources": "Types: deb\nURIs: http://mirror.invalid/debian/\nSuites: bookworm\nComponents: main\n",
			},
			want: []string{"http://mirror.invalid/debian", "http://list.invalid/debian"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tt.files {
				p := filepath.Join(root, "etc", "apt", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := archiveURIs(root)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("archiveURIs = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestArchiveURIsOnlySecurity(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "etc", "apt", "sources.list")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("deb http://mirror.invalid/debian-security bookworm-security main\n"), 0o644)
	if uris, err := archiveURIs(root); err == nil {
		t.Fatalf("archiveURIs = %q, want an error", uris)
	}
}

func TestSourcesList(t *testing.T) {
	vs := []manifest.Version{
		{Source: manifest.Source{Suite: "bookworm", Component: "non-free"}},
		{Source: manifest.Source{Suite: "trixie", Component: "non-free"}},
		{Source: manifest.Source{Suite: "trixie", Component: "contrib"}},
	}
	got := sourcesList([]string{"http://mirror.invalid/debian"}, vs, "/k.gpg")
	want := "deb [signed-by=/k.gpg] http://mirror.invalid/debian bookworm non-free\n" +
		"deb [signed-by=/k.gpg] http://mirror.invalid/debian trixie non-free contrib\n"
	if got != want {
		t.Errorf("sourcesList =\n%s\nwant\n%s", got, want)
	}
	got = sourcesList([]string{"http://a.invalid/d", "http://b.invalid/d"}, vs[:1], "")
	want = "deb http://a.invalid/d bookworm non-free\ndeb http://b.invalid/d bookworm non-free\n"
	if got != want {
		t.Errorf("sourcesList without keyring =\n%s\nwant\n%s", got, want)
	}
}

func TestParseDLStatus(t *testing.T) {
	tests := []struct {
		line string
		pct  float64
		ok   bool
	}{
		{"dlstatus:2:46.2619:Retrieving file 2 of 2 (7s remaining)", 46.2619, true},
		{"dlstatus:1:0:Retrieving file 1 of 1", 0, true},
		{"dlstatus:1:100:Retrieving file 1 of 1: with: colons\n", 100, true},
		{"pmstatus:dpkg-exec:0:Running dpkg", 0, false},
		{"dlstatus:1:abc:x", 0, false},
		{"dlstatus:1:250:x", 0, false},
		{"dlstatus", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		pct, ok := parseDLStatus(tt.line)
		if pct != tt.pct || ok != tt.ok {
			t.Errorf("parseDLStatus(%q) = %v, %v; want %v, %v", tt.line, pct, ok, tt.pct, tt.ok)
		}
	}
}

func TestProgressThrottles(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, "CUDA 12.4: downloading nvidia-cuda-dev")
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	step := func(d time.Duration, pct float64) {
		now = now.Add(d)
		p.update(pct)
	}
	step(0, 0)                       // first: printed
	step(100*time.Millisecond, 3)    // too soon, too small
	step(100*time.Millisecond, 9.9)  // still under 10 points
	step(100*time.Millisecond, 10.5) // 10 points: printed
	step(1500*time.Millisecond, 12)  // 1.5 s after the last print
	step(600*time.Millisecond, 13)   // 2.1 s: printed
	step(10*time.Millisecond, 100)   // big jump: printed
	want := "CUDA 12.4: downloading nvidia-cuda-dev 0%\n" +
		"CUDA 12.4: downloading nvidia-cuda-dev 10%\n" +
		"CUDA 12.4: downloading nvidia-cuda-dev 13%\n" +
		"CUDA 12.4: downloading nvidia-cuda-dev 100%\n"
	if out.String() != want {
		t.Errorf("progress printed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestListFlag(t *testing.T) {
	var l listFlag
	l.Set("11.8, 12.4")
	l.Set("13.0")
	if want := []string{"11.8", "12.4", "13.0"}; !slices.Equal(l, want) {
		t.Errorf("listFlag = %q, want %q", l, want)
	}
}

const fakeHeader = "#define CUDA_VERSION 13000\n"

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func toolkitVersion() manifest.Version {
	return manifest.Version{
		Version: "13.0",
		Tag:     "cuda13000",
		Source:  manifest.Source{Kind: manifest.SourceToolkit, Path: "include/cuda.h"},
		SHA256:  sum(fakeHeader),
	}
}

// fakeToolkit makes a CUDA home whose include/cuda.h holds header.
func fakeToolkit(t *testing.T, header string) string {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "include"), 0o755)
	if err := os.WriteFile(filepath.Join(home, "include", "cuda.h"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestImportToolkit(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCUDA_HEADER_CACHE", cache)
	v := toolkitVersion()

	path, err := importToolkit(v, fakeToolkit(t, fakeHeader))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "13.0", "cuda.h"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	data, _, err := v.ReadHeader()
	if err != nil {
		t.Fatalf("ReadHeader after import: %v", err)
	}
	if string(data) != fakeHeader {
		t.Errorf("cached header = %q, want %q", data, fakeHeader)
	}
}

func TestImportToolkitMismatch(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCUDA_HEADER_CACHE", cache)
	v := toolkitVersion()
	home := fakeToolkit(t, "#define CUDA_VERSION 12080\n")

	_, err := importToolkit(v, home)
	var ce *manifest.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *manifest.ChecksumError", err)
	}
	src := filepath.Join(home, "include", "cuda.h")
	for _, s := range []string{src, ce.Got, v.SHA256} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("cache holds %d entries after a mismatch, want none", len(entries))
	}
}

func TestImportToolkitMissing(t *testing.T) {
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
	_, err := importToolkit(toolkitVersion(), t.TempDir())
	if !errors.Is(err, errNoToolkit) {
		t.Errorf("err = %v, want errNoToolkit", err)
	}
}

// TestRunToolkit checks the exit code and report of a whole run: a missing
// toolkit is skipped unless the version is named, a wrong one fails.
func TestRunToolkit(t *testing.T) {
	v := toolkitVersion()
	m := fmt.Sprintf(`{"default": "13.0", "versions": [{"version": "13.0", "tag": "cuda13000",
		"source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": %q}]}`, v.SHA256)
	mpath := filepath.Join(t.TempDir(), "versions.json")
	os.WriteFile(mpath, []byte(m), 0o644)
	noToolkit := t.TempDir()

	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderr     string
		wantCached bool
	}{
		{"missing, all", []string{"-cuda-home", noToolkit}, 0, "", "CUDA 13.0: skipped: no toolkit at " + noToolkit, false},
		{"missing, named", []string{"-cuda-home", noToolkit, "-version", "13.0"}, 1, "", "CUDA 13.0: error: no toolkit at", false},
		{"missing, no skip", []string{"-cuda-home", noToolkit, "-skip-missing-toolkit=false"}, 1, "", "CUDA 13.0: error: no toolkit", false},
		{"wrong header", []string{"-cuda-home", fakeToolkit(t, "wrong"), "-version", "cuda13000"}, 1, "", "CUDA 13.0: error: ", false},
		{"unknown version", []string{"-version", "9.9"}, 2, "", "unknown CUDA version", false},
		{"good", []string{"-cuda-home", fakeToolkit(t, fakeHeader)}, 0, "CUDA 13.0: ok ", "", true},
		{"cached", []string{"-cuda-home", noToolkit}, 0, "CUDA 13.0: cached ", "", true},
	}
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"-manifest", mpath}, tt.args...), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.name, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
		}
		if _, _, err := v.ReadHeader(); (err == nil) != tt.wantCached {
			t.Errorf("%s: after the run ReadHeader: %v", tt.name, err)
		}
	}
}

// synthTar builds a tar stream like dpkg-deb's and returns it with the
// offset where name's content ends.
func synthTar(t *testing.T, name, content string) ([]byte, int) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	end := -1
	add := func(hdr *tar.Header, body string) {
		hdr.Size = int64(len(body))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		if hdr.Name == name {
			end = buf.Len()
		}
	}
	add(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "./usr/include/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "./usr/include/cudaGL.h", Typeflag: tar.TypeReg, Mode: 0o644}, "not this one")
	add(&tar.Header{Name: "./usr/include/cuda.hpp", Typeflag: tar.TypeReg, Mode: 0o644}, "nor this")
	add(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644}, content)
	add(&tar.Header{Name: "./usr/lib/libcuda.so", Typeflag: tar.TypeSymlink, Linkname: "libcuda.so.1"}, "")
	add(&tar.Header{Name: "./usr/lib/big", Typeflag: tar.TypeReg, Mode: 0o644}, strings.Repeat("x", 10000))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), end
}

// failReader fails the test when read: nothing after the wanted entry is
// needed.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("read past the wanted entry")
	return 0, io.ErrUnexpectedEOF
}

func TestReadTarEntry(t *testing.T) {
	const content = "#define CUDA_VERSION 12040\n"
	data, end := synthTar(t, "./usr/include/cuda.h", content)

	for _, name := range []string{"usr/include/cuda.h", "/usr/include/cuda.h", "./usr/include/cuda.h"} {
		got, err := readTarEntry(io.MultiReader(bytes.NewReader(data[:end]), failReader{t}), name)
		if err != nil {
			t.Fatalf("readTarEntry(%s): %v", name, err)
		}
		if string(got) != content {
			t.Errorf("readTarEntry(%s) = %q, want %q", name, got, content)
		}
	}

	if _, err := readTarEntry(bytes.NewReader(data), "usr/include/cudart.h"); !errors.Is(err, errNotInArchive) {
		t.Errorf("missing entry: err = %v, want errNotInArchive", err)
	}
	if _, err := readTarEntry(bytes.NewReader(data), "usr/lib/libcuda.so"); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("symlink entry: err = %v, want a link error", err)
	}
	if _, err := readTarEntry(bytes.NewReader(data[:end-5]), "usr/include/cuda.h"); err == nil {
		t.Error("truncated stream: no error")
	}
}

// TestExtractFromDeb runs dpkg-deb on a tiny package, where it is installed.
func TestExtractFromDeb(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("no dpkg-deb")
	}
	root := filepath.Join(t.TempDir(), "pkg")
	for name, content := range map[string]string{
		"DEBIAN/control":           "Package: fake-cuda-dev\nVersion: 1.0\nArchitecture: all\nMaintainer: nobody <nobody@mirror.invalid>\nDescription: test\n",
		"usr/include/cuda.h":       fakeHeader,
		"usr/share/doc/x/filler":   strings.Repeat("filler\n", 100000),
		"usr/include/cuda_other.h": "other",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	deb := root + ".deb"
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}
	got, err := extractFromDeb(context.Background(), deb, "usr/include/cuda.h")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != fakeHeader {
		t.Errorf("extracted %q, want %q", got, fakeHeader)
	}
	if _, err := extractFromDeb(context.Background(), deb, "usr/include/nope.h"); !errors.Is(err, errNotInArchive) {
		t.Errorf("missing file: err = %v, want errNotInArchive", err)
	}
	notDeb := filepath.Join(t.TempDir(), "x.deb")
	os.WriteFile(notDeb, []byte("not a deb"), 0o644)
	if _, err := extractFromDeb(context.Background(), notDeb, "usr/include/cuda.h"); err == nil || !strings.Contains(err.Error(), "dpkg-deb") {
		t.Errorf("bad package: err = %v, want a dpkg-deb error", err)
	}
}
