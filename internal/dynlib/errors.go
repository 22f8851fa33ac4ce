//go:build linux && (amd64 || arm64)

package dynlib

import (
	"fmt"
	"strings"
)

// LoadError reports that no file of a library could be opened. It matches
// (errors.Is) the ErrNoLibrary of its library only.
type LoadError struct {
	Tried   []string // paths given to dlopen, in order
	Reasons []string // dlopen's message for each

	lib *Library
}

func (e *LoadError) Error() string {
	var b strings.Builder
	if e.lib != nil {
		s := e.lib.Spec
		b.WriteString(s.Package + ": cannot load the " + s.Name + " library (install it, or set " + s.Env + " to its path): tried ")
	} else {
		b.WriteString("cannot load the library: tried ")
	}
	for i, p := range e.Tried {
		if i > 0 {
			b.WriteString("; ")
		}
		reason := "?"
		if i < len(e.Reasons) {
			reason = e.Reasons[i]
		}
		fmt.Fprintf(&b, "%s (%s)", p, reason)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoLibrary) true for the ErrNoLibrary of the
// library that failed to load.
func (e *LoadError) Is(target error) bool {
	return e.lib != nil && target == e.lib.ErrNoLibrary()
}

// MissingFunctionError reports a function the installed library does not
// provide: it is older than the header. It matches (errors.Is) the
// ErrMissingFunction of its library only.
type MissingFunctionError struct {
	Function string // C name: nvrtcGetCUBIN
	Since    string // version of the matrix that introduced it: "12.4"
	Library  string // the library opened

	lib *Library
}

func (e *MissingFunctionError) Error() string {
	if e.lib == nil {
		return fmt.Sprintf("%s is not in %s; it needs CUDA %s or later", e.Function, e.Library, e.Since)
	}
	s := e.lib.Spec
	if s.OwnVersions {
		return fmt.Sprintf("%s: %s is not in %s; it needs %s %s or later", s.Package, e.Function, e.Library, s.Name, e.Since)
	}
	return fmt.Sprintf("%s: %s is not in %s; it needs %s of CUDA %s or later", s.Package, e.Function, e.Library, s.Name, e.Since)
}

// Is makes errors.Is(err, ErrMissingFunction) true for the
// ErrMissingFunction of the library that lacks the function.
func (e *MissingFunctionError) Is(target error) bool {
	return e.lib != nil && target == e.lib.ErrMissingFunction()
}
