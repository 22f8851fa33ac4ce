package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
	"golang.org/x/tools/go/packages"
)

func load(t *testing.T, tags string, patterns ...string) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Mode: loadMode}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags=" + tags}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the packages do not load")
	}
	return pkgs
}

// TestTable holds the table read from package cu's source to cu.Bindings,
// for the version this test is built with.
func TestTable(t *testing.T) {
	tag := fmt.Sprintf("cuda%05d", cu.HeaderVersion())
	pkgs := load(t, tag, cuPath)
	tab, err := readTable(pkgs[0])
	if err != nil {
		t.Fatal(err)
	}
	if tab.header != cu.HeaderVersion() || filepath.Base(tab.file) != "zcu_"+tag+"_funcs.go" {
		t.Errorf("table of %d from %s, want %d from zcu_%s_funcs.go", tab.header, tab.file, cu.HeaderVersion(), tag)
	}
	n := 0
	for b := range cu.Bindings() {
		n++
		f := tab.byName[b.Name]
		if f == nil || *f != (cuFunc{Name: b.Name, API: b.API, Symbol: b.Symbol, Since: b.Since}) || tab.byAPI[b.API] != f {
			t.Errorf("%s: read %+v, cu.Bindings has %+v", b.Name, f, b)
		}
		if b.Since < tab.floor {
			t.Errorf("%s: since %d, below the floor %d", b.Name, b.Since, tab.floor)
		}
	}
	if n != len(tab.byName) || n != len(tab.byAPI) {
		t.Errorf("read %d functions (%d C names), cu.Bindings has %d", len(tab.byName), len(tab.byAPI), n)
	}
}

// markers reads the "// USE callee" comments of the files a package
// compiles: the uses cudriver must find, as "file:line callee".
func markers(t *testing.T, p *packages.Package) []string {
	t.Helper()
	var out []string
	for _, name := range p.GoFiles {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(f)
		for line := 1; s.Scan(); line++ {
			if _, callee, ok := strings.Cut(s.Text(), "// USE "); ok {
				out = append(out, fmt.Sprintf("%s:%d %s", rel(t, name), line, strings.TrimSpace(callee)))
			}
		}
		f.Close()
	}
	return out
}

