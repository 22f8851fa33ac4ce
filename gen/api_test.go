package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gocuda/gocuda/internal/manifest"
)

// apiVersions returns the API of testdata/api.h as it is (12.4) and with
// CUDA_VERSION raised to 13000.
func apiVersions(t *testing.T) (old, new *API) {
	t.Helper()
	src, err := os.ReadFile("testdata/api.h")
	if err != nil {
		t.Fatal(err)
	}
	raised := bytes.Replace(src, []byte("#define CUDA_VERSION 12040"), []byte("#define CUDA_VERSION 13000"), 1)
	if bytes.Equal(raised, src) {
		t.Fatal("testdata/api.h defines no CUDA_VERSION 12040")
	}
	for i, s := range [][]byte{src, raised} {
		mod, err := Model(s)
		if err != nil {
			t.Fatal(err)
		}
		a := apiOf([]string{"12.4", "13.0"}[i], mod)
		if i == 0 {
			old = a
		} else {
			new = a
		}
	}
	return old, new
}

func TestAPIDiffSmall(t *testing.T) {
	old, new := apiVersions(t)
	got := diffAPI(old, new)
	ctxOld := APIFunc{Name: "cuCtxCreate", Symbol: "cuCtxCreate_v2", Result: "CUresult", Params: []APIParam{
		{"CUcontext *", "pctx"}, {"unsigned int", "flags"}, {"CUdevice", "dev"}}}
	ctxNew := APIFunc{Name: "cuCtxCreate", Symbol: "cuCtxCreate_v4", Result: "CUresult", Params: []APIParam{
		{"CUcontext *", "pctx"}, {"CUparams *", "params"}, {"unsigned int", "flags"}, {"CUdevice", "dev"}}}
	want := &APIDiff{
		From: "12.4", To: "13.0",
		FuncsAdded: []APIFunc{
			{Name: "cuFresh", Symbol: "cuFresh", Result: "CUresult", Params: []APIParam{{"CUfresh", "f"}, {"CUnew *", "n"}}},
		},
		FuncsRemoved: []RemovedFunc{
			{Func: APIFunc{Name: "cuGone", Symbol: "cuGone", Result: "CUresult", Params: []APIParam{{"CUgone", "g"}}}},
			// The plain name now selects the _v2 symbol.
			{Func: APIFunc{Name: "cuStreamGetInfo_v2", Symbol: "cuStreamGetInfo_v2", Result: "CUresult", Params: []APIParam{{"int *", "info"}, {"int *", "more"}}},
				BoundAs: "cuStreamGetInfo"},
		},
		// cuRenamedParam only renames its parameter: no change.
		FuncsChanged: []FuncChange{
			{ctxOld, ctxNew},
			{
				APIFunc{Name: "cuStreamGetInfo", Symbol: "cuStreamGetInfo", Result: "CUresult", Params: []APIParam{{"int *", "info"}}},
				APIFunc{Name: "cuStreamGetInfo", Symbol: "cuStreamGetInfo_v2", Result: "CUresult", Params: []APIParam{{"int *", "info"}, {"int *", "more"}}},
			},
			{
				APIFunc{Name: "cuWidened", Symbol: "cuWidened", Result: "CUresult", Params: []APIParam{{"int", "n"}}},
				APIFunc{Name: "cuWidened", Symbol: "cuWidened", Result: "CUresult", Params: []APIParam{{"long long", "n"}}},
			},
		},
		EnumsAdded:    []APIEnum{{Name: "CUfresh", Type: "int", Values: []APIValue{{"CU_FRESH_A", "0"}, {"CU_FRESH_B", "1"}}}},
		EnumsRemoved:  []APIEnum{{Name: "CUgone", Type: "int", Values: []APIValue{{"CU_GONE", "0"}}}},
		ValuesAdded:   []ValueChange{{Enum: "CUattr", Name: "CU_ATTR_NEW", New: "4"}},
		ValuesRemoved: []ValueChange{{Enum: "CUattr", Name: "CU_ATTR_OLD", Old: "2"}},
		ValuesChanged: []ValueChange{{Enum: "CUattr", Name: "CU_ATTR_MAX", Old: "3", New: "5"}},
		RecordsAdded:  []APIRecord{{Name: "CUnew", Union: true, Size: 4, Align: 4, Fields: []APIField{{"y", "int", 0}, {"z", "float", 0}}}},
		RecordsRemoved: []APIRecord{
			{Name: "CUold", Size: 4, Align: 4, Fields: []APIField{{"x", "int", 0}}},
		},
		RecordsChanged: []RecordChange{{
			Name: "CUparams", OldSize: 12, NewSize: 24, OldAlign: 4, NewAlign: 8,
			FieldsAdded:   []APIField{{"added", "void *", 16}},
			FieldsRemoved: []APIField{{"dropped", "int", 4}},
			FieldsChanged: []FieldChange{{APIField{"widened", "int", 8}, APIField{"widened", "long long", 8}}},
		}},
		RecordsRenamed: []RecordRename{{
			Old: "CUnode", New: "CUnode_v1", Changed: true,
			Change: RecordChange{Name: "CUnode_v1", OldSize: 4, NewSize: 16, OldAlign: 4, NewAlign: 8,
				FieldsAdded: []APIField{{"b", "long long", 8}}},
		}},
		TypedefsChanged: []TypedefChange{{Name: "CUkernelParams", Old: "CUparams", New: "CUnode"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff mismatch (-want +got):\n%s", diff)
	}
	if d := diffAPI(new, new); !d.Empty() {
		t.Errorf("a version against itself: %+v", d)
	}
}

// TestAPIDiffMarkdown holds the Markdown of the small diff to
// testdata/api.diff.md.
func TestAPIDiffMarkdown(t *testing.T) {
	old, new := apiVersions(t)
	var b bytes.Buffer
	diffAPI(old, new).markdown(&b, 1)
	golden := filepath.Join("testdata", "api.diff.md")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("Markdown differs from %s (-want +got):\n%s\n(run go test ./gen -run TestAPIDiffMarkdown -update after checking the change)", golden, diff)
	}
}

// roundTrip checks that an API survives its file.
func roundTrip(t *testing.T, v manifest.Version, a *API) {
	t.Helper()
	text := apiText(v, a)
	back, err := parseAPI(v.Version, text, "api.txt")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, back); diff != "" {
		t.Errorf("CUDA %s: the API file does not give back the API (-model +file):\n%s", v.Version, diff)
	}
	if !bytes.Equal(apiText(v, back), text) {
		t.Errorf("CUDA %s: the API file is not rewritten as it was read", v.Version)
	}
}

