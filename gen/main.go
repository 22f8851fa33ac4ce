// Command gen generates package cu (generated/cu) from cuda.h for each CUDA
// version of headers/versions.json: parse the header with modernc.org/cc/v4,
// build a plain-data model, emit Go with jennifer.
//
//	go run ./gen -version 12.4     one version (its header must be cached)
//	go run ./gen -all              every version whose header is cached
//	go run ./gen -all -check       regenerate in memory and diff with generated/cu
//	go run ./gen -diff 12.4 13.0   the API changes from one version to another
//
// Besides the Go files of each version, generation writes its API data
// (zcu_<tag>_api.txt) and the diff across the matrix (API_CHANGES.md), so
// that versions whose header is cached elsewhere can be compared anywhere.
// -all also writes cuda/zfused.h, the C prototypes and wrappers of package
// cuda's fused calls, from the table in cuda/fused.go (see fused_table.go).
//
// Headers are cached by `go run ./headers/fetch` (make headers).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gocuda/gocuda/internal/manifest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	var versions stringList
	fs.Var(&versions, "version", "CUDA version to generate, e.g. 12.4 (repeatable, or comma-separated)")
	all := fs.Bool("all", false, "generate every version whose header is cached")
	check := fs.Bool("check", false, "generate in memory and report any difference from what is in -out; write nothing")
	root := fs.String("root", "", "module root (default: found from the working directory)")
	out := fs.String("out", "", "output directory (default: <root>/generated/cu)")
	diff := fs.Bool("diff", false, "print the API changes from the version given as the first argument to the second, as Markdown")
	verbose := fs.Bool("v", false, "print each header generated or skipped, with where it was looked for (default: one line per version and a summary)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *diff && (*all || len(versions) > 0 || *check):
		return errors.New("-diff takes two versions and no other mode")
	case *diff && fs.NArg() != 2:
		return errors.New("-diff takes two versions: -diff 12.4 13.0")
	case !*diff && fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case !*diff && *all == (len(versions) > 0):
		return errors.New("give either -all or -version")
	}
	if *root == "" {
		r, err := moduleRoot()
		if err != nil {
			return err
		}
		*root = r
	}
	if *out == "" {
		*out = filepath.Join(*root, "generated", "cu")
	}
	m, err := manifest.Load(filepath.Join(*root, "headers", "versions.json"))
	if err != nil {
		return err
	}
	if *diff {
		return printDiff(os.Stdout, m, *out, fs.Arg(0), fs.Arg(1))
	}

	// Versions in ascending order, so each sees the symbol lists of those
	// before it. A name is a CUDA version, else one of another family;
	// each library takes those of its own matrix.
	var todo []manifest.Version
	if *all {
		todo = m.All()
	} else {
		for _, name := range versions {
			v, err := m.LookupAny(name)
			if err != nil {
				return err
			}
			todo = append(todo, v)
		}
	}
	sort.Slice(todo, func(i, j int) bool { return todo[i].Number() < todo[j].Number() })

	if err := checkCgoTable(); err != nil {
		return err
	}
	// The fused calls' header serves every version: -all makes it, from
	// the models of package cu's versions.
	var fused []fusedEntry
	models := map[string]*Module{} // package cu's, by version
	if *all {
		if fused, err = readFusedTable(*root); err != nil {
			return err
		}
	}
	dirs := map[string]map[string]Output{}
	owners := map[string]*library{}
	files := newHeaderFiles()
	rep := &genReport{verbose: *verbose, w: os.Stdout}
	for _, l := range libraries {
		dir := *out
		if l != cuLib {
			// Every other library's package sits next to package cu.
			dir = filepath.Join(filepath.Dir(*out), l.pkg)
		}
		var mine []manifest.Version
		for _, v := range todo {
			if v.Family() == l.versions() {
				mine = append(mine, v)
			}
		}
		if len(mine) == 0 && !*all {
			continue // none of its versions asked for: its files stay as they are
		}
		var mods map[string]*Module
		if l == cuLib {
			mods = models
		}
		outputs, err := generateLibrary(l, m, mine, dir, *all, files, mods, rep)
		if err != nil {
			return err
		}
		if len(outputs) > 0 {
			dirs[dir], owners[dir] = outputs, l
		}
	}
	rep.print()
	var fusedHeader []byte
	if *all {
		if fusedHeader, err = generateFused(m, fused, models); err != nil {
			return err
		}
	}
	if *check {
		var errs []string
		for _, l := range libraries {
			for dir, o := range dirs {
				if owners[dir] == l {
					if err := checkOutputsOf(l, dir, o); err != nil {
						errs = append(errs, err.Error())
					}
				}
			}
		}
		if fusedHeader != nil {
			if err := checkFused(fusedDir(*root), fusedHeader); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			return errors.New(strings.Join(errs, "\n"))
		}
		return nil
	}
	if fusedHeader != nil {
		dirs[fusedDir(*root)] = map[string]Output{matrixKey: {fusedHeaderFile: fusedHeader}}
	}
	return writeAll(dirs, owners)
}

