package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const fusedTestdata = "testdata/fused"

// fusedTestModel is the model of testdata/fused/cuda.h, after edits: each
// pair of edits replaces its first string with its second.
func fusedTestModel(t *testing.T, edits ...string) *Module {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(fusedTestdata, "cuda.h"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if !bytes.Contains(src, []byte(edits[i])) {
			t.Fatalf("testdata/fused/cuda.h has no %q", edits[i])
		}
		src = bytes.ReplaceAll(src, []byte(edits[i]), []byte(edits[i+1]))
	}
	mod, err := Model(src)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// fusedTestTable is the entries of testdata/fused/fused.go.
func fusedTestTable(t *testing.T) []fusedEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fusedTestdata, "fused.go"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseFusedTable("fused.go", data)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

const fusedTestSum = "1111111111111111111111111111111111111111111111111111111111111111"

func emitFusedTest(t *testing.T) []byte {
	t.Helper()
	out, err := emitFused(fusedTestTable(t), fusedModel{"12.4", fusedTestModel(t)}, fusedTestSum, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFusedTableParsesEntries(t *testing.T) {
	src := "package cuda\n\n" +
		"// A comment that mentions //fused bound cuNot is no entry.\n" +
		"//fusedbound cuNot\n" +
		"//fused bound cuMemAlloc out=dptr\n" +
		"\t//fused  bound\tcuMemcpyHtoD   sync\n" +
		"//fused bound cuModeGet sync out=mode\n" +
		"//fused hot cuEventRecord\n" +
		"//fused type cuCtxGetCurrent\n" +
		"//fused struct CUconfig\n"
	got, err := parseFusedTable("t.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []fusedEntry{
		{pos: "t.go:5", kind: fusedBound, name: "cuMemAlloc", out: "dptr"},
		{pos: "t.go:6", kind: fusedBound, name: "cuMemcpyHtoD", sync: true},
		{pos: "t.go:7", kind: fusedBound, name: "cuModeGet", out: "mode", sync: true},
		{pos: "t.go:8", kind: fusedHot, name: "cuEventRecord"},
		{pos: "t.go:9", kind: fusedType, name: "cuCtxGetCurrent"},
		{pos: "t.go:10", kind: fusedStruct, name: "CUconfig"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(fusedEntry{})); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestFusedTableRejectsBadLines(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"no kind", "//fused", "t.go:3: want //fused KIND NAME"},
		{"no name", "//fused bound", "t.go:3: want //fused KIND NAME"},
		{"unknown kind", "//fused bond cuMemAlloc", `t.go:3: unknown kind "bond"`},
		{"name not an identifier", "//fused hot cu-Event", `t.go:3: "cu-Event" is not a C identifier`},
		{"option on hot", "//fused hot cuEventRecord sync", `t.go:3: hot takes no options, not "sync"`},
		{"option on type", "//fused type cuCtxGetCurrent out=pctx", `t.go:3: type takes no options, not "out=pctx"`},
		{"option on struct", "//fused struct CUconfig sync", `t.go:3: struct takes no options, not "sync"`},
		{"unknown option", "//fused bound cuMemAlloc async", `t.go:3: unknown option "async"`},
		{"out without =", "//fused bound cuMemAlloc out", `t.go:3: unknown option "out"`},
		{"empty out", "//fused bound cuMemAlloc out=", `t.go:3: out=: "" is not a parameter name`},
		{"bad out", "//fused bound cuMemAlloc out=*dptr", `t.go:3: out=*dptr: "*dptr" is not a parameter name`},
		{"out twice", "//fused bound cuMemAlloc out=dptr out=dptr", "t.go:3: out= given twice"},
		{"sync twice", "//fused bound cuMemcpyHtoD sync sync", "t.go:3: sync given twice"},
		{"duplicate", "//fused hot cuMemAlloc\n//fused bound cuMemAlloc", "t.go:4: cuMemAlloc is already declared at t.go:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseFusedTable("t.go", []byte("package cuda\n\n"+tc.line+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q (entries %+v)", err, tc.want, entries)
			}
		})
	}
	if _, err := parseFusedTable("t.go", []byte("package cuda\n// no table\n")); err == nil || !strings.Contains(err.Error(), "t.go: no //fused lines") {
		t.Errorf("a table without entries: error %v", err)
	}
}

