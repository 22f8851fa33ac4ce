package main

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// goType renders a model type as Go.
func (x *typeIndex) goType(t Type) (jen.Code, error) {
	switch t.Kind {
	case Basic:
		b, ok := basics[t.Basic]
		if !ok {
			return nil, fmt.Errorf("unsupported C type %q", t.Basic)
		}
		return jen.Id(b.goType), nil
	case Named:
		if _, err := x.resolve(t); err != nil {
			return nil, err
		}
		if t.Pkg != "" {
			return jen.Qual(generatedPath+t.Pkg, t.Name), nil
		}
		return jen.Id(t.Name), nil
	case Pointer:
		if t.Elem == nil || t.Elem.Kind == Void {
			return jen.Qual("unsafe", "Pointer"), nil
		}
		e, err := x.goType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return jen.Op("*").Add(e), nil
	case FuncPtr:
		return jen.Uintptr(), nil
	case Array:
		e, err := x.goType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return jen.Index(jen.Lit(int(t.Len))).Add(e), nil
	}
	return nil, fmt.Errorf("type %v has no Go form", t)
}

// generatedPath is the import path of the generated packages, with a
// trailing slash.
const generatedPath = "github.com/gocuda/gocuda/generated/"

// emitTypes writes enums, records, typedefs and constants.
func emitTypes(f *jen.File, header string, m *Module, x *typeIndex) error {
	for _, e := range m.Enums {
		emitEnum(f, e)
	}
	for i := range m.Records {
		if err := emitRecord(f, &m.Records[i], x); err != nil {
			return err
		}
	}
	for _, td := range m.Typedefs {
		if err := emitTypedef(f, td, x); err != nil {
			return err
		}
	}
	emitConstants(f, header, m.Constants)
	return nil
}

func emitEnum(f *jen.File, e Enum) {
	b := basics[e.Type]
	f.Commentf("%s is a C enumeration.", e.Name)
	f.Type().Id(e.Name).Id(b.goType)
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range e.Values {
			lit := strconv.FormatInt(v.Value, 10)
			if b.unsigned {
				lit = strconv.FormatUint(uint64(v.Value), 10)
			}
			g.Id(v.Name).Id(e.Name).Op("=").Id(lit)
		}
	})
	// Aliased enumerators share a value; String names the first.
	seen := map[int64]bool{}
	format := jen.Qual("strconv", "FormatInt").Call(jen.Int64().Call(jen.Id("x")), jen.Lit(10))
	if b.unsigned && b.size == 8 {
		format = jen.Qual("strconv", "FormatUint").Call(jen.Uint64().Call(jen.Id("x")), jen.Lit(10))
	}
	f.Commentf("String returns the C name of the value.")
	f.Func().Params(jen.Id("x").Id(e.Name)).Id("String").Params().String().Block(
		jen.Switch(jen.Id("x")).BlockFunc(func(g *jen.Group) {
			for _, v := range e.Values {
				if seen[v.Value] {
					continue
				}
				seen[v.Value] = true
				g.Case(jen.Id(v.Name)).Return(jen.Lit(e.cName(v.Name)))
			}
		}),
		jen.Return(jen.Lit(e.Name+"(").Op("+").Add(format).Op("+").Lit(")")),
	)
}

