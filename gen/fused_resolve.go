package main

import (
	"errors"
	"fmt"
	"strings"
)

// fusedReserved are the names the wrappers of zfused.h declare besides
// the entry point's parameters: a parameter of one of these names gets
// "_arg" appended (fused.h's macros name their own locals with a trailing
// "_").
var fusedReserved = map[string]bool{"fn": true, "ctx": true, "r": true, "ops1": true, "ops2": true}

// fusedFunc is a function entry of the table resolved against one model.
type fusedFunc struct {
	entry  fusedEntry
	fn     *Function
	params []fusedParam // every parameter of the function, in order
	out    int          // index in params of the out parameter; -1 for none
	// outType is the C type of the local the out parameter points to;
	// outPtr says it is a pointer, which reaches uint64_t through uintptr_t.
	outType string
	outPtr  bool
}

type fusedParam struct {
	name  string // the header's name, unless it is one of fusedReserved
	cType string // as cParam passes it
}

// abi is the function's prototype as the C calls see it.
func (f *fusedFunc) abi() string {
	var types []string
	for _, p := range f.params {
		types = append(types, p.cType)
	}
	return "int (" + strings.Join(types, ", ") + ")"
}

// fusedRecord is a struct entry resolved against one model.
type fusedRecord struct {
	entry  fusedEntry
	rec    *Record
	fields []fusedField
}

type fusedField struct {
	name   string
	decl   string // "unsigned int gridDimX", "char name[16]"
	offset int64
}

// layout is the record's size and members as the C copy has them.
func (r *fusedRecord) layout() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes, alignment %d:", r.rec.Size, r.rec.Align)
	for _, f := range r.fields {
		fmt.Fprintf(&b, " %s at %d;", f.decl, f.offset)
	}
	return b.String()
}

// fusedSet is the whole table resolved against one model.
type fusedSet struct {
	funcs   []*fusedFunc // bound, hot and type entries, in table order
	records []*fusedRecord
}

// resolveFused resolves every entry against mod, the model of cuda.h of
// the version named version; errors name the entry's line.
func resolveFused(entries []fusedEntry, mod *Module, version string) (*fusedSet, error) {
	x := newTypeIndex(mod)
	byName := map[string]*Function{}
	for i := range mod.Functions {
		byName[mod.Functions[i].Name] = &mod.Functions[i]
	}
	set := &fusedSet{}
	for _, e := range entries {
		if e.kind == fusedStruct {
			r, err := resolveFusedRecord(x, e)
			if err != nil {
				return nil, fmt.Errorf("%s: struct %s: %w (cuda.h of CUDA %s)", e.pos, e.name, err, version)
			}
			set.records = append(set.records, r)
			continue
		}
		fn, ok := byName[e.name]
		if !ok {
			return nil, fmt.Errorf("%s: %s: cuda.h of CUDA %s declares no such function", e.pos, e.name, version)
		}
		f, err := resolveFusedFunc(x, e, fn)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w (cuda.h of CUDA %s: %s)", e.pos, e.name, err, version, fn.Proto)
		}
		set.funcs = append(set.funcs, f)
	}
	return set, nil
}

