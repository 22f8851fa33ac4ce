package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

const cuPath = "github.com/gocuda/gocuda/generated/cu"

// A use is one place in the analysed packages that needs driver functions:
// a call of (or reference to) a binding of package cu, or of a function of
// a package outside the patterns (package cuda, say) that reaches some.
type use struct {
	Pos    token.Position
	Callee string    // cu.MemAlloc, cuda.NewStream, (*cuda.Graph).Launch, cu.Proc("cuMemFree")
	Funcs  []*cuFunc // the bindings it reaches, the newest first
}

// Need is the CUDA version the use needs: the newest of its bindings.
func (u use) Need() int { return u.Funcs[0].Since }

// node is what one function or package-level variable of a dependency
// refers to.
type node struct {
	direct map[*cuFunc]bool
	refs   []types.Object // functions and package-level variables of analysed dependencies
}

type analyzer struct {
	tab     *table
	deps    map[*types.Package]bool // dependencies outside the patterns that import cu
	nodes   map[types.Object]*node
	methods map[string][]*types.Func // methods of the dependencies, by name
	reached map[types.Object][]*cuFunc
}

// analyze finds the uses of the root packages. The dependencies that import
// cu are followed through their function bodies: static calls and function
// values, package-level variables, calls through interfaces to the methods
// of those packages that implement them, and cu.Proc given the C name as a
// string constant in the same function.
func analyze(roots []*packages.Package) (*table, []use, error) {
	var cuPkg *packages.Package
	importsCu := map[*packages.Package]bool{}
	for p := range packages.Postorder(roots) {
		if p.PkgPath == cuPath {
			if cuPkg == nil {
				cuPkg = p
			}
			continue
		}
		for _, imp := range p.Imports {
			if imp.PkgPath == cuPath || importsCu[imp] {
				importsCu[p] = true
			}
		}
	}
	if cuPkg == nil {
		return nil, nil, nil
	}
	tab, err := readTable(cuPkg)
	if err != nil {
		return nil, nil, err
	}
	isRoot := map[*packages.Package]bool{}
	for _, r := range roots {
		isRoot[r] = true
	}
	a := &analyzer{
		tab:     tab,
		deps:    map[*types.Package]bool{},
		nodes:   map[types.Object]*node{},
		methods: map[string][]*types.Func{},
		reached: map[types.Object][]*cuFunc{},
	}
	var deps []*packages.Package
	for p := range importsCu {
		if !isRoot[p] {
			deps = append(deps, p)
			a.deps[p.Types] = true
		}
	}
	slices.SortFunc(deps, func(x, y *packages.Package) int { return cmp.Compare(x.ID, y.ID) })
	var initDecls [][]*ast.FuncDecl
	for _, p := range deps {
		initDecls = append(initDecls, a.collect(p))
	}
	// Reached only once every dependency is collected.
	var inits []use // init functions of the dependencies run in every program
	for i, p := range deps {
		for _, d := range initDecls[i] {
			if fs := a.reach(p.TypesInfo.Defs[d.Name]); len(fs) > 0 {
				inits = append(inits, use{Pos: p.Fset.Position(d.Pos()), Callee: "init of package " + p.PkgPath, Funcs: fs})
			}
		}
	}
	uses := inits
	for _, r := range roots {
		if r.PkgPath == cuPath || !importsCu[r] {
			continue
		}
		uses = append(uses, a.rootUses(r)...)
	}
	slices.SortFunc(uses, func(x, y use) int {
		return cmp.Or(cmp.Compare(x.Pos.Filename, y.Pos.Filename), cmp.Compare(x.Pos.Line, y.Pos.Line),
			cmp.Compare(x.Pos.Column, y.Pos.Column), cmp.Compare(x.Callee, y.Callee))
	})
	// A package and its test variant share files: one use per place.
	uses = slices.CompactFunc(uses, func(x, y use) bool { return x.Pos == y.Pos && x.Callee == y.Callee })
	return tab, uses, nil
}

// collect records the nodes of a dependency's functions and variables, and
// returns its init functions.
func (a *analyzer) collect(p *packages.Package) (inits []*ast.FuncDecl) {
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				obj, ok := p.TypesInfo.Defs[d.Name].(*types.Func)
				if !ok {
					continue
				}
				if d.Recv != nil {
					a.methods[obj.Name()] = append(a.methods[obj.Name()], obj)
				}
				if d.Recv == nil && d.Name.Name == "init" {
					inits = append(inits, d)
				}
				n := a.scan(p.TypesInfo, d)
				opt := optional(d)
				for f := range n.direct {
					if opt[f.API] {
						delete(n.direct, f)
					}
				}
				a.nodes[obj] = n
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || d.Tok != token.VAR || len(vs.Values) == 0 {
						continue
					}
					values := make([]ast.Node, len(vs.Values))
					for i, v := range vs.Values {
						values[i] = v
					}
					n := a.scan(p.TypesInfo, values...)
					for _, name := range vs.Names {
						if obj := p.TypesInfo.Defs[name]; obj != nil {
							a.nodes[obj] = n
						}
					}
				}
			}
		}
	}
	return inits
}