func emitRecord(f *jen.File, r *Record, x *typeIndex) error {
	if r.Union {
		return emitUnion(f, r, x)
	}
	var fields []jen.Code
	var off int64
	natural := int64(1) // Go's alignment of the fields
	names := map[string]bool{}
	for _, fl := range r.Fields {
		size, align, err := x.layout(fl.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.Name, fl.Name, err)
		}
		natural = max(natural, align)
		off = roundUp(off, align)
		if fl.Offset < off {
			return fmt.Errorf("%s.%s: C offset %d is below Go's %d (packed layout is not supported)", r.Name, fl.Name, fl.Offset, off)
		}
		if fl.Offset > off {
			fields = append(fields, jen.Id("_").Index(jen.Lit(int(fl.Offset-off))).Byte())
			off = fl.Offset
		}
		t, err := x.goType(fl.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.Name, fl.Name, err)
		}
		name := goName(fl.Name)
		if names[name] {
			return fmt.Errorf("%s: two fields are named %s in Go", r.Name, name)
		}
		names[name] = true
		fields = append(fields, jen.Id(name).Add(t).Comment(fmt.Sprintf("offset %d", fl.Offset)))
		off += size
	}
	if natural > goAlign(r) {
		return fmt.Errorf("%s: C aligns it to %d, less than its members need in Go (%d): packed records are not supported", r.Name, r.Align, natural)
	}
	if natural < goAlign(r) {
		// An aligned attribute asks for more than the members need: a
		// leading zero-length array gives Go that alignment, which the
		// tail padding and the parents' offsets count on.
		alignType := map[int64]string{2: "uint16", 4: "uint32", 8: "uint64"}[goAlign(r)]
		if alignType == "" {
			return fmt.Errorf("%s: alignment %d", r.Name, r.Align)
		}
		fields = append([]jen.Code{jen.Id("_").Index(jen.Lit(0)).Id(alignType)}, fields...)
	}
	off = roundUp(off, goAlign(r))
	if off < r.Size {
		fields = append(fields, jen.Id("_").Index(jen.Lit(int(r.Size-off))).Byte())
	} else if off > r.Size {
		return fmt.Errorf("%s: Go size %d exceeds C size %d", r.Name, off, r.Size)
	}
	f.Commentf("%s is a C struct: %d bytes, aligned to %d.", r.Name, r.Size, r.Align)
	if int64(r.Align) > goAlign(r) {
		f.Commentf("C aligns it to %d bytes, more than Go can; allocate it where the driver needs that alignment.", r.Align)
	}
	f.Type().Id(r.Name).Struct(fields...)
	return nil
}

// emitUnion makes a union a byte array of its size and alignment, with one
// accessor per member.
func emitUnion(f *jen.File, r *Record, x *typeIndex) error {
	alignType := map[int64]string{1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}[goAlign(r)]
	if alignType == "" {
		return fmt.Errorf("union %s: alignment %d", r.Name, r.Align)
	}
	f.Commentf("%s is a C union: %d bytes, aligned to %d. Its members are reached through its methods.", r.Name, r.Size, r.Align)
	f.Type().Id(r.Name).Struct(
		jen.Id("_").Index(jen.Lit(0)).Id(alignType),
		jen.Id("raw").Index(jen.Lit(int(r.Size))).Byte(),
	)
	names := map[string]bool{}
	for _, fl := range r.Fields {
		t, err := x.goType(fl.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.Name, fl.Name, err)
		}
		if size, _, err := x.layout(fl.Type); err != nil || size > r.Size || fl.Offset != 0 {
			return fmt.Errorf("union %s: member %s does not fit", r.Name, fl.Name)
		}
		name := goName(fl.Name)
		if names[name] {
			return fmt.Errorf("%s: two members are named %s in Go", r.Name, name)
		}
		names[name] = true
		f.Commentf("%s returns the union viewed as its member %s.", name, fl.Name)
		f.Func().Params(jen.Id("u").Op("*").Id(r.Name)).Id(name).Params().Op("*").Add(t).Block(
			jen.Return(jen.Parens(jen.Op("*").Add(t)).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id("u").Dot("raw")))),
		)
	}
	return nil
}

func emitTypedef(f *jen.File, td Typedef, x *typeIndex) error {
	switch td.Kind {
	case Alias:
		f.Commentf("%s is the C typedef of the same name.", td.Name)
		t, err := x.goType(td.Target)
		if err != nil {
			return fmt.Errorf("typedef %s: %w", td.Name, err)
		}
		f.Type().Id(td.Name).Op("=").Add(t)
	case Handle:
		f.Commentf("%s is an opaque driver handle (a pointer in C).", td.Name)
		f.Type().Id(td.Name).Uintptr()
	case Defined:
		t, err := x.goType(td.Target)
		if err != nil {
			return fmt.Errorf("typedef %s: %w", td.Name, err)
		}
		if td.Target.Kind == FuncPtr {
			f.Commentf("%s is a C function pointer.", td.Name)
		} else {
			f.Commentf("%s is the C typedef of the same name.", td.Name)
		}
		f.Type().Id(td.Name).Add(t)
	}
	return nil
}

func emitConstants(f *jen.File, header string, cs []Constant) {
	if len(cs) == 0 {
		return
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	f.Commentf("Integer macros of %s. Those C defines as pointers ((void*)1) are", header)
	f.Comment("given here as integers; convert them where a pointer is needed.")
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, c := range cs {
			g.Id(c.Name).Op("=").Id(c.Value)
		}
	})
}
