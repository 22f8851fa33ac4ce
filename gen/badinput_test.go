package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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
	// Flipped bytes may all land in comments (the small header's do): one
	// declaration is broken for certain.
	i := bytes.Index(src, []byte("typedef "))
	if i < 0 {
		t.Fatal("the header has no typedef to break")
	}
	src = slices.Concat(src[:i], []byte("typedef @#"), src[i+len("typedef "):])
	root, out := badRoot(t, src, sha(src))
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "CUDA 12.4", "cuda.h:")
}

// TestBadInputVersionMismatch runs the generator on a cuda.h whose
// CUDA_VERSION is not the version the manifest pins it as.
func TestBadInputVersionMismatch(t *testing.T) {
	src := realHeader(t)
	if n := len(cudaVersionLine.FindAll(src, -1)); n != 1 {
		t.Fatalf("%d lines define CUDA_VERSION, want 1", n)
	}
	raised := cudaVersionLine.ReplaceAll(src, []byte("#define CUDA_VERSION 12050"))
	root, out := badRoot(t, raised, sha(raised))
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "cuda.h says CUDA_VERSION 12050", "CUDA 12.4 (12040)")
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

// Hostile headers. Each must either generate code that builds and whose
// layouts are C's, or fail at generation with an error naming the
// declaration, in bounded time and memory.

// hostilePrelude is what package cu's handwritten files need of a header
// (its layout test wants a record).
const hostilePrelude = `#include <stddef.h>
#define CUDA_VERSION 12040
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
`

// generateHostile runs the generator on hostilePrelude+src the way `gen`
// does, against the handwritten files of package cu.
func generateHostile(t *testing.T, src string) (*Module, Output, error) {
	t.Helper()
	mod, err := Model([]byte(hostilePrelude + src))
	if err != nil {
		return nil, nil, err
	}
	m, v := smallManifest()
	out, err := Generate(m, v, v.SHA256, mod, nil, packageHandwritten(t))
	return mod, out, err
}

// mustFail checks that the generator refuses src with an error containing
// every one of want.
func mustFail(t *testing.T, src string, want ...string) {
	t.Helper()
	_, _, err := generateHostile(t, src)
	if err == nil {
		t.Fatalf("generated code for\n%s", src)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	t.Logf("refused, as it should: %v", err)
}

// mustBuild generates code for src and checks that it builds and vets with
// package cu's handwritten files, that its layout test passes, that the
// model's layouts are gcc's, and that extraTest (a test file of package
// cu, may be "") passes. It returns the generated files.
func mustBuild(t *testing.T, src, extraTest string) Output {
	t.Helper()
	mod, out, err := generateHostile(t, src)
	if err != nil {
		t.Fatalf("generation failed: %v", err)
	}
	if gcc, err := exec.LookPath("gcc"); err == nil {
		want := cLayoutWant(mod)
		got := gccLayout(t, gcc, []byte(hostilePrelude+src), mod)
		for key, w := range want {
			if got[key] != w {
				t.Errorf("%s: gcc %d, model %d", key, got[key], w)
			}
		}
	}
	if testing.Short() {
		return out
	}
	dir := t.TempDir()
	files := map[string][]byte{"go.mod": []byte("module hostilecu\n\ngo 1.25\n")}
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
	run := "TestRecordLayouts"
	if extraTest != "" {
		files["extra_test.go"] = []byte(extraTest)
		run += "|TestExtra"
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"vet", "."}, {"test", "-count=1", "-run", run, "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s\n%s", args, err, b, out["zcu_cuda12040_funcs.go"])
		}
	}
	return out
}

// Parameters named like what the generated bodies use are renamed.
func TestHostileParameterNames(t *testing.T) {
	src := `
typedef struct CUctx_st *CUcontext;
CUresult cuParams(int proc, int resultError, int CUresult, int _, int fn, int C, int unsafe, int missing, int func, int type);
CUresult cuParams2(void *unsafe, int fn_, int fn, CUcontext CUcontext, int p3, int);
`
	out := mustBuild(t, src, "")
	funcs := string(out["zcu_cuda12040_funcs.go"])
	for _, want := range []string{
		"func Params(proc_ int32, resultError_ int32, CUresult_ int32, __ int32, fn_ int32, C_ int32, unsafe_ int32, missing_ int32, func_ int32, type_ int32) error",
		"func Params2(unsafe_ unsafe.Pointer, fn_ int32, fn__ int32, CUcontext CUcontext, p3 int32, p5 int32) error",
	} {
		if !strings.Contains(funcs, want) {
			t.Errorf("the generated code does not have\n\t%s", want)
		}
	}
}

