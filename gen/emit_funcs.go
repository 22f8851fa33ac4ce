package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dave/jennifer/jen"
)

// cParam is how one parameter crosses into C.
type cParam struct {
	cType  string   // type in the C trampoline
	arg    jen.Code // Go expression handed to cgo
	byVal  *Record  // a struct passed by value: crosses as a pointer
	goType jen.Code
	name   string
}

func (x *typeIndex) cParam(p Param) (cParam, error) {
	name := paramName(p.Name)
	gt, err := x.goType(p.Type)
	if err != nil {
		return cParam{}, err
	}
	cp := cParam{goType: gt, name: name}
	r, err := x.resolve(p.Type)
	if err != nil {
		return cParam{}, err
	}
	switch {
	case r.kind == Basic:
		cp.cType = r.basic
		cp.arg = jen.Qual("C", basics[r.basic].cgo).Call(jen.Id(name))
	case r.enum != nil:
		cp.cType, cp.arg = "int", jen.Qual("C", "int").Call(jen.Id(name))
		if r.enum.Unsigned {
			cp.cType, cp.arg = "unsigned int", jen.Qual("C", "uint").Call(jen.Id(name))
		}
	case r.handle, r.kind == FuncPtr:
		cp.cType = "uintptr_t"
		cp.arg = jen.Qual("C", "uintptr_t").Call(jen.Id(name))
	case r.kind == Pointer:
		cp.cType = "void*"
		cp.arg = jen.Qual("unsafe", "Pointer").Call(jen.Id(name))
	case r.record != nil:
		cp.cType = "const void*"
		cp.byVal = r.record
		cp.arg = jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id(name))
	default:
		return cParam{}, fmt.Errorf("parameter %s: cannot pass %v to C", p.Name, p.Type)
	}
	return cp, nil
}

// Pointers handed to these may be kept by the driver after the call returns
// (host registration, callbacks, user objects, stream-ordered copies), so
// cgo must not be told they do not escape.
var mayRetain = regexp.MustCompile(`Async|Register|HostFunc|Callback|UserObject|Link`)

// These may run user code on the calling thread (destructors of user
// objects, pending host work), so cgo must allow callbacks.
var mayCallBack = regexp.MustCompile(`Destroy|Release|Free|Unload|Reset|Synchronize|UserObject|Callback|HostFunc`)

