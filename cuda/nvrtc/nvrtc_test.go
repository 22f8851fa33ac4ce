//go:build linux && (amd64 || arm64)

package nvrtc_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	raw "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

func TestMain(m *testing.M) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") == "" {
		nvrtctest.UseCached(raw.HeaderVersion() / 1000)
	}
	// The tests compile through a cache of their own, never the user's;
	// child processes inherit it.
	var tmp string
	if os.Getenv(nvrtc.CacheEnv) == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "nvrtc-cache-"); err != nil {
			panic(err)
		}
		os.Setenv(nvrtc.CacheEnv, tmp)
	}
	code := m.Run()
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// needLibrary skips a test when no NVRTC library loads, saying why.
func needLibrary(t *testing.T) {
	t.Helper()
	if err := raw.Load(); err != nil {
		if nvrtctest.Required(raw.HeaderVersion() / 1000) {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: %v", err)
		}
		t.Skipf("no NVRTC library (make headers caches one on amd64; or set %s): %v", raw.LibraryEnv, err)
	}
}

const vadd = `
extern "C" __global__ void vadd(const float *a, const float *b, float *c, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
`

func TestCompileKernel(t *testing.T) {
	needLibrary(t)
	res, err := nvrtc.Compile(vadd, nvrtc.WithArch("sm_80"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res.PTX, []byte(".entry vadd(")) {
		t.Errorf("PTX does not name the kernel:\n%s", res.PTX)
	}
	if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) {
		t.Errorf("CUBIN for sm_80 is not an ELF image (%d bytes)", len(res.CUBIN))
	}
	virt, err := nvrtc.Compile(vadd, nvrtc.WithArch("compute_80"))
	if err != nil {
		t.Fatal(err)
	}
	if virt.CUBIN != nil || !bytes.Contains(virt.PTX, []byte(".target sm_80")) {
		t.Errorf("compute_80: CUBIN %d bytes, PTX target not sm_80", len(virt.CUBIN))
	}
}

func TestCompileTemplateNameExpression(t *testing.T) {
	needLibrary(t)
	src := `
#include "scale.h"
template <typename T> __global__ void scale(T *x, T k, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = times(x[i], k);
}
`
	res, err := nvrtc.Compile(src,
		nvrtc.WithArch("compute_75"),
		nvrtc.WithHeader("scale.h", "template <typename T> __device__ T times(T a, T b) { return a * b; }\n"),
		nvrtc.WithNameExpressions("scale<float>", "scale<double>"),
		nvrtc.WithOptions("-std=c++17"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"scale<float>", "scale<double>"} {
		low := res.LoweredNames[e]
		if !strings.HasPrefix(low, "_Z") || !bytes.Contains(res.PTX, []byte(".entry "+low+"(")) {
			t.Errorf("%s: lowered name %q is not a PTX entry", e, low)
		}
	}
	if res.LoweredNames["scale<float>"] == res.LoweredNames["scale<double>"] {
		t.Error("two instantiations with one lowered name")
	}
}

func TestCompileErrorLog(t *testing.T) {
	needLibrary(t)
	_, err := nvrtc.Compile("__global__ void broken() { int x = ; }\n", nvrtc.WithProgramName("broken.cu"))
	var ce *nvrtc.CompileError
	if !errors.As(err, &ce) || !errors.Is(err, raw.NVRTC_ERROR_COMPILATION) {
		t.Fatalf("Compile: %v, want a *CompileError matching NVRTC_ERROR_COMPILATION", err)
	}
	if !strings.Contains(ce.Log, "broken.cu") || !strings.Contains(ce.Log, "error") {
		t.Errorf("log does not name the error:\n%s", ce.Log)
	}
}

func TestBadOption(t *testing.T) {
	needLibrary(t)
	_, err := nvrtc.Compile(vadd, nvrtc.WithArch("sm_1"))
	if !errors.Is(err, raw.NVRTC_ERROR_INVALID_OPTION) {
		t.Fatalf("Compile with -arch=sm_1: %v, want NVRTC_ERROR_INVALID_OPTION", err)
	}
}

func TestNoLibrary(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildNoLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_NVRTC_CHILD=1", raw.LibraryEnv+"=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestChildNoLibrary") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestChildNoLibrary(t *testing.T) {
	if os.Getenv("GOCUDA_NVRTC_CHILD") == "" {
		t.Skip("run by TestNoLibrary")
	}
	_, err := nvrtc.Compile(vadd)
	var le *raw.LoadError
	if !errors.Is(err, nvrtc.ErrNoLibrary) || !errors.As(err, &le) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("Compile: %v, want a *LoadError naming /nonexistent", err)
	}
}