// A function whose Go name a handwritten file of package cu declares is
// refused, naming the C function and the file; the names come from those
// files, so a new one is covered without a list to update.
func TestHostileHandwrittenNames(t *testing.T) {
	hw := packageHandwritten(t)
	for _, goName := range []string{"Load", "HeaderVersion", "Proc", "DriverVersionLoaded", "LibraryEnv",
		"LoadError", "MissingFunctionError", "ErrNoDriver", "ErrMissingFunction", "TestRecordLayouts"} {
		t.Run(goName, func(t *testing.T) {
			file := hw.names[goName]
			if file == "" {
				t.Skipf("package cu's handwritten files do not declare %s (any more)", goName)
			}
			mustFail(t, "CUresult cu"+goName+"(void);\n", "function cu"+goName, "Go name "+goName, file)
		})
	}
	t.Run("new handwritten name", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "extra.go"), []byte("package cu\n\nfunc Brandnew() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "zcu_cuda12040_funcs.go"), []byte("package cu\n\nfunc Generated() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		hw, err := readHandwritten(dir)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := Model([]byte(hostilePrelude + "CUresult cuBrandnew(void);\nCUresult cuGenerated(void);\n"))
		if err != nil {
			t.Fatal(err)
		}
		m, v := smallManifest()
		_, err = Generate(m, v, v.SHA256, mod, nil, hw)
		if err == nil || !strings.Contains(err.Error(), "function cuBrandnew: its Go name Brandnew is already declared by extra.go") {
			t.Fatalf("error %v does not name cuBrandnew and extra.go", err)
		}
		if strings.Contains(err.Error(), "Generated") {
			t.Errorf("error %v counts a generated file as handwritten", err)
		}
	})
}

// Two declarations that become one Go name are refused, naming both.
func TestHostileGoNameCollisions(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"cuFoo and cu_Foo":        {"CUresult cuFoo(void);\nCUresult cu_Foo(void);\n", []string{"function cuFoo and function cu_Foo: both are Foo in Go"}},
		"cuFoo and cufoo":         {"CUresult cuFoo(void);\nCUresult cufoo(void);\n", []string{"function cuFoo and function cufoo"}},
		"function and type":       {"typedef int CUdev;\nCUresult cuCUdev(void);\n", []string{"function cuCUdev", "typedef CUdev", "both are CUdev"}},
		"function and enumerator": {"enum CUe { Baz = 1 };\nCUresult cuBaz(void);\n", []string{"enumerator Baz", "function cuBaz"}},
		"function and macro":      {"#define Qux 1\nCUresult cuQux(void);\n", []string{"macro Qux", "function cuQux"}},
		"tag and typedef":         {"struct CUt { int a; };\ntypedef int CUt;\n", []string{"struct CUt", "typedef CUt"}},
		"member type and typedef": {"typedef struct { struct { int a; } in; } CUp;\ntypedef int CUp_in;\n", []string{"struct CUp_in", "typedef CUp_in"}},
		"predeclared type":        {"typedef unsigned long uintptr;\n", []string{"typedef uintptr", "predeclared"}},
		"predeclared function":    {"#define len 3\n", []string{"macro len", "predeclared"}},
		"import":                  {"typedef int strconv;\n", []string{"typedef strconv", "import of strconv"}},
		"receiver":                {"enum CUx { x = 1 };\n", []string{"enumerator x", "receiver"}},
		"helper":                  {"#define procTable 1\n", []string{"macro procTable"}},
	} {
		t.Run(name, func(t *testing.T) { mustFail(t, c.src, c.want...) })
	}
}

// Enumerators beyond int32 get an enum type of C's size, or a refusal.
func TestHostileEnumRange(t *testing.T) {
	src := `
typedef enum CUbig_enum { CU_BIG_A = 0x100000000, CU_BIG_B = 1 } CUbig;
typedef enum CUall_enum { CU_ALL = 0xFFFFFFFFFFFFFFFFULL, CU_ALL_HIGH = 0x8000000000000000ULL } CUall;
typedef enum CUwide_enum { CU_WIDE_NEG = -1, CU_WIDE_POS = 0x80000000 } CUwide;
typedef enum CUhigh_enum { CU_HIGH = 0x80000000 } CUhigh;
typedef struct { char c; CUbig big; CUhigh high; CUall all; CUwide wide; } CUenums;
CUresult cuEnums(CUenums *e, CUbig big, CUall all, CUwide wide, CUhigh high);
CUresult cuEnumsByValue(CUenums e);
`
	extra := `package cu

import "testing"

func TestExtra(t *testing.T) {
	if CU_ALL != 18446744073709551615 || CU_ALL_HIGH != 1<<63 || CU_BIG_A != 1<<32 || CU_WIDE_NEG != -1 || CU_WIDE_POS != 1<<31 || CU_HIGH != 1<<31 {
		t.Error("an enumerator has the wrong value")
	}
	if CU_ALL.String() != "CU_ALL" || CUall(5).String() != "CUall(5)" || CUall(1<<63+1).String() != "CUall(9223372036854775809)" {
		t.Errorf("String: %s %s %s", CU_ALL, CUall(5), CUall(1<<63+1))
	}
}
`
	out := mustBuild(t, src, extra)
	types := string(out["zcu_cuda12040_types.go"])
	for _, want := range []string{"type CUbig int64", "type CUall uint64", "type CUwide int64", "type CUhigh uint32"} {
		if !strings.Contains(types, want) {
			t.Errorf("the generated code does not have %q", want)
		}
	}
	t.Run("packed", func(t *testing.T) {
		mustFail(t, "typedef enum CUp_enum { CU_P = 1 } __attribute__((packed)) CUp;\n", "enum CUp", "packed")
	})
}

