package cuda

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// takeStructPTX is a kernel taking a struct by value between two scalars:
//
//	struct params { double a; int b; float c; unsigned long long d; };
//	extern "C" __global__ void take_struct(unsigned long long *out, params p, unsigned n)
//
// It writes p's fields and n to out, as their bytes: out[0] = a, out[1] =
// b | c<<32, out[2] = d, out[3] = n.
const takeStructPTX = `
.version 7.0
.target sm_75
.address_size 64

.visible .entry take_struct(
	.param .u64 take_struct_out,
	.param .align 8 .b8 take_struct_p[24],
	.param .u32 take_struct_n
)
{
	.reg .b32	%r<4>;
	.reg .b64	%rd<4>;

	ld.param.u64	%rd1, [take_struct_out];
	cvta.to.global.u64	%rd1, %rd1;
	ld.param.b64	%rd2, [take_struct_p];
	st.global.b64	[%rd1], %rd2;
	ld.param.b32	%r1, [take_struct_p+8];
	st.global.b32	[%rd1+8], %r1;
	ld.param.b32	%r2, [take_struct_p+12];
	st.global.b32	[%rd1+12], %r2;
	ld.param.b64	%rd3, [take_struct_p+16];
	st.global.b64	[%rd1+16], %rd3;
	ld.param.u32	%r3, [take_struct_n];
	st.global.b32	[%rd1+24], %r3;
	ret;
}
`

// structParams is take_struct's struct, as Go lays it out.
type structParams struct {
	A float64
	B int32
	C float32
	D uint64
}

// takeStruct loads take_struct, with its Go version on the fake driver.
func takeStruct(t testing.TB, ctx *Context) *Kernel {
	t.Helper()
	registerGoKernel(t, "take_struct", cudatest.Kernel{Launch: func(l *cudatest.Launch) {
		out := l.Param(0).Ptr()
		p := cudatest.ParamValue[structParams](l.Param(1))
		cudatest.Store(out, 0, p.A)
		cudatest.Store(out.Add(8), 0, p.B)
		cudatest.Store(out.Add(12), 0, p.C)
		cudatest.Store(out, 2, p.D)
		cudatest.Store(out.Add(24), 0, l.Param(2).Uint32())
	}})
	mod, err := LoadModule(ctx, []byte(takeStructPTX))
	must(t, skipIfMissing(t, err))
	t.Cleanup(func() { must(t, mod.Close()) })
	k, err := mod.Function("take_struct")
	must(t, err)
	return k
}

// readStruct reads what take_struct wrote to out.
func readStruct(t testing.TB, out *Slice[uint64]) (structParams, uint32) {
	t.Helper()
	var w [4]uint64
	must(t, out.CopyTo(w[:]))
	p := *(*structParams)(unsafe.Pointer(&w[0]))
	return p, uint32(w[3])
}