// gpuContext returns the primary context of the first GPU and its
// architecture (sm_XY), or skips the test where there is none.
func gpuContext(t *testing.T) (*cuda.Context, string) {
	t.Helper()
	needLibrary(t)
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		t.Skipf("no GPU: %v", err)
	}
	arch, err := nvrtc.ArchOf(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	return ctx, arch
}

// TestLoadModule loads the compiled PTX where a GPU is.
func TestLoadModule(t *testing.T) {
	ctx, arch := gpuContext(t)
	defer ctx.Close()
	// PTX for the device's compute architecture: NVRTC may be newer
	// than the GPU's real one it knows, never than the JIT in the driver.
	res, err := nvrtc.Compile(vadd, nvrtc.WithArch("compute_"+strings.TrimPrefix(arch, "sm_")))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, res.PTX)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	if _, err := mod.Function("vadd"); err != nil {
		t.Fatal(err)
	}
}

// TestCompileRefusesNUL: NVRTC takes C strings, so a NUL would cut the
// text there and compile what comes before it without a word.
func TestCompileRefusesNUL(t *testing.T) {
	for name, call := range map[string]func() error{
		"source": func() error { _, err := nvrtc.Compile(vadd + "\x00 this is not C++"); return err },
		"option": func() error {
			_, err := nvrtc.Compile(vadd, nvrtc.WithOptions("-std=c++17\x00--no-such-option"))
			return err
		},
		"program name": func() error { _, err := nvrtc.Compile(vadd, nvrtc.WithProgramName("a\x00.cu")); return err },
		"header name": func() error {
			_, err := nvrtc.Compile(vadd, nvrtc.WithHeader("h.h\x00", "#define X 1\n"))
			return err
		},
		"header content": func() error {
			_, err := nvrtc.Compile(`#include "h.h"`+vadd, nvrtc.WithHeader("h.h", "#define X 1\n\x00#error unreachable\n"))
			return err
		},
		"name expression": func() error {
			_, err := nvrtc.Compile(vadd, nvrtc.WithNameExpressions("vadd\x00junk"))
			return err
		},
	} {
		err := call()
		if !errors.Is(err, nvrtc.ErrInvalidArgument) || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("%s with a NUL: got %v, want an error matching ErrInvalidArgument that names the NUL", name, err)
		}
	}
}

func TestCompileRefusesNilOption(t *testing.T) {
	_, err := nvrtc.Compile(vadd, nvrtc.WithArch("sm_80"), nil)
	if !errors.Is(err, nvrtc.ErrInvalidArgument) || !strings.Contains(err.Error(), "option 1") {
		t.Fatalf("Compile with a nil Option: got %v, want an error matching ErrInvalidArgument naming option 1", err)
	}
}

// TestCompileArchAsOption: -arch given as an option asks for what
// WithArch does, a CUBIN for a real architecture.
func TestCompileArchAsOption(t *testing.T) {
	needLibrary(t)
	for _, opts := range [][]string{{"-arch=sm_80"}, {"--gpu-architecture=sm_80"}, {"-arch", "sm_80"}} {
		res, err := nvrtc.Compile(vadd, nvrtc.WithOptions(opts...))
		if err != nil {
			t.Fatalf("%q: %v", opts, err)
		}
		if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) || !bytes.Contains(res.PTX, []byte(".target sm_80")) {
			t.Errorf("%q: CUBIN %d bytes, PTX not for sm_80: want both, as WithArch(\"sm_80\") gives", opts, len(res.CUBIN))
		}
	}
	res, err := nvrtc.Compile(vadd, nvrtc.WithOptions("-arch=compute_80"))
	if err != nil {
		t.Fatal(err)
	}
	if res.CUBIN != nil || len(res.PTX) == 0 {
		t.Errorf("-arch=compute_80: CUBIN %d bytes, PTX %d: want PTX only", len(res.CUBIN), len(res.PTX))
	}
}
