package main

import (
	"fmt"
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

func (x *typeIndex) cParam(p Param, name string) (cParam, error) {
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
		cp.cType = r.enum.Type
		cp.arg = jen.Qual("C", basics[r.enum.Type].cgo).Call(jen.Id(name))
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

// emitFuncs writes the cgo preamble and one Go wrapper per function.
// version is the number of the version of the matrix the bindings are for
// (12040, 22203), which checkVersion held to the header's macro.
func emitFuncs(f *jen.File, l *library, m *Module, x *typeIndex, since map[string]string, oldest string, byAddress map[string]bool, sonames []string, version int) error {
	var pre strings.Builder
	pre.WriteString("#include <stdint.h>\n")
	records := &cRecords{x: x, done: map[string]bool{}}
	var bodies strings.Builder
	var table []jen.Code
	for i, fn := range m.Functions {
		tramp := "gocu_" + fn.Symbol
		var cparams []cParam
		for j, name := range paramNames(fn) {
			cp, err := x.cParam(fn.Params[j], name)
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
		isResult := fn.Result.Kind == Named && fn.Result.Name == l.result && fn.Result.Pkg == l.resultPkg
		cres := ""
		switch {
		case res.kind == Pointer:
			cres = "void*"
		case res.enum != nil:
			cres = res.enum.Type
		case res.kind == Basic:
			cres = res.basic
		case res.kind == Void:
			cres = "void"
		case res.record != nil && isResult:
			// A status that is a struct (cuFile's CUfileError_t) comes
			// back through a pointer to the Go value: cgo's spelling of a
			// C struct is not the Go type's.
			if err := records.define(res.record); err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			cres = "void"
		default:
			return fmt.Errorf("%s: unsupported result type %v", fn.Symbol, fn.Result)
		}
		statusRecord := res.record != nil && isResult

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
		flags := cgoPolicy(fn.Symbol)
		if flags&nocallback != 0 && hasFuncPtr(x, fn) {
			return fmt.Errorf("%s: the cgo policy table marks it nocallback, but it takes a function pointer", fn.Symbol)
		}
		pre.WriteString(cgoDirectives(tramp, flags))
		ret := "return "
		if cres == "void" {
			ret = ""
		}
		if statusRecord {
			rec := records.name(res.record)
			fmt.Fprintf(&bodies, "static void %s(%s) { *(%s*)out = ((%s (*)(%s))fn)(%s); }\n",
				tramp, strings.Join(append(append([]string{"uintptr_t fn"}, sig...), "void* out"), ", "),
				rec, rec, strings.Join(ptypes, ", "), strings.Join(call, ", "))
		} else {
			fmt.Fprintf(&bodies, "static %s %s(%s) { %s((%s (*)(%s))fn)(%s); }\n",
				cres, tramp, strings.Join(append([]string{"uintptr_t fn"}, sig...), ", "),
				ret, cres, strings.Join(ptypes, ", "), strings.Join(call, ", "))
		}

		entry := jen.Dict{
			jen.Id("api"):    jen.Lit(fn.Name),
			jen.Id("symbol"): jen.Lit(fn.Symbol),
			jen.Id("since"):  jen.Lit(since[fn.Symbol]),
		}
		if l.getProcAddress {
			entry[jen.Id("byAddress")] = jen.Lit(byAddress[fn.Symbol])
		}
		table = append(table, jen.Values(entry))

		// Go wrapper.
		var params, args []jen.Code
		args = append(args, jen.Qual("C", "uintptr_t").Call(jen.Id("fn")))
		for _, cp := range cparams {
			params = append(params, jen.Id(cp.name).Add(cp.goType))
			args = append(args, cp.arg)
		}
		callC := jen.Qual("C", tramp).Call(args...)
		goFn := l.funcName(fn.Name)
		introduced := "introduced in " + l.versions().Name + " " + since[fn.Symbol]
		if since[fn.Symbol] == oldest {
			introduced = "present since " + l.versions().Name + " " + oldest + " (the oldest version of the matrix) or earlier"
		}
		f.Commentf("%s calls %s, bound to the %s %s; %s.", goFn, fn.Name, l.what, fn.Symbol, introduced)
		f.Commentf("Reference: %s (%s).", l.reference, fn.Name)
		missing := jen.If(jen.Id("fn").Op("==").Lit(0)).Block(jen.Return(jen.Id("missing").Call(jen.Lit(i))))
		switch {
		case statusRecord:
			rt, err := x.goType(fn.Result)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			f.Func().Id(goFn).Params(params...).Error().Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				missing,
				jen.Var().Id("r").Add(rt),
				jen.Qual("C", tramp).Call(append(args, jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id("r")))...),
				jen.Return(jen.Id("resultError").Call(jen.Id("r"))),
			)
		case isResult:
			rt, err := x.goType(fn.Result)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			f.Func().Id(goFn).Params(params...).Error().Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				missing,
				jen.Return(jen.Id("resultError").Call(jen.Add(rt).Call(callC))),
			)
		case res.kind == Void:
			// The error says only whether the call could be made.
			f.Func().Id(goFn).Params(params...).Error().Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				missing,
				callC,
				jen.Return(jen.Nil()),
			)
		case res.kind == Basic, res.enum != nil:
			// A plain value (cublasGetCudartVersion's size_t, the
			// diagonal type cusparseGetMatDiagType reads): the error says
			// only whether the call could be made.
			gt, err := x.goType(fn.Result)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			f.Func().Id(goFn).Params(params...).Params(gt, jen.Error()).Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				jen.If(jen.Id("fn").Op("==").Lit(0)).Block(jen.Return(jen.Lit(0), jen.Id("missing").Call(jen.Lit(i)))),
				jen.Return(jen.Parens(gt).Call(callC), jen.Nil()),
			)
		case res.kind == Pointer:
			// A pointer the library owns (nvrtcGetErrorString's static
			// text): the error says only whether the call could be made.
			gt, err := x.goType(fn.Result)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.Symbol, err)
			}
			f.Func().Id(goFn).Params(params...).Params(gt, jen.Error()).Block(
				jen.Id("fn").Op(":=").Id("proc").Call(jen.Lit(i)),
				jen.If(jen.Id("fn").Op("==").Lit(0)).Block(jen.Return(jen.Nil(), jen.Id("missing").Call(jen.Lit(i)))),
				jen.Return(jen.Parens(gt).Call(callC), jen.Nil()),
			)
		default:
			return fmt.Errorf("%s: only functions returning %s or a pointer are supported, not %v", fn.Symbol, l.result, fn.Result)
		}
	}
	if strings.Contains(bodies.String(), "_Complex") {
		// cgo spells a complex argument with complex.h's names.
		pre.WriteString("#include <complex.h>\n")
	}
	f.CgoPreamble(pre.String() + records.text.String() + bodies.String())
	f.Commentf("headerVersion is %s of the header these bindings come from.", l.versions().Macro)
	f.Const().Id("headerVersion").Op("=").Lit(version)
	if sonames != nil {
		f.Comment("libraryNames are the names of the library this version ships, for dlopen, in order.")
		var names []jen.Code
		for _, n := range sonames {
			names = append(names, jen.Lit(n))
		}
		f.Var().Id("libraryNames").Op("=").Index().String().Values(names...)
	}
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
// applies the real calling convention to them. Each copy has the original's
// member types; a layout they do not reproduce by themselves (packed
// members, or members placed by an aligned attribute) is refused here
// rather than left to fail the _Static_assert at build time.
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
	var decls []string
	var off, end, align int64 = 0, 0, 1
	for i, fl := range r.Fields {
		decl, size, a, err := c.field(fl.Type, fmt.Sprintf("f%d", i))
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.Name, fl.Name, err)
		}
		if r.Union {
			off = 0
		}
		off = roundUp(off, a)
		if off != fl.Offset {
			return fmt.Errorf("%s is passed by value, and its member %s is at offset %d, where a plain C struct has it at %d (packed or aligned members are not supported in records passed by value)", r.Name, fl.Name, fl.Offset, off)
		}
		off += size
		end = max(end, off)
		align = max(align, a)
		decls = append(decls, decl)
	}
	if int64(r.Align) < align || int64(r.Align) > align && len(decls) == 0 {
		return fmt.Errorf("%s is passed by value, and its alignment %d cannot be given to a plain C copy (alignment %d)", r.Name, r.Align, align)
	}
	if int64(r.Align) > align {
		decls[0] = fmt.Sprintf("_Alignas(%d) %s", r.Align, decls[0])
	}
	if size := roundUp(end, int64(r.Align)); size != r.Size {
		return fmt.Errorf("%s is passed by value, and its size %d is not the %d of a plain C copy", r.Name, r.Size, size)
	}
	var fields strings.Builder
	for _, d := range decls {
		fields.WriteString(" " + d + ";")
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

func roundUp(n, to int64) int64 {
	if rem := n % to; rem != 0 {
		n += to - rem
	}
	return n
}

// field declares a member of type t in a C copy, and gives its size and
// C alignment.
func (c *cRecords) field(t Type, name string) (decl string, size, align int64, err error) {
	if t.Kind == Array {
		inner, size, align, err := c.field(*t.Elem, name)
		return fmt.Sprintf("%s[%d]", inner, t.Len), size * t.Len, align, err
	}
	r, err := c.x.resolve(t)
	if err != nil {
		return "", 0, 0, err
	}
	switch {
	case r.kind == Basic:
		b := basics[r.basic]
		return r.basic + " " + name, b.size, b.size, nil
	case r.enum != nil:
		b := basics[r.enum.Type]
		return r.enum.Type + " " + name, b.size, b.size, nil
	case r.kind == Pointer, r.kind == FuncPtr:
		return "void *" + name, 8, 8, nil
	case r.record != nil:
		if err := c.define(r.record); err != nil {
			return "", 0, 0, err
		}
		return c.name(r.record) + " " + name, r.record.Size, int64(r.record.Align), nil
	case r.kind == Array:
		return c.field(c.x.typedefs[t.Name].Target, name)
	}
	return "", 0, 0, fmt.Errorf("no C form for %v", t)
}
