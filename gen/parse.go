package main

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/cc/v4"
)

// Header is a parsed header: cc's checked AST plus what only the
// preprocessor knows, the symbol each API name expands to.
type Header struct {
	Name string // file name used in positions
	AST  *cc.AST
	// Expansion maps an object-like macro to the identifier it expands
	// to, for the macros that expand to a single identifier:
	// cuMemAlloc → cuMemAlloc_v2.
	Expansion map[string]string
	// Own are the files, as positions name them, whose declarations
	// are bound: the header itself, or the files of a library's own in a
	// header set (cublas_v2.h and cublas_api.h).
	Own map[string]bool
}

// What one header may make the C front end do. A header is untrusted input:
// a few hundred bytes of nested macros expand exponentially, and a header
// that includes itself recurses until memory runs out.
const (
	// maxHeaderBytes is far above any cuda.h (about 1 MB).
	maxHeaderBytes = 16 << 20
	// expansionLimit bounds the preprocessor's work (tokens through the
	// macro expander, rescans and hide-set copies included; see
	// cc.Config.ExpansionLimit) in each pass. cuda.h of CUDA 11.8 and 12.4
	// need about 100 000; TestExpansionHeadroom keeps every cached header
	// below an eighth of it.
	expansionLimit = 1 << 21
)

// parseExpansion is the limit Parse applies: expansionLimit, lowered by the
// fuzz target, whose inputs are small, so that a mutated macro bomb costs
// it milliseconds rather than a second.
var parseExpansion = expansionLimit

// parseTimeout bounds the wall time of Parse. The limits above keep it to
// seconds; this is the last resort against what they do not foresee.
var parseTimeout = 60 * time.Second

// Parse preprocesses and type-checks src (the text of a cuda.h) the way the
// host C compiler would, with no edits to the header.
func Parse(name string, src []byte) (*Header, error) {
	if len(src) > maxHeaderBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a header may have", name, len(src), maxHeaderBytes)
	}
	if err := checkDirectives(name, src); err != nil {
		return nil, err
	}
	base, err := hostConfig()
	if err != nil {
		return nil, fmt.Errorf("configure C front end: %w", err)
	}
	return parseWithTimeout(base, name, string(src))
}

// parseWithTimeout runs parse under parseTimeout.
func parseWithTimeout(base *cc.Config, name, src string) (*Header, error) {
	type result struct {
		h   *Header
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := parse(base, name, src, parseExpansion)
		done <- result{h, err}
	}()
	timer := time.NewTimer(parseTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.h, r.err
	case <-timer.C:
		// cc cannot be interrupted; its expansion limit ends the abandoned
		// goroutine in seconds.
		return nil, fmt.Errorf("parse %s: gave up after %v", name, parseTimeout)
	}
}

// parse is Parse without its checks, preprocessing under limit.
func parse(base *cc.Config, name string, src string, limit int) (*Header, error) {
	c := *base
	cfg := &c
	cfg.EvalAllMacros = true
	cfg.ABILayout = true
	// EvalAllMacros stops silently, leaving macros without a value, when
	// the limit runs out. The probe pass below expands every macro under
	// half this limit, and reports it, so that this one never runs out.
	cfg.ExpansionLimit = 2 * limit
	sources := []cc.Source{
		{Name: "<predefined>", Value: cfg.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: name, Value: src},
	}
	if err := checkComplete(cfg, sources, name); err != nil {
		return nil, err
	}
	ast, err := translate(cfg, sources)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	h := &Header{Name: name, AST: ast, Own: map[string]bool{name: true}}
	cfg.ExpansionLimit = limit
	if h.Expansion, err = probeMacros(cfg, sources, ast); err != nil {
		return nil, fmt.Errorf("preprocess %s: %w", name, err)
	}
	return h, nil
}

// hostConfig asks the host C compiler once per process for its predefined
// macros and include paths: running it costs more than parsing a header.
var hostConfig = sync.OnceValues(func() (*cc.Config, error) {
	return cc.NewConfig(runtime.GOOS, runtime.GOARCH)
})

// checkComplete refuses a header whose preprocessed text does not end
// with a complete declaration, a ';' or a '}'. cc's parser does not stop at
// the end of the input inside a declarator's qualifiers (a header ending
// in `int *`): it reports the same error forever, growing its list of
// errors until the process runs out of memory.
func checkComplete(cfg *cc.Config, sources []cc.Source, name string) error {
	var b bytes.Buffer
	if err := preprocess(cfg, sources, &b); err != nil {
		return fmt.Errorf("preprocess %s: %w", name, err)
	}
	out := b.Bytes()
	for {
		out = bytes.TrimRight(out, " \t\r\n")
		i := bytes.LastIndexByte(out, '\n')
		if line := out[i+1:]; len(line) == 0 || line[0] != '#' {
			break // the last line of text, not a line marker
		}
		out = out[:max(i, 0)]
	}
	if n := len(out); n > 0 && out[n-1] != ';' && out[n-1] != '}' {
		tail := out[max(0, n-40):]
		return fmt.Errorf("%s: the header ends inside a declaration: it must end with ';' or '}', not %q", name, tail)
	}
	return nil
}

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

// probeMacros expands every object-like macro once more, by appending
// `"@gocu name" name` lines to the translation unit and preprocessing it
// under cfg's expansion limit. It returns what each macro expands to
// when that is a single identifier, which keeps the header's own macro
// logic (__CUDA_API_PTDS, #if CUDA_VERSION, …) the only authority on the
// symbol an API name selects. Expanding every macro, as EvalAllMacros did,
// also finds the one that expands too much, and names it.
func probeMacros(cfg *cc.Config, sources []cc.Source, ast *cc.AST) (map[string]string, error) {
	var names []string
	for name, m := range ast.Macros {
		if !m.IsFnLike && len(m.ReplacementList()) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	const probeName = "<gocu-probe>"
	var probe strings.Builder
	probe.WriteString("\n")
	for _, n := range names {
		fmt.Fprintf(&probe, "\"@gocu %s\" %s\n", n, n)
	}
	var out bytes.Buffer
	src := append(append([]cc.Source(nil), sources...), cc.Source{Name: probeName, Value: probe.String()})
	if err := preprocess(cfg, src, &out); err != nil {
		if m := probeLine.FindStringSubmatch(err.Error()); m != nil && strings.Contains(err.Error(), "expansion limit") {
			if line, _ := strconv.Atoi(m[1]); line >= 2 && line-2 < len(names) {
				name := names[line-2]
				return nil, fmt.Errorf("preprocessing went past its limit (%d tokens) in expanding macro %s (%v)", cfg.ExpansionLimit, name, ast.Macros[name].Position())
			}
		}
		// A macro that means nothing outside its context (a system
		// header's _Pragma, say) may fail to expand on a line of its own;
		// the header itself was preprocessed without error by Translate.
		for _, msg := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(msg, probeName+":") || strings.Contains(msg, "expansion limit") {
				return nil, err
			}
		}
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

var probeLine = regexp.MustCompile(`<gocu-probe>:(\d+):`)

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
