package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/gocuda/gocuda/internal/manifest"
)

// Output is the set of files generated for one version, by base name.
type Output map[string][]byte

// matrixKey is where the outputs keep the files made from every version
// (API_CHANGES.md) rather than from one.
const matrixKey = ""

// symbolsFile names the list of versioned symbols a version declares; later
// versions read it to say which version introduced a function.
func symbolsFile(tag string) string { return cuLib.symbolsFile(tag) }

func (l *library) symbolsFile(tag string) string { return l.filePrefix() + tag + "_symbols.txt" }

// generatedFor reports whether name is a file the generator owns for tag.
func (l *library) generatedFor(name, tag string) bool {
	return strings.HasPrefix(name, l.filePrefix()+tag+"_")
}

// buildConstraint selects exactly one version for any tag set: the highest
// version whose tag is given, else the default.
// abiConstraint is the ABI the generated layouts and calls are made for,
// and checked against (gcc for amd64, aarch64-linux-gnu-gcc for arm64):
// LP64 Linux. Elsewhere the files are left out and generated/cu/platform.go
// stops the build with a name that says why.
const abiConstraint = "linux && (amd64 || arm64)"

func buildConstraint(m *manifest.Manifest, v manifest.Version) string {
	others := []manifest.Version{}
	for _, o := range m.Versions {
		if o.Version != m.Default {
			others = append(others, o)
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].Number() > others[j].Number() })
	var terms []string
	if v.Version == m.Default {
		for _, o := range others {
			terms = append(terms, "!"+o.Tag)
		}
		if len(terms) == 0 {
			return ""
		}
		return strings.Join(terms, " && ")
	}
	terms = append(terms, v.Tag)
	for _, o := range others {
		if o.Number() > v.Number() {
			terms = append(terms, "!"+o.Tag)
		}
	}
	return strings.Join(terms, " && ")
}

// Generate emits the files of one version from its model. earlier maps each
// lower version of the matrix, in ascending order, to its symbol list; hw is
// what the handwritten files of the package declare (nil: nothing).
func Generate(m *manifest.Manifest, v manifest.Version, sum string, mod *Module, earlier []versionSymbols, hw *handwritten) (Output, error) {
	if err := checkCgoTable(); err != nil {
		return nil, err
	}
	o, _, err := cuLib.generate(m, v, sum, mod, earlier, hw)
	return o, err
}

// libConstraint selects the file of provider p, a version that has the
// library's header, for every tag set whose selected version (see
// buildConstraint) is p or above, up to the next version that has the
// header: a version without it uses the newest header before it (the
// oldest, below every provider), so that exactly one file compiles for
// any tag set.
func (l *library) constraint(m *manifest.Manifest, p manifest.Version) string {
	provs := l.providers(m)
	lo, hi := p.Number(), 1<<30
	for i, q := range provs {
		if q.Version != p.Version {
			continue
		}
		if i == 0 {
			lo = 0
		}
		if i+1 < len(provs) {
			hi = provs[i+1].Number()
		}
	}
	vs := append([]manifest.Version(nil), m.Versions...)
	sort.Slice(vs, func(i, j int) bool { return vs[i].Number() < vs[j].Number() })
	var terms []string
	for _, u := range vs {
		if u.Number() >= lo && u.Number() < hi {
			terms = append(terms, buildConstraint(m, u))
		}
	}
	if len(terms) == 1 || slices.Contains(terms, "") {
		return terms[0]
	}
	return "(" + strings.Join(terms, ") || (") + ")"
}

// fileConstraint is the whole build constraint of the files of provider v
// of l: the ABI and the tag sets that select v.
func (l *library) fileConstraint(m *manifest.Manifest, v manifest.Version) string {
	c := abiConstraint
	if vc := l.constraint(m, v); vc != "" {
		if strings.Contains(vc, "||") {
			vc = "(" + vc + ")"
		}
		c += " && " + vc
	}
	return c
}

// restamp returns the committed files of provider v of l in dir, whose
// header is not cached, with the build constraint the manifest now gives
// them: a version added above or between the others changes which tag
// sets select v's bindings, and so the files of a version that cannot be
// regenerated here. Nothing else in them depends on other versions. It
// returns nil when v has no committed files.
func (l *library) restamp(m *manifest.Manifest, v manifest.Version, dir string) (Output, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	const prefix = "//go:build "
	line := prefix + l.fileConstraint(m, v)
	var o Output
	for _, e := range entries {
		name := e.Name()
		if !l.generatedFor(name, v.Tag) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(name, ".go") {
			lines := strings.SplitN(string(data), "\n", 4)
			i := slices.IndexFunc(lines[:min(3, len(lines))], func(s string) bool { return strings.HasPrefix(s, prefix) })
			if i < 0 {
				return nil, fmt.Errorf("%s: no build constraint among its first lines: not a file the generator made", filepath.Join(dir, name))
			}
			lines[i] = line
			data = []byte(strings.Join(lines, "\n"))
		}
		if o == nil {
			o = Output{}
		}
		o[name] = data
	}
	return o, nil
}

