package cuda_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const (
	modulePath = "github.com/gocuda/gocuda"
	cudaPath   = modulePath + "/cuda"
)

// loadImportGraph loads the packages named by patterns and their
// dependencies, without types; the imports are those of the non-test files.
func loadImportGraph(t *testing.T, patterns ...string) []*packages.Package {
	t.Helper()
	needGoCommand(t)
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the packages do not load: their errors are printed above")
	}
	if len(pkgs) == 0 {
		t.Fatalf("no package matches %q", patterns)
	}
	return pkgs
}

func inCudaTree(path string) bool {
	return path == cudaPath || strings.HasPrefix(path, cudaPath+"/")
}

func modulePackage(path string) string { return strings.TrimPrefix(path, modulePath+"/") }

// importChain returns the shortest chain of imports that leads from p to
// a package of the cuda tree (p left out, the package of the tree last),
// or nil.
func importChain(p *packages.Package) []string {
	from := map[*packages.Package]*packages.Package{p: nil}
	queue := []*packages.Package{p}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, imp := range q.Imports {
			if _, seen := from[imp]; seen {
				continue
			}
			from[imp] = q
			if inCudaTree(imp.PkgPath) {
				var chain []string
				for r := imp; r != p; r = from[r] {
					chain = append(chain, modulePackage(r.PkgPath))
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

// The packages under generated/ and internal/ lie below package cuda,
// which imports them: none of them may reach the cuda tree.
func TestLayersGeneratedAndInternalDoNotImportCuda(t *testing.T) {
	for _, p := range loadImportGraph(t, modulePath+"/generated/...", modulePath+"/internal/...") {
		if chain := importChain(p); chain != nil {
			t.Errorf("%s imports %s", modulePackage(p.PkgPath), strings.Join(chain, " → "))
		}
	}
}

func TestLayersSubpackagesImportWhatTheGuideAllows(t *testing.T) {
	allowed := map[string][]string{}
	for _, row := range guideTable(t, "package", "may import") {
		pkg := strings.Trim(row.cells["package"], "`")
		if _, dup := allowed[pkg]; dup {
			t.Errorf("%s:%d: %s is listed twice", guidePath, row.line, pkg)
		}
		allowed[pkg] = cellList(row.cells["may import"])
	}
	seen := map[string]bool{}
	for _, p := range loadImportGraph(t, cudaPath+"/...") {
		name := modulePackage(p.PkgPath)
		seen[name] = true
		may, ok := allowed[name]
		if !ok {
			t.Errorf("%s is not in %s's table of packages", name, guidePath)
			continue
		}
		for _, path := range slices.Sorted(maps.Keys(p.Imports)) {
			if inCudaTree(path) && !slices.Contains(may, modulePackage(path)) {
				t.Errorf("%s imports %s, which %s's table of packages does not allow", name, modulePackage(path), guidePath)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(allowed)) {
		if !seen[pkg] {
			t.Errorf("%s's table of packages lists %s, which is not a package of the cuda tree", guidePath, pkg)
		}
	}
}
