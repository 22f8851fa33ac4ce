package cuda_test

import (
	"bufio"
	"fmt"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A file of a layer may use only the names declared in files of its own
// layer or lower ones, and include only the headers of those layers (the
// guide, README.md, says why). Test files are exempt.

// layerBuildTags are the build tag sets package cuda is loaded with for the
// check of uses: together they compile every non-test .go file of the
// package. Each load runs cgo over the package, some seconds after a
// change to it, so -short loads with the first set only.
var layerBuildTags = []string{"", "cuda11080"}

func loadedBuildTags() []string {
	if testing.Short() {
		return layerBuildTags[:1]
	}
	return layerBuildTags
}

var cudaLoads struct {
	once sync.Once
	pkgs []*packages.Package
	err  error
}

// loadCuda loads package cuda with full type information, once for each
// of loadedBuildTags, the first time a test asks.
func loadCuda(t *testing.T) []*packages.Package {
	t.Helper()
	needGoCommand(t)
	cudaLoads.once.Do(func() {
		for _, tags := range loadedBuildTags() {
			p, err := loadCudaWithTags(tags)
			if err != nil {
				cudaLoads.err = fmt.Errorf("loading package cuda with the build tags %q: %w", tags, err)
				return
			}
			cudaLoads.pkgs = append(cudaLoads.pkgs, p)
		}
	})
	if cudaLoads.err != nil {
		t.Fatal(cudaLoads.err)
	}
	return cudaLoads.pkgs
}

func loadCudaWithTags(tags string) (*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedImports | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
	}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags", tags}
	}
	pkgs, err := packages.Load(cfg, ".")
	switch {
	case err != nil:
		return nil, err
	case len(pkgs) != 1:
		return nil, fmt.Errorf("%d packages in one directory", len(pkgs))
	case len(pkgs[0].Errors) > 0:
		return nil, pkgs[0].Errors[0]
	}
	return pkgs[0], nil
}

func TestLayersTableListsEachFileOnce(t *testing.T) {
	table := readLayerTable(t)
	files := layeredFiles(t)
	for _, f := range files {
		switch l := table.listings[f]; len(l) {
		case 0:
			t.Errorf("%s is in no layer of %s's table", f, guidePath)
		case 1:
		default:
			t.Errorf("%s is listed %d times in %s's table (layers %s)", f, len(l), guidePath, strings.Join(l, ", "))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(table.listings)) {
		if !slices.Contains(files, f) {
			t.Errorf("%s's table lists %s, which is not a non-test .go or .h file of the package", guidePath, f)
		}
	}
}

// A layerViolation is one line of a failure: file:line: text.
type layerViolation struct {
	file string
	line int
	text string
}

// reportViolations reports the violations found, each once, in the order
// of the files and lines.
func reportViolations(t *testing.T, found map[layerViolation]bool) {
	t.Helper()
	vs := slices.Collect(maps.Keys(found))
	slices.SortFunc(vs, func(a, b layerViolation) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		if a.line != b.line {
			return a.line - b.line
		}
		return strings.Compare(a.text, b.text)
	})
	for _, v := range vs {
		t.Errorf("%s:%d: %s", v.file, v.line, v.text)
	}
}

// declaredInPackage reports whether obj is a function, type, variable or
// constant of pkg's scope, or a method or field declared in pkg.
func declaredInPackage(obj types.Object, pkg *types.Package) bool {
	if obj.Pkg() != pkg {
		return false
	}
	if obj.Parent() == pkg.Scope() {
		return true
	}
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// fieldOwners maps the fields of pkg's named struct types to the types'
// names.
func fieldOwners(pkg *types.Package) map[*types.Var]string {
	owners := map[*types.Var]string{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if s, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := range s.NumFields() {
				owners[s.Field(i)] = name
			}
		}
	}
	return owners
}

