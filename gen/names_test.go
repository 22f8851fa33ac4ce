package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"testing"
)

// TestBodyIdents holds bodyIdents to the emitted code: every identifier a
// binding's body uses, other than its parameters, is listed, and every
// listed one is used.
func TestBodyIdents(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "generated", "cu", "zcu_*_funcs.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("testdata", "small.golden", "zcu_cuda12040_funcs.go"))
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			params := map[string]bool{}
			for _, p := range fd.Type.Params.List {
				for _, n := range p.Names {
					params[n.Name] = true
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					ast.Inspect(n.X, func(n ast.Node) bool {
						if id, ok := n.(*ast.Ident); ok {
							used[id.Name] = true
						}
						return true
					})
					return false // Sel names a member, not a variable
				case *ast.Ident:
					if !params[n.Name] {
						used[n.Name] = true
						if !bodyIdents[n.Name] {
							t.Errorf("%s: %s uses %s, which bodyIdents does not list", filepath.Base(name), fd.Name.Name, n.Name)
						}
					}
				}
				return true
			})
		}
	}
	var unused []string
	for n := range bodyIdents {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("bodyIdents lists %v, which no body uses", unused)
	}
}

func TestParamNames(t *testing.T) {
	fn := Function{Params: []Param{{Name: "fn"}, {Name: "fn_"}, {Name: "_"}, {Name: "type"}, {Name: "a$b"}, {Name: "p4"}, {Name: "CUresult"}, {Name: "dev"}}}
	got := paramNames(fn)
	want := []string{"fn_", "fn__", "__", "type_", "p4", "p4_", "CUresult_", "dev"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("paramNames: %q, want %q", got, want)
		}
	}
}

func TestReadHandwritten(t *testing.T) {
	hw := packageHandwritten(t)
	for name, file := range map[string]string{"Load": "loader.go", "resultError": "errors.go", "fmt": "errors.go"} {
		if hw.names[name] == "" {
			t.Errorf("%s is not found among the handwritten names (declared in %s)", name, file)
		}
	}
	if hw.methods["CUresult.Error"] != "errors.go" {
		t.Errorf("the Error method of CUresult is not found: %v", hw.methods)
	}
	for name, file := range hw.names {
		if file[0] == 'z' {
			t.Errorf("%s comes from %s, a generated file", name, file)
		}
	}
}
