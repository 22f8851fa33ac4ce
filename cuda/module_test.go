package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// vectorAdd loads the vector-add kernel into ctx; the module is closed
// when tb ends.
func vectorAdd(tb testing.TB, ctx *Context) (*Module, *Kernel) {
	tb.Helper()
	mod, err := LoadModule(ctx, []byte(testkernels.VectorAdd))
	must(tb, skipIfMissing(tb, err))
	tb.Cleanup(func() { must(tb, mod.Close()) })
	k, err := mod.Function(testkernels.VectorAddName)
	must(tb, err)
	return mod, k
}

func TestLoadModule(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	mod, k := vectorAdd(t, ctx)
	if k.Name() != "vadd" || k.Raw() == 0 || mod.Raw() == 0 || mod.Context().Raw() != ctx.Raw() {
		t.Fatalf("kernel %q %#x of module %#x", k.Name(), k.Raw(), mod.Raw())
	}
	if got := LiveObjects().Modules; got != before.Modules+1 {
		t.Errorf("live modules %d, want %d", got, before.Modules+1)
	}
	t.Logf("JIT info log: %q", mod.InfoLog())

	sizes, known := k.ParamSizes()
	switch {
	case known && !slices.Equal(sizes, []int{8, 8, 8, 4}):
		t.Errorf("vadd's parameter sizes = %v, want [8 8 8 4]", sizes)
	case !known && cu.HeaderVersion() >= 12040:
		drv, _ := DriverVersion()
		if drv >= 12040 {
			t.Errorf("parameter sizes unknown with a CUDA %d driver and %d bindings", drv, cu.HeaderVersion())
		}
	}

	_, err := mod.Function("no_such_kernel")
	if !errors.Is(err, cu.CUDA_ERROR_NOT_FOUND) || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("Function(no_such_kernel) = %v, want CUDA_ERROR_NOT_FOUND naming it", err)
	}

	// The same PTX, NUL-terminated already, and from a file.
	mod2, err := LoadModule(ctx, append([]byte(testkernels.Empty), 0))
	must(t, err)
	defer mod2.Close()
	k16, err := mod2.Function(testkernels.EmptyName16)
	must(t, err)
	if sizes, known := k16.ParamSizes(); known && len(sizes) != 16 {
		t.Errorf("empty16 has %d parameters", len(sizes))
	}
	path := filepath.Join(t.TempDir(), "vadd.ptx")
	must(t, os.WriteFile(path, []byte(testkernels.VectorAdd), 0o644))
	mod3, err := LoadModuleFile(ctx, path)
	must(t, err)
	must(t, mod3.Close())
	if _, err := LoadModuleFile(ctx, path+".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadModuleFile(missing) = %v", err)
	}
	if _, err := LoadModule(ctx, nil); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("LoadModule(nil) = %v", err)
	}
}

func TestLoadModuleJITErrorLog(t *testing.T) {
	_, ctx := needGPU(t)
	if cudatest.Active() {
		t.Skip("the fake driver compiles no PTX: it checks only its header")
	}
	before := LiveObjects()
	_, err := LoadModule(ctx, []byte(testkernels.Bad))
	skipIfMissing(t, err)
	if err == nil {
		t.Fatal("bad PTX loaded")
	}
	var je *JITError
	if !errors.As(err, &je) {
		t.Fatalf("LoadModule(bad PTX) = %v, want a *JITError with the log", err)
	}
	if !strings.Contains(je.Log, "undeclared") || !strings.Contains(err.Error(), je.Log) {
		t.Errorf("JIT log %q does not name the undeclared register, or the error %q does not carry it", je.Log, err)
	}
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_PTX) {
		t.Errorf("LoadModule(bad PTX) = %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Func != "cuModuleLoadDataEx" || e.Result != cu.CUDA_ERROR_INVALID_PTX {
		t.Errorf("error %#v does not name cuModuleLoadDataEx and its result", e)
	}
	t.Logf("%v", err)
	if after := LiveObjects(); after != before {
		t.Errorf("a failed load left live objects: %+v, before %+v", after, before)
	}
}

// A kernel belongs to the Module handle it came from.
func TestKernelAfterModuleClose(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	mod, err := LoadModule(ctx, []byte(testkernels.Empty))
	must(t, skipIfMissing(t, err))
	clone, err := mod.Clone()
	must(t, err)
	k, err := mod.Function(testkernels.EmptyName1)
	must(t, err)
	kc, err := clone.Function(testkernels.EmptyName1)
	must(t, err)
	args, err := k.NewArgs(uint64(0))
	must(t, err)
	defer args.Close()
	must(t, mod.Close())
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}
	if err := k.Launch(s, cfg, uint64(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch after Module.Close = %v, want ErrClosed", err)
	}
	if err := k.LaunchArgs(s, cfg, args); !errors.Is(err, ErrClosed) {
		t.Errorf("LaunchArgs after Module.Close = %v, want ErrClosed", err)
	}
	if k.Raw() != 0 {
		t.Error("a kernel of a closed module handle exposes its function")
	}
	// The clone's kernel still runs: the module is loaded until its last Close.
	must(t, kc.LaunchArgs(s, cfg, args))
	must(t, s.Synchronize())
	must(t, clone.Close())
}
