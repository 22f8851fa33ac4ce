package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gocuda/gocuda/internal/manifest"
)

// testLib is a library of the tests' own small headers.
var testLib = &library{pkg: "testlib", header: "tl.h", prefix: "tl", result: "TlStatus"}

func parseTestSet(files map[string]string) (*Module, error) {
	set := HeaderSet{Main: "tl.h", Files: map[string][]byte{}}
	for name, text := range files {
		set.Files[name] = []byte(text)
	}
	h, err := ParseSet(testLib, set)
	if err != nil {
		return nil, err
	}
	return buildLib(h, testLib.prefix)
}

func TestParseSetBindsOnlyItsOwnFiles(t *testing.T) {
	mod, err := parseTestSet(map[string]string{
		"tl.h":       "#include \"tl_dep.h\"\n#include <stdint.h>\ntypedef enum { TL_OK } tlStatus;\ntlStatus tlRun(int64_t n);\n",
		"tl_dep.h":   "#include <nv/target>\nint tlHelper(int x);\n",
		"unused.hpp": "this is not C and is never included\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range mod.Functions {
		names = append(names, f.Symbol)
	}
	if diff := cmp.Diff([]string{"tlRun"}, names); diff != "" {
		t.Errorf("functions bound (-want +got):\n%s", diff)
	}
}

func TestParseSetRefusesIncludesOutsideTheSet(t *testing.T) {
	for _, inc := range []string{`"missing.h"`, `<cuda_runtime.h>`, `"../tl.h"`, `MACRO_NAME`} {
		_, err := parseTestSet(map[string]string{"tl.h": "#include " + inc + "\nint tlRun(void);\n"})
		if err == nil || !strings.Contains(err.Error(), "not a header of the pinned set") {
			t.Errorf("#include %s: got %v, want an error naming the pinned set", inc, err)
		}
	}
}

func TestParseSetStopsAtACxxOnlyHeaderReachedInC(t *testing.T) {
	_, err := parseTestSet(map[string]string{"tl.h": "#include <utility>\nint tlRun(void);\n"})
	if err == nil || !strings.Contains(err.Error(), "only in C++") {
		t.Fatalf("got %v, want the stand-in's #error", err)
	}
	// The same include in a C++ section is not reached.
	if _, err := parseTestSet(map[string]string{"tl.h": "#ifdef __cplusplus\n#include <utility>\n#endif\nint tlRun(void);\n"}); err != nil {
		t.Fatal(err)
	}
}

func TestParseSetBindsWhatInlineWrappersCall(t *testing.T) {
	mod, err := parseTestSet(map[string]string{"tl.h": `typedef enum { TL_OK } tlStatus;
extern tlStatus __tlCreate_1_2(int *h, int n);
static inline tlStatus tlCreate(int *h, int n) { return __tlCreate_1_2(h, n); }
extern tlStatus __tlSwap_1_2(int a, int b);
static inline tlStatus tlSwap(int a, int b) { return __tlSwap_1_2(b, a); }
`})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range mod.Functions {
		got[f.Symbol] = f.Name
	}
	// A wrapper that does more than pass its parameters on is not taken as
	// selecting a symbol: __tlSwap_1_2 is not named like the library's
	// functions, so it is not bound at all.
	if diff := cmp.Diff(map[string]string{"__tlCreate_1_2": "tlCreate"}, got); diff != "" {
		t.Errorf("symbol → name (-want +got):\n%s", diff)
	}
}

func TestParseSetNeedsAnOwnerForEveryForeignType(t *testing.T) {
	_, err := parseTestSet(map[string]string{
		"tl.h":    "#include \"other.h\"\nint tlRun(otherType x);\n",
		"other.h": "typedef enum { A } otherType;\n",
	})
	if err == nil || !strings.Contains(err.Error(), "otherType of other.h is owned by no package") {
		t.Fatalf("got %v, want an error naming the type and its header", err)
	}
}

// TestSharedTypesAreOneGoType checks, on the cached CUDA 12.4 headers, that
// the types one library takes from another header are that header's
// package's type: cuSOLVER's fill mode is cuBLAS's, streams are the
// driver's, complex numbers are Go's.
func TestSharedTypesAreOneGoType(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Lookup("12.4")
	if err != nil {
		t.Fatal(err)
	}
	files := newHeaderFiles()
	params := func(l *library, fn string) map[string]Type {
		src, _, err := files.read(v, l.header)
		var mod *Module
		if err == nil {
			mod, err = l.model(src, v, v, files)
		}
		if errors.Is(err, manifest.ErrNotCached) {
			t.Skipf("CUDA 12.4 headers not cached (make headers): %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range mod.Functions {
			if f.Name == fn {
				ps := map[string]Type{}
				for _, p := range f.Params {
					ps[p.Name] = p.Type
				}
				return ps
			}
		}
		t.Fatalf("%s has no %s", l.header, fn)
		return nil
	}
	syevd := params(cusolverLib, "cusolverDnSsyevd")
	uplo := syevd["uplo"]
	if uplo.Pkg != "cublas" || uplo.Name != "CublasFillMode_t" || uplo.Under == nil || !basics[uplo.Under.Basic].integer || basics[uplo.Under.Basic].size != 4 {
		t.Errorf("cusolverDnSsyevd's uplo is %+v, want cublas.CublasFillMode_t, a 4-byte integer in C", uplo)
	}
	stream := params(cublasLib, "cublasSetStream")["streamId"]
	if stream.Pkg != "cu" || stream.Name != "CUstream" {
		t.Errorf("cublasSetStream's stream is %+v, want cu.CUstream", stream)
	}
	alpha := params(cublasLib, "cublasCgemm")["alpha"]
	if alpha.Kind != Pointer || alpha.Elem == nil || alpha.Elem.Basic != "float _Complex" {
		t.Errorf("cublasCgemm's alpha is %+v, want a pointer to complex64", alpha)
	}
	dt := params(cublasLib, "cublasGemmEx")["Atype"]
	if dt.Pkg != "libtypes" || dt.Name != "CudaDataType" {
		t.Errorf("cublasGemmEx's Atype is %+v, want libtypes.CudaDataType", dt)
	}
}
