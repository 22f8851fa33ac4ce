//go:build linux && (amd64 || arm64)

package cu

import (
	"iter"
	"strings"
	"unicode"
)

// A Binding describes one function of these bindings.
type Binding struct {
	Name   string // Go name: MemAlloc
	API    string // C function, as the header spells it: cuMemAlloc
	Symbol string // versioned driver symbol the binding calls: cuMemAlloc_v2
	Since  int    // CUDA version that introduced Symbol, as Since reports it: 11080
}

// Bindings yields every function of these bindings, in the order of their C
// names, for tools that reason about which driver a program needs.
func Bindings() iter.Seq[Binding] {
	return func(yield func(Binding) bool) {
		for i := range procTable {
			p := &procTable[i]
			b := Binding{Name: bindingName(p.api), API: p.api, Symbol: p.symbol, Since: parseSince(p.since)}
			if !yield(b) {
				return
			}
		}
	}
}

// bindingName is the Go name the generator gives the C function api:
// without "cu" and leading underscores, the first letter upper case, and X
// before a name that would not start with a letter.
func bindingName(api string) string {
	s := strings.TrimLeft(strings.TrimPrefix(api, "cu"), "_")
	if s == "" {
		return "X" + strings.TrimPrefix(api, "cu")
	}
	r := []rune(s)
	if !unicode.IsLetter(r[0]) {
		return "X" + s
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
