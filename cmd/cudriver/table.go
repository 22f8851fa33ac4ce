package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/packages"
)

// cuFunc is one binding of package cu and the driver it needs.
type cuFunc struct {
	Name   string // Go name: MemAlloc
	API    string // C name: cuMemAlloc
	Symbol string // versioned symbol: cuMemAlloc_v2
	Since  int    // CUDA version of the matrix that introduced Symbol: 11080
}

// table is the since-data of package cu as the program is built: the
// version selected by its build tags, from its own module version.
type table struct {
	header int    // CUDA_VERSION of the bindings' header
	file   string // the generated file the table comes from
	floor  int    // the oldest version of the matrix: it means "or earlier"
	byName map[string]*cuFunc
	byAPI  map[string]*cuFunc
}

// readTable reads package cu's procTable from its syntax, and maps each
// binding to the Go function that calls proc with its index. Reading the
// loaded package, rather than the cu this command was built with, gives the
// table of the version the build tags select and of the module version the
// program requires; cu.Bindings is the same data, and the tests hold the
// two together.
func readTable(pkg *packages.Package) (*table, error) {
	t := &table{byName: map[string]*cuFunc{}, byAPI: map[string]*cuFunc{}}
	c, ok := pkg.Types.Scope().Lookup("headerVersion").(*types.Const)
	if !ok {
		return nil, fmt.Errorf("package cu (%s) declares no headerVersion: not bindings this command knows", pkg.PkgPath)
	}
	h, _ := constant.Int64Val(c.Val())
	t.header = int(h)

	var entries []*cuFunc
	names := map[int]string{} // procTable index → Go function calling proc with it
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "procTable" || len(vs.Values) != 1 {
						continue
					}
					lit, ok := vs.Values[0].(*ast.CompositeLit)
					if !ok {
						return nil, fmt.Errorf("%s: procTable is not a composite literal", pkg.Fset.Position(vs.Pos()))
					}
					es, err := tableEntries(lit)
					if err != nil {
						return nil, fmt.Errorf("%s: %v", pkg.Fset.Position(vs.Pos()), err)
					}
					entries = es
					t.file = pkg.Fset.Position(vs.Pos()).Filename
				}
			case *ast.FuncDecl:
				if d.Recv == nil && d.Body != nil {
					if i, ok := procIndex(d.Body); ok {
						names[i] = d.Name.Name
					}
				}
			}
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("package cu (%s) has no function table: not bindings this command knows", pkg.PkgPath)
	}
	for i, e := range entries {
		e.Name = names[i]
		if e.Name == "" {
			return nil, fmt.Errorf("package cu: no function calls entry %d (%s) of its table", i, e.API)
		}
		t.byName[e.Name] = e
		t.byAPI[e.API] = e
		if t.floor == 0 || e.Since < t.floor {
			t.floor = e.Since
		}
	}
	return t, nil
}

// tableEntries reads the {api: …, symbol: …, since: …} elements of procTable.
func tableEntries(lit *ast.CompositeLit) ([]*cuFunc, error) {
	var out []*cuFunc
	for _, el := range lit.Elts {
		cl, ok := el.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("procTable element %d is not a composite literal", len(out))
		}
		e := &cuFunc{}
		for _, kv := range cl.Elts {
			kv, ok := kv.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			val, _ := kv.Value.(*ast.BasicLit)
			if key == nil || val == nil || val.Kind != token.STRING {
				continue
			}
			s, err := strconv.Unquote(val.Value)
			if err != nil {
				return nil, err
			}
			switch key.Name {
			case "api":
				e.API = s
			case "symbol":
				e.Symbol = s
			case "since":
				v, err := parseVersion(s)
				if err != nil {
					return nil, fmt.Errorf("procTable element %d: %v", len(out), err)
				}
				e.Since = v
			}
		}
		if e.API == "" || e.Symbol == "" || e.Since == 0 {
			return nil, fmt.Errorf("procTable element %d lacks its api, symbol or since", len(out))
		}
		out = append(out, e)
	}
	return out, nil
}

// procIndex finds the proc(N) call of a binding's body.
func procIndex(body *ast.BlockStmt) (int, bool) {
	idx, found := 0, false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if found || !ok || len(call.Args) != 1 {
			return !found
		}
		id, ok := call.Fun.(*ast.Ident)
		lit, ok2 := call.Args[0].(*ast.BasicLit)
		if ok && ok2 && id.Name == "proc" && lit.Kind == token.INT {
			if i, err := strconv.Atoi(lit.Value); err == nil {
				idx, found = i, true
			}
		}
		return !found
	})
	return idx, found
}
