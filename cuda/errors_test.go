package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

func TestErrorWrapsResult(t *testing.T) {
	err := check("Stream.WaitEvent", "cuStreamWaitEvent", cu.CUDA_ERROR_INVALID_HANDLE)
	var e *Error
	if !errors.As(err, &e) || e.Result != cu.CUDA_ERROR_INVALID_HANDLE || e.Func != "cuStreamWaitEvent" {
		t.Fatalf("got %#v", err)
	}
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_HANDLE) || errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Fatal("errors.Is does not follow the result")
	}
	for _, want := range []string{"Stream.WaitEvent", "cuStreamWaitEvent", "CUDA_ERROR_INVALID_HANDLE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if check("x", "y", nil) != nil {
		t.Fatal("check(nil) is not nil")
	}
}

func TestSentinelsAreTheRawOnes(t *testing.T) {
	le := check("Init", "cuInit", &cu.LoadError{Tried: []string{"x"}, Reasons: []string{"y"}})
	if !errors.Is(le, ErrNoDriver) || !errors.Is(le, cu.ErrNoDriver) {
		t.Fatal("a load error does not match both ErrNoDriver names")
	}
	me := check("Op", "cuFoo", &cu.MissingFunctionError{Function: "cuFoo"})
	if !errors.Is(me, ErrMissingFunction) || !errors.Is(me, cu.ErrMissingFunction) {
		t.Fatal("a missing function does not match both ErrMissingFunction names")
	}
}

func TestEventOptionsConflict(t *testing.T) {
	_, err := NewEvent(nil, WithInterprocess(), WithTiming())
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !strings.Contains(err.Error(), "interprocess") {
		t.Fatalf("interprocess with timing: %v", err)
	}
}
