package cudatest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

func TestCheckNoLeaksAllowsDroppedHandlesWhenAsked(t *testing.T) {
	cudatest.CheckNoLeaks(t, cudatest.AllowDropped())
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() }) // runs before CheckNoLeaks' check
	ev, err := cuda.NewEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Unreachable handles are released by their cleanups, which the check
	// waits for.
	_ = ev
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func TestCheckNoLeaksFindsALeak(t *testing.T) {
	r := &recorder{TB: t}
	cudatest.CheckNoLeaks(r)
	dev, _ := cuda.GetDevice(0)
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.cleanups {
		f()
	}
	if len(r.errors) != 1 {
		t.Fatalf("CheckNoLeaks with a primary context retained: %d errors, want 1", len(r.errors))
	}
	ctx.Close()
}

// TestCheckNoLeaksReportsADroppedHandle: a stream never closed is a leak,
// even though the garbage collector's cleanup destroys it before the check
// counts the fake's objects.
func TestCheckNoLeaksReportsADroppedHandle(t *testing.T) {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	r := &recorder{TB: t}
	cudatest.CheckNoLeaks(r)
	func() {
		s, err := cuda.NewStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = s // dropped without Close
	}()
	for _, f := range r.cleanups {
		f()
	}
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "stream 1") {
		t.Fatalf("CheckNoLeaks with a stream dropped unclosed: %q, want one error naming the stream", r.errors)
	}

	// Closed handles are not reported.
	r = &recorder{TB: t}
	cudatest.CheckNoLeaks(r)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.cleanups {
		f()
	}
	if len(r.errors) != 0 {
		t.Fatalf("CheckNoLeaks with every handle closed: %q", r.errors)
	}
}

func TestFailCallAndCounts(t *testing.T) {
	cudatest.CheckNoLeaks(t)
	cudatest.ResetCalls()
	dev, _ := cuda.GetDevice(0)
	cudatest.FailCall("cuDevicePrimaryCtxRetain", 2, cu.CUDA_ERROR_INVALID_DEVICE)
	a, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = cuda.PrimaryContext(dev)
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Func != "cuDevicePrimaryCtxRetain" || !errors.Is(err, cu.CUDA_ERROR_INVALID_DEVICE) {
		t.Fatalf("second retain = %v, want the injected CUDA_ERROR_INVALID_DEVICE", err)
	}
	if n := cudatest.Calls("cuDevicePrimaryCtxRetain"); n != 2 {
		t.Errorf("Calls = %d, want 2", n)
	}
	if got := cudatest.CalledFunctions(); got["cuDevicePrimaryCtxRetain"] != 2 {
		t.Errorf("CalledFunctions = %v", got)
	}
	if n := cudatest.Calls("cuNoSuchFunction"); n != -1 {
		t.Errorf("Calls of an unknown function = %d, want -1", n)
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(p.(error).Error(), "cuNoSuchFunction") {
				t.Errorf("FailCall of an unknown function: panic %v", p)
			}
		}()
		cudatest.FailCall("cuNoSuchFunction", 1, cu.CUDA_ERROR_UNKNOWN)
	}()
}

// A function the fake lacks fails as with a driver too old for it.
func TestMissingFunction(t *testing.T) {
	// CUDA arrays (texture memory) are outside what the fake models.
	var a cu.CUarray
	err := cu.ArrayCreate(&a, &cu.CUDA_ARRAY_DESCRIPTOR{Width: 4, Height: 4, NumChannels: 1})
	if !errors.Is(err, cu.ErrMissingFunction) {
		t.Fatalf("cuArrayCreate against the fake = %v, want ErrMissingFunction", err)
	}
}