// Records aligned beyond what their members need get C's size and
// alignment; what Go or the by-value C copy cannot reproduce is refused.
func TestHostileOveraligned(t *testing.T) {
	src := `
typedef struct __attribute__((aligned(64))) CUa_st { int a[15]; } CUa;
typedef struct { char c; CUa a; } CUouter;
typedef struct { int a; } __attribute__((aligned(8))) CUa8;
typedef struct { char c; CUa8 x[3]; } CUouter8;
typedef struct { char c; int a __attribute__((aligned(16))); } CUfield;
typedef int CUint16 __attribute__((aligned(16)));
typedef struct { char c; CUint16 a; } CUtyped;
typedef struct { char c; _Alignas(32) int a; } CUalignas;
CUresult cuAligned(CUa *a, CUouter *o, CUa8 *a8, CUouter8 *o8, CUfield *f, CUtyped *t, CUalignas *s);
CUresult cuAlignedByValue(CUa a, CUa8 a8);
`
	extra := `package cu

import (
	"testing"
	"unsafe"
)

func TestExtra(t *testing.T) {
	if unsafe.Sizeof(CUa{}) != 64 || unsafe.Alignof(CUa{}) != 8 || unsafe.Sizeof(CUa8{}) != 8 || unsafe.Alignof(CUa8{}) != 8 {
		t.Errorf("CUa: size %d align %d; CUa8: size %d align %d", unsafe.Sizeof(CUa{}), unsafe.Alignof(CUa{}), unsafe.Sizeof(CUa8{}), unsafe.Alignof(CUa8{}))
	}
	if unsafe.Sizeof([2]CUa{}) != 128 || unsafe.Offsetof(CUouter8{}.X) != 8 {
		t.Error("arrays and members of aligned records are not laid out as in C")
	}
}
`
	mustBuild(t, src, extra)
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"mode":               {"typedef int CUi8 __attribute__((mode(QI)));\n", []string{"CUi8", "mode"}},
		"vector_size field":  {"typedef struct { char c; int a __attribute__((vector_size(16))); } CUv;\n", []string{"CUv", "vector_size"}},
		"calling convention": {"CUresult __attribute__((ms_abi)) cuMs(int a);\n", []string{"cuMs", "ms_abi"}},
		"packed struct":      {"typedef struct __attribute__((packed)) { char c; long a; } CUpk;\nCUresult cuPk(CUpk *p);\n", []string{"CUpk", "packed"}},
		"by value, aligned member": {"typedef struct { char c; int a __attribute__((aligned(16))); } CUbv;\nCUresult cuBv(CUbv v);\n",
			[]string{"CUbv is passed by value", "member a"}},
	} {
		t.Run(name, func(t *testing.T) { mustFail(t, c.src, c.want...) })
	}
}

// boundedFailure checks that the generator refuses src within limit, with
// an error containing want, and without allocating more than maxAlloc in all.
func boundedFailure(t *testing.T, src string, limit time.Duration, maxAlloc uint64, want ...string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Model([]byte(src))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if took > limit {
		t.Errorf("took %v, more than %v", took, limit)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
		t.Errorf("allocated %d MB, more than %d MB", alloc>>20, maxAlloc>>20)
	}
	t.Logf("%v, %d MB allocated: %v", took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20, err)
}

// A header that includes itself, or anything but the C library.
// TestHostileEndInsideDeclarator: cc's parser loops forever on a header
// that ends inside a declarator's qualifiers; found by FuzzModel.
func TestHostileEndInsideDeclarator(t *testing.T) {
	for _, src := range []string{"int *", "*/\n#if N<d\n#endif\nint * const", "#define P *\nint P"} {
		t.Run(src, func(t *testing.T) {
			boundedFailure(t, src, 10*time.Second, 1<<30, "ends inside a declaration")
		})
	}
}