// scan records what the given syntax refers to.
func (a *analyzer) scan(info *types.Info, roots ...ast.Node) *node {
	n := &node{direct: map[*cuFunc]bool{}}
	var named []*cuFunc // C names spelled as strings, for cu.Proc
	usesProc := false
	for _, root := range roots {
		ast.Inspect(root, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.Ident:
				switch o := info.Uses[x].(type) {
				case *types.Func:
					o = o.Origin()
					switch {
					case interfaceOf(o) != nil:
						// Any interface, error and io.Closer included: the
						// dynamic type may be one of the dependencies'.
						// reach expands it once every method is known.
						n.refs = append(n.refs, o)
					case o.Pkg() == nil:
					case o.Pkg().Path() == cuPath:
						if f := a.tab.byName[o.Name()]; f != nil && isPackageLevel(o) {
							n.direct[f] = true
						}
						usesProc = usesProc || isProc(o)
					case a.deps[o.Pkg()]:
						n.refs = append(n.refs, o)
					}
				case *types.Var:
					if o.Pkg() != nil && a.deps[o.Pkg()] && o.Parent() == o.Pkg().Scope() {
						n.refs = append(n.refs, o)
					}
				}
			case *ast.BasicLit:
				if f := a.tab.byAPI[unquote(x)]; f != nil {
					named = append(named, f)
				}
			case *ast.CallExpr:
				if f := a.procArg(info, x); f != nil {
					n.direct[f] = true
				}
			}
			return true
		})
	}
	if usesProc {
		for _, f := range named {
			n.direct[f] = true
		}
	}
	return n
}

// procArg is the binding a call cu.Proc(name) names with a constant.
func (a *analyzer) procArg(info *types.Info, call *ast.CallExpr) *cuFunc {
	if len(call.Args) != 1 || !isProc(calleeOf(info, call.Fun)) {
		return nil
	}
	tv := info.Types[call.Args[0]]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return nil
	}
	return a.tab.byAPI[constant.StringVal(tv.Value)]
}

// implementations are the methods of the dependencies that a call of obj,
// when it is an interface method, may run: those of its name whose
// receiver implements the interface. A generic receiver is taken to.
func (a *analyzer) implementations(obj types.Object) []types.Object {
	m, ok := obj.(*types.Func)
	if !ok {
		return nil
	}
	iface := interfaceOf(m)
	if iface == nil {
		return nil
	}
	var out []types.Object
	for _, impl := range a.methods[m.Name()] {
		recv := impl.Signature().Recv().Type()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		named, ok := recv.(*types.Named)
		if !ok {
			continue
		}
		if named.TypeParams().Len() > 0 || types.Implements(named, iface) || types.Implements(types.NewPointer(named), iface) {
			out = append(out, impl)
		}
	}
	return out
}

// reach is every binding obj reaches, the newest first.
func (a *analyzer) reach(obj types.Object) []*cuFunc {
	if fs, ok := a.reached[obj]; ok {
		return fs
	}
	set := map[*cuFunc]bool{}
	seen := map[types.Object]bool{obj: true}
	for queue := []types.Object{obj}; len(queue) > 0; queue = queue[1:] {
		refs := a.implementations(queue[0])
		if n := a.nodes[queue[0]]; n != nil {
			for f := range n.direct {
				set[f] = true
			}
			refs = append(refs, n.refs...)
		}
		for _, r := range refs {
			if !seen[r] {
				seen[r] = true
				queue = append(queue, r)
			}
		}
	}
	fs := sortFuncs(set)
	a.reached[obj] = fs
	return fs
}

