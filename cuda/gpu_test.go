package cuda

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// needGPU skips tb without a usable driver and device, and otherwise returns
// device 0 and a handle to its primary context, closed when tb ends.
func needGPU(tb testing.TB) (Device, *Context) {
	tb.Helper()
	if err := cu.Init(0); err != nil {
		switch {
		case errors.Is(err, cu.ErrNoDriver):
			tb.Skipf("no CUDA driver: %v", err)
		case errors.Is(err, cu.CUDA_ERROR_NO_DEVICE):
			tb.Skipf("no CUDA device: %v", err)
		}
		tb.Fatalf("cuInit: %v", err)
	}
	dev, err := GetDevice(0)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, err := PrimaryContext(dev)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			tb.Error(err)
		}
	})
	return dev, ctx
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// deviceBuffer allocates bytes of device memory in ctx, freed when tb ends.
func deviceBuffer(tb testing.TB, ctx *Context, bytes uint64) cu.CUdeviceptr {
	tb.Helper()
	// A clone of its own lets the buffer be freed even after the test
	// closed the handle it passed in.
	ctx, err := ctx.Clone()
	must(tb, err)
	var p cu.CUdeviceptr
	must(tb, ctx.Do(func() error { return cu.MemAlloc(&p, bytes) }))
	tb.Cleanup(func() {
		must(tb, ctx.Do(func() error { return cu.MemFree(p) }))
		must(tb, ctx.Close())
	})
	return p
}

// pinnedWords allocates page-locked host memory for n 32-bit words, the
// only kind an async copy may target under cgo's pointer rules.
func pinnedWords(tb testing.TB, ctx *Context, n int) []uint32 {
	tb.Helper()
	ctx, err := ctx.Clone()
	must(tb, err)
	var p unsafe.Pointer
	must(tb, ctx.Do(func() error { return cu.MemAllocHost(&p, uint64(n)*4) }))
	tb.Cleanup(func() {
		must(tb, ctx.Do(func() error { return cu.MemFreeHost(p) }))
		must(tb, ctx.Close())
	})
	return unsafe.Slice((*uint32)(p), n)
}

// checkWords fails tb at the first word of got that is not want.
func checkWords(tb testing.TB, what string, got []uint32, want uint32) {
	tb.Helper()
	for i, w := range got {
		if w != want {
			tb.Fatalf("%s: word %d of %d is %#x, want %#x", what, i, len(got), w, want)
		}
	}
}

func sameContext(tb testing.TB, s *Stream, want *Context) {
	tb.Helper()
	var got cu.CUcontext
	if err := cu.StreamGetCtx(s.Raw(), &got); err != nil {
		tb.Fatal(err)
	}
	if got != want.Raw() {
		tb.Fatalf("stream in context %#x, want %#x", got, want.Raw())
	}
}
