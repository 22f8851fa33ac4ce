package cuda

import (
	"errors"
	"runtime"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// The package doc promises that a call leaves the thread's current context
// as it was, including one the caller made current itself.
func TestBindRestoresCurrent(t *testing.T) {
	dev, primary := needGPU(t)
	other, err := NewContext(dev)
	must(t, err)
	defer other.Close()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	current := func() cu.CUcontext {
		var c cu.CUcontext
		must(t, cu.CtxGetCurrent(&c))
		return c
	}
	for _, mine := range []cu.CUcontext{0, other.Raw()} {
		if mine != 0 {
			must(t, cu.CtxPushCurrent(mine))
		}
		before := current()
		s, err := NewStream(primary)
		must(t, err)
		ev, err := NewEvent(primary)
		must(t, err)
		_, _, err = primary.StreamPriorityRange()
		must(t, err)
		must(t, primary.Synchronize())
		must(t, primary.Do(func() error {
			if c := current(); c != primary.Raw() {
				t.Errorf("inside Do: current %#x, want %#x", c, primary.Raw())
			}
			return nil
		}))
		sameContext(t, s, primary)
		must(t, s.Close())
		must(t, ev.Close())
		if after := current(); after != before {
			t.Errorf("current context %#x before the calls, %#x after", before, after)
		}
		if mine != 0 {
			var popped cu.CUcontext
			must(t, cu.CtxPopCurrent(&popped))
			if popped != mine {
				t.Errorf("popped %#x, want the test's own %#x", popped, mine)
			}
		}
	}
}

// A wrapped stream is used and closed without being destroyed.
func TestWrapStream(t *testing.T) {
	_, ctx := needGPU(t)
	_, s0, _ := LiveHandles()
	var raw cu.CUstream
	must(t, ctx.Do(func() error { return cu.StreamCreateWithPriority(&raw, 0, 0) }))
	defer ctx.Do(func() error { return cu.StreamDestroy(raw) })
	w, err := WrapStream(ctx, raw)
	must(t, err)
	c, err := w.Clone()
	must(t, err)
	if c.Raw() != raw || w.Priority() != 0 || w.Context().Raw() != ctx.Raw() {
		t.Fatal("the wrapped stream's handle, priority or context differ")
	}
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	must(t, ev.Record(c))
	must(t, w.Close())
	must(t, c.Close())
	if _, s, _ := LiveHandles(); s != s0 {
		t.Fatalf("live streams = %d, want %d", s, s0)
	}
	if err := cu.StreamSynchronize(raw); err != nil {
		t.Fatalf("the wrapped stream died with its last handle: %v", err)
	}
	for _, alias := range []cu.CUstream{0, cu.CU_STREAM_LEGACY, cu.CU_STREAM_PER_THREAD} {
		if _, err := WrapStream(ctx, alias); !errors.Is(err, cu.CUDA_ERROR_INVALID_HANDLE) {
			t.Errorf("WrapStream(%d) = %v, want CUDA_ERROR_INVALID_HANDLE", alias, err)
		}
	}
}
