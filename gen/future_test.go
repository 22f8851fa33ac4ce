package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocuda/gocuda/internal/manifest"
)

// futureVersion is a CUDA version newer than every version of the matrix.
const futureVersion = "99.99"

var cudaVersionLine = regexp.MustCompile(`(?m)^#define CUDA_VERSION [0-9]+[ \t]*$`)

// TestFutureVersionBuilds makes a version newer than every known one, as a
// maintainer adding the next CUDA release would: the newest cached header
// with CUDA_VERSION raised, one more manifest entry, a regeneration of a
// copy of the module. Then the handwritten packages must build, vet and pass
// their tests against the fake driver for that version's tag: their
// version-specific files select "this ABI and every later one" by default.
func TestFutureVersionBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a copy of the module (about a minute): skipped in -short mode")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Load(filepath.Join(root, "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}

	// The versions the copy keeps: those whose header is cached (they are
	// regenerated, so that their build constraints exclude the new tag),
	// and those whose committed files stand in for the header. A version
	// with neither cannot date the new version's functions.
	cache := t.TempDir()
	out := filepath.Join(root, "generated", "cu")
	var kept []manifest.Version
	var newest manifest.Version
	var newestSrc []byte
	defaultCached := false
	for _, v := range m.Versions {
		src, _, err := v.ReadHeader()
		switch {
		case err == nil:
			writeCached(t, cache, v.Version, src)
			if v.Number() > newest.Number() {
				newest, newestSrc = v, src
			}
			defaultCached = defaultCached || v.Version == m.Default
		case !errors.Is(err, manifest.ErrNotCached):
			t.Fatal(err)
		default:
			if _, err := os.Stat(filepath.Join(out, symbolsFile(v.Tag))); err != nil {
				t.Logf("CUDA %s: left out of the copy's matrix: its header is not cached and it was never generated", v.Version)
				continue
			}
		}
		kept = append(kept, v)
	}
	if newestSrc == nil {
		t.Skip("no header cached (make headers)")
	}
	if !defaultCached {
		t.Skipf("the header of the default version %s is not cached (make headers): its files must be regenerated to exclude the new tag", m.Default)
	}

	raised := cudaVersionLine.ReplaceAll(newestSrc, []byte("#define CUDA_VERSION 99990"))
	if n := len(cudaVersionLine.FindAll(newestSrc, -1)); n != 1 {
		t.Fatalf("CUDA %s header: %d lines define CUDA_VERSION, want 1", newest.Version, n)
	}
	future := manifest.Version{Version: futureVersion, Tag: "cuda99990", SHA256: sha(raised), Source: newest.Source}
	if future.WantTag() != future.Tag {
		t.Fatalf("version %s has tag %s, want %s", futureVersion, future.WantTag(), future.Tag)
	}
	writeCached(t, cache, future.Version, raised)
	t.Setenv("GOCUDA_HEADER_CACHE", cache)

	mod := futureModuleDir(t)
	for _, dir := range []string{"cuda", "generated", "internal"} {
		copyTree(t, filepath.Join(root, dir), filepath.Join(mod, dir))
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(mod, f))
	}
	tm := manifest.Manifest{Default: m.Default, Versions: append(kept, future)}
	data, err := json.MarshalIndent(tm, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mod, "headers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "headers", "versions.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := run([]string{"-root", mod, "-all"}); err != nil {
		t.Fatalf("gen -all with CUDA %s added: %v", futureVersion, err)
	}
	t.Logf("generated in %.1fs", time.Since(start).Seconds())

	// Every cached version was rewritten, the default among them, whose
	// constraint now excludes the new tag.
	for _, v := range kept {
		if _, _, err := v.ReadHeader(); err != nil {
			continue
		}
		funcs, err := os.ReadFile(filepath.Join(mod, "generated", "cu", "zcu_"+v.Tag+"_funcs.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(funcs, []byte("!"+future.Tag)) {
			t.Errorf("CUDA %s: its regenerated files do not exclude %s", v.Version, future.Tag)
		}
	}

	// -trimpath keeps the copy's location out of the build cache's keys,
	// so that a second run reuses the first one's builds.
	// No NVRTC library is pinned for the made-up version: its compile
	// tests skip, saying so, even where CI requires them for the real ones.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOCUDA_TEST_NVRTC=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"), "GOCUDA_TEST_DRIVER=fake")
	goCmd := func(args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		t.Logf("go %s: %.1fs", strings.Join(args, " "), time.Since(start).Seconds())
		return string(b)
	}
	tags := "-tags=" + future.Tag
	// Exactly the new version's files are compiled for its tag.
	files := strings.Fields(goCmd("list", tags, "-f", `{{join .GoFiles " "}} {{join .CgoFiles " "}}`, "./generated/cu"))
	var versioned []string
	for _, f := range files {
		if strings.HasPrefix(f, "zcu_") {
			versioned = append(versioned, f)
		}
	}
	sort.Strings(versioned)
	if want := []string{"zcu_cuda99990_funcs.go", "zcu_cuda99990_types.go"}; fmt.Sprint(versioned) != fmt.Sprint(want) {
		t.Fatalf("tag %s compiles %v, want %v", future.Tag, versioned, want)
	}
	// Each library's bindings for the new tag are those of its newest
	// version with the library's header, with that version's sonames,
	// whether or not that version's headers are cached here: its committed
	// files' constraints take the new tag in.
	for _, l := range libraries {
		provs := l.providers(&tm)
		if l == cuLib || l.versions() != manifest.CUDA || len(provs) == 0 {
			continue
		}
		newest := provs[len(provs)-1]
		pkg := "./" + filepath.ToSlash(filepath.Join("generated", l.pkg))
		var got []string
		for _, f := range strings.Fields(goCmd("list", tags, "-f", `{{join .GoFiles " "}} {{join .CgoFiles " "}}`, pkg)) {
			if strings.HasPrefix(f, l.filePrefix()) && f != l.libFile() {
				got = append(got, f)
			}
		}
		if len(got) == 0 {
			t.Errorf("%s: tag %s compiles none of its versions' files, want those of %s", l.pkg, future.Tag, newest.Name())
		}
		for _, f := range got {
			if !l.generatedFor(f, newest.Tag) {
				t.Errorf("%s: tag %s compiles %s, want the files of %s", l.pkg, future.Tag, f, newest.Name())
			}
		}
	}
	goCmd("build", tags, "./generated/...", "./cuda/...")
	goCmd("vet", tags, "./generated/...", "./cuda/...")
	goCmd("test", tags, "./cuda/...")
}

// futureModuleDir is where the test copies the module: the same directory
// in every run, emptied first and removed at the end. -trimpath keeps the
// copy's location out of the build cache's keys, so cgo's cached output of
// an earlier run is reused, and go vet then reads the cgo files at the
// path recorded with it: a fresh directory per run would be gone by then
// ("can't parse raw cgo file"). A lock file keeps two runs of the test
// (CI and a developer's) out of each other's copy.
func futureModuleDir(t *testing.T) string {
	t.Helper()
	base := filepath.Join(os.TempDir(), fmt.Sprintf("gocuda-future-%d", os.Getuid()))
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(base, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(base, "module")
	clean := func() {
		if err := os.RemoveAll(mod); err != nil {
			t.Error(err)
		}
	}
	clean()
	t.Cleanup(func() {
		clean()
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
	})
	return mod
}

func writeCached(t *testing.T, cache, version string, data []byte) {
	t.Helper()
	dir := filepath.Join(cache, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cuda.h"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files under src, skipping the generator's
// temporary directories.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".gen-") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Type().IsRegular() {
			copyFile(t, path, filepath.Join(dst, rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
