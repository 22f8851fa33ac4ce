package main

import (
	"fmt"
	"strings"
)

// The fused table (cuda/fused.go) lists the C calls of package cuda that
// do more than call one entry point: bind a context around the call, or
// check handles before it. Each line
//
//	//fused KIND NAME [OPTION...]
//
// declares one; the generator writes their prototypes and wrappers into
// cuda/zfused.h from cuda.h, as golang.org/x/sys/unix makes its wrappers
// from //sys lines.

// fusedKind is what the generator makes of a table entry.
type fusedKind int

const (
	fusedBound  fusedKind = iota // a wrapper that binds a context around the call
	fusedHot                     // a wrapper that checks handles, then calls
	fusedType                    // only the entry point's pointer type
	fusedStruct                  // a record with the ABI's field types
)

var fusedKinds = map[string]fusedKind{"bound": fusedBound, "hot": fusedHot, "type": fusedType, "struct": fusedStruct}

func (k fusedKind) String() string {
	for name, v := range fusedKinds {
		if v == k {
			return name
		}
	}
	return fmt.Sprintf("fusedKind(%d)", int(k))
}

// fusedEntry is one line of the table.
type fusedEntry struct {
	pos  string // file:line, for errors
	kind fusedKind
	name string // a function's API name, or a struct's type name
	out  string // bound: the parameter whose result the wrapper returns
	sync bool   // bound: synchronize the legacy stream after a successful call
}

// fusedDirective starts a table line.
const fusedDirective = "//fused"

// parseFusedTable reads the entries of the table in data; file names it in
// errors. A line is an entry when it starts with //fused followed by white
// space or its end; every other line is left to the Go compiler.
func parseFusedTable(file string, data []byte) ([]fusedEntry, error) {
	var entries []fusedEntry
	seen := map[string]string{} // name → where it was declared
	for i, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), fusedDirective)
		if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		pos := fmt.Sprintf("%s:%d", file, i+1)
		e, err := parseFusedLine(pos, strings.Fields(rest))
		if err != nil {
			return nil, err
		}
		if at, ok := seen[e.name]; ok {
			return nil, fmt.Errorf("%s: %s is already declared at %s", pos, e.name, at)
		}
		seen[e.name] = pos
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: no %s lines", file, fusedDirective)
	}
	return entries, nil
}

func parseFusedLine(pos string, words []string) (fusedEntry, error) {
	e := fusedEntry{pos: pos}
	if len(words) < 2 {
		return e, fmt.Errorf("%s: want %s KIND NAME [OPTION...], KIND one of bound, hot, type, struct", pos, fusedDirective)
	}
	kind, ok := fusedKinds[words[0]]
	if !ok {
		return e, fmt.Errorf("%s: unknown kind %q: want bound, hot, type or struct", pos, words[0])
	}
	e.kind, e.name = kind, words[1]
	if !isIdent(e.name) {
		return e, fmt.Errorf("%s: %q is not a C identifier", pos, e.name)
	}
	for _, opt := range words[2:] {
		if kind != fusedBound {
			return e, fmt.Errorf("%s: %s takes no options, not %q", pos, kind, opt)
		}
		switch name, value, hasValue := strings.Cut(opt, "="); {
		case opt == "sync":
			if e.sync {
				return e, fmt.Errorf("%s: sync given twice", pos)
			}
			e.sync = true
		case name == "out" && hasValue:
			if e.out != "" {
				return e, fmt.Errorf("%s: out= given twice", pos)
			}
			if !isIdent(value) {
				return e, fmt.Errorf("%s: out=%s: %q is not a parameter name", pos, value, value)
			}
			e.out = value
		default:
			return e, fmt.Errorf("%s: unknown option %q: bound takes out=PARAM and sync", pos, opt)
		}
	}
	return e, nil
}