// emitFuncs writes the cgo preamble and one Go wrapper per function.
func emitFuncs(f *jen.File, m *Module, x *typeIndex, since map[string]string, oldest string, byAddress map[string]bool) error {
	var pre strings.Builder
	pre.WriteString("#include <stdint.h>\n")
	records := &cRecords{x: x, done: map[string]bool{}}
	var bodies strings.Builder
	var table []jen.Code
	for i, fn := range m.Functions {
		tramp := "gocu_" + fn.Symbol
		var cparams []cParam
		for _, p := range fn.Params {
			cp, err := x.cParam(p)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			if cp.byVal != nil {
				if err := records.define(cp.byVal); err != nil {
					return fmt.Errorf("%s: %w", fn.Symbol, err)
				}
			}
			cparams = append(cparams, cp)
		}
		res, err := x.resolve(fn.Result)
		if err != nil {
			return fmt.Errorf("%s: %w", fn.Symbol, err)
		}
		isResult := fn.Result.Kind == Named && fn.Result.Name == "CUresult"
		cres := ""
		switch {
		case res.enum != nil && res.enum.Unsigned:
			cres = "unsigned int"
		case res.enum != nil:
			cres = "int"
		case res.kind == Basic:
			cres = res.basic
		case res.kind == Void:
			cres = "void"
		default:
			return fmt.Errorf("%s: unsupported result type %v", fn.Symbol, fn.Result)
		}

		// C trampoline: call the resolved entry point through a pointer of
		// the declared type.
		var sig, call, ptypes []string
		for j, cp := range cparams {
			pn := fmt.Sprintf("p%d", j)
			sig = append(sig, cp.cType+" "+pn)
			if cp.byVal != nil {
				ptypes = append(ptypes, records.name(cp.byVal))
				call = append(call, fmt.Sprintf("*(const %s*)%s", records.name(cp.byVal), pn))
			} else {
				ptypes = append(ptypes, cp.cType)
				call = append(call, pn)
			}
		}
		if len(ptypes) == 0 {
			ptypes = []string{"void"}
		}
		if !mayRetain.MatchString(fn.Symbol) {
			fmt.Fprintf(&pre, "#cgo noescape %s\n", tramp)
		}
		if !mayCallBack.MatchString(fn.Symbol) && !hasFuncPtr(x, fn) {
			fmt.Fprintf(&pre, "#cgo nocallback %s\n", tramp)
		}
		ret := "return "
		if cres == "void" {
			ret = ""
		}
		fmt.Fprintf(&bodies, "static %s %s(%s) { %s((%s (*)(%s))fn)(%s); }\n",
			cres, tramp, strings.Join(append([]string{"uintptr_t fn"}, sig...), ", "),
			ret, cres, strings.Join(ptypes, ", "), strings.Join(call, ", "))

		table = append(table, jen.Values(jen.Dict{
			jen.Id("api"):       jen.Lit(fn.Name),
			jen.Id("symbol"):    jen.Lit(fn.Symbol),
			jen.Id("since"):     jen.Lit(since[fn.Symbol]),
			jen.Id("byAddress"): jen.Lit(byAddress[fn.Symbol]),
		}))

		// Go wrapper.
		var params, args []jen.Code
		args = append(args, jen.Qual("C", "uintptr_t").Call(jen.Id("fn")))
		for _, cp := range cparams {
			params = append(params, jen.Id(cp.name).Add(cp.goType))
			args = append(args, cp.arg)
		}
		callC := jen.Qual("C", tramp).Call(args...)
		goFn := funcName(fn.Name)
		introduced := "introduced in CUDA " + since[fn.Symbol]
		if since[fn.Symbol] == oldest {
			introduced = "present since CUDA " + oldest + " (the oldest version of the matrix) or earlier"
		}
		f.Commentf("%s calls %s, bound to the driver symbol %s; %s.", goFn, fn.Name, fn.Symbol, introduced)
		f.Commentf("Reference: https://docs.nvidia.com/cuda/cuda-driver-api/ (%s).", fn.Name)
		missing := jen.If(jen.Id("fn").Op("==").Lit(0)).Block(jen.Return(jen.Id("missing").Call(jen.Lit(i))))
		switch {
		case isResult:
			f.Func().Id(goFn).Params(params...).Error().Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				missing,
				jen.Return(jen.Id("resultError").Call(jen.Id("CUresult").Call(callC))),
			)
		default:
			return fmt.Errorf("%s: only functions returning CUresult are supported, not %v", fn.Symbol, fn.Result)
		}
	}
	f.CgoPreamble(pre.String() + records.text.String() + bodies.String())
	f.Comment("headerVersion is CUDA_VERSION of the header these bindings come from.")
	f.Const().Id("headerVersion").Op("=").Lit(m.CUDAVersion)
	f.Comment("procTable lists the bound functions; procAddrs holds their resolved entry points.")
	f.Var().Id("procTable").Op("=").Index(jen.Op("...")).Id("procInfo").Values(table...)
	f.Var().Id("procAddrs").Index(jen.Len(jen.Id("procTable"))).Uintptr()
	return nil
}

func hasFuncPtr(x *typeIndex, fn Function) bool {
	for _, p := range fn.Params {
		if r, err := x.resolve(p.Type); err == nil && r.kind == FuncPtr {
			return true
		}
	}
	return false
}

// cRecords emits C definitions of the structs passed by value, so that gcc
// applies the real calling convention to them.
type cRecords struct {
	x    *typeIndex
	done map[string]bool
	text strings.Builder
}

func (c *cRecords) name(r *Record) string { return "gocu_rec_" + r.Name }

func (c *cRecords) define(r *Record) error {
	if c.done[r.Name] {
		return nil
	}
	c.done[r.Name] = true
	var fields strings.Builder
	for i, fl := range r.Fields {
		decl, err := c.field(fl.Type, fmt.Sprintf("f%d", i))
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.Name, fl.Name, err)
		}
		fields.WriteString(" " + decl + ";")
	}
	kw := "struct"
	if r.Union {
		kw = "union"
	}
	fmt.Fprintf(&c.text, "typedef %s {%s } %s;\n", kw, fields.String(), c.name(r))
	fmt.Fprintf(&c.text, "_Static_assert(sizeof(%s) == %d && _Alignof(%s) == %d, \"layout of %s\");\n",
		c.name(r), r.Size, c.name(r), r.Align, r.Name)
	return nil
}

func (c *cRecords) field(t Type, name string) (string, error) {
	if t.Kind == Array {
		inner, err := c.field(*t.Elem, name)
		return fmt.Sprintf("%s[%d]", inner, t.Len), err
	}
	r, err := c.x.resolve(t)
	if err != nil {
		return "", err
	}
	switch {
	case r.kind == Basic:
		return r.basic + " " + name, nil
	case r.enum != nil && r.enum.Unsigned:
		return "unsigned int " + name, nil
	case r.enum != nil:
		return "int " + name, nil
	case r.kind == Pointer, r.kind == FuncPtr:
		return "void *" + name, nil
	case r.record != nil:
		if err := c.define(r.record); err != nil {
			return "", err
		}
		return c.name(r.record) + " " + name, nil
	case r.kind == Array:
		return c.field(c.x.typedefs[t.Name].Target, name)
	}
	return "", fmt.Errorf("no C form for %v", t)
}
