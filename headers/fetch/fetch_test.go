package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
		{"missing, all", []string{"-cuda-home", noToolkit, "-v"}, 0, "", "CUDA 13.0: skipped: no toolkit at " + noToolkit, false},
		{"missing, all, summed up", []string{"-cuda-home", noToolkit}, 0, "headers: 0 of 1 versions cached (0 fetched now); not on this machine: CUDA 13.0 (-v says where each was looked for)\n", "", false},
		{"missing, named", []string{"-cuda-home", noToolkit, "-version", "13.0"}, 1, "", "CUDA 13.0: error: no toolkit at", false},
		{"missing, no skip", []string{"-cuda-home", noToolkit, "-skip-missing=false"}, 1, "", "CUDA 13.0: error: no toolkit", false},
		{"wrong header", []string{"-cuda-home", fakeToolkit(t, "wrong"), "-version", "cuda13000"}, 1, "", "CUDA 13.0: error: ", false},
		{"unknown version", []string{"-version", "9.9"}, 2, "", "unknown CUDA version", false},
		{"good", []string{"-cuda-home", fakeToolkit(t, fakeHeader)}, 0, "CUDA 13.0: fetched (sha256 ", "", true},
		{"cached", []string{"-cuda-home", noToolkit, "-v"}, 0, "CUDA 13.0: cached ", "", true},
		{"cached, summed up", []string{"-cuda-home", noToolkit}, 0, "headers: 1 of 1 versions cached (0 fetched now)\n", "", true},
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

// The stand-ins for apt-get and dpkg-deb that drive the Debian path without
// a network. $FAKE_APT and $FAKE_DPKG pick how they behave; apt-get logs its
// arguments, and where it downloads, to $FAKE_LOG; the hanging modes touch
// $FAKE_MARK once they are under way, then wait to be killed.
const fakeAptGet = `#!/bin/sh
for a; do echo "arg $a"; last=$a; done >> "$FAKE_LOG"
if [ "$last" = update ]; then
	if [ "$FAKE_APT" = update-fail ]; then
		echo "E: The repository is not signed." >&2
		exit 100
	fi
	exit 0
fi
echo "download-cwd $PWD" >> "$FAKE_LOG"
deb="${last%%=*}_1.0_all.deb"
case "$FAKE_APT" in
download-fail)
	echo "E: Failed to fetch http://mirror.invalid/debian/$deb  404  Not Found" >&2
	exit 100 ;;
download-hang)
	printf partial > "$deb"
	: > "$FAKE_MARK"
	exec sleep 60 ;;
bad-deb)
	printf 'not the package' > "$deb" ;;
*)
	cp "$FAKE_DEB" "$deb" ;;
esac
`

const fakeDpkgDeb = `#!/bin/sh
if [ "$FAKE_DPKG" = hang ]; then
	head -c 700 "$FAKE_TAR"
	: > "$FAKE_MARK"
	exec sleep 60
fi
cat "$FAKE_TAR"
`

const fakeDeb = "a stand-in for nvidia-cuda-dev_1.0_all.deb"

// fakeDebian installs the stand-ins on $PATH, a Debian mirror for them, and
// a one-version Debian manifest; it returns the manifest's path and the
// version. The cache is a fresh temporary directory.
func fakeDebian(t *testing.T) (string, manifest.Version) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the stand-in apt-get")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	for name, script := range map[string]string{"apt-get": fakeAptGet, "dpkg-deb": fakeDpkgDeb} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(root, "etc", "apt"), 0o755)
	os.WriteFile(filepath.Join(root, "etc", "apt", "sources.list"), []byte("deb http://mirror.invalid/debian trixie main\n"), 0o644)
	old := aptRoot
	aptRoot = root
	t.Cleanup(func() { aptRoot = old })

	debPath := filepath.Join(dir, "pkg.deb")
	os.WriteFile(debPath, []byte(fakeDeb), 0o644)
	tarball, _ := synthTar(t, "./usr/include/cuda.h", fakeHeader)
	tarPath := filepath.Join(dir, "data.tar")
	os.WriteFile(tarPath, tarball, 0o644)
	t.Setenv("FAKE_DEB", debPath)
	t.Setenv("FAKE_TAR", tarPath)
	t.Setenv("FAKE_LOG", filepath.Join(dir, "apt.log"))
	t.Setenv("FAKE_MARK", filepath.Join(dir, "mark"))
	t.Setenv("FAKE_APT", "")
	t.Setenv("FAKE_DPKG", "")
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())

	v := manifest.Version{
		Version: "13.0",
		Tag:     "cuda13000",
		Source: manifest.Source{
			Kind:           manifest.SourceDebian,
			Package:        "nvidia-cuda-dev",
			PackageVersion: "13.0.0-1",
			Suite:          "trixie",
			Component:      "non-free",
			PackageSHA256:  sum(fakeDeb),
			Path:           "usr/include/cuda.h",
		},
		SHA256: sum(fakeHeader),
	}
	m, err := json.Marshal(manifest.Manifest{Default: v.Version, Versions: []manifest.Version{v}})
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(dir, "versions.json")
	os.WriteFile(mpath, m, 0o644)
	return mpath, v
}

