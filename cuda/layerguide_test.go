package cuda_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering of this package is written down in README.md: the table
// whose columns are "layer" and "files" gives the layers, one row each,
// lowest first, and the files of each; the table whose columns are
// "package" and "may import" gives the imports allowed between the
// packages of the cuda tree. The tests of layers_test.go and
// layerimports_test.go keep both true.

const guidePath = "README.md"

// A guideRow is a row of a table of the guide: its line and its cells by
// column name (lower case).
type guideRow struct {
	line  int
	cells map[string]string
}

// guideTable returns the rows of the first Markdown table of the guide
// whose header has the given column names (among others, in any order).
func guideTable(t *testing.T, columns ...string) []guideRow {
	t.Helper()
	needSource(t)
	guide, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := markdownTable(string(guide), columns...)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func markdownTable(text string, columns ...string) ([]guideRow, error) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		header, ok := tableCells(lines[i])
		if !ok {
			continue
		}
		for k := range header {
			header[k] = strings.ToLower(header[k])
		}
		if !containsAll(header, columns) {
			continue
		}
		if sep, ok := tableCells(lines[i+1]); !ok || !isSeparator(sep) {
			return nil, fmt.Errorf("%s:%d: the table's header is not followed by a |---| line", guidePath, i+2)
		}
		var rows []guideRow
		for j := i + 2; j < len(lines); j++ {
			cells, ok := tableCells(lines[j])
			if !ok {
				break
			}
			if len(cells) != len(header) {
				return nil, fmt.Errorf("%s:%d: %d cells in a table of %d columns", guidePath, j+1, len(cells), len(header))
			}
			row := guideRow{line: j + 1, cells: map[string]string{}}
			for k, h := range header {
				row.cells[h] = cells[k]
			}
			rows = append(rows, row)
		}
		return rows, nil
	}
	return nil, fmt.Errorf("%s has no table with the columns %q", guidePath, columns)
}

// tableCells returns the cells of a Markdown table row, trimmed; false for
// a line that is not a row.
func tableCells(line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	if len(line) < 2 || !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil, false
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells, true
}

func containsAll(cells, want []string) bool {
	for _, w := range want {
		if !slices.Contains(cells, w) {
			return false
		}
	}
	return true
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if !strings.Contains(c, "-") || strings.Trim(c, ":-") != "" {
			return false
		}
	}
	return true
}

// cellList splits a cell of comma-separated names, each in backquotes or
// not; "none" stands for an empty list.
func cellList(cell string) []string {
	var names []string
	for _, n := range strings.Split(cell, ",") {
		n = strings.Trim(strings.TrimSpace(n), "`")
		if n != "" && n != "none" {
			names = append(names, n)
		}
	}
	return names
}

// layerTable is the guide's table of layers.
type layerTable struct {
	names    []string            // lowest first
	listings map[string][]string // file name → the layers listing it
}

// layer returns the index in names of the layer that lists file (the
// first one, for a file listed twice).
func (t *layerTable) layer(file string) (int, bool) {
	l := t.listings[file]
	if len(l) == 0 {
		return 0, false
	}
	return slices.Index(t.names, l[0]), true
}

func readLayerTable(t *testing.T) *layerTable {
	t.Helper()
	table := &layerTable{listings: map[string][]string{}}
	for _, row := range guideTable(t, "layer", "files") {
		name := strings.Trim(row.cells["layer"], "`")
		if name == "" || slices.Contains(table.names, name) {
			t.Fatalf("%s:%d: layer %q is empty or named twice", guidePath, row.line, name)
		}
		table.names = append(table.names, name)
		for _, f := range cellList(row.cells["files"]) {
			table.listings[f] = append(table.listings[f], name)
		}
	}
	if len(table.names) == 0 {
		t.Fatalf("%s: the table of layers has no rows", guidePath)
	}
	return table
}

// layeredFiles returns the names of the non-test .go and .h files of the
// package's directory: the files the table of layers must list.
func layeredFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		goFile := strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go")
		if e.Type().IsRegular() && (goFile || strings.HasSuffix(n, ".h")) {
			files = append(files, n)
		}
	}
	return files
}

// needSource skips the test where the package's source is not in the
// working directory (a test binary carried to another machine).
func needSource(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("layerguide_test.go"); err != nil {
		t.Skip("the package's source is not here:", err)
	}
}

// needGoCommand skips the test where there is no go command to load the
// package's source with.
func needGoCommand(t *testing.T) {
	t.Helper()
	needSource(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("loading the package's source needs the go command:", err)
	}
}