func TestLaunchPassesStructByValue(t *testing.T) {
	_, ctx := needGPU(t)
	k := takeStruct(t, ctx)
	if sizes, known := k.ParamSizes(); known && (len(sizes) != 3 || sizes[1] != 24) {
		t.Fatalf("take_struct's parameter sizes = %v, want [8 24 4]", sizes)
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	out, err := AllocSlice[uint64](ctx, 4)
	must(t, err)
	defer out.Close()
	cfg := Linear(1, 1)

	want := structParams{A: 1.5, B: -7, C: 2.25, D: 1 << 40}
	check := func(how string, wantN uint32) {
		t.Helper()
		must(t, s.Synchronize())
		got, n := readStruct(t, out)
		if got != want || n != wantN {
			t.Errorf("%s: the kernel saw %+v and %d, want %+v and %d", how, got, n, want, wantN)
		}
		want.B++
	}
	must(t, k.Launch(s, cfg, out, want, uint32(3)))
	check("Launch", 3)
	must(t, k.LaunchEx(s, cfg, LaunchAttributes{}, out, want, uint32(4)))
	check("LaunchEx", 4)

	args, err := k.NewArgs(out, want, uint32(5))
	must(t, err)
	defer args.Close()
	must(t, k.LaunchArgs(s, cfg, args))
	check("NewArgs and LaunchArgs", 5)
	must(t, args.Set(1, want))
	must(t, k.LaunchArgs(s, cfg, args))
	check("Args.Set", 5)
	if err := args.Set(1, [2]float64{}); !errors.Is(err, ErrKernelArgs) {
		t.Errorf("Args.Set of a 16-byte array over a 24-byte struct = %v, want ErrKernelArgs", err)
	}
}

func TestLaunchStructArgumentAllocatesNothing(t *testing.T) {
	_, ctx := needGPU(t)
	k := takeStruct(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	out, err := AllocSlice[uint64](ctx, 4)
	must(t, err)
	defer out.Close()
	cfg := Linear(1, 1)
	p := structParams{A: 1, D: 3}
	var n uint32
	for name, launch := range map[string]func() error{
		"Launch":   func() error { return k.Launch(s, cfg, out, p, n) },
		"LaunchEx": func() error { return k.LaunchEx(s, cfg, LaunchAttributes{}, out, p, n) },
	} {
		allocs := testing.AllocsPerRun(500, func() {
			p.B++
			n++
			if err := launch(); err != nil {
				t.Fatal(err)
			}
		})
		must(t, s.Synchronize())
		if allocs != 0 {
			t.Errorf("%s with a struct argument: %v allocations per launch, want 0", name, allocs)
		}
	}
	got, gotN := readStruct(t, out)
	if got != p || gotN != n {
		t.Errorf("the last launch's kernel saw %+v and %d, want %+v and %d", got, gotN, p, n)
	}
}

// structKernel is a kernel of a module without a driver whose parameters
// are an 8-byte pointer, a 24-byte struct at offset 8 and a 16-byte struct
// at offset 36 (a C struct of 4-byte fields), for the checks made before
// the driver.
func structKernel(t *testing.T) (*Kernel, *Stream) {
	var live atomic.Int64
	mod := newModuleHandle(nopCore(&live, func(st *moduleState) { st.raw = 0x1 }))
	k := &Kernel{mod: mod, raw: 0x2, name: "structs"}
	k.setParams(paramLayout{sizes: []uint32{8, 24, 16}, offsets: []uint32{0, 8, 36}})
	s := newStreamHandle(nopCore(&live, func(st *streamState) { st.raw = 0x3 }))
	t.Cleanup(func() { mod.Close(); s.Close() })
	return k, s
}

func TestByValueArgumentRefusedWithReason(t *testing.T) {
	k, s := structKernel(t)
	p := cu.CUdeviceptr(0x7000)
	type withInt struct {
		A float64
		N int
		D uint64
	}
	type inner struct{ Data *float32 }
	type nested struct {
		X     float64
		Inner inner
		Y     uint64
	}
	type withString struct {
		A, B float64
		S    string
	}
	cases := []struct {
		name string
		arg  any
		want string
	}{
		{"int field", withInt{}, "argument 1 is a cuda.withInt, which cannot pass by value: field N is a int, whose size is Go's"},
		{"pointer in a nested field", nested{}, "field Inner.Data is a *float32, which holds Go pointers"},
		{"string field", withString{}, "field S is a string"},
		{"array of uintptr", [3]uintptr{}, "an element is a uintptr"},
		{"empty struct", struct{}{}, "has no bytes"},
		{"size", [4]float64{}, "argument 1 of kernel structs is 32 bytes ([4]float64), the parameter 24 bytes (the kernel's parameters are 8, 24, 16 bytes)"},
		{"slice", []float32{1}, "argument 1 is a []float32: a kernel argument is"},
	}
	for _, c := range cases {
		for how, f := range map[string]func() error{
			"NewArgs":  func() error { _, err := k.NewArgs(p, c.arg, [4]float32{}); return err },
			"Launch":   func() error { return k.Launch(s, Linear(1, 1), p, c.arg, [4]float32{}) },
			"LaunchEx": func() error { return k.LaunchEx(s, Linear(1, 1), LaunchAttributes{}, p, c.arg, [4]float32{}) },
		} {
			err := f()
			var e *Error
			if !errors.Is(err, ErrKernelArgs) || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "" {
				t.Errorf("%s with %s = %v, want ErrKernelArgs before the driver", how, c.name, err)
				continue
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s with %s: %q does not say %q", how, c.name, err, c.want)
			}
		}
	}

	// The parameter at offset 36 is no place for a struct aligned to 8.
	_, err := k.NewArgs(p, structParams{}, [2]float64{})
	if want := "argument 2 of kernel structs ([2]float64) is aligned to 8 bytes, but the parameter is at offset 36"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a misaligned struct parameter: %v, want %q", err, want)
	}
	// Well-formed values pass, with their bytes in their slots.
	a, err := k.NewArgs(p, structParams{A: 2, D: 9}, [4]float32{1, 2, 3, 4})
	must(t, err)
	defer a.Close()
	if got := *(*structParams)(a.slot(1)); got != (structParams{A: 2, D: 9}) {
		t.Errorf("the struct's slot holds %+v", got)
	}
	if got := *(*[4]float32)(a.slot(2)); got != [4]float32{1, 2, 3, 4} {
		t.Errorf("the array's slot holds %v", got)
	}
}

func TestLinearCoversElements(t *testing.T) {
	for _, c := range []struct {
		n, block int
		want     LaunchConfig
	}{
		{1000, 256, LaunchConfig{Grid: Dim3{X: 4}, Block: Dim3{X: 256}}},
		{1024, 256, LaunchConfig{Grid: Dim3{X: 4}, Block: Dim3{X: 256}}},
		{1, 128, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 128}}},
		{0, 128, LaunchConfig{Grid: Dim3{X: 0}, Block: Dim3{X: 128}}},
		{10, 0, LaunchConfig{Grid: Dim3{X: 0}, Block: Dim3{X: 0}}},
		{10, -1, LaunchConfig{Grid: Dim3{X: 0}, Block: Dim3{X: 0}}},
	} {
		if got := Linear(c.n, c.block); got != c.want {
			t.Errorf("Linear(%d, %d) = %+v, want %+v", c.n, c.block, got, c.want)
		}
	}
	if err := checkConfig("test", Linear(0, 128)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("the shape of Linear(0, 128) is refused with %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
}

// launchLimitErr checks that err is a limit refused before the driver,
// saying want.
func launchLimitErr(t *testing.T, how string, err error, want string) {
	t.Helper()
	var e *Error
	if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "" {
		t.Errorf("%s = %v, want CUDA_ERROR_INVALID_VALUE before the driver", how, err)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %q does not say %q", how, err, want)
	}
}

func TestLaunchLimitsNamedBeforeDriver(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	dev := ctx.Device()
	devThreads, err := dev.MaxThreadsPerBlock()
	must(t, err)
	kattrs, err := k.Attributes()
	must(t, err)
	blockDim, err := dev.MaxBlockDim()
	must(t, err)
	gridDim, err := dev.MaxGridDim()
	must(t, err)
	a, b, c := vectorInputs(t, ctx, 256)
	launch := func(cfg LaunchConfig) error { return k.Launch(s, cfg, a, b, c, uint32(256)) }
	ex := func(cfg LaunchConfig) error {
		return k.LaunchEx(s, cfg, LaunchAttributes{}, a, b, c, uint32(256))
	}
	coop := func(cfg LaunchConfig) error {
		return k.LaunchEx(s, cfg, LaunchAttributes{Cooperative: true}, a, b, c, uint32(256))
	}
	args, err := k.NewArgs(a, b, c, uint32(256))
	must(t, err)
	defer args.Close()
	prepared := func(cfg LaunchConfig) error { return k.LaunchArgs(s, cfg, args) }

	big := uint32(kattrs.MaxThreadsPerBlock) * 2
	wantThreads := "block of " + itoa(big) + " threads exceeds kernel vadd's limit of " + itoa(uint32(kattrs.MaxThreadsPerBlock)) + " threads per block"
	for how, f := range map[string]func(LaunchConfig) error{"Launch": launch, "LaunchEx": ex, "cooperative LaunchEx": coop, "LaunchArgs": prepared} {
		launchLimitErr(t, how+" of too many threads", f(Linear(256, int(big))), wantThreads)
		launchLimitErr(t, how+" of a block too deep",
			f(LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1, Y: 1, Z: blockDim.Z + 1}}),
			"block of 1×1×"+itoa(blockDim.Z+1)+" threads: "+itoa(blockDim.Z+1)+" in Z exceeds the device's limit of "+itoa(blockDim.Z))
		if gridDim.Y < ^uint32(0) {
			launchLimitErr(t, how+" of a grid too tall",
				f(LaunchConfig{Grid: Dim3{X: 1, Y: gridDim.Y + 1}, Block: Dim3{X: 32}}),
				"grid of 1×"+itoa(gridDim.Y+1)+"×1 blocks: "+itoa(gridDim.Y+1)+" in Y exceeds the device's limit of "+itoa(gridDim.Y))
		}
	}
	if uint32(devThreads) < blockDim.X*blockDim.Y {
		launchLimitErr(t, "a block of more threads than the device has, in two dimensions",
			launch(LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 32, Y: uint32(devThreads)/32 + 1}}), "threads per block")
	}

	// Dynamic shared memory: the kernel's limit, raised by
	// SetMaxDynamicSharedMemory up to what the device allows.
	optin, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	must(t, err)
	over := uint32(kattrs.MaxDynamicSharedBytes + 1024)
	if int(over) > optin-kattrs.SharedBytes {
		t.Skipf("the device allows no more dynamic shared memory than the kernel's default limit (%d bytes)", kattrs.MaxDynamicSharedBytes)
	}
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 256}, SharedMemBytes: over}
	launchLimitErr(t, "Launch of too much dynamic shared memory", launch(cfg),
		itoa(over)+" bytes of dynamic shared memory per block exceed kernel vadd's limit of "+itoa(uint32(kattrs.MaxDynamicSharedBytes))+
			" bytes (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): Kernel.SetMaxDynamicSharedMemory("+itoa(over)+") raises it")
	must(t, k.SetMaxDynamicSharedMemory(int(over)))
	must(t, launch(cfg))
	must(t, coop(cfg))
	beyond := cfg
	beyond.SharedMemBytes = uint32(optin + 1)
	launchLimitErr(t, "LaunchEx of more dynamic shared memory than the device allows", ex(beyond), "and more than this device allows it")

	// Raised behind the Kernel's back (the raw attribute), the limit is
	// asked again before a launch is refused.
	must(t, k.SetMaxDynamicSharedMemory(kattrs.MaxDynamicSharedBytes))
	launchLimitErr(t, "Launch after lowering the limit again", launch(cfg), "exceed kernel vadd's limit")
	must(t, k.withKernel("test", func(*moduleState) error {
		return cu.FuncSetAttribute(k.raw, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int32(over))
	}))
	must(t, launch(cfg))
	must(t, s.Synchronize())
}

