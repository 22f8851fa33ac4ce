package main

import (
	"strings"

	"modernc.org/cc/v4"
)

// A library's functions take types that other headers declare. Each such
// type is one Go type across the packages, so that values pass between
// them unchanged: the package that binds the header that declares it
// owns it (cublasOperation_t is cublas.CublasOperation_t in package
// cusolver too), and the types of the CUDA runtime's headers, which no
// package binds, are given here.
type sharedType struct {
	pkg  string // package under generated/, "" for a Go predeclared type
	name string
}

// runtimeTypes maps the runtime's typedefs the libraries take to their Go
// type. The runtime's handles are the driver's: cudaStream_t and CUstream
// are both struct CUstream_st *, so a *cuda.Stream's Raw passes straight
// to cuBLAS. cuComplex is float2, two floats, which is Go's complex64 in
// size, member order and calling convention (a pointer to one is 8-byte
// aligned in C; Go's allocator aligns complex64 values so too).
var runtimeTypes = map[string]sharedType{
	"cudaStream_t":    {"cu", "CUstream"},
	"cudaEvent_t":     {"cu", "CUevent"},
	"cudaGraph_t":     {"cu", "CUgraph"},
	"cuComplex":       {"", "complex64"},
	"cuFloatComplex":  {"", "complex64"},
	"cuDoubleComplex": {"", "complex128"},
}

// complexBasic is the C spelling the model gives Go's complex types.
var complexBasic = map[string]string{"complex64": "float _Complex", "complex128": "double _Complex"}

// foreign returns the model of t, named by typedef td of a header the
// builder does not bind, when another package owns that type.
func (b *builder) foreign(t cc.Type, td *cc.Declarator) (Type, bool) {
	file, ok := strings.CutPrefix(td.Position().Filename, setRoot+"/")
	if !ok {
		return Type{}, false // a C library type: int32_t and kin
	}
	name := td.Name()
	if rt, ok := b.runtimeType(name, t); ok {
		return rt, true
	}
	for _, l := range libraries {
		for _, f := range l.ownFiles() {
			if f == file {
				return Type{Kind: Named, Name: exportName(name), Pkg: l.pkg, Under: b.abiOf(t, name)}, true
			}
		}
	}
	b.fail("%s: type %s of %s is owned by no package (give it one in gen/shared.go or gen/library.go)", b.prefix, name, file)
	return Type{Kind: Void}, true
}

// runtimeType returns the model of the runtime's type name (see
// runtimeTypes), whose C type is t.
func (b *builder) runtimeType(name string, t cc.Type) (Type, bool) {
	st, ok := runtimeTypes[name]
	switch {
	case !ok:
		return Type{}, false
	case st.pkg == "":
		return Type{Kind: Basic, Basic: complexBasic[st.name]}, true
	}
	return Type{Kind: Named, Name: st.name, Pkg: st.pkg, Under: b.abiOf(t, name)}, true
}

// abiOf is what a type of another package is when it crosses into C: an
// integer for an enum, a pointer for a handle.
func (b *builder) abiOf(t cc.Type, name string) *Type {
	switch {
	case t.Kind() == cc.Enum:
		under, ok := basicSpelling[t.(*cc.EnumType).UnderlyingType().Kind()]
		if ok {
			return &Type{Kind: Basic, Basic: under}
		}
	case t.Kind() == cc.Ptr:
		return &Type{Kind: Pointer}
	default:
		if s, ok := basicSpelling[t.Kind()]; ok {
			return &Type{Kind: Basic, Basic: s}
		}
	}
	b.fail("%s: type %s of another package is a %s, which cannot cross packages", b.prefix, name, t.Kind())
	return &Type{Kind: Void}
}
