package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// handwritten is what the handwritten files of package cu (every .go file
// of the output directory not named z*, tests included) declare: the
// generated files share their package block, so a generated name must not
// be one of these.
type handwritten struct {
	names   map[string]string // package-level identifier or file-scope import name → file declaring it
	methods map[string]string // "Type.Method" → file declaring it
}

// readHandwritten parses the handwritten files of dir. A directory that does
// not exist yet has none.
func readHandwritten(dir string) (*handwritten, error) {
	hw := &handwritten{names: map[string]string{}, methods: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return hw, nil
	}
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "z") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("read the handwritten files of package cu: %w", err)
		}
		hw.add(name, f)
	}
	return hw, nil
}

func (hw *handwritten) add(file string, f *ast.File) {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name != "_" && name != "." {
			hw.names[name] = file
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				hw.names[d.Name.Name] = file
				continue
			}
			if len(d.Recv.List) == 1 {
				if recv := receiverType(d.Recv.List[0].Type); recv != "" {
					hw.methods[recv+"."+d.Name.Name] = file
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					hw.names[s.Name.Name] = file
				case *ast.ValueSpec:
					for _, n := range s.Names {
						hw.names[n.Name] = file
					}
				}
			}
		}
	}
}

func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	}
	return ""
}

// universe holds Go's predeclared identifiers: a generated declaration of
// one would change what the generated code means by it (uintptr, len …).
var universe = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`any bool byte comparable complex64 complex128 error float32 float64
		int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr
		true false iota nil
		append cap clear close complex copy delete imag len make max min new panic print println real recover`) {
		universe[n] = true
	}
}

// generatedImports are the packages the generated files import.
var generatedImports = []string{"C", "strconv", "unsafe"}

// generatedHelpers are the package-level names the generated files declare
// besides those made from C names.
var generatedHelpers = map[string]string{
	"headerVersion": "the funcs file",
	"procTable":     "the funcs file",
	"procAddrs":     "the funcs file",
	"libraryNames":  "the funcs file",
	"recordLayouts": "the layout test",
	// Receivers: a type or constant of these names could not be named in
	// the methods of enums (x) and unions (u).
	"x": "the receiver of the generated String methods",
	"u": "the receiver of the generated union accessors",
}

// checkNames refuses a model whose Go names collide: with each other (two
// C names that spell the same in Go, such as cuFoo and cu_Foo), with the
// handwritten files of the package, with Go's predeclared identifiers and
// the packages the generated files import; and any name that is no Go
// identifier. Each error names the C declarations involved.
func checkNames(m *Module, hw *handwritten, l *library) error {
	if hw == nil {
		hw = &handwritten{}
	}
	declared := map[string]string{} // Go name → what declares it
	var errs []string
	declare := func(name, what string) {
		switch {
		case !token.IsIdentifier(name) || name == "_" || name == "init":
			errs = append(errs, fmt.Sprintf("%s: %q cannot be declared in Go", what, name))
		case universe[name]:
			errs = append(errs, fmt.Sprintf("%s: its Go name %s is predeclared in Go", what, name))
		case declared[name] != "":
			// Before the handwritten files: the generated files' own
			// imports and helpers are the first reason a name is taken.
			errs = append(errs, fmt.Sprintf("%s and %s: both are %s in Go", declared[name], what, name))
		case hw.names[name] != "":
			errs = append(errs, fmt.Sprintf("%s: its Go name %s is already declared by %s of package %s", what, name, hw.names[name], l.pkg))
		default:
			declared[name] = what
		}
	}
	for _, imp := range generatedImports {
		declared[imp] = "the generated files' import of " + imp
	}
	for name, where := range generatedHelpers {
		declared[name] = where
	}
	methods := map[string]string{} // "Type.Name" → what declares it, fields included
	member := func(typ, name, what string) {
		key := typ + "." + name
		switch {
		case hw.methods[key] != "":
			errs = append(errs, fmt.Sprintf("%s: %s is also a method declared by %s of package %s", what, key, hw.methods[key], l.pkg))
		case methods[key] != "":
			errs = append(errs, fmt.Sprintf("%s and %s: both are %s in Go", methods[key], what, key))
		default:
			methods[key] = what
		}
	}
	for _, e := range m.Enums {
		declare(e.Name, "enum "+e.Name)
		member(e.Name, "String", "the String method of enum "+e.Name)
		for _, v := range e.Values {
			declare(v.Name, "enumerator "+e.cName(v.Name))
		}
	}
	for _, r := range m.Records {
		kind := "struct "
		if r.Union {
			kind = "union "
		}
		declare(r.Name, kind+r.Name)
		for _, f := range r.Fields {
			member(r.Name, goName(f.Name), "member "+f.Name+" of "+kind+r.Name)
		}
	}
	for _, td := range m.Typedefs {
		declare(td.Name, "typedef "+td.Name)
	}
	for _, c := range m.Constants {
		declare(c.Name, "macro "+c.Name)
	}
	for _, fn := range m.Functions {
		declare(l.funcName(fn.Name), "function "+fn.Name)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("colliding Go names:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return nil
}
