//go:build linux && (amd64 || arm64)

package nvrtc_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const halfToFloat = `
#include <cuda_fp16.h>
extern "C" __global__ void h2f(const __half *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = __half2float(x[i]);
}
`

// TestCompileWithToolkitHeaders compiles a kernel of cuda_fp16.h, which
// NVRTC does not build in: without the toolkit's headers it fails, with
// them it compiles.
func TestCompileWithToolkitHeaders(t *testing.T) {
	needLibrary(t)
	dirs, err := nvrtc.ToolkitIncludeDirs()
	if errors.Is(err, nvrtc.ErrNoToolkitHeaders) {
		t.Skipf("no toolkit headers here (make headers caches them): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ce *nvrtc.CompileError
	if _, err := nvrtc.Compile(halfToFloat, nvrtc.WithArch("compute_80")); !errors.As(err, &ce) {
		t.Fatalf("cuda_fp16.h without the toolkit's headers: %v, want a *CompileError", err)
	}
	res, err := nvrtc.Compile(halfToFloat, nvrtc.WithArch("compute_80"), nvrtc.WithToolkitHeaders())
	if err != nil {
		t.Fatalf("with the headers of %q: %v", dirs, err)
	}
	if !bytes.Contains(res.PTX, []byte(".entry h2f(")) {
		t.Errorf("PTX does not name the kernel:\n%s", res.PTX)
	}
	res, err = nvrtc.Compile(halfToFloat, nvrtc.WithArch("compute_80"), nvrtc.WithIncludeDir(dirs[0]))
	if err != nil || !bytes.Contains(res.PTX, []byte(".entry h2f(")) {
		t.Errorf("WithIncludeDir(%q): %v", dirs[0], err)
	}
	t.Logf("toolkit headers: %q", dirs)
}
