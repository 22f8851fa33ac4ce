//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoLibrary is matched (errors.Is) by every error that comes from not
// finding or not loading the NVRTC library.
var ErrNoLibrary = errors.New("NVRTC library not found")

// ErrMissingFunction is matched (errors.Is) by a *MissingFunctionError.
var ErrMissingFunction = errors.New("function not in the installed NVRTC library")

// LoadError reports that no NVRTC library could be opened.
type LoadError struct {
	Tried   []string // paths given to dlopen, in order
	Reasons []string // dlopen's message for each
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("nvrtc: cannot load the NVRTC library (install it, or set " + LibraryEnv + " to its path): tried ")
	for i, p := range e.Tried {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", p, e.Reasons[i])
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoLibrary) true.
func (e *LoadError) Is(target error) bool { return target == ErrNoLibrary }

// MissingFunctionError reports a function the installed NVRTC library does
// not provide: it is older than the header.
type MissingFunctionError struct {
	Function string // C name: nvrtcGetCUBIN
	Since    string // CUDA version of the matrix that introduced it: "12.4"
	Library  string // the library opened
}

func (e *MissingFunctionError) Error() string {
	return fmt.Sprintf("nvrtc: %s is not in %s; it needs NVRTC of CUDA %s or later", e.Function, e.Library, e.Since)
}

// Is makes errors.Is(err, ErrMissingFunction) true.
func (e *MissingFunctionError) Is(target error) bool { return target == ErrMissingFunction }

// missing is the error of a call to function i when it has no entry point.
func missing(i int) error {
	if loadErr != nil {
		return loadErr
	}
	p := procTable[i]
	return &MissingFunctionError{Function: p.api, Since: p.since, Library: loadedPath}
}

// Error makes an NvrtcResult an error: its C name and number.
func (r NvrtcResult) Error() string { return fmt.Sprintf("%s (%d)", r.String(), int32(r)) }

// resultError turns a result into nil or an error that is the NvrtcResult
// itself, so errors.Is(err, NVRTC_ERROR_X) and err == NVRTC_ERROR_X work.
func resultError(r NvrtcResult) error {
	if r == NVRTC_SUCCESS {
		return nil
	}
	return r
}
