package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/gocuda/gocuda/internal/manifest"
)

// fusedDir is the directory of package cuda, which holds the fused table
// and the header made from it, in the module at root.
func fusedDir(root string) string { return filepath.Join(root, "cuda") }

// readFusedTable reads and parses the fused table of the module at root.
func readFusedTable(root string) ([]fusedEntry, error) {
	path := filepath.Join(fusedDir(root), fusedTableFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the fused table: %w", err)
	}
	return parseFusedTable(filepath.Join("cuda", fusedTableFile), data)
}

// generateFused makes zfused.h from the entries and the models of cuda.h
// this run built, by version. It returns nil when the default version's
// header was not at hand: the committed file stays as it is.
func generateFused(m *manifest.Manifest, entries []fusedEntry, models map[string]*Module) ([]byte, error) {
	def := m.DefaultVersion()
	mod, ok := models[def.Version]
	if !ok {
		fmt.Printf("%s: not regenerated, the header of the default version %s is not cached\n", filepath.Join("cuda", fusedHeaderFile), def.Version)
		return nil, nil
	}
	var others []fusedModel
	for v, o := range models {
		if v != def.Version {
			others = append(others, fusedModel{v, o})
		}
	}
	sort.Slice(others, func(i, j int) bool {
		a, _ := m.Lookup(others[i].version)
		b, _ := m.Lookup(others[j].version)
		return a.Number() < b.Number()
	})
	sum := def.SHA256
	if h, ok := def.Header(cuLib.header); ok {
		sum = h.SHA256
	}
	return emitFused(entries, fusedModel{def.Version, mod}, sum, others)
}

// checkFused compares data with the committed zfused.h in dir.
func checkFused(dir string, data []byte) error {
	name := filepath.Join("cuda", fusedHeaderFile)
	have, err := os.ReadFile(filepath.Join(dir, fusedHeaderFile))
	switch {
	case err != nil:
		return fmt.Errorf("generated code is out of date (run `make generate`):\n  %s: missing (%v)", name, err)
	case !bytes.Equal(have, data):
		return fmt.Errorf("generated code is out of date (run `make generate`):\n  %s: differs from a fresh generation (%s)", name, firstDifference(have, data))
	}
	fmt.Printf("check: %s up to date\n", name)
	return nil
}