func TestFusedRejectsEntriesTheHeaderDoesNotFit(t *testing.T) {
	mod := fusedTestModel(t)
	for _, tc := range []struct{ name, line, want string }{
		{"unknown function", "//fused hot cuNoSuch", "t.go:3: cuNoSuch: cuda.h of CUDA 12.4 declares no such function"},
		{"versioned symbol", "//fused hot cuMemAlloc_v2", "t.go:3: cuMemAlloc_v2: cuda.h of CUDA 12.4 declares no such function"},
		{"out names no parameter", "//fused bound cuMemAlloc out=ptr", "t.go:3: cuMemAlloc: out=ptr names no parameter (the parameters: dptr, bytesize)"},
		{"out not a pointer", "//fused bound cuMemAlloc out=bytesize", "out=bytesize: parameter bytesize is not a pointer to a result"},
		{"out a handle", "//fused bound cuEventDestroy out=hEvent", "out=hEvent: parameter hEvent is not a pointer to a result"},
		{"out to void", "//fused bound cuFloatGet out=p", "out=p: parameter p is a void pointer"},
		{"out to float", "//fused bound cuFloatGet out=value", "out=value: parameter value points to float"},
		{"out to record", "//fused bound cuFloatGet out=config", "out=config: parameter config points to CUconfig"},
		{"record by value", "//fused hot cuByValue", "parameter config passes the record CUconfig_v1 by value"},
		{"no CUresult", "//fused type cuPlain", "cuPlain: returns"},
		{"unknown struct", "//fused struct CUnoSuch", "t.go:3: struct CUnoSuch: no such type"},
		{"struct not a struct", "//fused struct CUmode", "t.go:3: struct CUmode: not a struct"},
		{"union", "//fused struct CUeither", "struct CUeither: a union"},
		{"nested record", "//fused struct CUnested", "struct CUnested: member inner: a record"},
		{"packed", "//fused struct CUpacked", "struct CUpacked: member i is at offset 1, where a plain C struct has it at 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseFusedTable("t.go", []byte("package cuda\n\n"+tc.line+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := emitFused(entries, fusedModel{"12.4", mod}, fusedTestSum, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q; output:\n%s", err, tc.want, out)
			}
		})
	}
}

func TestFusedRejectsVersionsWithAnotherABI(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []string
		want  string
	}{
		{"parameter type", []string{"unsigned int Flags", "int Flags"},
			"fused.go:7: cuEventCreate: CUDA 12.4 and 13.0 declare different ABIs: int (void*, unsigned int) (CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)) and int (void*, int) (CUresult cuEventCreate(CUevent *phEvent, int Flags))"},
		{"parameter added", []string{"CUresult CUDAAPI cuEventDestroy(CUevent hEvent);", "CUresult CUDAAPI cuEventDestroy(CUevent hEvent, unsigned int flags);"},
			"fused.go:8: cuEventDestroy: CUDA 12.4 and 13.0 declare different ABIs"},
		{"out pointee", []string{"CUresult CUDAAPI cuModeGet(CUmode *mode,", "CUresult CUDAAPI cuModeGet(unsigned long *mode,"},
			"fused.go:10: cuModeGet: the out parameter points to int in CUDA 12.4 and to unsigned long in CUDA 13.0"},
		{"symbol gone", []string{"#define cuMemAlloc cuMemAlloc_v2\n", "", "cuMemAlloc(", "cuMemAlloc_v2("},
			"fused.go:5: cuMemAlloc: cuda.h of CUDA 13.0 declares no such function; the entry fits cuda.h of CUDA 12.4, which zfused.h is made from"},
		{"struct layout", []string{"unsigned int dims[3];", "unsigned long dims[3];"},
			"fused.go:16: struct CUconfig: CUDA 12.4 and 13.0 lay it out differently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := fusedModel{"13.0", fusedTestModel(t, tc.edits...)}
			out, err := emitFused(fusedTestTable(t), fusedModel{"12.4", fusedTestModel(t)}, fusedTestSum, []fusedModel{other})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q; output:\n%s", err, tc.want, out)
			}
		})
	}
	same := fusedModel{"13.0", fusedTestModel(t, "CUDA_VERSION 12040", "CUDA_VERSION 13000")}
	if _, err := emitFused(fusedTestTable(t), fusedModel{"12.4", fusedTestModel(t)}, fusedTestSum, []fusedModel{same}); err != nil {
		t.Errorf("a version with the same ABI: %v", err)
	}
}

// TestFusedGolden compares the header made from testdata/fused with
// testdata/fused/zfused.h.
func TestFusedGolden(t *testing.T) {
	out := emitFusedTest(t)
	golden := filepath.Join(fusedTestdata, fusedHeaderFile)
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, out) {
		t.Fatalf("%s differs from the output (%s)\n(run go test ./gen -run TestFusedGolden -update after checking the change)", golden, firstDifference(want, out))
	}
}

// TestFusedHeadersCompile compiles the golden header and the committed
// cuda/zfused.h with gcc, beside the stand-in fused.h of testdata.
func TestFusedHeadersCompile(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: the C compile check needs it")
	}
	standIn, err := os.ReadFile(filepath.Join(fusedTestdata, "fused.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{filepath.Join(fusedTestdata, fusedHeaderFile), filepath.Join("..", "cuda", fusedHeaderFile)} {
		t.Run(src, func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for name, data := range map[string][]byte{fusedHeaderFile: data, "fused.h": standIn} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(gcc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c", fusedHeaderFile)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
		})
	}
}

