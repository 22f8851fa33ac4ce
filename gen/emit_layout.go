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
}