func TestAPIFileRoundTrip(t *testing.T) {
	old, new := apiVersions(t)
	roundTrip(t, manifest.Version{Version: "12.4"}, old)
	roundTrip(t, manifest.Version{Version: "13.0"}, new)
}

func TestParseAPIRejects(t *testing.T) {
	for name, text := range map[string]string{
		"unknown record":       "macro\tX\t1\n",
		"short func":           "func\tcuX\tcuX\n",
		"empty field":          "func\tcuX\t\tCUresult\n",
		"value before enum":    "value\tCUe\tA\t1\n",
		"field before record":  "field\tCUr\ta\tint\t0\n",
		"bad size":             "struct\tCUr\tbig\t4\n",
		"parameter, no name":   "func\tcuX\tcuX\tCUresult\tint *\n",
		"parameter, no type":   "func\tcuX\tcuX\tCUresult\tn\n",
		"enum twice":           "enum\tCUe\tint\nenum\tCUe\tint\n",
		"extra typedef fields": "typedef\tA\tB\tC\n",
	} {
		if a, err := parseAPI("1.0", []byte(text), "bad.txt"); err == nil {
			t.Errorf("%s: parsed as %+v", name, a)
		} else if !strings.HasPrefix(err.Error(), "bad.txt:") {
			t.Errorf("%s: error %q does not name the file and line", name, err)
		}
	}
}