// generateLibrary makes the files of library l for the versions todo, in
// ascending order, into outputs by tag, reading headers through files, and
// keeps the model of each version it generates in models (by version) when
// models is not nil, telling rep what became of each header. A
// version without the library's header is left out; package cu needs at
// least one header, the others skip what is not cached.
func generateLibrary(l *library, m *manifest.Manifest, todo []manifest.Version, out string, all bool, files *headerFiles, models map[string]*Module, rep *genReport) (map[string]Output, error) {
	// The full manifest for the headers of another family that the
	// library's header is parsed with; the library's own matrix for
	// everything about its versions.
	full := m
	m = l.matrix(m)
	hw, err := readHandwritten(out)
	if err != nil {
		return nil, err
	}
	outputs := map[string]Output{} // by tag
	produced := map[string][]string{}
	apis := map[string]*API{} // by tag, of the versions generated
	for _, v := range todo {
		if !l.provides(v) {
			continue
		}
		start := time.Now()
		src, path, err := files.read(v, l.header)
		if errors.Is(err, manifest.ErrNotCached) && (all || l != cuLib) {
			rep.detail("%s (%s): %s skipped, header not cached at %s", v.Name(), v.Tag, l.header, path)
			rep.skipped(v, "not cached")
			continue
		}
		if err != nil {
			return nil, err
		}
		var earlier []versionSymbols
		if l.prefix != "" {
			if earlier, err = earlierSymbols(l, m, v, out, produced); err != nil {
				return nil, err
			}
		}
		with := full.ParsedWith(v)
		mod, err := l.model(src, v, with, files)
		if errors.Is(err, manifest.ErrNotCached) {
			rep.detail("%s (%s): %s skipped: %v", v.Name(), v.Tag, l.header, err)
			rep.skipped(v, "with a header they include not cached")
			continue
		}
		if err == nil {
			err = checkVersion(l, mod, v, with)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Name(), err)
		}
		sum := v.SHA256
		if h, ok := v.Header(l.header); ok {
			sum = h.SHA256
		}
		o, api, err := l.generate(m, v, sum, mod, earlier, hw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Name(), err)
		}
		outputs[v.Tag] = o
		if models != nil {
			models[v.Version] = mod
		}
		if api != nil {
			apis[v.Tag] = api
		}
		syms := []string{} // made, even when empty
		for _, fn := range mod.Functions {
			syms = append(syms, fn.Symbol)
		}
		produced[v.Tag] = syms
		rep.generated(v, len(mod.Functions))
		rep.detail("%s (%s) %s: %d functions, %d enums, %d structs and unions, %d typedefs, %d constants, %d excluded; %.2fs",
			v.Name(), v.Tag, l.header, len(mod.Functions), len(mod.Enums), len(mod.Records), len(mod.Typedefs), len(mod.Constants), len(mod.Excluded), time.Since(start).Seconds())
	}
	if len(outputs) == 0 && l == cuLib {
		return nil, errors.New("no header is cached; run `make headers` first")
	}
	for _, v := range l.providers(m) {
		if _, ok := outputs[v.Tag]; ok {
			continue
		}
		o, err := l.restamp(m, v, out)
		if err != nil {
			return nil, err
		}
		if o != nil {
			outputs[v.Tag] = o
			rep.restamped(v)
			rep.detail("%s (%s) %s: not regenerated; its committed files' build constraints follow the manifest", v.Name(), v.Tag, l.header)
		}
	}
	if len(outputs) == 0 {
		return nil, nil
	}
	if l.apiDiff {
		changes, err := matrixChanges(m, out, apis)
		if err != nil {
			return nil, err
		}
		outputs[matrixKey] = Output{apiChangesFile: changes}
	}
	if l.sonames != nil {
		lib, err := emitLib(l)
		if err != nil {
			return nil, err
		}
		outputs[matrixKey] = Output{l.libFile(): lib}
	}
	return outputs, nil
}

// Model parses a cuda.h and builds its model.
func Model(src []byte) (*Module, error) {
	h, err := Parse(cuLib.header, src)
	if err != nil {
		return nil, err
	}
	return buildLib(h, cuLib.prefix)
}

