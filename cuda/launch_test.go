package cuda

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// vectorInputs returns a[i] = i and b[i] = 2i on the device, and an output
// buffer set to -1 (NaN bits would do too: anything the kernel must change).
func vectorInputs(t *testing.T, ctx *Context, n int) (a, b, c *DeviceMemory) {
	t.Helper()
	ha, hb := make([]float32, n), make([]float32, n)
	for i := range n {
		ha[i], hb[i] = float32(i), float32(2*i)
	}
	var err error
	a, err = AllocFrom(ctx, ha)
	must(t, err)
	t.Cleanup(func() { a.Close() })
	b, err = AllocFrom(ctx, hb)
	must(t, err)
	t.Cleanup(func() { b.Close() })
	c, err = Alloc(ctx, 4*n)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	must(t, c.MemsetD32(0xbf800000)) // -1.0
	return a, b, c
}

// checkSum fails t unless c holds a+b of vectorInputs for the first n
// elements and -1 (untouched) after them.
func checkSum(t *testing.T, what string, c *DeviceMemory, n int) {
	t.Helper()
	got := make([]float32, c.Size()/4)
	must(t, CopyFromDevice(got, c))
	for i, v := range got {
		want := float32(3 * i)
		if i >= n {
			want = -1
		}
		if v != want {
			t.Fatalf("%s: c[%d] = %v, want %v", what, i, v, want)
		}
	}
}

func TestLaunchVectorAdd(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 100003
	a, b, c := vectorInputs(t, ctx, n)
	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 256)}, Block: Dim3{X: 256}}
	must(t, k.Launch(s, cfg, a, b, c, uint32(n)))
	must(t, s.Synchronize())
	checkSum(t, "Launch with *DeviceMemory", c, n)

	// Raw pointers, and a shorter n: the rest stays as it was.
	must(t, c.MemsetD32(0xbf800000))
	must(t, k.Launch(s, cfg, a.Raw(), b.Raw(), c.Raw(), uint32(n-5)))
	must(t, s.Synchronize())
	checkSum(t, "Launch with cu.CUdeviceptr", c, n-5)
}

func TestLaunchPreparedArgs(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 4096
	a, b, c := vectorInputs(t, ctx, n)
	d, err := Alloc(ctx, 4*n)
	must(t, err)
	defer d.Close()
	must(t, d.MemsetD32(0xbf800000))

	args, err := k.NewArgs(a, b, c, uint32(n/2))
	must(t, err)
	defer args.Close()
	if args.Len() != 4 {
		t.Fatalf("Args.Len = %d", args.Len())
	}
	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 128)}, Block: Dim3{X: 128}}
	must(t, k.LaunchArgs(s, cfg, args))
	// Change the output and the count between launches: the first launch
	// keeps the arguments it was enqueued with.
	must(t, args.Set(2, d))
	must(t, SetArg(args, 3, uint32(n)))
	must(t, k.LaunchArgs(s, cfg, args))
	must(t, s.Synchronize())
	checkSum(t, "first launch", c, n/2)
	checkSum(t, "second launch", d, n)

	// Wrong sizes and indices are refused, and leave the arguments alone.
	for name, err := range map[string]error{
		"Set(3, uint64)":    args.Set(3, uint64(1)),
		"SetArg(0, int32)":  SetArg(args, 0, int32(1)),
		"Set(4, ...)":       args.Set(4, uint32(1)),
		"SetArg(-1, ...)":   SetArg(args, -1, uint32(1)),
		"Set(0, string)":    args.Set(0, "x"),
		"Set(3, int)":       args.Set(3, 1),
		"Set(0, nil *Mem)":  args.Set(0, (*DeviceMemory)(nil)),
		"LaunchArgs(nil)":   k.LaunchArgs(s, cfg, nil),
		"LaunchArgs(nil s)": k.LaunchArgs(nil, cfg, args),
	} {
		if err == nil {
			t.Errorf("%s = nil, want an error", name)
		}
	}
	must(t, args.Close())
	must(t, args.Close())
	if err := k.LaunchArgs(s, cfg, args); !errors.Is(err, ErrClosed) {
		t.Errorf("LaunchArgs(closed args) = %v, want ErrClosed", err)
	}
	if err := args.Set(0, a); !errors.Is(err, ErrClosed) {
		t.Errorf("Set on closed args = %v, want ErrClosed", err)
	}
}