// TestMatrixChanges renders API_CHANGES.md from API files alone, with a
// version that has none.
func TestMatrixChanges(t *testing.T) {
	old, new := apiVersions(t)
	out := t.TempDir()
	m := &manifest.Manifest{Default: "12.4", Versions: []manifest.Version{
		{Version: "13.0", Tag: "cuda13000"}, {Version: "12.4", Tag: "cuda12040"}, {Version: "12.8", Tag: "cuda12080"},
	}}
	t.Setenv("GOCUDA_HEADER_CACHE", t.TempDir())
	if err := os.WriteFile(filepath.Join(out, apiFile("cuda13000")), apiText(m.Versions[0], new), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := matrixChanges(m, out, map[string]*API{"cuda12040": old})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	diffAPI(old, new).markdown(&want, 2)
	for _, s := range []string{
		"<!-- go run ./gen -all -->\n",
		"| 12.4 | 7 | 3 | 3 |\n| 13.0 | 6 | 3 | 3 |\n",
		"Not compared, for want of their API data (generate them where their header is): CUDA 12.8.\n",
		strings.TrimSpace(want.String()),
	} {
		if !strings.Contains(string(got), s) {
			t.Errorf("API_CHANGES.md lacks %q:\n%s", s, got)
		}
	}
	if !bytes.HasSuffix(got, []byte("\n")) || bytes.HasSuffix(got, []byte("\n\n")) {
		t.Errorf("API_CHANGES.md does not end in one newline")
	}

	// -diff reads the same file for a version whose header is not cached,
	// and says what is missing for one that has neither.
	var b bytes.Buffer
	if err := printDiff(&b, m, out, "13.0", "13.0"); err != nil || !strings.Contains(b.String(), "No change.") {
		t.Errorf("printDiff 13.0 13.0 = %q, %v", b.String(), err)
	}
	err = printDiff(&b, m, out, "12.8", "13.0")
	if !errors.Is(err, errNoAPI) || !strings.Contains(err.Error(), apiFile("cuda12080")) {
		t.Errorf("printDiff 12.8 13.0: %v, want errNoAPI naming %s", err, apiFile("cuda12080"))
	}
}

func TestDiffFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-diff", "12.4"},
		{"-diff", "12.4", "12.5", "13.0"},
		{"-diff", "-all", "12.4", "12.5"},
		{"-diff", "-version", "12.4", "12.4", "12.5"},
		{"-all", "12.4"},
	} {
		if err := run(args); err == nil {
			t.Errorf("gen %s: no error", strings.Join(args, " "))
		}
	}
	if err := run([]string{"-diff", "12.4", "9.9"}); err == nil || !strings.Contains(err.Error(), "unknown CUDA version") {
		t.Errorf("-diff to an unknown version: %v", err)
	}
}

