package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/small.golden, testdata/fused/zfused.h) from the generator's output")

// smallManifest is a one-version matrix for testdata/small.h.
func smallManifest() (*manifest.Manifest, manifest.Version) {
	v := manifest.Version{Version: "12.4", Tag: "cuda12040", SHA256: "0000000000000000000000000000000000000000000000000000000000000000",
		Source: manifest.Source{Kind: manifest.SourceToolkit, Path: "include/cuda.h"}}
	return &manifest.Manifest{Default: "12.4", Versions: []manifest.Version{v}}, v
}

func generateSmall(t *testing.T) Output {
	t.Helper()
	src, err := os.ReadFile("testdata/small.h")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := Model(src)
	if err != nil {
		t.Fatal(err)
	}
	m, v := smallManifest()
	out, err := Generate(m, v, v.SHA256, mod, nil, packageHandwritten(t))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// packageHandwritten reads the handwritten files of package cu, which the
// generated files join.
func packageHandwritten(t testing.TB) *handwritten {
	t.Helper()
	hw, err := readHandwritten(filepath.Join("..", "generated", "cu"))
	if err != nil {
		t.Fatal(err)
	}
	return hw
}

func TestGolden(t *testing.T) {
	out := generateSmall(t)
	dir := filepath.Join("testdata", "small.golden")
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := writeOutputs(dir, map[string]Output{"cuda12040": out}); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkOutputs(dir, map[string]Output{"cuda12040": out}); err != nil {
		t.Fatalf("%v\n(run go test ./gen -run TestGolden -update after checking the change)", err)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := generateSmall(t), generateSmall(t)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// TestGeneratedCompiles builds and vets the output for the small header
// together with package cu's handwritten files, as a package of its own.
func TestGeneratedCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package: skipped in -short mode")
	}
	dir := t.TempDir()
	out := generateSmall(t)
	files := map[string][]byte{"go.mod": []byte("module smallcu\n\ngo 1.25\n")}
	for name, data := range out {
		files[name] = data
	}
	for _, name := range []string{"loader.go", "errors.go"} {
		data, err := os.ReadFile(filepath.Join("..", "generated", "cu", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"vet", "."}, {"test", "-run", "TestRecordLayouts", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, b)
		}
	}
}

func TestBuildConstraintsExclusive(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, v := range m.Versions {
		tags = append(tags, v.Tag)
	}
	sort.Strings(tags)
	// Every subset of the matrix's tags selects exactly one version.
	for mask := 0; mask < 1<<len(tags); mask++ {
		set := map[string]bool{}
		for i, tag := range tags {
			if mask&(1<<i) != 0 {
				set[tag] = true
			}
		}
		var chosen []string
		for _, v := range m.Versions {
			if evalConstraint(buildConstraint(m, v), set) {
				chosen = append(chosen, v.Version)
			}
		}
		if len(chosen) != 1 {
			t.Errorf("tags %v select %v, want exactly one version", set, chosen)
		}
		if mask == 0 && (len(chosen) != 1 || chosen[0] != m.Default) {
			t.Errorf("no tag selects %v, want the default %s", chosen, m.Default)
		}
	}
}

// TestLibraryConstraintsExclusive: for every library and every subset of
// the matrix's tags, exactly one of the library's version files compiles,
// and it is the newest version with the header at or below the version
// package cu selects (the oldest with it, below every one).
func TestLibraryConstraintsExclusive(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, v := range m.Versions {
		tags = append(tags, v.Tag)
	}
	for _, l := range libraries {
		provs := l.providers(m)
		if len(provs) == 0 || l.versions() != manifest.CUDA {
			continue // NCCL's matrix: TestNCCLConstraintsExclusive
		}
		for mask := 0; mask < 1<<len(tags); mask++ {
			set := map[string]bool{}
			for i, tag := range tags {
				if mask&(1<<i) != 0 {
					set[tag] = true
				}
			}
			var cuSel manifest.Version
			for _, v := range m.Versions {
				if evalConstraint(buildConstraint(m, v), set) {
					cuSel = v
				}
			}
			want := provs[0].Version
			for _, p := range provs {
				if p.Number() <= cuSel.Number() {
					want = p.Version
				}
			}
			var chosen []string
			for _, p := range provs {
				if evalConstraint(l.constraint(m, p), set) {
					chosen = append(chosen, p.Version)
				}
			}
			if len(chosen) != 1 || chosen[0] != want {
				t.Errorf("%s: tags %v select %v, want %s", l.pkg, set, chosen, want)
			}
		}
	}
}

// TestNCCLConstraintsExclusive: the NCCL versions are a matrix of their own,
// whatever the CUDA tags: for every set of NCCL tags exactly one version's
// files build, the highest tagged but the newest, else the newest.
func TestNCCLConstraintsExclusive(t *testing.T) {
	data := []byte(`{"default": "12.4", "versions": [{"version": "12.4", "tag": "cuda12040", "source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": "` + strings.Repeat("a", 64) + `"}],
	"nccl": [` + ncclEntry("2.22.3", "nccl22203") + `, ` + ncclEntry("2.28.3", "nccl22803") + `, ` + ncclEntry("2.19.3", "nccl21903") + `]}`)
	full, err := manifest.Parse(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	m := ncclLib.matrix(full)
	if m.Default != "2.28.3" {
		t.Fatalf("default %s, want the newest, 2.28.3", m.Default)
	}
	tags := []string{"nccl21903", "nccl22203", "nccl22803", "cuda12040"}
	for mask := 0; mask < 1<<len(tags); mask++ {
		// As for CUDA's tags (buildConstraint): the highest tagged version
		// but the default, else the default.
		set := map[string]bool{}
		want := ""
		for i, tag := range tags {
			if mask&(1<<i) != 0 {
				set[tag] = true
				if v, err := m.Lookup(tag); err == nil && v.Version != m.Default {
					want = v.Version
				}
			}
		}
		if want == "" {
			want = m.Default
		}
		var chosen []string
		for _, p := range ncclLib.providers(full) {
			if evalConstraint(ncclLib.constraint(m, p), set) {
				chosen = append(chosen, p.Version)
			}
		}
		if len(chosen) != 1 || chosen[0] != want {
			t.Errorf("tags %v select %v, want %s", set, chosen, want)
		}
	}
	if names, err := ncclLib.sonamesFor(m.DefaultVersion()); err != nil || len(names) != 1 || names[0] != "libnccl.so.2" {
		t.Errorf("sonames %v, %v; want libnccl.so.2", names, err)
	}
}

func ncclEntry(version, tag string) string {
	return `{"version": "` + version + `", "tag": "` + tag + `", "source": {"kind": "file", "path": "/usr/include/nccl.h"}, "sha256": "` + strings.Repeat("b", 64) + `"}`
}
