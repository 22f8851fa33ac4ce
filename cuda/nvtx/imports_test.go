package nvtx_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// The package is for any Go program, GPU or not: it imports nothing of
// gocuda, with cgo or without.
func TestImportsNothingOfTheModule(t *testing.T) {
	for _, cgo := range []bool{true, false} {
		ctx := build.Default
		ctx.CgoEnabled = cgo
		pkg, err := ctx.ImportDir(".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "github.com/gocuda/gocuda") {
				t.Errorf("with cgo %v the package imports %s", cgo, imp)
			}
		}
		if wantC := cgo && ctx.GOOS == "linux"; wantC != slices.Contains(pkg.Imports, "C") {
			t.Errorf("with cgo %v, imports %q", cgo, pkg.Imports)
		}
	}
}