func TestLaunchLimitOfKernelLoweredByRegisters(t *testing.T) {
	_, ctx := needGPU(t)
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 255, Params: []int{8}})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	kattrs, err := k.Attributes()
	must(t, err)
	if kattrs.MaxThreadsPerBlock != 256 {
		t.Fatalf("the fake's kernel of 255 registers per thread allows %d threads per block, want 256", kattrs.MaxThreadsPerBlock)
	}
	before := launches(lib)
	launchLimitErr(t, "LaunchEx of 512 threads", k.LaunchEx(s, Linear(512, 512), LaunchAttributes{}, uint64(0)),
		"block of 512 threads exceeds kernel fakefn's limit of 256 threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers per thread or its launch bounds keep it below the device's 1024)")
	launchLimitErr(t, "Launch of 16×32 threads", k.Launch(s, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 16, Y: 32}}, uint64(0)),
		"block of 512 threads (16×32×1) exceeds kernel fakefn's limit of 256")
	if n := launches(lib); n != before {
		t.Errorf("%d launches reached the driver, want none", n-before)
	}
	must(t, k.LaunchEx(s, Linear(512, 256), LaunchAttributes{}, uint64(0)))
	if l, _ := lib.LastLaunch(); l.Block[0] != 256 || l.Grid[0] != 2 {
		t.Errorf("the driver got a launch of %v blocks of %v threads, want 2 of 256", l.Grid, l.Block)
	}
}

