package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/internal/manifest"
)

// TestLayoutAgainstGCC compiles C against each cached real cuda.h with gcc
// and compares the size of every record, and the offset of every field
// (nested anonymous members included), with the model; the generated
// package's own test holds the Go types to the model.
func TestLayoutAgainstGCC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
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
			want := cLayoutWant(mod)
			got := gccLayout(t, gcc, src, mod)
			for key, w := range want {
				if g, ok := got[key]; !ok {
					t.Errorf("%s: gcc gave nothing", key)
				} else if g != w {
					t.Errorf("%s: gcc %d, model %d", key, g, w)
				}
			}
			if len(want) < 100 {
				t.Fatalf("only %d layout facts checked", len(want))
			}
			checked++
			t.Logf("CUDA %s: %d sizes and offsets agree with gcc", v.Version, len(want))
		})
	}
	if checked == 0 {
		t.Skip("no real header cached")
	}
}

// layoutProbe is one sizeof or offsetof expression and the model's value.
type layoutProbe struct {
	key, expr string
	want      int64
}

func layoutProbes(mod *Module) []layoutProbe {
	recs := map[string]*Record{}
	for i := range mod.Records {
		recs[mod.Records[i].Name] = &mod.Records[i]
	}
	var probes []layoutProbe
	var walk func(top string, r *Record, path string, base int64)
	walk = func(top string, r *Record, path string, base int64) {
		for _, f := range r.Fields {
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if f.Anonymous {
				// C names its members through the parent.
				walk(top, recs[f.Type.Name], path, base+f.Offset)
				continue
			}
			probes = append(probes, layoutProbe{top + "." + p, fmt.Sprintf("offsetof(%s, %s)", top, p), base + f.Offset})
			if f.Type.Kind == Named {
				if sub, ok := recs[f.Type.Name]; ok && sub.CName == "" {
					walk(top, sub, p, base+f.Offset)
				}
			}
		}
	}
	for i := range mod.Records {
		r := &mod.Records[i]
		if r.CName == "" {
			continue
		}
		probes = append(probes,
			layoutProbe{"sizeof " + r.CName, "sizeof(" + r.CName + ")", r.Size},
			layoutProbe{"alignof " + r.CName, "_Alignof(" + r.CName + ")", int64(r.Align)})
		walk(r.CName, r, "", 0)
	}
	return probes
}

func cLayoutWant(mod *Module) map[string]int64 {
	want := map[string]int64{}
	for _, p := range layoutProbes(mod) {
		want[p.key] = p.want
	}
	return want
}

func gccLayout(t *testing.T, gcc string, header []byte, mod *Module) map[string]int64 {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cuda.h"), header, 0o644); err != nil {
		t.Fatal(err)
	}
	return gccLayoutOf(t, gcc, "cuda.h", []string{"-I", dir}, mod)
}

// gccLayoutOf prints the layout of mod's records as gcc computes them for
// the header include, found with flags.
func gccLayoutOf(t *testing.T, gcc, include string, flags []string, mod *Module) map[string]int64 {
	dir := t.TempDir()
	var c bytes.Buffer
	fmt.Fprintf(&c, "#include <stddef.h>\n#include <stdio.h>\n#include <%s>\nint main(void) {\n", include)
	for _, p := range layoutProbes(mod) {
		fmt.Fprintf(&c, "\tprintf(\"%%s=%%zu\\n\", %q, (size_t)(%s));\n", p.key, p.expr)
	}
	c.WriteString("\treturn 0;\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "layout.c"), c.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "layout")
	args := append(append([]string{"-o", exe}, flags...), filepath.Join(dir, "layout.c"))
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		got[key] = n
	}
	return got
}