// generate makes the files of one version of l, and the API data the
// matrix's diff is made from (nil for a library without one). The caller
// has checked the cgo policy table.
func (l *library) generate(m *manifest.Manifest, v manifest.Version, sum string, mod *Module, earlier []versionSymbols, hw *handwritten) (Output, *API, error) {
	if err := checkNames(mod, hw, l); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", v.Name(), err)
	}
	x := newTypeIndex(mod)
	since := map[string]string{}
	for _, e := range earlier {
		for _, s := range e.symbols {
			if _, ok := since[s]; !ok {
				since[s] = e.version
			}
		}
	}
	groups := map[string]int{}
	for _, fn := range mod.Functions {
		if _, ok := since[fn.Symbol]; !ok {
			since[fn.Symbol] = v.Version
		}
		groups[versionSuffix.ReplaceAllString(fn.Symbol, "")]++
	}
	// cuGetProcAddress picks the ABI of an API name as of a CUDA version. It
	// is only asked where the header declares a single ABI for that name, so
	// that what it returns is what the header declares; for the rest, the
	// exact versioned symbol is looked up.
	byAddress := map[string]bool{}
	for _, fn := range mod.Functions {
		byAddress[fn.Symbol] = l.getProcAddress && !versionSuffix.MatchString(fn.Name) && groups[versionSuffix.ReplaceAllString(fn.Symbol, "")] == 1
	}

	out := Output{}
	c := l.fileConstraint(m, v)
	header := func(f *jen.File) {
		f.HeaderComment(fmt.Sprintf("go run ./gen -version %s", v.Version))
		f.HeaderComment(fmt.Sprintf("Code generated by the command above from %s of %s (sha256 %s); DO NOT EDIT.", l.header, v.Name(), sum))
		f.HeaderComment("//go:build " + c)
	}

	types := jen.NewFile(l.pkg)
	header(types)
	if err := emitTypes(types, l.header, mod, x); err != nil {
		return nil, nil, err
	}
	funcs := jen.NewFile(l.pkg)
	header(funcs)
	var sonames []string
	if l.sonames != nil {
		var err error
		if sonames, err = l.sonamesFor(v); err != nil {
			return nil, nil, err
		}
	}
	if err := emitFuncs(funcs, l, mod, x, since, oldestVersion(l, m), byAddress, sonames, v.Number()); err != nil {
		return nil, nil, err
	}
	files := map[string]*jen.File{"types.go": types}
	if l.prefix != "" {
		files["funcs.go"] = funcs
	}
	if len(mod.Records) > 0 {
		layout := jen.NewFile(l.pkg)
		header(layout)
		emitLayoutTest(layout, mod)
		files["layout_test.go"] = layout
	}
	for name, f := range files {
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			return nil, nil, fmt.Errorf("%s: render %s: %w", v.Name(), name, err)
		}
		out[l.filePrefix()+v.Tag+"_"+name] = buf.Bytes()
	}
	if l.prefix != "" {
		out[l.symbolsFile(v.Tag)] = symbolList(l, v, mod)
	}
	var api *API
	if l.apiDiff {
		api = apiOf(v.Version, mod)
		out[apiFile(v.Tag)] = apiText(v, api)
	}
	return out, api, nil
}

// oldestVersion is the oldest version of the matrix that has the library.
func oldestVersion(l *library, m *manifest.Manifest) string {
	if p := l.providers(m); len(p) > 0 {
		return p[0].Version
	}
	return ""
}

type versionSymbols struct {
	version string
	symbols []string
}

func symbolList(l *library, v manifest.Version, mod *Module) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# go run ./gen -version %s\n# Versioned %s* symbols declared by %s of %s, one a line; DO NOT EDIT.\n", v.Version, l.prefix, l.header, v.Name())
	for _, fn := range mod.Functions {
		b.WriteString(fn.Symbol + "\n")
	}
	for _, e := range mod.Excluded {
		fmt.Fprintf(&b, "# excluded %s: %s\n", e.Symbol, e.Reason)
	}
	return b.Bytes()
}

func parseSymbolList(data []byte) []string {
	var syms []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			syms = append(syms, line)
		}
	}
	return syms
}
