// Package libtest holds what the tests of the library packages (cuda/blas,
// cuda/rand, cuda/fft, ...) share: a context and a stream on the first
// device, and the rule for a GPU or library that is not there.
//
// GOCUDA_TEST_LIBS=required makes a missing GPU or library a failure
// rather than a skip: for the GPU machine, where a skip would hide a
// broken install. Too few GPUs for a test are not a missing library; those
// tests skip whatever it says.
package libtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// Required reports whether GOCUDA_TEST_LIBS=required.
func Required() bool { return os.Getenv("GOCUDA_TEST_LIBS") == "required" }

// Unavailable skips t, or fails it where Required, saying what is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (GOCUDA_TEST_LIBS=required)", msg)
	}
	t.Skipf("%s (set GOCUDA_TEST_LIBS=required to make this a failure)", msg)
}

// Context returns the primary context of the first device, real or fake,
// closed when t ends.
func Context(t testing.TB) *cuda.Context {
	t.Helper()
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		Unavailable(t, "no driver or device: %v", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// GPU returns Context and a new stream in it on a real GPU; on the fake
// driver, for a library with no fake beside it, it is Unavailable,
// naming lib.
func GPU(t testing.TB, lib string) (*cuda.Context, *cuda.Stream) {
	t.Helper()
	if cudatest.Active() {
		Unavailable(t, "the fake driver has no %s: this test needs a GPU", lib)
	}
	ctx := Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ctx, s
}

// Stream returns Context and a new stream in it, on a GPU or on the fake
// driver: for the libraries that have a fake beside the fake driver
// (cuRAND and cuFFT, which cudatest.Setup points their packages at).
func Stream(t testing.TB) (*cuda.Context, *cuda.Stream) {
	t.Helper()
	ctx := Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ctx, s
}

// Alloc returns bytes of device memory in ctx, freed when t ends.
func Alloc(t testing.TB, ctx *cuda.Context, bytes int) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.Alloc(ctx, bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