// TestFunctionsAgainstGCC counts the functions of each cached real header
// of every library (cu* in cuda.h, nvrtc* in nvrtc.h, …) a second way, with
// gcc's own list of the prototypes it saw (-aux-info), and requires the
// model to bind exactly that set.
func TestFunctionsAgainstGCC(t *testing.T) {
	// Each runs gcc over every version's headers for a minute or more:
	// side by side, they take the time of the longer one.
	t.Parallel()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libraries {
		if l.prefix == "" {
			continue // types only
		}
		// nvJitLink's functions are __nvJitLinkCreate_12_4 and kin.
		proto := regexp.MustCompile(`\b((?:__)?` + l.prefix + `[A-Za-z0-9_]+) \(`)
		for _, v := range l.providers(m) {
			t.Run(l.pkg+"/"+v.Version, func(t *testing.T) {
				mod, path, flags := realModel(t, m, l, v)
				aux := filepath.Join(t.TempDir(), "aux.txt")
				args := append([]string{"-fsyntax-only", "-aux-info", aux}, flags...)
				if out, err := exec.Command(gcc, append(args, "-x", "c", path)...).CombinedOutput(); err != nil {
					t.Fatalf("gcc: %v\n%s", err, out)
				}
				data, err := os.ReadFile(aux)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]bool{}
				for _, line := range strings.Split(string(data), "\n") {
					// Each line starts with a comment naming the file that
					// declared it (only the library's own count) and
					// whether it is a declaration (C) or a definition (F):
					// an inline definition (cublasLtMatmulDescInit,
					// nvJitLinkCreate) has no symbol to bind.
					for _, own := range l.ownFiles() {
						if rest, ok := strings.CutPrefix(line, "/* "+filepath.Join(filepath.Dir(path), own)+":"); ok && declaration.MatchString(rest) {
							if m := proto.FindStringSubmatch(line); m != nil {
								want[m[1]] = true
							}
						}
					}
				}
				got := map[string]bool{}
				for _, f := range mod.Functions {
					got[f.Symbol] = true
				}
				for _, e := range mod.Excluded {
					got[e.Symbol] = true
				}
				for s := range want {
					if !got[s] {
						t.Errorf("gcc declares %s; the model does not have it", s)
					}
				}
				for s := range got {
					if !want[s] {
						t.Errorf("the model has %s; gcc does not declare it", s)
					}
				}
				if len(want) == 0 {
					t.Errorf("gcc declares no %s* function in %s", l.prefix, path)
				}
				t.Logf("%s %s: gcc declares %d %s* functions; %d bound, %d excluded", v.Name(), l.header, len(want), l.prefix, len(mod.Functions), len(mod.Excluded))
			})
		}
	}
}

// declaration matches the rest of gcc's -aux-info comment on a function
// that is declared, not defined: "1006:NC */".
var declaration = regexp.MustCompile(`^\d+:[NO]C \*/`)

// realModel builds the model of library l from the cached headers of v,
// skipping when they are not cached, and returns the path of its header
// and the gcc flags that find its includes as ParseSet does.
func realModel(t *testing.T, m *manifest.Manifest, l *library, v manifest.Version) (*Module, string, []string) {
	t.Helper()
	src, path, err := l.readHeader(v)
	if errors.Is(err, manifest.ErrNotCached) {
		t.Skipf("%s %s not cached (make headers)", v.Name(), l.header)
	}
	if err != nil {
		t.Fatal(err)
	}
	if l == cuLib {
		mod, err := Model(src)
		if err != nil {
			t.Fatal(err)
		}
		return mod, path, nil
	}
	with := m.ParsedWith(v)
	mod, err := l.model(src, v, with, newHeaderFiles())
	if errors.Is(err, manifest.ErrNotCached) {
		t.Skipf("%v (make headers)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var include []string
	if with.Tag != v.Tag {
		// The other version's headers are in its own cache directory.
		rt, err := with.HeaderPath()
		if err != nil {
			t.Fatal(err)
		}
		include = []string{"-I", filepath.Dir(rt)}
	}
	standin := t.TempDir()
	for name, text := range standins {
		p := filepath.Join(standin, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mod, path, append([]string{"-I", standin, "-I", filepath.Dir(path)}, include...)
}

// TestLibraryLayoutAgainstGCC holds the records of every library header
// (cuBLASLt's matmul descriptors, cuFFT's, …) to gcc's layout, with the
// header set on gcc's include path.
func TestLibraryLayoutAgainstGCC(t *testing.T) {
	// Each runs gcc over every version's headers for a minute or more:
	// side by side, they take the time of the longer one.
	t.Parallel()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	m, err := manifest.Load(filepath.Join("..", "headers", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, l := range libraries {
		if l == cuLib {
			continue
		}
		for _, v := range l.providers(m) {
			t.Run(l.pkg+"/"+v.Version, func(t *testing.T) {
				mod, _, flags := realModel(t, m, l, v)
				want := cLayoutWant(mod)
				if len(want) == 0 {
					t.Skipf("%s declares no record", l.header)
				}
				got := gccLayoutOf(t, gcc, l.header, flags, mod)
				for key, w := range want {
					if g, ok := got[key]; !ok {
						t.Errorf("%s: gcc gave nothing", key)
					} else if g != w {
						t.Errorf("%s: gcc %d, model %d", key, g, w)
					}
				}
				checked += len(want)
				t.Logf("%s %s: %d sizes and offsets agree with gcc", v.Name(), l.header, len(want))
			})
		}
	}
	if checked == 0 {
		t.Skip("no library header with records cached")
	}
}
