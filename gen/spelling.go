package main

import (
	"strings"

	"modernc.org/cc/v4"
)

// spelling is a function declaration's text around its name: the result
// type and the parameter list, as the header writes them.
type spelling struct {
	result, params string
}

// spell reads the spelling of function declarator decl of declaration d.
// The result keeps the type specifiers and qualifiers and drops storage
// classes, function specifiers and attributes; macros are expanded, so a
// calling convention that expands to nothing (CUDAAPI) is gone. Runs of
// white space and comments become one space.
func spell(d *cc.Declaration, decl *cc.Declarator) spelling {
	var result []string
	for ds := d.DeclarationSpecifiers; ds != nil; ds = ds.DeclarationSpecifiers {
		switch ds.Case {
		case cc.DeclarationSpecifiersTypeSpec:
			result = append(result, oneLine(cc.NodeSource(ds.TypeSpecifier)))
		case cc.DeclarationSpecifiersTypeQual:
			result = append(result, oneLine(cc.NodeSource(ds.TypeQualifier)))
		}
	}
	sp := spelling{result: strings.Join(result, " ")}
	if decl.Pointer != nil {
		sp.result += " " + oneLine(cc.NodeSource(decl.Pointer))
	}
	for dd := decl.DirectDeclarator; dd != nil; dd = dd.DirectDeclarator {
		if dd.Case == cc.DirectDeclaratorFuncParam && dd.ParameterTypeList != nil {
			sp.params = oneLine(cc.NodeSource(dd.ParameterTypeList))
			break
		}
	}
	return sp
}

// oneLine collapses the white space of s to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