// model parses src, the header of library l, with the headers that
// version with pins, read through files, and builds its model. cuda.h is
// parsed alone, as it includes only standard headers.
func (l *library) model(src []byte, v, with manifest.Version, files *headerFiles) (*Module, error) {
	if l == cuLib {
		return Model(src)
	}
	set := HeaderSet{Main: l.header, Files: map[string][]byte{l.header: src}}
	add := func(from manifest.Version) error {
		for _, h := range from.Headers {
			if h.Name == l.header {
				continue
			}
			data, _, err := files.read(from, h.Name)
			if err != nil {
				return fmt.Errorf("the headers %s is parsed with: %w", l.header, err)
			}
			set.Files[h.Name] = data
		}
		return nil
	}
	if err := add(with); err != nil {
		return nil, err
	}
	if main := with.MainHeader(); main != l.header {
		data, _, err := files.read(with, main)
		if err != nil {
			return nil, fmt.Errorf("the headers %s is parsed with: %w", l.header, err)
		}
		set.Files[main] = data
	}
	// A family parsed with CUDA's headers may have its own besides.
	if v.Family() != with.Family() {
		if err := add(v); err != nil {
			return nil, err
		}
	}
	h, err := ParseSet(l, set)
	if err != nil {
		return nil, err
	}
	m, err := buildLib(h, l.prefix)
	if err != nil {
		return nil, err
	}
	exportTypes(m)
	return m, nil
}

// checkVersion holds what the headers of version v of library l say their
// version is to what headers/versions.json says: the version macro of v's
// main header (CUDA_VERSION, NCCL_VERSION_CODE) to v, and CUDA_VERSION,
// wherever the headers parsed define it, to with, the CUDA version they were
// parsed as (v, or the default for NCCL). The bindings' headerVersion is
// the manifest's number, and these checks make it the header's too; a
// library's headers define no version macro of their own.
func checkVersion(l *library, mod *Module, v, with manifest.Version) error {
	if l.header == v.MainHeader() {
		macro := v.Family().Macro
		found := false
		for _, c := range mod.Constants {
			if c.Name == macro {
				if c.Value != strconv.Itoa(v.Number()) {
					return fmt.Errorf("%s says %s %s, but headers/versions.json lists it as %s (%d)", v.MainHeader(), macro, c.Value, v.Name(), v.Number())
				}
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s defines no %s", v.MainHeader(), macro)
		}
	}
	if mod.CUDAVersion != 0 && mod.CUDAVersion != with.Number() {
		return fmt.Errorf("%s, with the headers it is parsed with, says CUDA_VERSION %d, but headers/versions.json lists them as %s (%d)", l.header, mod.CUDAVersion, with.Name(), with.Number())
	}
	return nil
}

// earlierSymbols returns the symbol lists of the matrix versions below v:
// from this run where it made them, else from the committed files in out.
func earlierSymbols(l *library, m *manifest.Manifest, v manifest.Version, out string, produced map[string][]string) ([]versionSymbols, error) {
	var lower []manifest.Version
	for _, o := range m.Versions {
		if o.Number() < v.Number() && l.provides(o) {
			lower = append(lower, o)
		}
	}
	sort.Slice(lower, func(i, j int) bool { return lower[i].Number() < lower[j].Number() })
	var res []versionSymbols
	for _, o := range lower {
		if syms, ok := produced[o.Tag]; ok {
			res = append(res, versionSymbols{o.Version, syms})
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, l.symbolsFile(o.Tag)))
		if err != nil {
			return nil, fmt.Errorf("%s needs the symbol list of %s to date its functions: %w (generate %s first)", v.Name(), o.Name(), err, o.Version)
		}
		res = append(res, versionSymbols{o.Version, parseSymbolList(data)})
	}
	return res, nil
}

// matrixChanges renders API_CHANGES.md from the API of every version of
// the matrix: from this run's models where it made them, else from the API
// files in out. A version with neither is left out and named.
func matrixChanges(m *manifest.Manifest, out string, made map[string]*API) ([]byte, error) {
	vs := append([]manifest.Version(nil), m.Versions...)
	sort.Slice(vs, func(i, j int) bool { return vs[i].Number() < vs[j].Number() })
	var apis []*API
	var missing []string
	for _, v := range vs {
		if a := made[v.Tag]; a != nil {
			apis = append(apis, a)
			continue
		}
		file := filepath.Join(out, apiFile(v.Tag))
		data, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, v.Version)
			continue
		}
		if err != nil {
			return nil, err
		}
		a, err := parseAPI(v.Version, data, file)
		if err != nil {
			return nil, err
		}
		apis = append(apis, a)
	}
	return apiChanges(apis, missing), nil
}

// printDiff writes the API changes from version a to version b.
func printDiff(w io.Writer, m *manifest.Manifest, out, a, b string) error {
	var apis [2]*API
	for i, name := range []string{a, b} {
		v, err := m.Lookup(name)
		if err != nil {
			return err
		}
		if apis[i], err = loadAPI(v, out); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	diffAPI(apis[0], apis[1]).markdown(&buf, 1)
	_, err := w.Write(append(bytes.TrimRight(buf.Bytes(), "\n"), '\n'))
	return err
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(data), "module github.com/gocuda/gocuda\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the gocuda module; give -root")
		}
		dir = parent
	}
}

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}
