package cuda

import (
	"errors"
	"strings"

	"github.com/gocuda/gocuda/generated/cu"
)

// ErrNoDriver is cu.ErrNoDriver itself, so errors.Is matches either name
// when no driver library could be loaded.
var ErrNoDriver = cu.ErrNoDriver

// ErrMissingFunction is cu.ErrMissingFunction itself: the installed driver
// is older than a function this package called.
var ErrMissingFunction = cu.ErrMissingFunction

// ErrClosed is matched by every error from a method called on a handle that
// was already closed (or on a nil handle). Such a call never reaches the
// driver.
var ErrClosed = errors.New("handle is closed")

// Error reports a failed operation: the Go method, the C function that
// failed (empty when the failure was found before calling the driver) and
// the driver's result. Unwrap gives the cause, so errors.Is works against
// the CUresult codes (cu.CUDA_ERROR_INVALID_VALUE, ...), ErrNoDriver,
// ErrMissingFunction and ErrClosed.
type Error struct {
	Op     string      // Go operation: "Stream.WaitEvent"
	Func   string      // C function: "cuStreamWaitEvent"; "" if none failed
	Result cu.CUresult // driver result; CUDA_SUCCESS when the cause is not one
	Err    error       // the cause
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cuda: ")
	b.WriteString(e.Op)
	if e.Func != "" {
		b.WriteString(": ")
		b.WriteString(e.Func)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// check turns a raw binding's result into nil or an *Error. It is kept
// small and allocation-free on success so the hot paths can call it.
func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return newError(op, fn, err)
}

func newError(op, fn string, err error) *Error {
	e := &Error{Op: op, Func: fn, Err: err}
	var r cu.CUresult
	if errors.As(err, &r) {
		e.Result = r
	}
	return e
}

// closedError is the error of using a closed handle in op.
func closedError(op string) error { return &Error{Op: op, Err: ErrClosed} }

// errNilHandle is the cause of using a nil handle: it says nil, so that a
// caller who ignored the error that left it nil is not told of a Close,
// and matches ErrClosed as every unusable handle does.
var errNilHandle error = nilHandleError{}

type nilHandleError struct{}

func (nilHandleError) Error() string        { return "handle is nil" }
func (nilHandleError) Is(target error) bool { return target == ErrClosed }

// nilError is the error of using a nil handle in op.
func nilError(op string) error { return &Error{Op: op, Err: errNilHandle} }