// The driver tells the parameters (cuFuncGetParamInfo) with CUDA 12.4 and
// later: a wrong number or size of arguments is then refused before the
// launch, naming what the kernel expects.
func TestLaunchWrongArgs(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	a, b, c := vectorInputs(t, ctx, 16)
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 16}}

	// Types that are no kernel argument are refused with any driver.
	for _, bad := range []any{16, "16", []float32{1}, struct{}{}} {
		err := k.Launch(s, cfg, a, b, c, bad)
		if !errors.Is(err, ErrKernelArgs) || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("Launch with a %T argument = %v, want ErrKernelArgs", bad, err)
		}
	}
	if _, known := k.ParamSizes(); !known {
		t.Skipf("the driver or the bindings (CUDA %d) lack cuFuncGetParamInfo: argument counts go unchecked", cu.HeaderVersion())
	}
	err = k.Launch(s, cfg, a, b, c)
	if !errors.Is(err, ErrKernelArgs) || !strings.Contains(err.Error(), "takes 4 arguments") || !strings.Contains(err.Error(), "3 given") {
		t.Errorf("Launch with 3 arguments = %v, want ErrKernelArgs naming 4 expected and 3 given", err)
	}
	err = k.Launch(s, cfg, a, b, c, uint64(16))
	if !errors.Is(err, ErrKernelArgs) || !strings.Contains(err.Error(), "argument 3") || !strings.Contains(err.Error(), "uint64") {
		t.Errorf("Launch with a uint64 count = %v, want ErrKernelArgs naming argument 3", err)
	}
	if _, err := k.NewArgs(a, b, c, uint32(16), uint32(0)); !errors.Is(err, ErrKernelArgs) {
		t.Errorf("NewArgs with 5 arguments = %v, want ErrKernelArgs", err)
	}
	// Args of another kernel are checked at launch.
	mod, err := LoadModule(ctx, []byte(testkernels.Empty))
	must(t, err)
	defer mod.Close()
	e1, err := mod.Function(testkernels.EmptyName1)
	must(t, err)
	other, err := e1.NewArgs(uint64(0))
	must(t, err)
	defer other.Close()
	if err := k.LaunchArgs(s, cfg, other); !errors.Is(err, ErrKernelArgs) {
		t.Errorf("LaunchArgs with another kernel's args = %v, want ErrKernelArgs", err)
	}
	must(t, s.Synchronize())
}

// TestLaunchArgsNoAlloc holds the hot path to its promise: a prepared
// launch, with an argument changed in between, allocates nothing.
func TestLaunchArgsNoAlloc(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	a, b, c := vectorInputs(t, ctx, 256)
	args, err := k.NewArgs(a, b, c, uint32(256))
	must(t, err)
	defer args.Close()
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 256}}
	var n uint32
	allocs := testing.AllocsPerRun(1000, func() {
		n = (n + 1) % 256
		if err := SetArg(args, 3, n); err != nil {
			t.Fatal(err)
		}
		if err := args.Set(2, c); err != nil {
			t.Fatal(err)
		}
		if err := k.LaunchArgs(s, cfg, args); err != nil {
			t.Fatal(err)
		}
	})
	must(t, s.Synchronize())
	if allocs != 0 {
		t.Errorf("SetArg + Set + LaunchArgs: %v allocations per launch, want 0", allocs)
	}
}