// TestAPIRealHeaders takes the API of every cached real header through its
// file and back, compares each with the committed API file, and diffs
// consecutive cached versions both from the models and from the files.
func TestAPIRealHeaders(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	vs := append([]manifest.Version(nil), m.Versions...)
	sort.Slice(vs, func(i, j int) bool { return vs[i].Number() < vs[j].Number() })
	out := filepath.Join("..", "generated", "cu")
	var apis []*API
	byVersion := map[string]*API{}
	for _, v := range vs {
		src, _, err := v.ReadHeader()
		if errors.Is(err, manifest.ErrNotCached) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		mod, err := Model(src)
		if err != nil {
			t.Fatal(err)
		}
		a := apiOf(v.Version, mod)
		roundTrip(t, v, a)
		committed, err := os.ReadFile(filepath.Join(out, apiFile(v.Tag)))
		if err != nil {
			t.Errorf("CUDA %s: %v (run `make generate`)", v.Version, err)
		} else if !bytes.Equal(committed, apiText(v, a)) {
			t.Errorf("CUDA %s: %s is not what the header gives (run `make generate`)", v.Version, apiFile(v.Tag))
		}
		if len(a.Funcs) != len(mod.Functions) || len(a.Funcs) < 300 {
			t.Errorf("CUDA %s: %d functions in the API, %d in the model", v.Version, len(a.Funcs), len(mod.Functions))
		}
		apis = append(apis, a)
		byVersion[v.Version] = a
	}
	if len(apis) < 2 {
		t.Skipf("%d real headers cached; the diff needs two (make headers)", len(apis))
	}
	for i := 1; i < len(apis); i++ {
		d := diffAPI(apis[i-1], apis[i])
		if got, want := len(apis[i].Funcs), len(apis[i-1].Funcs)+len(d.FuncsAdded)-len(d.FuncsRemoved); got != want {
			t.Errorf("%s -> %s: %d functions, but %d before %+d -%d", d.From, d.To, got, len(apis[i-1].Funcs), len(d.FuncsAdded), len(d.FuncsRemoved))
		}
		if d.Empty() {
			t.Errorf("%s -> %s: no change", d.From, d.To)
		}
		t.Logf("%s -> %s: functions %d added, %d removed, %d changed; enum values %d added, %d removed; records %d changed",
			d.From, d.To, len(d.FuncsAdded), len(d.FuncsRemoved), len(d.FuncsChanged), len(d.ValuesAdded), len(d.ValuesRemoved), len(d.RecordsChanged))
	}

	// What is known of the real headers.
	find := func(fs []APIFunc, name string) *APIFunc {
		for i := range fs {
			if fs[i].Name == name {
				return &fs[i]
			}
		}
		return nil
	}
	if a, b := byVersion["11.8"], byVersion["12.4"]; a != nil && b != nil {
		d := diffAPI(a, b)
		var changed []string
		for _, c := range d.FuncsChanged {
			changed = append(changed, c.Old.Name+": "+c.Old.Symbol+" -> "+c.New.Symbol)
		}
		for _, w := range []string{"cuGraphInstantiate: cuGraphInstantiate_v2 -> cuGraphInstantiateWithFlags", "cuGetProcAddress: cuGetProcAddress -> cuGetProcAddress_v2"} {
			if !strings.Contains(strings.Join(changed, "\n"), w) {
				t.Errorf("11.8 -> 12.4: changed functions lack %q: %v", w, changed)
			}
		}
		if find(d.FuncsAdded, "cuLibraryLoadData") == nil {
			t.Errorf("11.8 -> 12.4: cuLibraryLoadData not added")
		}
	}
	if a, b := byVersion["12.4"], byVersion["12.5"]; a != nil && b != nil {
		d := diffAPI(a, b)
		if f := find(d.FuncsAdded, "cuCtxCreate_v4"); f == nil || len(f.Params) != 4 {
			t.Errorf("12.4 -> 12.5: cuCtxCreate_v4 not added with 4 parameters: %+v", f)
		}
		if f := find(b.Funcs, "cuCtxCreate"); f == nil || f.Symbol != "cuCtxCreate_v2" {
			t.Errorf("12.5: cuCtxCreate selects %+v, want cuCtxCreate_v2", f)
		}
	}
}

// TestCheckCatchesStaleAPIChanges: -check compares API_CHANGES.md too.
func TestCheckCatchesStaleAPIChanges(t *testing.T) {
	src, err := os.ReadFile("testdata/small.h")
	if err != nil {
		t.Fatal(err)
	}
	root, out := badRoot(t, src, sha(src))
	args := []string{"-root", root, "-out", out, "-version", "12.4"}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	if err := run(append(args, "-check")); err != nil {
		t.Fatalf("-check right after generating: %v", err)
	}
	path := filepath.Join(out, apiChangesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, "edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(append(args, "-check")); err == nil || !strings.Contains(err.Error(), apiChangesFile+": differs") {
		t.Errorf("-check of an edited %s: %v", apiChangesFile, err)
	}
}
