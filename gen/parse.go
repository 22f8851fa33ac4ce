package main

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// Header is a parsed header: cc's checked AST plus what only the
// preprocessor knows, the symbol each API name expands to.
type Header struct {
	Name string // file name used in positions
	AST  *cc.AST
	// Expansion maps an object-like macro named cu* to the identifier it
	// expands to, for the macros that expand to a single identifier:
	// cuMemAlloc → cuMemAlloc_v2.
	Expansion map[string]string
}

// Parse preprocesses and type-checks src (the text of a cuda.h) the way the
// host C compiler would, with no edits to the header.
func Parse(name string, src []byte) (*Header, error) {
	base, err := hostConfig()
	if err != nil {
		return nil, fmt.Errorf("configure C front end: %w", err)
	}
	c := *base
	cfg := &c
	cfg.EvalAllMacros = true
	cfg.ABILayout = true
	// Untrusted or corrupted input must not be able to expand forever.
	cfg.ExpansionLimit = 1 << 26
	sources := []cc.Source{
		{Name: "<predefined>", Value: cfg.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: name, Value: string(src)},
	}
	ast, err := translate(cfg, sources)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	h := &Header{Name: name, AST: ast}
	if h.Expansion, err = expandAPINames(cfg, sources, ast); err != nil {
		return nil, fmt.Errorf("preprocess %s: %w", name, err)
	}
	return h, nil
}

// hostConfig asks the host C compiler once per process for its predefined
// macros and include paths: running it costs more than parsing a header.
var hostConfig = sync.OnceValues(func() (*cc.Config, error) {
	return cc.NewConfig(runtime.GOOS, runtime.GOARCH)
})

// translate runs cc.Translate, turning a panic inside cc (seen on
// malformed input) into an error.
func translate(cfg *cc.Config, sources []cc.Source) (ast *cc.AST, err error) {
	defer func() {
		if r := recover(); r != nil {
			ast, err = nil, fmt.Errorf("parser panicked: %v", r)
		}
	}()
	return cc.Translate(cfg, sources)
}

// expandAPINames asks the preprocessor what each object-like cu* macro
// expands to, by appending `"name" name` lines to the translation unit and
// reading them back from the preprocessed output. That keeps the header's own
// macro logic (__CUDA_API_PTDS, #if CUDA_VERSION, …) the only authority.
func expandAPINames(cfg *cc.Config, sources []cc.Source, ast *cc.AST) (map[string]string, error) {
	var names []string
	for name, m := range ast.Macros {
		if !m.IsFnLike && strings.HasPrefix(name, "cu") && len(m.ReplacementList()) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var probe strings.Builder
	probe.WriteString("\n")
	for _, n := range names {
		fmt.Fprintf(&probe, "\"@gocu %s\" %s\n", n, n)
	}
	var out bytes.Buffer
	src := append(append([]cc.Source(nil), sources...), cc.Source{Name: "<gocu-probe>", Value: probe.String()})
	if err := preprocess(cfg, src, &out); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "\"@gocu ")
		if !ok {
			continue
		}
		name, expansion, ok := strings.Cut(rest, "\"")
		if !ok {
			continue
		}
		if f := strings.Fields(expansion); len(f) == 1 && isIdent(f[0]) {
			m[name] = f[0]
		}
	}
	return m, nil
}

func preprocess(cfg *cc.Config, sources []cc.Source, w *bytes.Buffer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("preprocessor panicked: %v", r)
		}
	}()
	return cc.Preprocess(cfg, sources, w)
}

func isIdent(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