func resolveFusedFunc(x *typeIndex, e fusedEntry, fn *Function) (*fusedFunc, error) {
	if fn.Result.Kind != Named || fn.Result.Name != cuLib.result || fn.Result.Pkg != "" {
		return nil, fmt.Errorf("returns %s, not %s", cSpelling(fn.Result), cuLib.result)
	}
	if r, err := x.resolve(fn.Result); err != nil || r.enum == nil || r.enum.Type != "int" {
		return nil, fmt.Errorf("%s is not an int enum here", cuLib.result)
	}
	f := &fusedFunc{entry: e, fn: fn, out: -1}
	used := map[string]bool{}
	for i, p := range fn.Params {
		name := p.Name
		for fusedReserved[name] || used[name] {
			name += "_arg"
		}
		used[name] = true
		cp, err := x.cParam(p, name)
		if err != nil {
			return nil, err
		}
		if cp.byVal != nil {
			return nil, fmt.Errorf("parameter %s passes the record %s by value, which a fused call cannot forward", p.Name, cp.byVal.Name)
		}
		f.params = append(f.params, fusedParam{name: name, cType: cp.cType})
		if e.out == p.Name {
			f.out = i
			if f.outType, f.outPtr, err = fusedOutType(x, p); err != nil {
				return nil, fmt.Errorf("out=%s: %w", e.out, err)
			}
		}
	}
	if e.out != "" && f.out < 0 {
		var names []string
		for _, p := range fn.Params {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("out=%s names no parameter (the parameters: %s)", e.out, strings.Join(names, ", "))
	}
	return f, nil
}

// fusedOutType is the C type of the local that out parameter p points to:
// an integer or enum keeps its C type, a handle or function pointer is a
// uintptr_t, a pointer a void* (ptr true). The wrapper returns it as a
// uint64_t, which a floating-point value or a record cannot be.
func fusedOutType(x *typeIndex, p Param) (cType string, ptr bool, err error) {
	elem, ok, err := pointee(x, p.Type)
	switch {
	case err != nil:
		return "", false, err
	case !ok:
		return "", false, fmt.Errorf("parameter %s is not a pointer to a result", p.Name)
	case elem == nil:
		return "", false, fmt.Errorf("parameter %s is a void pointer: its result has no type", p.Name)
	}
	r, err := x.resolve(*elem)
	if err != nil {
		return "", false, err
	}
	switch {
	case r.kind == Basic && basics[r.basic].integer:
		return r.basic, false, nil
	case r.enum != nil:
		return r.enum.Type, false, nil
	case r.handle, r.kind == FuncPtr:
		return "uintptr_t", false, nil
	case r.kind == Pointer:
		return "void*", true, nil
	}
	return "", false, fmt.Errorf("parameter %s points to %s, which does not fit the uint64_t a fused call returns", p.Name, cSpelling(*elem))
}

// pointee returns what pointer type t points to (nil for void), through
// typedefs; ok is false when t is no pointer, or a handle, whose pointee
// is opaque.
func pointee(x *typeIndex, t Type) (elem *Type, ok bool, err error) {
	for depth := 0; depth < 64; depth++ {
		switch t.Kind {
		case Pointer:
			return t.Elem, true, nil
		case Named:
			if t.Pkg != "" {
				return nil, false, nil
			}
			td, found := x.typedefs[t.Name]
			if !found || td.Kind == Handle {
				return nil, false, nil
			}
			t = td.Target
		default:
			return nil, false, nil
		}
	}
	return nil, false, fmt.Errorf("type %s: typedef chain too deep", t.Name)
}

// resolveFusedRecord gives struct entry e the members of its C copy: each
// member's type as cParam passes it, at the offset a plain C struct gives
// it, which must be the header's.
func resolveFusedRecord(x *typeIndex, e fusedEntry) (*fusedRecord, error) {
	r, err := x.resolve(Type{Kind: Named, Name: e.name})
	if err != nil {
		return nil, errors.New("no such type")
	}
	if r.record == nil {
		return nil, errors.New("not a struct")
	}
	rec := r.record
	if rec.Union {
		return nil, errors.New("a union: only structs are supported")
	}
	fr := &fusedRecord{entry: e, rec: rec}
	var off, align int64 = 0, 1
	for _, fl := range rec.Fields {
		cType, dims, size, a, err := fusedFieldType(x, fl.Type)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", fl.Name, err)
		}
		off = roundUp(off, a)
		if off != fl.Offset {
			return nil, fmt.Errorf("member %s is at offset %d, where a plain C struct has it at %d (packed or aligned members are not supported)", fl.Name, fl.Offset, off)
		}
		fr.fields = append(fr.fields, fusedField{name: fl.Name, decl: cType + " " + fl.Name + dims, offset: fl.Offset})
		off += size
		align = max(align, a)
	}
	if size := roundUp(off, align); size != rec.Size || int64(rec.Align) != align {
		return nil, fmt.Errorf("%d bytes aligned to %d, where a plain C struct of its members has %d aligned to %d (packed or aligned structs are not supported)", rec.Size, rec.Align, size, align)
	}
	return fr, nil
}

// fusedFieldType is the C type of a member of type t in a fused struct,
// with the array dimensions that follow the member's name, its size and
// its alignment.
func fusedFieldType(x *typeIndex, t Type) (cType, dims string, size, align int64, err error) {
	if t.Kind == Array {
		cType, dims, size, align, err = fusedFieldType(x, *t.Elem)
		return cType, fmt.Sprintf("[%d]", t.Len) + dims, size * t.Len, align, err
	}
	r, err := x.resolve(t)
	if err != nil {
		return "", "", 0, 0, err
	}
	switch {
	case r.kind == Basic:
		b := basics[r.basic]
		return r.basic, "", b.size, b.size, nil
	case r.enum != nil:
		b := basics[r.enum.Type]
		return r.enum.Type, "", b.size, b.size, nil
	case r.handle, r.kind == FuncPtr:
		return "uintptr_t", "", 8, 8, nil
	case r.kind == Pointer:
		return "void*", "", 8, 8, nil
	case r.kind == Array:
		return fusedFieldType(x, x.typedefs[t.Name].Target)
	case r.record != nil:
		return "", "", 0, 0, fmt.Errorf("a record (%s): fused structs take only scalars, pointers and arrays of them", r.record.Name)
	}
	return "", "", 0, 0, fmt.Errorf("no C form for %s", cSpelling(t))
}