// runFetch runs the command. With cancel set it stands for an interrupt: the
// context is cancelled once a stand-in has touched $FAKE_MARK.
func runFetch(t *testing.T, cancel bool, args ...string) (code int, stdout, stderr string) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if cancel {
		mark := os.Getenv("FAKE_MARK")
		go func() {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if _, err := os.Stat(mark); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			stop()
		}()
	}
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// userFiles fills dir with files and directories of someone else's,
// including names fetch itself uses: the version's number, "apt", and the
// file name the stand-in apt-get downloads to.
func userFiles(t *testing.T, dir string) {
	for name, content := range map[string]string{
		"notes.txt":                        "keep me\n",
		"13.0/cuda.h":                      "someone's own header\n",
		"13.0/nvidia-cuda-dev_1.0_all.deb": "someone's own package\n",
		"apt/sources.list":                 "deb http://mine.invalid/debian sid main\n",
		"sub/deep/data.bin":                "\x00\x01\x02",
		".fetch-mine/x":                    "x",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every path under dir to its kind, mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			got[rel] = fmt.Sprintf("dir %v", info.Mode())
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got[rel] = fmt.Sprintf("%v %q", info.Mode(), data)
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", dir, err)
	}
	return got
}

// sameTree reports how after differs from before.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed from %s to %s", what, p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was left behind", what, p)
		}
	}
}

// aptDirs returns the directories apt-get downloaded in and the paths it was
// given in options, from the stand-in's log.
func aptDirs(t *testing.T) (cwds, paths []string) {
	log, err := os.ReadFile(os.Getenv("FAKE_LOG"))
	if err != nil {
		t.Fatalf("apt-get log: %v", err)
	}
	for _, l := range strings.Split(string(log), "\n") {
		if cwd, ok := strings.CutPrefix(l, "download-cwd "); ok {
			cwds = append(cwds, cwd)
		}
		if arg, ok := strings.CutPrefix(l, "arg "); ok {
			if k, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(k, "Dir::") && v != "-" {
				paths = append(paths, v)
			}
			if strings.HasSuffix(arg, ".conf") {
				paths = append(paths, arg)
			}
		}
	}
	return cwds, paths
}

// TestRunWorkDirKeepsUserFiles checks that -work DIR leaves what was already
// in DIR exactly as it was, whether the fetch succeeds or fails, and that
// apt works only in a directory of fetch's own inside DIR.
func TestRunWorkDirKeepsUserFiles(t *testing.T) {
	tests := []struct {
		name      string
		apt, dpkg string
		header    string // the cuda.h in the package
		cancel    bool
		code      int
		stderr    string
	}{
		{name: "ok", header: fakeHeader, code: 0},
		{name: "update fails", apt: "update-fail", header: fakeHeader, code: 1, stderr: "apt-get update"},
		{name: "download fails", apt: "download-fail", header: fakeHeader, code: 1, stderr: "404  Not Found"},
		{name: "download interrupted", apt: "download-hang", header: fakeHeader, cancel: true, code: 1, stderr: "context canceled"},
		{name: "package checksum mismatch", apt: "bad-deb", header: fakeHeader, code: 1, stderr: "SHA-256 mismatch"},
		{name: "header checksum mismatch", header: "#define CUDA_VERSION 12080\n", code: 1, stderr: "SHA-256 mismatch"},
		{name: "extraction interrupted", dpkg: "hang", header: fakeHeader, cancel: true, code: 1, stderr: "CUDA 13.0: error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mpath, v := fakeDebian(t)
			t.Setenv("FAKE_APT", tt.apt)
			t.Setenv("FAKE_DPKG", tt.dpkg)
			tarball, _ := synthTar(t, "./usr/include/cuda.h", tt.header)
			os.WriteFile(os.Getenv("FAKE_TAR"), tarball, 0o644)

			work := t.TempDir()
			userFiles(t, work)
			before := snapshot(t, work)
			code, stdout, stderr := runFetch(t, tt.cancel, "-manifest", mpath, "-work", work)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stderr with %q", code, stdout, stderr, tt.code, tt.stderr)
			}
			sameTree(t, "-work "+work, before, snapshot(t, work))
			if _, _, err := v.ReadHeader(); (err == nil) != (tt.code == 0) {
				t.Errorf("after the run ReadHeader: %v", err)
			}

			cwds, paths := aptDirs(t)
			for _, p := range append(cwds, paths...) {
				if !filepath.IsAbs(p) {
					t.Errorf("apt-get was given the relative path %s", p)
				}
				rel, err := filepath.Rel(work, p)
				top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
				if err != nil || top == ".." || before[top] != "" || top == "." {
					t.Errorf("apt-get used %s, not in a directory of fetch's own in %s", p, work)
				}
			}
		})
	}
}

