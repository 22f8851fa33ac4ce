//go:build linux && (amd64 || arm64)

package jpeg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/nvjpeg"
)

// Error is the error of a call into nvJPEG: the operation, the C function
// that failed and its cause, an nvjpeg.NvjpegStatus_t that errors.Is
// matches.
type Error = cuda.LibraryError

// ErrBadJPEG is matched by the errors of data that is not a JPEG or is a
// damaged one: refused by the package before nvJPEG (no start marker, a
// segment running past the end, no frame header, no end marker) or by
// nvJPEG itself (NVJPEG_STATUS_BAD_JPEG, NVJPEG_STATUS_INCOMPLETE_BITSTREAM).
var ErrBadJPEG = errors.New("not a JPEG, or a damaged one")

// ErrUnsupported is matched by the errors of a well-formed JPEG that
// nvJPEG does not decode (NVJPEG_STATUS_JPEG_NOT_SUPPORTED: arithmetic
// coding, say), and of a decoding this package does not offer for the
// image (planar YUV of a grayscale image).
var ErrUnsupported = errors.New("not supported")

// classified is an error of nvJPEG that also matches one of the package's
// kinds of bad data, so that a caller need not know which side found it.
type classified struct {
	kind error
	err  error
}

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.kind, e.err} }

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	lerr := &Error{Pkg: "jpeg", Op: strings.TrimPrefix(op, "jpeg."), Func: fn, Err: err}
	switch {
	case errors.Is(err, nvjpeg.NVJPEG_STATUS_BAD_JPEG), errors.Is(err, nvjpeg.NVJPEG_STATUS_INCOMPLETE_BITSTREAM):
		return &classified{kind: ErrBadJPEG, err: lerr}
	case errors.Is(err, nvjpeg.NVJPEG_STATUS_JPEG_NOT_SUPPORTED):
		return &classified{kind: ErrUnsupported, err: lerr}
	}
	return lerr
}

// invalid is the error of an argument refused before nvJPEG.
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("jpeg: %s: %s", strings.TrimPrefix(op, "jpeg."), fmt.Sprintf(format, args...))
}

// badData is the error of data refused before nvJPEG, matching kind.
func badData(op string, kind error, format string, args ...any) error {
	return fmt.Errorf("jpeg: %s: %s: %w", strings.TrimPrefix(op, "jpeg."), fmt.Sprintf(format, args...), kind)
}