func BenchmarkLaunchLimitsFit(b *testing.B) {
	l := &launchLimits{threads: 1024, block: Dim3{1024, 1024, 64}, grid: Dim3{1<<31 - 1, 65535, 65535}, dynShared: 49152}
	cfgs := []LaunchConfig{Linear(1<<20, 256), {Grid: Dim3{X: 8, Y: 8}, Block: Dim3{X: 16, Y: 16}}}
	n := 0
	for i := 0; b.Loop(); i++ {
		if l.fits(&cfgs[i&1]) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("no shape fits")
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// registerGoKernel registers k under name on the fake driver, for the
// test; on a real one the module's own code runs.
func registerGoKernel(t testing.TB, name string, k cudatest.Kernel) {
	t.Helper()
	if !cudatest.Active() {
		return
	}
	cudatest.RegisterKernel(name, k)
	t.Cleanup(func() { cudatest.UnregisterKernel(name) })
}

func TestByValueNumbersOfDefinedTypes(t *testing.T) {
	var live atomic.Int64
	mod := newModuleHandle(nopCore(&live, func(st *moduleState) { st.raw = 0x1 }))
	defer mod.Close()
	k := &Kernel{mod: mod, raw: 0x2, name: "numbers"}
	type scale float32
	a, err := k.NewArgs(scale(1.5), complex(float32(1), 2), complex(3.0, 4.0), ToFloat8E4M3(1), [3]int16{1, -2, 3})
	must(t, err)
	defer a.Close()
	if got, want := a.sizes, []uint32{4, 8, 16, 1, 6}; !slices.Equal(got, want) {
		t.Errorf("argument sizes %v, want %v", got, want)
	}
	if got := *(*scale)(a.slot(0)); got != 1.5 {
		t.Errorf("scale(1.5) passed as %v", got)
	}
	if got := *(*complex64)(a.slot(1)); got != complex(1, 2) {
		t.Errorf("complex64 passed as %v", got)
	}
	if got := *(*complex128)(a.slot(2)); got != complex(3, 4) {
		t.Errorf("complex128 passed as %v", got)
	}
	if got := *(*uint8)(a.slot(3)); got != ToFloat8E4M3(1).Bits() {
		t.Errorf("Float8E4M3(1) passed as %#x", got)
	}
	if got := *(*[3]int16)(a.slot(4)); got != [3]int16{1, -2, 3} {
		t.Errorf("[3]int16 passed as %v", got)
	}
	must(t, SetArg(a, 2, complex(5.0, 6.0)))
	if got := *(*complex128)(a.slot(2)); got != complex(5, 6) {
		t.Errorf("SetArg of a complex128 wrote %v", got)
	}
}