// TestRunWorkDirIsCache checks a -work that is the header cache itself:
// the version's cache directory is both fetch's output and a name it works
// under.
func TestRunWorkDirIsCache(t *testing.T) {
	mpath, v := fakeDebian(t)
	cache := os.Getenv("GOCUDA_HEADER_CACHE")
	userFiles(t, cache) // 13.0/cuda.h is there, with the wrong SHA-256
	before := snapshot(t, cache)

	code, stdout, stderr := runFetch(t, false, "-manifest", mpath, "-work", cache)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "wrong SHA-256, fetching it again") {
		t.Errorf("stderr %q does not report the stale header", stderr)
	}
	if _, _, err := v.ReadHeader(); err != nil {
		t.Errorf("after the run ReadHeader: %v", err)
	}
	after := snapshot(t, cache)
	if want := fmt.Sprintf("%v %q", os.FileMode(0o644), fakeHeader); after["13.0/cuda.h"] != want {
		t.Errorf("cached header is %s, want %s", after["13.0/cuda.h"], want)
	}
	after["13.0/cuda.h"] = before["13.0/cuda.h"]
	sameTree(t, "cache", before, after)
}

// TestRunDefaultWorkDir checks that without -work the temporary directory in
// the cache is removed and nothing else in the cache is touched.
func TestRunDefaultWorkDir(t *testing.T) {
	for _, apt := range []string{"", "download-fail"} {
		mpath, v := fakeDebian(t)
		t.Setenv("FAKE_APT", apt)
		cache := os.Getenv("GOCUDA_HEADER_CACHE")
		os.Remove(cache) // fetch makes it
		code, _, stderr := runFetch(t, false, "-manifest", mpath)
		if (code == 0) != (apt == "") {
			t.Errorf("FAKE_APT=%q: exit %d, stderr %q", apt, code, stderr)
		}
		want := map[string]string{".": fmt.Sprintf("dir %v", os.ModeDir|0o755)}
		if apt == "" {
			want["13.0"] = fmt.Sprintf("dir %v", os.ModeDir|0o755)
			want["13.0/cuda.h"] = fmt.Sprintf("%v %q", os.FileMode(0o644), fakeHeader)
		}
		sameTree(t, fmt.Sprintf("FAKE_APT=%q: cache", apt), want, snapshot(t, cache))

		userFiles(t, cache)
		if apt == "" {
			// Stale, so that the second run fetches again.
			os.WriteFile(filepath.Join(cache, "13.0", "cuda.h"), []byte("stale"), 0o644)
		}
		before := snapshot(t, cache)
		code, _, stderr = runFetch(t, false, "-manifest", mpath)
		if (code == 0) != (apt == "") {
			t.Errorf("FAKE_APT=%q: second run: exit %d, stderr %q", apt, code, stderr)
		}
		after := snapshot(t, cache)
		if apt == "" {
			if _, _, err := v.ReadHeader(); err != nil {
				t.Errorf("second run: ReadHeader: %v", err)
			}
			after["13.0/cuda.h"] = before["13.0/cuda.h"]
		}
		sameTree(t, fmt.Sprintf("FAKE_APT=%q: second run: cache", apt), before, after)
	}
}

// TestRunWorkDirCreated checks a relative -work that does not exist yet: apt
// is given absolute paths (it would resolve relative ones against its own
// directories, outside the work directory), and the directories fetch made
// are gone afterwards.
func TestRunWorkDirCreated(t *testing.T) {
	mpath, v := fakeDebian(t)
	base := t.TempDir()
	t.Chdir(base)
	before := snapshot(t, base)
	code, stdout, stderr := runFetch(t, false, "-manifest", mpath, "-work", filepath.Join("a", "b", "work"))
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, _, err := v.ReadHeader(); err != nil {
		t.Errorf("after the run ReadHeader: %v", err)
	}
	sameTree(t, "the working directory", before, snapshot(t, base))
	cwds, paths := aptDirs(t)
	for _, p := range append(cwds, paths...) {
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, filepath.Join(base, "a", "b", "work")+string(filepath.Separator)) {
			t.Errorf("apt-get used %s, want an absolute path in %s", p, filepath.Join(base, "a", "b", "work"))
		}
	}
}

