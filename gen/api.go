package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/internal/manifest"
)

// API is the part of a version's model that the API diff compares:
// functions with their versioned symbols and signatures, enums with their
// values, and the layout of structs and unions. It is written next to the
// generated code (zcu_<tag>_api.txt), so that versions whose header is
// cached on another machine only can still be compared anywhere.
type API struct {
	Version string
	Funcs   []APIFunc   // by Name
	Enums   []APIEnum   // by Name
	Records []APIRecord // by Name
	// Typedefs are the named types that are no enum or record definition:
	// an API renames a struct by keeping the old name as a typedef of the
	// new.
	Typedefs []APITypedef // by Name
}

// APITypedef is a typedef and what it names: the C spelling of its target,
// or "handle" for an opaque driver handle.
type APITypedef struct {
	Name, Target string
}

// APIFunc is a function as C declares it.
type APIFunc struct {
	Name   string // API name: cuCtxCreate
	Symbol string // the versioned symbol it selects: cuCtxCreate_v2
	Result string // C spelling of the result type
	Params []APIParam
}

// APIParam is a parameter: its C type and its name.
type APIParam struct {
	Type, Name string
}

// APIEnum is an enumeration with its values in declaration order.
type APIEnum struct {
	Name   string
	Type   string // C spelling of its integer type
	Values []APIValue
}

// APIValue is an enumerator; Value is its decimal spelling.
type APIValue struct {
	Name, Value string
}

// APIRecord is a struct or union with its layout.
type APIRecord struct {
	Name   string
	Union  bool
	Size   int64
	Align  int
	Fields []APIField
}

// APIField is a member of a record: name, C type and byte offset.
type APIField struct {
	Name   string
	Type   string
	Offset int64
}

// apiFile names the API data of a version.
func apiFile(tag string) string { return "zcu_" + tag + "_api.txt" }

// apiOf takes the comparable API out of a model.
func apiOf(version string, mod *Module) *API {
	a := &API{Version: version}
	for _, fn := range mod.Functions {
		f := APIFunc{Name: fn.Name, Symbol: fn.Symbol, Result: cSpelling(fn.Result)}
		for _, p := range fn.Params {
			f.Params = append(f.Params, APIParam{Type: cSpelling(p.Type), Name: p.Name})
		}
		a.Funcs = append(a.Funcs, f)
	}
	for _, e := range mod.Enums {
		ae := APIEnum{Name: e.Name, Type: e.Type}
		unsigned := basics[e.Type].unsigned
		for _, v := range e.Values {
			lit := strconv.FormatInt(v.Value, 10)
			if unsigned {
				lit = strconv.FormatUint(uint64(v.Value), 10)
			}
			ae.Values = append(ae.Values, APIValue{Name: v.Name, Value: lit})
		}
		a.Enums = append(a.Enums, ae)
	}
	for _, r := range mod.Records {
		ar := APIRecord{Name: r.Name, Union: r.Union, Size: r.Size, Align: r.Align}
		for _, f := range r.Fields {
			ar.Fields = append(ar.Fields, APIField{Name: f.Name, Type: cSpelling(f.Type), Offset: f.Offset})
		}
		a.Records = append(a.Records, ar)
	}
	for _, td := range mod.Typedefs {
		target := cSpelling(td.Target)
		if td.Kind == Handle {
			target = "handle"
		}
		a.Typedefs = append(a.Typedefs, APITypedef{Name: td.Name, Target: target})
	}
	a.sort()
	return a
}

func (a *API) sort() {
	sort.Slice(a.Typedefs, func(i, j int) bool { return a.Typedefs[i].Name < a.Typedefs[j].Name })
	sort.Slice(a.Funcs, func(i, j int) bool { return a.Funcs[i].Name < a.Funcs[j].Name })
	sort.Slice(a.Enums, func(i, j int) bool { return a.Enums[i].Name < a.Enums[j].Name })
	sort.Slice(a.Records, func(i, j int) bool { return a.Records[i].Name < a.Records[j].Name })
}

// cSpelling writes a model type the way C declares it, without a name.
func cSpelling(t Type) string {
	switch t.Kind {
	case Basic:
		return t.Basic
	case Named:
		return t.Name
	case Void:
		return "void"
	case FuncPtr:
		// The model keeps no function pointer's signature; cuda.h names
		// every one it passes (CUhostFn), so this spelling is rare.
		return "void (*)()"
	case Pointer:
		if t.Elem == nil {
			return "void *"
		}
		e := cSpelling(*t.Elem)
		if strings.HasSuffix(e, "*") {
			return e + "*"
		}
		return e + " *"
	case Array:
		return fmt.Sprintf("%s [%d]", cSpelling(*t.Elem), t.Len)
	}
	return fmt.Sprintf("?%d", t.Kind)
}

// The records of an API file, one a line, fields separated by tabs:
//
//	func	NAME	SYMBOL	RESULT	TYPE NAME	…	(one field per parameter)
//	enum	NAME	TYPE
//	value	ENUM	NAME	VALUE
//	struct	NAME	SIZE	ALIGN	(or union)
//	field	RECORD	NAME	TYPE	OFFSET
//	typedef	NAME	TARGET	(TARGET is "handle" for an opaque handle)
//
// Lines starting with # are comments.

