package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

// aarch64CC is the cross compiler that checks the layouts for arm64
// (Debian's gcc-aarch64-linux-gnu).
const aarch64CC = "aarch64-linux-gnu-gcc"

// TestLayoutAgainstAarch64 holds the model, which the generated Go types
// follow on every architecture they build for, to the layouts of the arm64
// compiler: one _Static_assert per record size, alignment and field
// offset, compiled (not run) against each cached real header. The
// generated files claim LP64 Linux on amd64 and arm64; this is the check
// of the second.
func TestLayoutAgainstAarch64(t *testing.T) {
	cc, err := exec.LookPath(aarch64CC)
	if err != nil {
		t.Skipf("%s not found (Debian: gcc-aarch64-linux-gnu): the arm64 layouts are not checked", aarch64CC)
	}
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range m.Versions {
		t.Run(v.Version, func(t *testing.T) {
			src, _, err := v.ReadHeader()
			if errors.Is(err, manifest.ErrNotCached) {
				t.Skipf("CUDA %s header not cached (make headers): %v", v.Version, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			mod, err := Model(src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "cuda.h"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			probes := layoutProbes(mod)
			var c bytes.Buffer
			c.WriteString("#include <stddef.h>\n#include \"cuda.h\"\n")
			for _, p := range probes {
				fmt.Fprintf(&c, "_Static_assert((%s) == %d, %q);\n", p.expr, p.want, p.key)
			}
			file := filepath.Join(dir, "layout.c")
			if err := os.WriteFile(file, c.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(cc, "-fsyntax-only", "-fmax-errors=20", file).CombinedOutput(); err != nil {
				t.Fatalf("%s disagrees with the model (each failed assertion names the record or field):\n%s", aarch64CC, out)
			}
			checked++
			t.Logf("CUDA %s: %d sizes, alignments and offsets agree with %s", v.Version, len(probes), aarch64CC)
		})
	}
	if checked == 0 {
		t.Skip("no real header cached")
	}
}