// TestRunWorkDirIsFile checks that a -work naming a file is an error that
// leaves the file alone.
func TestRunWorkDirIsFile(t *testing.T) {
	mpath, _ := fakeDebian(t)
	base := t.TempDir()
	userFiles(t, base)
	before := snapshot(t, base)
	code, _, stderr := runFetch(t, false, "-manifest", mpath, "-work", filepath.Join(base, "notes.txt"))
	if code != 1 || !strings.Contains(stderr, "notes.txt") {
		t.Errorf("exit %d, stderr %q; want exit 1 and an error naming notes.txt", code, stderr)
	}
	sameTree(t, "-work's directory", before, snapshot(t, base))
}

// TestReadTarEntries reads several files of one archive in one pass, and
// names the ones it lacks.
func TestReadTarEntries(t *testing.T) {
	data, _ := synthTar(t, "./usr/include/nvrtc.h", "nvrtc")
	got, err := readTarEntries(bytes.NewReader(data), []string{"usr/include/nvrtc.h", "./usr/include/cudaGL.h"}, maxHeader)
	if err != nil || string(got["usr/include/nvrtc.h"]) != "nvrtc" || string(got["./usr/include/cudaGL.h"]) != "not this one" {
		t.Fatalf("readTarEntries = %q, %v", got, err)
	}
	_, err = readTarEntries(bytes.NewReader(data), []string{"usr/include/nvrtc.h", "usr/include/nvJitLink.h"}, maxHeader)
	if !errors.Is(err, errNotInArchive) || !strings.Contains(err.Error(), "nvJitLink.h") {
		t.Errorf("a missing entry: %v", err)
	}
	if _, err := readTarEntries(bytes.NewReader(data), []string{"usr/lib/big"}, 100); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("an entry over the limit: %v", err)
	}
}

// TestRunWithoutVerboseNamesNoPath checks that a version skipped for want
// of its source is summed up without the paths of this machine.
func TestRunWithoutVerboseNamesNoPath(t *testing.T) {
	v := toolkitVersion()
	m := fmt.Sprintf(`{"default": "13.0", "versions": [{"version": "13.0", "tag": "cuda13000",
		"source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": %q}]}`, v.SHA256)
	mpath := filepath.Join(t.TempDir(), "versions.json")
	os.WriteFile(mpath, []byte(m), 0o644)
	noToolkit := t.TempDir()
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-manifest", mpath, "-cuda-home", noToolkit}, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != 0 || strings.Contains(out, noToolkit) || strings.Count(out, "\n") != 1 {
		t.Errorf("exit %d, output %q; want exit 0 and one line without %s", code, out, noToolkit)
	}
}

// TestRunHeaderOfAnotherPackage: a header that another package of the
// version's suite has (cufile.h, libcufile-dev's) is downloaded from that
// package, checked against its own package's SHA-256, and cached with the
// rest; a wrong package checksum caches nothing at all.
func TestRunHeaderOfAnotherPackage(t *testing.T) {
	const other = "#define CUFILE_H 1\n"
	for _, tt := range []struct {
		name   string
		pkgSum string
		code   int
	}{{"right", sum(fakeDeb), 0}, {"wrong package checksum", sum("another package"), 1}} {
		t.Run(tt.name, func(t *testing.T) {
			_, v := fakeDebian(t)
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for name, body := range map[string]string{"./usr/include/cuda.h": fakeHeader, "./usr/include/cufile.h": other} {
				if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
					t.Fatal(err)
				}
				tw.Write([]byte(body))
			}
			tw.Close()
			tarPath := filepath.Join(t.TempDir(), "data.tar")
			if err := os.WriteFile(tarPath, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("FAKE_TAR", tarPath)
			v.Headers = []manifest.Header{{Name: "cufile.h", Path: "usr/include/cufile.h", SHA256: sum(other),
				Package: "libcufile-dev", PackageVersion: "1.9-1", PackageSHA256: tt.pkgSum}}
			m, err := json.Marshal(manifest.Manifest{Default: v.Version, Versions: []manifest.Version{v}})
			if err != nil {
				t.Fatal(err)
			}
			mpath := filepath.Join(t.TempDir(), "versions.json")
			os.WriteFile(mpath, m, 0o644)

			code, stdout, stderr := runFetch(t, false, "-manifest", mpath)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
			log, _ := os.ReadFile(os.Getenv("FAKE_LOG"))
			for _, want := range []string{"arg nvidia-cuda-dev=13.0.0-1", "arg libcufile-dev=1.9-1"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("apt-get log lacks %q:\n%s", want, log)
				}
			}
			got, _, errOther := v.ReadLibraryHeader("cufile.h")
			_, _, errMain := v.ReadHeader()
			if tt.code == 0 && (errOther != nil || string(got) != other || errMain != nil) {
				t.Errorf("cached: cufile.h %q (%v), cuda.h %v", got, errOther, errMain)
			}
			if tt.code != 0 && (errOther == nil || errMain == nil) {
				t.Errorf("a failed fetch cached cufile.h (%v) or cuda.h (%v)", errOther, errMain)
			}
		})
	}
}