func rel(t *testing.T, name string) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r, err := filepath.Rel(wd, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestUses runs the analysis on the test program for each version: every
// marked use and nothing else, and the bindings each reaches.
func TestUses(t *testing.T) {
	const libInit = "init of package github.com/gocuda/gocuda/cmd/cudriver/testdata/lib"
	reaches := map[string][]string{
		"cu.MemAlloc":             {"cuMemAlloc"},
		`cu.Proc("cuMemFree")`:    {"cuMemFree"},
		`cu.Proc("cuMemcpyHtoD")`: {"cuMemcpyHtoD"},
		"cu.MemsetD8":             {"cuMemsetD8"},
		"lib.Direct":              {"cuCtxSynchronize"},    // through an unexported function
		"lib.CallSync":            {"cuStreamSynchronize"}, // through an interface
		"lib.Destroy":             {"cuCtxDestroy"},        // through a package-level variable
		"lib.Resolve":             {"cuMemHostRegister", "cuMemHostUnregister"},
		"cu.LibraryUnload":        {"cuLibraryUnload"},
		"lib.StreamID":            {"cuCtxSynchronize"}, // cuStreamGetId is optional
		"lib.ContextID":           {"cuCtxGetId"},
		libInit:                   {"cuInit"},
	}
	for _, tc := range []struct {
		tags      string
		ctxSymbol string // what cuCtxCreate binds to
	}{
		{"", "cuCtxCreate_v2"},
		{"cuda11080", "cuCtxCreate_v2"},
		{"cuda13000", "cuCtxCreate_v4"}, // first declared after 12.4
	} {
		t.Run("tags="+tc.tags, func(t *testing.T) {
			pkgs := load(t, tc.tags, "./testdata/prog")
			tab, uses, err := analyze(pkgs)
			if err != nil {
				t.Fatal(err)
			}
			ctxCreate := tab.byAPI["cuCtxCreate"]
			if ctxCreate.Symbol != tc.ctxSymbol {
				t.Fatalf("cuCtxCreate binds %s, want %s", ctxCreate.Symbol, tc.ctxSymbol)
			}
			want := markers(t, pkgs[0])
			var got []string
			need, wantNeed := 0, 0
			for _, u := range uses {
				got = append(got, fmt.Sprintf("%s:%d %s", rel(t, u.Pos.Filename), u.Pos.Line, u.Callee))
				need = max(need, u.Need())
				if !slices.IsSortedFunc(u.Funcs, func(x, y *cuFunc) int { return y.Since - x.Since }) {
					t.Errorf("%s: bindings not the newest first", u.Callee)
				}
				var apis []string
				for _, f := range u.Funcs {
					apis = append(apis, f.API)
					if tab.byAPI[f.API] != f {
						t.Errorf("%s: %s is not the table's", u.Callee, f.API)
					}
				}
				slices.Sort(apis)
				if u.Callee == "cuda.NewContext" {
					// Reached through a function value given to a reflection helper.
					if !slices.Contains(apis, "cuCtxCreate") || u.Need() < ctxCreate.Since {
						t.Errorf("cuda.NewContext reaches %v and needs %d; want cuCtxCreate, %d", apis, u.Need(), ctxCreate.Since)
					}
					wantNeed = max(wantNeed, u.Need())
					continue
				}
				if !slices.Equal(apis, reaches[u.Callee]) {
					t.Errorf("%s reaches %v, want %v", u.Callee, apis, reaches[u.Callee])
				}
				v := 0
				for _, api := range reaches[u.Callee] {
					v = max(v, tab.byAPI[api].Since)
				}
				if u.Need() != v {
					t.Errorf("%s needs %d, want %d", u.Callee, u.Need(), v)
				}
				wantNeed = max(wantNeed, v)
			}
			want = append(want, "testdata/lib/lib.go:7 "+libInit)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("uses:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
			if need != wantNeed {
				t.Errorf("the program needs %d, want %d", need, wantNeed)
			}
			switch tc.tags {
			case "cuda11080":
				if need != tab.floor {
					t.Errorf("the 11.8 program needs %d, above the oldest version", need)
				}
			case "cuda13000":
				if need <= 12040 {
					t.Errorf("the 13.0 program needs %d, want cuCtxCreate_v4's version", need)
				}
			}
		})
	}
}

// sinceOf is a binding's version in the table of the version tag selects.
func sinceOf(t *testing.T, tag, api string) int {
	t.Helper()
	tab, err := readTable(load(t, tag, cuPath)[0])
	if err != nil {
		t.Fatal(err)
	}
	return tab.byAPI[api].Since
}

func runCommand(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestCommand(t *testing.T) {
	ctx13v := sinceOf(t, "cuda13000", "cuCtxCreate")
	ctx13 := versionString(ctx13v)
	const (
		library   = "testdata/prog/new.go:11:9: cu.LibraryUnload: CUDA 12.4 (cuLibraryUnload)\n"
		contextID = "testdata/prog/new.go:13:13: lib.ContextID: CUDA 12.4 (cuCtxGetId)\n"
		min124    = "minimum driver: CUDA 12.4, for cu.LibraryUnload at testdata/prog/new.go:11:9 (the CUDA 12.4 bindings, zcu_cuda12040_funcs.go); check it at startup with cu.RequireDriver(12040)\n"
	)
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // the whole output; with a leading "..." its end, "~" a part
		stderr string // a part of it
	}{
		{[]string{"-tags", "cuda12040", "./testdata/prog"}, 0,
			"testdata/lib/lib.go:7:1: init of package github.com/gocuda/gocuda/cmd/cudriver/testdata/lib: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:15:9: cu.MemAlloc: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:16:9: cu.Proc(\"cuMemFree\"): CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:17:17: cu.Proc(\"cuMemcpyHtoD\"): CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:18:12: cu.MemsetD8: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:21:10: lib.Direct: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:22:10: lib.CallSync: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:23:10: lib.Destroy: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:24:10: lib.Resolve: CUDA 11.8 or earlier\n" +
				"testdata/prog/main.go:26:14: cuda.NewContext: CUDA 11.8 or earlier\n" +
				library +
				"testdata/prog/new.go:12:13: lib.StreamID: CUDA 11.8 or earlier\n" +
				contextID + min124, ""},
		{[]string{"-tags=cuda12040", "-driver", "12.0", "./testdata/prog"}, 1,
			library + contextID + "2 uses need a driver newer than CUDA 12.0; " + min124, ""},
		{[]string{"-tags=cuda12040", "-driver", "12040", "./testdata/prog"}, 0,
			"no use needs a driver newer than CUDA 12.4; " + min124, ""},
		{[]string{"-tags=cuda13000", "-driver=12.4", "./testdata/prog"}, 1,
			"testdata/prog/main.go:26:14: cuda.NewContext: CUDA " + ctx13 + " (cuCtxCreate_v4)\n" +
				"1 uses need a driver newer than CUDA 12.4; minimum driver: CUDA " + ctx13 + ", for cuda.NewContext at testdata/prog/main.go:26:14" +
				" (the CUDA 13.0 bindings, zcu_cuda13000_funcs.go); check it at startup with cu.RequireDriver(" + fmt.Sprint(ctx13v) + ")\n", ""},
		{[]string{"-tags=cuda11080", "./testdata/prog"}, 0,
			"...testdata/prog/main.go:26:14: cuda.NewContext: CUDA 11.8 or earlier\n" +
				"minimum driver: CUDA 11.8 or earlier (the CUDA 11.8 bindings, zcu_cuda11080_funcs.go)\n", ""},
		{[]string{"-tags=cuda11080", "-driver=11.4", "./testdata/prog"}, 0,
			"no use needs a driver newer than CUDA 11.4; minimum driver: CUDA 11.8 or earlier (the CUDA 11.8 bindings, zcu_cuda11080_funcs.go)\n",
			"CUDA 11.4 is older than the oldest version the bindings know (11.8)"},
		{[]string{"-test", "./testdata/prog"}, 0,
			"~testdata/prog/main_test.go:11:9: cu.MemFree: CUDA 11.8 or earlier\n", ""},
		{[]string{"./testdata/nocu"}, 0,
			"the packages do not import github.com/gocuda/gocuda/generated/cu: they need no CUDA driver\n", ""},
		{[]string{"./testdata/broken"}, 2, "", "the packages do not load"},
		{[]string{"-driver", "12.x", "./testdata/prog"}, 2, "", `"12.x" is not a CUDA version`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCommand(t, tc.args...)
			okOut := stdout == tc.stdout
			if end, ok := strings.CutPrefix(tc.stdout, "..."); ok {
				okOut = strings.HasSuffix(stdout, end)
			}
			if part, ok := strings.CutPrefix(tc.stdout, "~"); ok {
				okOut = strings.Contains(stdout, part) && strings.Count(stdout, part) == 1
			}
			if code != tc.code || !okOut || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant a part: %s", code, tc.code, stdout, tc.stdout, stderr, tc.stderr)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	for s, want := range map[string]int{"12.4": 12040, "12": 12000, "12040": 12040, "11.8.89": 11080, "13.0": 13000, "9.2": 9020} {
		if v, err := parseVersion(s); v != want || err != nil {
			t.Errorf("parseVersion(%q) = %d, %v; want %d", s, v, err, want)
		}
	}
	for _, s := range []string{"", "x", "12.", ".4", "-1", "120", "12.100", "1000.1", "12.4x"} {
		if v, err := parseVersion(s); err == nil {
			t.Errorf("parseVersion(%q) = %d, want an error", s, v)
		}
	}
}
