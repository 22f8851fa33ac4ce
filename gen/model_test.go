package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func basic(s string) Type        { return Type{Kind: Basic, Basic: s} }
func named(s string) Type        { return Type{Kind: Named, Name: s} }
func ptr(t Type) Type            { return Type{Kind: Pointer, Elem: &t} }
func array(n int64, t Type) Type { return Type{Kind: Array, Len: n, Elem: &t} }

var voidPtr = Type{Kind: Pointer}

func fld(name string, t Type, off int64) Field { return Field{Name: name, Type: t, Offset: off} }

func TestModelSmallHeader(t *testing.T) {
	src, err := os.ReadFile("testdata/small.h")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Model(src)
	if err != nil {
		t.Fatal(err)
	}
	result := named("CUresult")
	want := &Module{
		CUDAVersion: 12040,
		Functions: []Function{
			{Name: "cuAnon", Symbol: "cuAnon", Result: result, Params: []Param{{"a", ptr(named("CUanon"))}}, Proto: "CUresult cuAnon(CUanon *a)"},
			{Name: "cuByValue", Symbol: "cuByValue", Result: result, Params: []Param{{"loc", named("CUloc")}, {"ctx", named("CUcontext")}}, Proto: "CUresult cuByValue(CUloc loc, CUcontext ctx)"},
			{Name: "cuInit", Symbol: "cuInit", Result: result, Params: []Param{{"Flags", basic("unsigned int")}}, Proto: "CUresult cuInit(unsigned int Flags)"},
			// A versioned name chosen by a plain macro …
			{Name: "cuMemAlloc", Symbol: "cuMemAlloc_v2", Result: result, Params: []Param{{"dptr", ptr(named("CUdeviceptr"))}, {"bytesize", basic("unsigned long")}}, Proto: "CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)"},
			// … by a macro through a per-thread-stream wrapper …
			{Name: "cuMemcpy", Symbol: "cuMemcpy_v2", Result: result, Params: []Param{{"dst", named("CUdeviceptr")}, {"src", named("CUdeviceptr")}, {"ByteCount", basic("unsigned long")}}, Proto: "CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)"},
			// … and by a macro under #if CUDA_VERSION.
			{Name: "cuOld", Symbol: "cuOld_v3", Result: result, Params: []Param{{"rec", ptr(named("CUrec"))}, {"fn", named("CUhostFn")}, {"userData", voidPtr}}, Proto: "CUresult cuOld(CUrec *rec, CUhostFn fn, void *userData)"},
			{Name: "cuVoid", Symbol: "cuVoid", Result: result, Proto: "CUresult cuVoid(void)"},
		},
		Enums: []Enum{
			{Name: "CUresult", Type: "int", Values: []EnumValue{{"CUDA_SUCCESS", 0}, {"CUDA_ERROR_INVALID_VALUE", 1}, {"CUDA_ERROR_NOT_READY", 600}, {"CUDA_ERROR_ALIAS", 600}}},
			{Name: "CUsigned", Type: "int", Values: []EnumValue{{"CU_MINUS", -1}, {"CU_PLUS", 1}}},
		},
		Records: []Record{
			{Name: "CUanon", CName: "CUanon", Size: 8, Align: 4, Fields: []Field{
				fld("kind", basic("int"), 0),
				{Name: "anon1", Type: named("CUanon_anon1"), Offset: 4, Anonymous: true},
			}},
			{Name: "CUanon_anon1", Union: true, Size: 4, Align: 4, Fields: []Field{fld("i", basic("int"), 0), fld("f", basic("float"), 0)}},
			{Name: "CUloc", CName: "CUloc", Size: 8, Align: 4, Fields: []Field{fld("kind", named("CUsigned"), 0), fld("id", basic("int"), 4)}},
			{Name: "CUrec_v1", CName: "CUrec_v1", Size: 72, Align: 8, Fields: []Field{
				fld("flags", basic("unsigned int"), 0),
				fld("ptr", named("CUdeviceptr"), 8),
				fld("name", array(16, basic("char")), 16),
				fld("inner", named("CUrec_v1_inner"), 32),
				fld("fn", named("CUhostFn"), 48),
				fld("user", voidPtr, 56),
				fld("ctx", named("CUcontext"), 64),
			}},
			{Name: "CUrec_v1_inner", Size: 16, Align: 8, Fields: []Field{fld("a", basic("int"), 0), fld("u", named("CUrec_v1_inner_u"), 8)}},
			{Name: "CUrec_v1_inner_u", Union: true, Size: 8, Align: 8, Fields: []Field{fld("f", basic("float"), 0), fld("d", basic("double"), 0)}},
		},
		Typedefs: []Typedef{
			{Name: "CUcontext", Kind: Handle, Target: voidPtr},
			{Name: "CUdevice", Kind: Alias, Target: named("CUdevice_v1")},
			{Name: "CUdevice_v1", Kind: Defined, Target: basic("int")},
			{Name: "CUdeviceptr", Kind: Alias, Target: named("CUdeviceptr_v2")},
			{Name: "CUdeviceptr_v2", Kind: Defined, Target: basic("unsigned long long")},
			{Name: "CUhostFn", Kind: Defined, Target: Type{Kind: FuncPtr}},
			{Name: "CUrec", Kind: Alias, Target: named("CUrec_v1")},
			// uint64_t comes from a system header: it is Go's own type.
			{Name: "cuuint64_t", Kind: Defined, Target: basic("unsigned long")},
		},
		Constants: []Constant{
			{Name: "CUDA_VERSION", Value: "12040"},
			{Name: "CU_BIG", Value: "18446744073709551615"},
			{Name: "CU_FLAG_A", Value: "1"},
			{Name: "CU_FLAG_B", Value: "16"},
			{Name: "CU_NEG", Value: "-2"},
			{Name: "CU_PARAM_END", Value: "0", Pointer: true},
		},
		Excluded: []Exclusion{{Symbol: "cuVariadic", Reason: "variadic: cgo cannot call a C variadic function"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model mismatch (-want +got):\n%s", diff)
	}
}

func TestModelRejectsBadInput(t *testing.T) {
	for name, src := range map[string]string{
		"syntax error":     "typedef struct { int a; CUresult cuBroken(;",
		"bit-field":        "typedef struct { unsigned a : 3; } CUbits; int cuF(CUbits *b);",
		"unknown type":     "CUresult cuF(int);",
		"unterminated #if": "#if 1\nint cuF(void);\n",
	} {
		t.Run(name, func(t *testing.T) {
			m, err := Model([]byte(src))
			if err == nil {
				t.Fatalf("no error; model %+v", m)
			}
			t.Logf("error (as expected): %v", err)
		})
	}
}
