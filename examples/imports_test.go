// Package examples holds only this test; the examples are the commands in
// its subdirectories.
package examples

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesUseOnlyPublicPackages: a user copies an example out of the
// repository and runs it, so none may import an internal package.
func TestExamplesUseOnlyPublicPackages(t *testing.T) {
	files, err := filepath.Glob("*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
				t.Errorf("%s imports %s, which a copy outside the repository cannot", f, path)
			}
		}
	}
}
