package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

func TestCgoTableWellFormed(t *testing.T) {
	if err := checkCgoTable(); err != nil {
		t.Fatal(err)
	}
	n, opt := 0, 0
	for _, e := range cgoTable {
		n++
		if e.flags != 0 {
			opt++
		}
	}
	t.Logf("%d entries, %d with noescape|nocallback", n, opt)
}

// matrixFunction is a function of some version of the matrix, with the
// types of its header; fn is nil where only the committed symbol list of
// the version is at hand.
type matrixFunction struct {
	fn *Function
	x  *typeIndex
}

// matrixFunctions returns every function of the matrix by symbol: from the
// cached headers, and, for a version whose header is not cached, from its
// committed symbol list. ok is false when no header is cached.
func matrixFunctions(t *testing.T) (fns map[string]matrixFunction, ok bool) {
	t.Helper()
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	fns = map[string]matrixFunction{}
	for _, v := range m.Versions {
		src, _, err := v.ReadHeader()
		if errors.Is(err, manifest.ErrNotCached) {
			data, err := os.ReadFile(filepath.Join("..", "generated", "cu", symbolsFile(v.Tag)))
			if errors.Is(err, os.ErrNotExist) {
				// Not generated yet: its header is on another machine.
				t.Logf("CUDA %s: neither its header nor its symbol list is here; its functions are left out", v.Version)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range parseSymbolList(data) {
				if _, seen := fns[s]; !seen {
					fns[s] = matrixFunction{}
				}
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		mod, err := Model(src)
		if err != nil {
			t.Fatal(err)
		}
		x := newTypeIndex(mod)
		for i := range mod.Functions {
			fns[mod.Functions[i].Symbol] = matrixFunction{&mod.Functions[i], x}
		}
		ok = true
	}
	return fns, ok
}

// Every entry names a function of the matrix; an optimised entry has a
// pointer argument for noescape to keep off the heap, and no function
// pointer argument (the generator refuses that too).
func TestCgoTableEntriesExist(t *testing.T) {
	fns, ok := matrixFunctions(t)
	if !ok {
		t.Skip("no header cached (make headers)")
	}
	for _, e := range cgoTable {
		mf, found := fns[e.symbol]
		if !found {
			t.Errorf("%s: no version of the matrix declares it (stale entry?)", e.symbol)
			continue
		}
		if mf.fn == nil || e.flags == 0 {
			continue
		}
		hasPtr := false
		for _, p := range mf.fn.Params {
			r, err := mf.x.resolve(p.Type)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.kind == FuncPtr:
				t.Errorf("%s: marked nocallback, but takes the function pointer %s", e.symbol, p.Name)
			case r.kind == Pointer && !r.handle:
				hasPtr = true
			}
		}
		if !hasPtr {
			t.Errorf("%s: marked noescape, but takes no pointer", e.symbol)
		}
	}
}

// A function the table does not list gets neither directive; one it lists
// gets exactly its directives.
func TestCgoDefaultIsSafe(t *testing.T) {
	_, out, err := generateHostile(t, `
#define cuMemAlloc cuMemAlloc_v2
CUresult cuNotInTheTable(int *out, void *p);
CUresult cuMemAlloc(unsigned long long *dptr, size_t bytesize);
CUresult cuStreamSynchronize(void *hStream);
`)
	if err != nil {
		t.Fatal(err)
	}
	funcs := string(out["zcu_cuda12040_funcs.go"])
	got := regexp.MustCompile(`(?m)^#cgo .*$`).FindAllString(funcs, -1)
	want := []string{"#cgo noescape gocu_cuMemAlloc_v2", "#cgo nocallback gocu_cuMemAlloc_v2"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("directives:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The committed files of every version, 13.0 included (whose header is only
// on the GPU machine), have exactly the directives the table gives their
// trampolines.
func TestCgoDirectivesOfCommittedFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "generated", "cu", "zcu_*_funcs.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated funcs files: %v", err)
	}
	tramp := regexp.MustCompile(`(?m)^static \S+(?: \S+)* (gocu_cu\w+)\(uintptr_t fn`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var have, want []string
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "#cgo ") {
				have = append(have, line)
			}
		}
		for _, m := range tramp.FindAllStringSubmatch(string(data), -1) {
			d := cgoDirectives(m[1], cgoPolicy(strings.TrimPrefix(m[1], "gocu_")))
			want = append(want, strings.Split(strings.TrimSuffix(d, "\n"), "\n")...)
		}
		want = nonEmpty(want)
		if strings.Join(have, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the #cgo lines are not the table's (%d lines, want %d)", filepath.Base(f), len(have), len(want))
		}
	}
}

func nonEmpty(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// The directives take effect: an out-parameter of a listed function stays
// on the stack, one of an unlisted function goes to the heap. Allocation
// is decided at compile time, so this holds without a driver.
func TestCgoDirectivesTakeEffect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package: skipped in -short mode")
	}
	extra := `package cu

import "testing"

func TestExtra(t *testing.T) {
	listed := testing.AllocsPerRun(100, func() {
		var p CUdeviceptr
		_ = MemAlloc(&p, 1)
	})
	unlisted := testing.AllocsPerRun(100, func() {
		var a CUanon
		_ = Anon(&a)
	})
	if listed != 0 || unlisted != 1 {
		t.Errorf("allocations: %v for MemAlloc (noescape, nocallback), %v for Anon (neither)", listed, unlisted)
	}
}
`
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
	dir := t.TempDir()
	files := map[string][]byte{"go.mod": []byte("module smallcu\n\ngo 1.25\n"), "extra_test.go": []byte(extra)}
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
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestExtra", ".")
	cmd.Dir = dir
	// No driver: the calls fail without reaching C, which does not change
	// what escapes.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOCUDA_LIBCUDA=/nonexistent/libcuda.so")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}
