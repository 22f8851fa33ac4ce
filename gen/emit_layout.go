package main

import (
	"github.com/dave/jennifer/jen"
)

// emitLayoutTest writes a test that holds every Go struct to the size and
// field offsets the C front end computed; the generator's own layout test
// holds those to gcc's, with the real header.
func emitLayoutTest(f *jen.File, m *Module) {
	var cases []jen.Code
	for _, r := range m.Records {
		zero := jen.Id(r.Name).Values()
		var fields []jen.Code
		if !r.Union {
			for _, fl := range r.Fields {
				fields = append(fields, jen.Values(
					jen.Lit(goName(fl.Name)),
					jen.Qual("unsafe", "Offsetof").Call(jen.Id(r.Name).Values().Dot(goName(fl.Name))),
					jen.Lit(int(fl.Offset)),
				))
			}
		}
		cases = append(cases, jen.Values(
			jen.Lit(r.Name),
			jen.Qual("unsafe", "Sizeof").Call(zero),
			jen.Lit(int(r.Size)),
			jen.Index().Id("fieldLayout").Values(fields...),
		))
	}
	f.Comment("recordLayouts lists each record's Go size and offsets beside C's.")
	f.Var().Id("recordLayouts").Op("=").Index().Id("recordLayout").Values(cases...)
	f.Type().Id("recordLayout").Struct(
		jen.Id("name").String(),
		jen.Id("goSize").Op(",").Id("cSize").Uintptr(),
		jen.Id("fields").Index().Id("fieldLayout"),
	)
	f.Type().Id("fieldLayout").Struct(
		jen.Id("name").String(),
		jen.Id("goOffset").Op(",").Id("cOffset").Uintptr(),
	)
	f.Comment("TestRecordLayouts checks that every generated struct and union has the")
	f.Comment("size and field offsets of its C original.")
	t := jen.Id("t")
	f.Func().Id("TestRecordLayouts").Params(t.Clone().Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("recordLayouts")).Block(
			jen.If(jen.Id("r").Dot("goSize").Op("!=").Id("r").Dot("cSize")).Block(
				t.Clone().Dot("Errorf").Call(jen.Lit("%s: Go size %d, C size %d"), jen.Id("r").Dot("name"), jen.Id("r").Dot("goSize"), jen.Id("r").Dot("cSize")),
			),
			jen.For(jen.List(jen.Id("_"), jen.Id("f")).Op(":=").Range().Id("r").Dot("fields")).Block(
				jen.If(jen.Id("f").Dot("goOffset").Op("!=").Id("f").Dot("cOffset")).Block(
					t.Clone().Dot("Errorf").Call(jen.Lit("%s.%s: Go offset %d, C offset %d"), jen.Id("r").Dot("name"), jen.Id("f").Dot("name"), jen.Id("f").Dot("goOffset"), jen.Id("f").Dot("cOffset")),
				),
			),
		),
		t.Clone().Dot("Logf").Call(jen.Lit("%d records checked"), jen.Len(jen.Id("recordLayouts"))),
	)
}