// qualifiedName is Type.name for a method or a field of a named type, the
// name otherwise.
func qualifiedName(obj types.Object, fieldOwner map[*types.Var]string) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Signature().Recv(); recv != nil {
			typ := recv.Type()
			if p, ok := typ.(*types.Pointer); ok {
				typ = p.Elem()
			}
			if n, ok := typ.(*types.Named); ok {
				return n.Obj().Name() + "." + o.Name()
			}
		}
	case *types.Var:
		if owner, ok := fieldOwner[o.Origin()]; ok {
			return owner + "." + o.Name()
		}
	}
	return obj.Name()
}

// sourcePosition returns the file (its base name) and line of pos, through
// the line directives of cgo's output; false where pos is not in a file of
// dir (it is in a file cgo generated).
func sourcePosition(fset *token.FileSet, pos token.Pos, dir string) (string, int, bool) {
	p := fset.Position(pos)
	if !p.IsValid() || filepath.Dir(p.Filename) != dir {
		return "", 0, false
	}
	return filepath.Base(p.Filename), p.Line, true
}

func TestLayersUsesOnlyOwnOrLowerLayers(t *testing.T) {
	table := readLayerTable(t)
	pkgs := loadCuda(t)
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	found := map[layerViolation]bool{}
	compiled := map[string]bool{}
	checked := 0
	for _, p := range pkgs {
		for _, f := range p.GoFiles {
			compiled[filepath.Base(f)] = true
		}
		owners := fieldOwners(p.Types)
		for id, obj := range p.TypesInfo.Uses {
			if !declaredInPackage(obj, p.Types) {
				continue
			}
			useFile, useLine, ok := sourcePosition(p.Fset, id.Pos(), dir)
			if !ok {
				continue
			}
			declFile, _, ok := sourcePosition(p.Fset, obj.Pos(), dir)
			if !ok {
				continue // a C name: TestLayersHeadersIncludedFromOwnOrHigherLayers checks where it comes from
			}
			useLayer, ok1 := table.layer(useFile)
			declLayer, ok2 := table.layer(declFile)
			if !ok1 || !ok2 {
				continue // TestLayersTableListsEachFileOnce reports the file
			}
			checked++
			if declLayer > useLayer {
				found[layerViolation{useFile, useLine, fmt.Sprintf("uses %s (layer %s, %s) from layer %s",
					qualifiedName(obj, owners), table.names[declLayer], declFile, table.names[useLayer])}] = true
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no use of a name declared in %s was found in its files", dir)
	}
	var unloaded []string
	for _, f := range layeredFiles(t) {
		if strings.HasSuffix(f, ".go") && !compiled[f] {
			unloaded = append(unloaded, f)
		}
	}
	switch {
	case len(unloaded) == 0:
	case testing.Short():
		t.Logf("the uses in %s are checked without -short only (build tags %q)",
			strings.Join(unloaded, ", "), layerBuildTags[1:])
	default:
		t.Errorf("%s: compiled under none of the build tag sets %q: add their tags to layerBuildTags",
			strings.Join(unloaded, ", "), layerBuildTags)
	}
	reportViolations(t, found)
}

var includeLine = regexp.MustCompile(`^\s*(?://)?\s*#\s*include\s*"([^"]+)"`)

// The C names a Go file uses come from its preamble and the headers it
// includes; a header's layer is checked here, by a scan of the text.
func TestLayersHeadersIncludedFromOwnOrHigherLayers(t *testing.T) {
	table := readLayerTable(t)
	found := map[layerViolation]bool{}
	for _, f := range layeredFiles(t) {
		fileLayer, ok := table.layer(f)
		if !ok {
			continue // TestLayersTableListsEachFileOnce reports the file
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(src)))
		sc.Buffer(nil, len(src)+1)
		for line := 1; sc.Scan(); line++ {
			m := includeLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			h := m[1]
			hLayer, ok := table.layer(h)
			if !ok {
				if _, err := os.Stat(h); err == nil {
					t.Errorf("%s:%d: includes %s, which is in no layer", f, line, h)
				}
				continue // a header from elsewhere
			}
			if hLayer > fileLayer {
				found[layerViolation{f, line, fmt.Sprintf("includes %s (layer %s) from layer %s",
					h, table.names[hLayer], table.names[fileLayer])}] = true
			}
		}
	}
	reportViolations(t, found)
}