func TestHostileSelfInclude(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"quoted":       {"#include \"cuda.h\"\n" + hostilePrelude, []string{"cuda.h:1:", `#include "cuda.h"`, "only the standard C headers"}},
		"__FILE__":     {hostilePrelude + "#include __FILE__\n", []string{"cuda.h:5:", "#include __FILE__"}},
		"system":       {"#include <cuda.h>\n" + hostilePrelude, []string{"cuda.h:1:", "#include <cuda.h>"}},
		"spliced":      {"#inc\\\nlude \"cu\\\nda.h\"\n" + hostilePrelude, []string{"cuda.h:1:", "#include"}},
		"behind #if 0": {"#if 0\n#include \"cuda.h\"\n#endif\n" + hostilePrelude, []string{"cuda.h:2:"}},
		"include_next": {"#include_next <stdlib.h>\n" + hostilePrelude, []string{"#include_next"}},
		"#line":        {"#line 1 \"stdint.h\"\n" + hostilePrelude, []string{"#line"}},
	} {
		t.Run(name, func(t *testing.T) { boundedFailure(t, c.src, 10*time.Second, 1<<30, c.want...) })
	}
}

// bomb is n macros, each expanding to k copies of the one before.
func bomb(n, k int) string {
	var b strings.Builder
	b.WriteString("#define B0 1\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "#define B%d (B%d", i, i-1)
		for j := 1; j < k; j++ {
			fmt.Fprintf(&b, "+B%d", i-1)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// A few hundred bytes of nested macros would expand to 8^9 tokens.
func TestHostileMacroBomb(t *testing.T) {
	src := bomb(9, 8)
	if len(src) > 400 {
		t.Fatalf("the bomb is %d bytes", len(src))
	}
	t.Run("defined", func(t *testing.T) {
		// Never used: only evaluating every macro (EvalAllMacros) meets it.
		boundedFailure(t, hostilePrelude+src, 10*time.Second, 2<<30, "preprocessing went past its limit", "expanding macro B")
	})
	t.Run("used", func(t *testing.T) {
		boundedFailure(t, hostilePrelude+src+"enum CUbomb { CU_BOMB = B9 };\n", 10*time.Second, 2<<30, "cuda.h:15:", "limit")
	})
	t.Run("up to the limit", func(t *testing.T) {
		// Bombs that grow until one is refused: each accepted one has
		// every macro's value (evaluating all macros stops silently when
		// cc's limit runs out; the probe pass must refuse first).
		for n := 8; ; n++ {
			mod, err := Model([]byte(hostilePrelude + bomb(n, 2)))
			if err != nil {
				if !strings.Contains(err.Error(), "limit") {
					t.Fatal(err)
				}
				t.Logf("2^%d refused: %v", n, err)
				if n < 12 {
					t.Errorf("refused a bomb of only 2^%d tokens", n)
				}
				break
			}
			got := map[string]string{}
			for _, c := range mod.Constants {
				got[c.Name] = c.Value
			}
			for i := 0; i <= n; i++ {
				if name := fmt.Sprintf("B%d", i); got[name] != fmt.Sprint(1<<i) {
					t.Fatalf("2^%d: %s = %q, want %d", n, name, got[name], 1<<i)
				}
			}
		}
	})
	t.Run("in an #if", func(t *testing.T) {
		boundedFailure(t, hostilePrelude+src+"#if B9\n#endif\n", 10*time.Second, 2<<30, "cuda.h:15:", "limit")
	})
}

// A header too big to be a cuda.h is refused before it is read.
func TestHostileHugeHeader(t *testing.T) {
	boundedFailure(t, hostilePrelude+strings.Repeat("/* padding */\n", maxHeaderBytes/14+1), 10*time.Second, 1<<30, "more than")
}

// Whatever the limits above do not foresee, Parse gives up in time.
func TestParseTimeout(t *testing.T) {
	defer func(d time.Duration) { parseTimeout = d }(parseTimeout)
	parseTimeout = time.Nanosecond
	_, err := Parse("cuda.h", realHeader(t))
	if err == nil || !strings.Contains(err.Error(), "gave up after") {
		t.Fatalf("error %v, want a time out", err)
	}
}

// Each cached header needs less than an eighth of the expansion limit, so
// that a new CUDA version is far from it.
func TestExpansionHeadroom(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := hostConfig()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range m.Versions {
		src, _, err := v.ReadHeader()
		if errors.Is(err, manifest.ErrNotCached) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parse(base, "cuda.h", string(src), expansionLimit/8); err != nil {
			t.Errorf("CUDA %s: %v", v.Version, err)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no header cached")
	}
}