// rootUses lists the uses in the files of a package of the patterns.
func (a *analyzer) rootUses(p *packages.Package) []use {
	var out []use
	add := func(pos token.Pos, callee string, fs ...*cuFunc) {
		if len(fs) > 0 {
			out = append(out, use{Pos: p.Fset.Position(pos), Callee: callee, Funcs: fs})
		}
	}
	qual := func(q *types.Package) string { return q.Name() }
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			var opt map[string]bool
			if fd, ok := d.(*ast.FuncDecl); ok {
				opt = optional(fd)
			}
			addBinding := func(pos token.Pos, callee string, f *cuFunc) {
				if !opt[f.API] {
					add(pos, callee, f)
				}
			}
			// The C names a declaration spells count where it uses cu.Proc.
			var named []*ast.BasicLit
			usesProc := false
			ast.Inspect(d, func(x ast.Node) bool {
				switch x := x.(type) {
				case *ast.Ident:
					switch o := p.TypesInfo.Uses[x].(type) {
					case *types.Func:
						o = o.Origin()
						switch {
						case o.Pkg() == nil:
						case o.Pkg().Path() == cuPath:
							if f := a.tab.byName[o.Name()]; f != nil && isPackageLevel(o) {
								addBinding(x.Pos(), "cu."+o.Name(), f)
							}
							usesProc = usesProc || isProc(o)
						case a.deps[o.Pkg()] && interfaceOf(o) == nil:
							add(x.Pos(), funcString(o, qual), a.reach(o)...)
						}
					case *types.Var:
						if o.Pkg() != nil && a.deps[o.Pkg()] && o.Parent() == o.Pkg().Scope() {
							add(x.Pos(), o.Pkg().Name()+"."+o.Name(), a.reach(o)...)
						}
					}
				case *ast.BasicLit:
					if a.tab.byAPI[unquote(x)] != nil {
						named = append(named, x)
					}
				case *ast.CallExpr:
					// A literal argument is one of the names below.
					if f := a.procArg(p.TypesInfo, x); f != nil && !isBasicLit(x.Args) {
						addBinding(x.Pos(), fmt.Sprintf("cu.Proc(%q)", f.API), f)
					}
				}
				return true
			})
			if usesProc {
				for _, lit := range named {
					f := a.tab.byAPI[unquote(lit)]
					addBinding(lit.Pos(), fmt.Sprintf("cu.Proc(%q)", f.API), f)
				}
			}
		}
	}
	return out
}

// optionalDirective, followed by C names in a function's doc comment, says
// that the function does without those bindings where the driver lacks
// them (it handles cu.ErrMissingFunction): its calls of them do not count.
const optionalDirective = "//cudriver:optional"

// optional is the set of C names a function's directives name.
func optional(d *ast.FuncDecl) map[string]bool {
	if d.Doc == nil {
		return nil
	}
	var set map[string]bool
	for _, c := range d.Doc.List {
		rest, ok := strings.CutPrefix(c.Text, optionalDirective)
		if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		for _, name := range strings.Fields(rest) {
			if set == nil {
				set = map[string]bool{}
			}
			set[name] = true
		}
	}
	return set
}

func isBasicLit(args []ast.Expr) bool {
	if len(args) != 1 {
		return false
	}
	_, ok := ast.Unparen(args[0]).(*ast.BasicLit)
	return ok
}

func calleeOf(info *types.Info, fun ast.Expr) *types.Func {
	switch e := ast.Unparen(fun).(type) {
	case *ast.Ident:
		f, _ := info.Uses[e].(*types.Func)
		return f
	case *ast.SelectorExpr:
		f, _ := info.Uses[e.Sel].(*types.Func)
		return f
	}
	return nil
}

func isProc(f *types.Func) bool {
	return f != nil && f.Pkg() != nil && f.Pkg().Path() == cuPath && f.Name() == "Proc" && isPackageLevel(f)
}

func isPackageLevel(f *types.Func) bool { return f.Signature().Recv() == nil }

// interfaceOf is the interface whose method f is, or nil.
func interfaceOf(f *types.Func) *types.Interface {
	recv := f.Signature().Recv()
	if recv == nil {
		return nil
	}
	iface, _ := recv.Type().Underlying().(*types.Interface)
	return iface
}

// funcString names a function as a program spells it: cuda.NewStream,
// (*cuda.Stream).Synchronize.
func funcString(f *types.Func, qual types.Qualifier) string {
	recv := f.Signature().Recv()
	if recv == nil {
		return qual(f.Pkg()) + "." + f.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		return "(*" + types.TypeString(p.Elem(), qual) + ")." + f.Name()
	}
	return types.TypeString(t, qual) + "." + f.Name()
}

func unquote(lit *ast.BasicLit) string {
	if lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// sortFuncs orders bindings the newest first, then by C name.
func sortFuncs(set map[*cuFunc]bool) []*cuFunc {
	fs := make([]*cuFunc, 0, len(set))
	for f := range set {
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(x, y *cuFunc) int { return cmp.Or(cmp.Compare(y.Since, x.Since), cmp.Compare(x.API, y.API)) })
	return fs
}
