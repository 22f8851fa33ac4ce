package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirectoryInTheWay(t *testing.T) {
	src := realHeader(t)
	root, out := badRoot(t, src, sha(src))
	// A directory where the generator's last file goes (in rename order).
	os.Remove(filepath.Join(out, "zcu_cuda12040_types.go"))
	if err := os.MkdirAll(filepath.Join(out, "zcu_cuda12040_types.go", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, "zcu_cuda12040_types.go.bak"))
	failsCleanly(t, out, []string{"-root", root, "-out", out, "-version", "12.4"}, "zcu_cuda12040_types.go")
}