// fakeKernel is a kernel of a fake module with the vector add's parameters,
// for the argument checks that need no driver.
func fakeKernel(t *testing.T, known bool) (*Kernel, *Module) {
	var live atomic.Int64
	mod := newModuleHandle(nopCore(&live, func(st *moduleState) { st.raw = 0x1 }))
	k := &Kernel{mod: mod, raw: 0x2, name: "vadd"}
	if known {
		k.setParams(naturalLayout([]uint32{8, 8, 8, 4}))
	}
	t.Cleanup(func() { mod.Close() })
	return k, mod
}

func TestArgsWithoutDriver(t *testing.T) {
	k, mod := fakeKernel(t, true)
	p := cu.CUdeviceptr(0x7000)
	args, err := k.NewArgs(p, p+8, p+16, uint32(5))
	must(t, err)
	defer args.Close()
	// The C block: the pointer array, then one slot per argument holding
	// its bytes.
	ptrs := (*[4]uintptr)(args.mem)
	if ptrs[0] != uintptr(args.slot(0)) || ptrs[3] != uintptr(args.slot(3)) {
		t.Fatal("kernelParams do not point to the argument slots")
	}
	if *(*uint64)(args.slot(1)) != 0x7008 || *(*uint32)(args.slot(3)) != 5 {
		t.Fatal("argument bytes not in their slots")
	}
	must(t, SetArg(args, 3, uint32(9)))
	must(t, args.Set(0, cu.CUdeviceptr(0x9000)))
	if *(*uint32)(args.slot(3)) != 9 || *(*uint64)(args.slot(0)) != 0x9000 {
		t.Fatal("Set did not write the slot")
	}

	for name, f := range map[string]func() error{
		"3 args": func() error { _, err := k.NewArgs(p, p, p); return err },
		"5 args": func() error { _, err := k.NewArgs(p, p, p, uint32(1), uint32(1)); return err },
		"size":   func() error { _, err := k.NewArgs(p, p, p, float64(1)); return err },
		"int":    func() error { _, err := k.NewArgs(p, p, p, 1); return err },
		"string": func() error { _, err := k.NewArgs(p, p, p, "1"); return err },
	} {
		err := f()
		var e *Error
		if !errors.Is(err, ErrKernelArgs) || !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !errors.As(err, &e) || e.Func != "" {
			t.Errorf("NewArgs %s = %v, want ErrKernelArgs before the driver", name, err)
		}
	}
	if _, err := k.NewArgs(p, p, p); !strings.Contains(err.Error(), "kernel vadd takes 4 arguments (of 8, 8, 8, 4 bytes), 3 given") {
		t.Errorf("message %q", err)
	}

	// Every supported type encodes to its size.
	for v, size := range map[any]uint8{
		int8(1): 1, uint8(1): 1, true: 1, int16(1): 2, uint16(1): 2, int32(1): 4, uint32(1): 4,
		float32(1): 4, int64(1): 8, uint64(1): 8, float64(1): 8, uintptr(1): 8, cu.CUdeviceptr(1): 8,
		ToFloat16(1): 2, ToBFloat16(1): 2,
	} {
		if _, got, why := encodeArg(v); why != argOK || got != size {
			t.Errorf("encodeArg(%T) = size %d (%d), want %d", v, got, why, size)
		}
	}
	if bits, _, _ := encodeArg(float32(1.5)); bits != 0x3fc00000 {
		t.Errorf("float32 bits %#x", bits)
	}
	if bits, _, _ := encodeArg(int8(-1)); bits != 0xff {
		t.Errorf("int8(-1) bits %#x", bits)
	}
	if bits, _, _ := encodeArg(ToFloat16(1.5)); bits != 0x3e00 {
		t.Errorf("Float16(1.5) bits %#x", bits)
	}
	if bits, _, _ := encodeArg(ToBFloat16(1.5)); bits != 0x3fc0 {
		t.Errorf("BFloat16(1.5) bits %#x", bits)
	}

	// Unknown parameters: anything encodable goes.
	ku, _ := fakeKernel(t, false)
	a2, err := ku.NewArgs(uint8(1))
	must(t, err)
	must(t, a2.Close())

	// A closed module or stream is refused before the driver.
	var live atomic.Int64
	s := newStreamHandle(nopCore(&live, func(st *streamState) { st.raw = 0x3 }))
	must(t, s.Close())
	cfg := LaunchConfig{}
	if err := k.LaunchArgs(s, cfg, args); !errors.Is(err, ErrClosed) {
		t.Errorf("LaunchArgs on a closed stream = %v", err)
	}
	must(t, mod.Close())
	if err := k.LaunchArgs(s, cfg, args); !errors.Is(err, ErrClosed) {
		t.Errorf("LaunchArgs of a closed module = %v", err)
	}
	if _, err := k.NewArgs(p, p, p, uint32(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("NewArgs of a closed module = %v", err)
	}
	if err := k.Launch(s, cfg, p, p, p, uint32(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch of a closed module = %v", err)
	}
}

func TestDim3(t *testing.T) {
	if got := (Dim3{X: 5}).norm(); got != (Dim3{5, 1, 1}) {
		t.Errorf("norm = %+v", got)
	}
	for _, c := range []struct{ n, size, want int }{{0, 256, 0}, {1, 256, 1}, {256, 256, 1}, {257, 256, 2}, {10, 0, 0}} {
		if got := Blocks(c.n, c.size); got != uint32(c.want) {
			t.Errorf("Blocks(%d, %d) = %d, want %d", c.n, c.size, got, c.want)
		}
	}
}

// TestLaunchNoAlloc: Launch with Go values, up to 16 of them, allocates
// nothing, and computes what LaunchArgs computes.
func TestLaunchNoAlloc(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 256
	a, b, c := vectorInputs(t, ctx, n)
	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 128)}, Block: Dim3{X: 128}}
	count := uint32(n)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := k.Launch(s, cfg, a, b, c, count); err != nil {
			t.Fatal(err)
		}
	})
	must(t, s.Synchronize())
	if allocs != 0 {
		t.Errorf("Launch with 4 Go values: %v allocations per launch, want 0", allocs)
	}
	checkSum(t, "Launch", c, n)
}