// fusedProgram calls the wrappers of the golden header with stand-in entry
// points, and exits with the number of the first check that fails.
const fusedProgram = `#include "zfused.h"

static uint64_t seen;
static int alloc(void *dptr, unsigned long bytes) { *(unsigned long long *)dptr = 0x100000000ULL + bytes; return 0; }
static int create(void *ph, unsigned int flags) { *(uintptr_t *)ph = 0xe0 + flags; return 0; }
static int fail3(unsigned long long dst, void *src, unsigned long n) { (void)dst; (void)src; (void)n; return 3; }
static int copy(unsigned long long dst, void *src, unsigned long n) { (void)src; seen = dst + n; return 0; }
static int record(uintptr_t e, uintptr_t s) { seen = e ^ s; return 0; }
static int names(uintptr_t ctx, void *fn, int r, void *ops1) { seen = ctx + r + (fn != 0); *(unsigned int *)ops1 = 7; return 0; }

int main(void) {
	uint64_t open = 0, closed = 1;
	gocuda_res r = gocuda_bound_cuMemAlloc((uintptr_t)alloc, 1, 24);
	if (r.call != 0 || r.out != 0x100000018ULL || gocuda_binds != 1 || gocuda_unbinds != 1) return 1;
	r = gocuda_bound_cuEventCreate((uintptr_t)create, 1, 2);
	if (r.call != 0 || r.out != 0xe2) return 2;
	r = gocuda_bound_cuMemAlloc((uintptr_t)alloc, 0, 24);
	if (r.push != 201 || r.call != 0 || r.out != 0 || gocuda_binds != 2) return 3;
	r = gocuda_bound_cuMemcpyHtoD((uintptr_t)fail3, 1, 5, 0, 6);
	if (r.call != 3 || gocuda_syncs != 0) return 4;
	r = gocuda_bound_cuMemcpyHtoD((uintptr_t)copy, 1, 5, 0, 6);
	if (r.call != 0 || seen != 11 || gocuda_syncs != 1 || r.out != 0) return 5;
	if (gocuda_hot_cuEventRecord((uintptr_t)record, (uintptr_t)&open, (uintptr_t)&open, 6, 3) != 0 || seen != 5) return 6;
	seen = 0;
	if (gocuda_hot_cuEventRecord((uintptr_t)record, (uintptr_t)&open, (uintptr_t)&closed, 6, 3) != -2 || seen != 0) return 7;
	r = gocuda_bound_cuNames((uintptr_t)names, 1, 40, (void *)&seen, 2);
	if (r.call != 0 || seen != 43 || r.out != 7) return 8;
	return 0;
}
`

// TestFusedWrappersCall runs the golden header's wrappers against stand-in
// entry points: the out parameter comes back in out, sync synchronizes
// only after a successful call, a failed bind skips the call, and a closed
// handle skips a hot call.
func TestFusedWrappersCall(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc: the C check needs it")
	}
	dir := t.TempDir()
	for _, name := range []string{fusedHeaderFile, "fused.h"} {
		data, err := os.ReadFile(filepath.Join(fusedTestdata, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte(fusedProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gcc, "-std=gnu11", "-Wall", "-Werror", "-o", "fused", "main.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(dir, "fused")).CombinedOutput(); err != nil {
		t.Fatalf("the wrappers: %v (the number of the failed check)\n%s", err, out)
	}
}

func TestCheckFusedReportsADifference(t *testing.T) {
	dir := t.TempDir()
	out := emitFusedTest(t)
	if err := checkFused(dir, out); err == nil || !strings.Contains(err.Error(), "zfused.h: missing") {
		t.Errorf("no file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fusedHeaderFile), out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkFused(dir, out); err != nil {
		t.Errorf("the same file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fusedHeaderFile), append(out, "// edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkFused(dir, out); err == nil || !strings.Contains(err.Error(), "zfused.h: differs from a fresh generation") {
		t.Errorf("an edited file: %v", err)
	}
}

// TestGenerateAllRejectsABadTableFirst: -all reads the table before it
// generates anything, and a bad one stops it with nothing written.
func TestGenerateAllRejectsABadTableFirst(t *testing.T) {
	root := t.TempDir()
	manifest, err := os.ReadFile(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"go.mod":                []byte("module github.com/gocuda/gocuda\n"),
		"headers/versions.json": manifest,
		"cuda/fused.go":         []byte("package cuda\n\n//fused bound cuMemAlloc out=dptr\n//fused hot cuMemAlloc\n"),
	} {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err = run([]string{"-root", root, "-all"})
	if err == nil || !strings.Contains(err.Error(), "cuda/fused.go:4: cuMemAlloc is already declared at cuda/fused.go:3") {
		t.Fatalf("error %v", err)
	}
	for _, dir := range []string{"generated", filepath.Join("cuda", fusedHeaderFile)} {
		if _, err := os.Stat(filepath.Join(root, dir)); err == nil {
			t.Errorf("%s written", dir)
		}
	}
}