// apiText renders a as the content of its API file.
func apiText(v manifest.Version, a *API) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# go run ./gen -version %s\n", v.Version)
	fmt.Fprintf(&b, "# Functions, enums, record layouts and typedefs of cuda.h of CUDA %s, for `go run ./gen -diff`; one record a line, fields separated by tabs; DO NOT EDIT.\n", v.Version)
	for _, f := range a.Funcs {
		fields := []string{"func", f.Name, f.Symbol, f.Result}
		for _, p := range f.Params {
			fields = append(fields, paramSpelling(p))
		}
		b.WriteString(strings.Join(fields, "\t") + "\n")
	}
	for _, e := range a.Enums {
		fmt.Fprintf(&b, "enum\t%s\t%s\n", e.Name, e.Type)
		for _, v := range e.Values {
			fmt.Fprintf(&b, "value\t%s\t%s\t%s\n", e.Name, v.Name, v.Value)
		}
	}
	for _, r := range a.Records {
		kw := "struct"
		if r.Union {
			kw = "union"
		}
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\n", kw, r.Name, r.Size, r.Align)
		for _, f := range r.Fields {
			fmt.Fprintf(&b, "field\t%s\t%s\t%s\t%d\n", r.Name, f.Name, f.Type, f.Offset)
		}
	}
	for _, td := range a.Typedefs {
		fmt.Fprintf(&b, "typedef\t%s\t%s\n", td.Name, td.Target)
	}
	return b.Bytes()
}

// paramSpelling declares a parameter as C would: "CUcontext *pctx".
func paramSpelling(p APIParam) string {
	if strings.HasSuffix(p.Type, "*") {
		return p.Type + p.Name
	}
	return p.Type + " " + p.Name
}

// parseParam undoes paramSpelling: the name is the identifier at the end.
func parseParam(s string) (APIParam, error) {
	i := len(s)
	for i > 0 && isIdentByte(s[i-1]) {
		i--
	}
	typ := strings.TrimRight(s[:i], " ")
	if i == len(s) || typ == "" || s[i] >= '0' && s[i] <= '9' {
		return APIParam{}, fmt.Errorf("parameter %q: want TYPE NAME", s)
	}
	return APIParam{Type: typ, Name: s[i:]}, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parseAPI reads an API file; name is used in errors.
func parseAPI(version string, data []byte, name string) (*API, error) {
	a := &API{Version: version}
	enums := map[string]*APIEnum{}
	records := map[string]*APIRecord{}
	var enumOrder, recordOrder []string
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, i+1, fmt.Sprintf(format, args...))
		}
		f := strings.Split(line, "\t")
		want := map[string]int{"enum": 3, "value": 4, "struct": 4, "union": 4, "field": 5, "typedef": 3}[f[0]]
		if f[0] == "func" {
			want = max(4, len(f))
		}
		if want == 0 {
			return nil, bad("unknown record %q", f[0])
		}
		if len(f) != want {
			return nil, bad("%s record with %d fields, want %d", f[0], len(f), want)
		}
		for _, s := range f {
			if s == "" {
				return nil, bad("empty field")
			}
		}
		switch f[0] {
		case "func":
			fn := APIFunc{Name: f[1], Symbol: f[2], Result: f[3]}
			for _, s := range f[4:] {
				p, err := parseParam(s)
				if err != nil {
					return nil, bad("%v", err)
				}
				fn.Params = append(fn.Params, p)
			}
			a.Funcs = append(a.Funcs, fn)
		case "enum":
			if enums[f[1]] != nil {
				return nil, bad("enum %s twice", f[1])
			}
			enums[f[1]] = &APIEnum{Name: f[1], Type: f[2]}
			enumOrder = append(enumOrder, f[1])
		case "value":
			e := enums[f[1]]
			if e == nil {
				return nil, bad("value of enum %s before the enum", f[1])
			}
			e.Values = append(e.Values, APIValue{Name: f[2], Value: f[3]})
		case "struct", "union":
			if records[f[1]] != nil {
				return nil, bad("record %s twice", f[1])
			}
			size, err1 := strconv.ParseInt(f[2], 10, 64)
			align, err2 := strconv.Atoi(f[3])
			if err := errors.Join(err1, err2); err != nil {
				return nil, bad("%v", err)
			}
			records[f[1]] = &APIRecord{Name: f[1], Union: f[0] == "union", Size: size, Align: align}
			recordOrder = append(recordOrder, f[1])
		case "field":
			r := records[f[1]]
			if r == nil {
				return nil, bad("field of record %s before the record", f[1])
			}
			off, err := strconv.ParseInt(f[4], 10, 64)
			if err != nil {
				return nil, bad("%v", err)
			}
			r.Fields = append(r.Fields, APIField{Name: f[2], Type: f[3], Offset: off})
		case "typedef":
			a.Typedefs = append(a.Typedefs, APITypedef{Name: f[1], Target: f[2]})
		}
	}
	for _, n := range enumOrder {
		a.Enums = append(a.Enums, *enums[n])
	}
	for _, n := range recordOrder {
		a.Records = append(a.Records, *records[n])
	}
	a.sort()
	return a, nil
}

// errNoAPI reports that neither a version's header nor its API file is here.
var errNoAPI = errors.New("no API data")

// loadAPI returns the API of v: from its model when its header is cached,
// else from the API file that generation left in out.
func loadAPI(v manifest.Version, out string) (*API, error) {
	src, path, err := v.ReadHeader()
	if err == nil {
		mod, err := Model(src)
		if err != nil {
			return nil, fmt.Errorf("CUDA %s: %w", v.Version, err)
		}
		return apiOf(v.Version, mod), nil
	}
	if !errors.Is(err, manifest.ErrNotCached) {
		return nil, err
	}
	file := filepath.Join(out, apiFile(v.Tag))
	data, ferr := os.ReadFile(file)
	if errors.Is(ferr, os.ErrNotExist) {
		return nil, fmt.Errorf("CUDA %s: %w: its header is not cached at %s and %s does not exist (generate %s where its header is)", v.Version, errNoAPI, path, file, v.Version)
	}
	if ferr != nil {
		return nil, ferr
	}
	return parseAPI(v.Version, data, file)
}