// TestKernelOccupancy reads the vector add's attributes and sizes a launch
// with the occupancy calls, then runs it and checks the result.
func TestKernelOccupancy(t *testing.T) {
	dev, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	a, err := k.Attributes()
	must(t, err)
	if a.MaxThreadsPerBlock < 128 || a.Registers <= 0 || a.BinaryVersion < 10 {
		t.Fatalf("implausible attributes %+v", a)
	}
	block, minGrid, err := k.SuggestedBlockSize(0)
	must(t, err)
	if block <= 0 || block > a.MaxThreadsPerBlock || minGrid <= 0 {
		t.Fatalf("SuggestedBlockSize = %d, %d", block, minGrid)
	}
	perSM, err := k.MaxActiveBlocksPerMultiprocessor(block, 0)
	must(t, err)
	if perSM < 1 {
		t.Fatalf("MaxActiveBlocksPerMultiprocessor(%d) = %d", block, perSM)
	}
	optin, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	must(t, err)
	if err := k.SetMaxDynamicSharedMemory(optin + 1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("SetMaxDynamicSharedMemory past the device's %d bytes = %v, want an error before the driver", optin, err)
	}
	if optin > 48<<10 {
		must(t, k.SetMaxDynamicSharedMemory(optin-a.SharedBytes))
		if b, err := k.Attributes(); err != nil || b.MaxDynamicSharedBytes != optin-a.SharedBytes {
			t.Errorf("after opting in: %+v, %v", b, err)
		}
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 100000
	x, y, z := vectorInputs(t, ctx, n)
	must(t, k.Launch(s, LaunchConfig{Grid: Dim3{X: Blocks(n, block)}, Block: Dim3{X: uint32(block)}}, x, y, z, uint32(n)))
	must(t, s.Synchronize())
	checkSum(t, "launch sized by SuggestedBlockSize", z, n)
}

// TestEncodeValues holds Launch's encoding (its fast path by type word
// and its fallback to encodeArg) to encodeArg's, and its size check to
// checkSizes's.
func TestEncodeValues(t *testing.T) {
	k, _ := fakeKernel(t, false)
	vs := []any{uint64(1<<63 + 5), cu.CUdeviceptr(0x7000), int64(-3), float64(1.5), uintptr(42),
		float32(-2.25), int32(-7), uint32(0xfffffffe), int8(-1), uint8(200), int16(-300), uint16(65000),
		true, Float16FromBits(0x3c00), BFloat16FromBits(0x3f80), uint64(300)}
	var vals [maxLaunchValues]uint64
	must(t, k.encodeValues("test", vs, &vals))
	for i, v := range vs {
		want, _, _ := encodeArg(v)
		if vals[i] != want {
			t.Errorf("argument %d (%T %v): %#x, encodeArg %#x", i, v, v, vals[i], want)
		}
	}
	known, _ := fakeKernel(t, true) // 8, 8, 8, 4 bytes
	p := cu.CUdeviceptr(0x7000)
	must(t, known.encodeValues("test", []any{p, uint64(1), int64(2), float32(3)}, &vals))
	for name, args := range map[string][]any{
		"3 args":  {p, p, p},
		"5 args":  {p, p, p, uint32(1), uint32(1)},
		"size":    {p, p, p, float64(1)},
		"size 1":  {p, int32(1), p, uint32(1)},
		"int":     {p, p, p, 1},
		"string":  {p, p, p, "1"},
		"count+1": {p, p, p, uint32(1), "1"},
	} {
		if err := known.encodeValues("test", args, &vals); !errors.Is(err, ErrKernelArgs) {
			t.Errorf("%s: %v, want ErrKernelArgs", name, err)
		}
	}
	// Parameters no values fit: a 16-byte one, a 3-byte one, more than 16.
	sixteen := make([]any, maxLaunchValues)
	for i := range sixteen {
		sixteen[i] = p
	}
	for _, params := range [][]uint32{{8, 8, 8, 16}, {8, 8, 8, 3}, make([]uint32, maxLaunchValues+1)} {
		k, _ := fakeKernel(t, false)
		k.setParams(naturalLayout(params))
		args := sixteen[:min(len(params), maxLaunchValues)]
		if err := k.encodeValues("test", args, &vals); !errors.Is(err, ErrKernelArgs) {
			t.Errorf("parameters of %v bytes, %d values: %v, want ErrKernelArgs", params, len(args), err)
		}
	}
	full, _ := fakeKernel(t, false)
	full.setParams(naturalLayout(slices.Repeat([]uint32{8}, maxLaunchValues)))
	must(t, full.encodeValues("test", sixteen, &vals))
	sixteen[15] = float32(1)
	if err := full.encodeValues("test", sixteen, &vals); !errors.Is(err, ErrKernelArgs) || !strings.Contains(err.Error(), "argument 15") {
		t.Errorf("16 values, the last of 4 bytes for 8: %v, want ErrKernelArgs naming argument 15", err)
	}
}

// naturalLayout lays out parameters of the sizes given as the fake driver
// does for a kernel registered with its sizes: each at a multiple of its
// size where that is a power of two below 8, else of 8.
func naturalLayout(sizes []uint32) paramLayout {
	p := paramLayout{sizes: sizes, offsets: make([]uint32, len(sizes))}
	off := uint32(0)
	for i, s := range sizes {
		align := uint32(8)
		if s > 0 && s < 8 && s&(s-1) == 0 {
			align = s
		}
		off = (off + align - 1) / align * align
		p.offsets[i] = off
		off += s
	}
	return p
}
