package main

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"
	"unicode"
)

// typeIndex answers questions about named types: what a name resolves to,
// and each type's size and alignment in Go and C alike.
type typeIndex struct {
	enums    map[string]*Enum
	records  map[string]*Record
	typedefs map[string]*Typedef
}

func newTypeIndex(m *Module) *typeIndex {
	x := &typeIndex{enums: map[string]*Enum{}, records: map[string]*Record{}, typedefs: map[string]*Typedef{}}
	for i := range m.Enums {
		x.enums[m.Enums[i].Name] = &m.Enums[i]
	}
	for i := range m.Records {
		x.records[m.Records[i].Name] = &m.Records[i]
	}
	for i := range m.Typedefs {
		x.typedefs[m.Typedefs[i].Name] = &m.Typedefs[i]
	}
	return x
}

// basicInfo describes a C arithmetic type as Go and cgo spell it.
type basicInfo struct {
	goType   string
	cgo      string // name after "C."
	size     int64
	integer  bool
	unsigned bool
}

var basics = map[string]basicInfo{
	"char":               {"byte", "char", 1, true, false},
	"signed char":        {"int8", "schar", 1, true, false},
	"unsigned char":      {"uint8", "uchar", 1, true, true},
	"short":              {"int16", "short", 2, true, false},
	"unsigned short":     {"uint16", "ushort", 2, true, true},
	"int":                {"int32", "int", 4, true, false},
	"unsigned int":       {"uint32", "uint", 4, true, true},
	"long":               {"int64", "long", 8, true, false},
	"unsigned long":      {"uint64", "ulong", 8, true, true},
	"long long":          {"int64", "longlong", 8, true, false},
	"unsigned long long": {"uint64", "ulonglong", 8, true, true},
	"float":              {"float32", "float", 4, false, false},
	"double":             {"float64", "double", 8, false, false},
	// C99's bool (cuFileDriverSetPollMode's poll), which cgo spells as Go's.
	"_Bool": {"bool", "_Bool", 1, false, false},
	// cuComplex and cuDoubleComplex; see runtimeTypes.
	"float _Complex":  {"complex64", "complexfloat", 8, false, false},
	"double _Complex": {"complex128", "complexdouble", 16, false, false},
}

// resolved is what a type is underneath its names.
type resolved struct {
	kind   TypeKind // Basic, Pointer, FuncPtr, Array, or Named for enums and records
	basic  string
	enum   *Enum
	record *Record
	handle bool // an opaque driver handle (a pointer in C, uintptr in Go)
}

func (x *typeIndex) resolve(t Type) (resolved, error) {
	for depth := 0; depth < 64; depth++ {
		switch t.Kind {
		case Basic:
			if _, ok := basics[t.Basic]; !ok {
				return resolved{}, fmt.Errorf("unsupported C type %q", t.Basic)
			}
			return resolved{kind: Basic, basic: t.Basic}, nil
		case Pointer, FuncPtr, Array, Void:
			return resolved{kind: t.Kind}, nil
		case Named:
			if t.Pkg != "" {
				if t.Under == nil {
					return resolved{}, fmt.Errorf("type %s.%s: what it is in C is not known", t.Pkg, t.Name)
				}
				r, err := x.resolve(*t.Under)
				r.handle = r.kind == Pointer
				return r, err
			}
			if e, ok := x.enums[t.Name]; ok {
				return resolved{kind: Named, enum: e}, nil
			}
			if r, ok := x.records[t.Name]; ok {
				return resolved{kind: Named, record: r}, nil
			}
			td, ok := x.typedefs[t.Name]
			if !ok {
				return resolved{}, fmt.Errorf("type %s is used but never declared", t.Name)
			}
			if td.Kind == Handle {
				return resolved{kind: Pointer, handle: true}, nil
			}
			t = td.Target
		}
	}
	return resolved{}, fmt.Errorf("type %s: typedef chain too deep", t.Name)
}

// layout returns a type's size and alignment under the C ABI of the host,
// which Go's layout matches for every type the model produces.
func (x *typeIndex) layout(t Type) (size int64, align int64, err error) {
	if t.Kind == Array {
		s, a, err := x.layout(*t.Elem)
		return s * t.Len, a, err
	}
	r, err := x.resolve(t)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case r.kind == Basic:
		b := basics[r.basic]
		return b.size, b.size, nil
	case r.kind == Pointer, r.kind == FuncPtr:
		return 8, 8, nil
	case r.enum != nil:
		b := basics[r.enum.Type]
		return b.size, b.size, nil
	case r.record != nil:
		return r.record.Size, goAlign(r.record), nil
	case r.kind == Array:
		// A typedef of an array.
		return x.layout(x.typedefs[t.Name].Target)
	}
	return 0, 0, fmt.Errorf("type %v has no layout", t)
}

// goAlign is the alignment Go can give a record: at most 8.
func goAlign(r *Record) int64 {
	if r.Align > 8 {
		return 8
	}
	return int64(r.Align)
}

// goName is the exported Go spelling of a C member name.
func goName(c string) string {
	s := strings.TrimLeft(c, "_")
	if s == "" {
		return "X" + c
	}
	r := []rune(s)
	if !unicode.IsLetter(r[0]) {
		return "X" + s
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// funcName is the Go name of a C function of library l: cuMemAlloc →
// MemAlloc, nvrtcCompileProgram → CompileProgram.
func (l *library) funcName(api string) string { return goName(strings.TrimPrefix(api, l.prefix)) }

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true,
	"if": true, "import": true, "interface": true, "map": true, "package": true, "range": true,
	"return": true, "select": true, "struct": true, "switch": true, "type": true, "var": true,
}

// bodyIdents are the identifiers the body of a generated binding uses
// besides its parameters (TestBodyIdents holds this list to the emitted
// code): a parameter of one of these names would hide it.
var bodyIdents = map[string]bool{
	"fn": true, "proc": true, "missing": true, "resultError": true, "CUresult": true, "C": true, "unsafe": true,
}

// paramNames gives a function's parameters Go names: their C names, but
// with "_" appended while a name is a Go keyword, the blank identifier, one
// of bodyIdents or another parameter's name; a name that is no Go
// identifier at all becomes pN.
func paramNames(fn Function) []string {
	names := make([]string, len(fn.Params))
	used := map[string]bool{}
	for i, p := range fn.Params {
		name := p.Name
		if !token.IsIdentifier(name) && !goKeywords[name] {
			name = "p" + strconv.Itoa(i)
		}
		for goKeywords[name] || bodyIdents[name] || name == "_" || used[name] {
			name += "_"
		}
		used[name] = true
		names[i] = name
	}
	return names
}
