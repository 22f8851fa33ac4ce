//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoDriver is matched (errors.Is) by every error that comes from not
// finding or not loading the CUDA driver library.
var ErrNoDriver = errors.New("CUDA driver not found")

// ErrMissingFunction is matched (errors.Is) by a *MissingFunctionError.
var ErrMissingFunction = errors.New("function not in the installed CUDA driver")

// LoadError reports that no driver library could be opened.
type LoadError struct {
	Tried   []string // paths given to dlopen, in order
	Reasons []string // dlopen's message for each
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("cu: cannot load the CUDA driver library (is an NVIDIA driver installed? set " + LibraryEnv + " to its path): tried ")
	for i, p := range e.Tried {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", p, e.Reasons[i])
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoDriver) true.
func (e *LoadError) Is(target error) bool { return target == ErrNoDriver }

// MissingFunctionError reports a function the installed driver does not
// provide: it is newer than the driver, or the driver (a stand-in, say)
// lacks it although its version has it.
type MissingFunctionError struct {
	Function      string // C API name: cuMemAlloc
	Symbol        string // versioned symbol: cuMemAlloc_v2
	Since         string // CUDA version of the matrix that introduced it: "12.4"
	DriverVersion int    // what the driver reports, e.g. 12020; 0 if unknown
}

func (e *MissingFunctionError) Error() string {
	if e.DriverVersion <= 0 {
		return fmt.Sprintf("cu: %s (symbol %s) is not in the installed CUDA driver (CUDA unknown); it needs a driver for CUDA %s or later",
			e.Function, e.Symbol, e.Since)
	}
	drv := versionString(e.DriverVersion)
	// A driver as new as the function that still lacks it would not have
	// it in a newer version either: saying that it needs one would send
	// the reader after an upgrade that changes nothing.
	var major, minor int
	if _, err := fmt.Sscanf(e.Since, "%d.%d", &major, &minor); err == nil && e.DriverVersion >= major*1000+minor*10 {
		return fmt.Sprintf("cu: %s (symbol %s) is not in the installed CUDA driver, which reports CUDA %s though the function is in CUDA %s: this driver does not provide it",
			e.Function, e.Symbol, drv, e.Since)
	}
	return fmt.Sprintf("cu: %s (symbol %s) is not in the installed CUDA driver (CUDA %s); it needs a driver for CUDA %s or later",
		e.Function, e.Symbol, drv, e.Since)
}

// Is makes errors.Is(err, ErrMissingFunction) true.
func (e *MissingFunctionError) Is(target error) bool { return target == ErrMissingFunction }

// missing is the error of a call to function i when it has no entry point.
func missing(i int) error {
	if loadErr != nil {
		return loadErr
	}
	p := procTable[i]
	return &MissingFunctionError{Function: p.api, Symbol: p.symbol, Since: p.since, DriverVersion: driverVer}
}

// Error makes a CUresult an error: its C name and number.
func (r CUresult) Error() string { return fmt.Sprintf("%s (%d)", r.String(), uint32(r)) }

// boxedResults holds every CUresult below 1024 already converted to error,
// so that a failing call (CUDA_ERROR_NOT_READY from a query, say) does not
// allocate.
var boxedResults = func() (b [1024]error) {
	for i := range b {
		b[i] = CUresult(i)
	}
	return b
}()

// resultError turns a driver result into nil or an error that is the
// CUresult itself, so errors.Is(err, CUDA_ERROR_X) and err == CUDA_ERROR_X work.
func resultError(r CUresult) error {
	if r == CUDA_SUCCESS {
		return nil
	}
	if uint32(r) < uint32(len(boxedResults)) {
		return boxedResults[r]
	}
	return r
}

// versionString writes a CUDA version as the toolkit does: 12040 is "12.4".
// It is here, with the errors, because the generator's tests build
// loader.go and errors.go alone into packages of their own.
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }
