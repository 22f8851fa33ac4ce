package ptxsuite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// ownContext makes a context of its own for a test whose kernel faults:
// the fault stays in that context.
func ownContext(t *testing.T) *env {
	t.Helper()
	needNVRTC(t)
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.NewContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{t: t, s: s, arch: archs[0]}
}

// onFake skips a test of what the fake driver reports: on a GPU a fault
// ends the context the other tests use.
func onFake(t *testing.T) {
	t.Helper()
	if !cudatest.Active() {
		t.Skip("checks the fake driver's reports; a fault on a GPU would end the context the other tests share")
	}
}

const oobSrc = `
extern "C" __global__ void oob(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = x[i + 1] * 2.0f;
}`

// A read one element past an allocation fails the launch with
// CUDA_ERROR_ILLEGAL_ADDRESS, sticky in its context, and LastKernelError
// names the thread and the PTX line.
func TestOutOfBoundsReadIsReported(t *testing.T) {
	onFake(t)
	e := ownContext(t)
	s := e.s
	k := e.kernel(oobSrc, "oob")
	n := 100
	x, y := up(e, make([]float32, n)), zeros[float32](e, n)
	e.launch(k, cuda.Linear(n, 64), x, y, int32(n))
	err := s.Synchronize()
	if !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Fatalf("Synchronize = %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
	}
	var ke *cudatest.KernelError
	if !errors.As(cudatest.LastKernelError(), &ke) {
		t.Fatalf("LastKernelError = %v", cudatest.LastKernelError())
	}
	if ke.Thread.X != 35 || ke.Block.X != 1 || ke.Line == 0 || !strings.Contains(ke.Instruction, "ld.global") {
		t.Errorf("KernelError %+v: want block 1 thread 35 at the load", ke)
	}
	if err := s.Synchronize(); !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Errorf("second Synchronize = %v: the error must stay", err)
	}
}

const assertSrc = `
extern "C" __global__ void check(const int *x) {
	assert(x[threadIdx.x] >= 0);
}`

// A failed assert fails the launch with CUDA_ERROR_ASSERT and says which.
func TestAssertIsReported(t *testing.T) {
	onFake(t)
	e := ownContext(t)
	s := e.s
	k := e.kernel(assertSrc, "check")
	x := up(e, []int32{0, 1, 2, -3, 4})
	e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 5}}, x)
	if err := s.Synchronize(); !errors.Is(err, cu.CUDA_ERROR_ASSERT) {
		t.Fatalf("Synchronize = %v, want CUDA_ERROR_ASSERT", err)
	}
	var ke *cudatest.KernelError
	if !errors.As(cudatest.LastKernelError(), &ke) || ke.Thread.X != 3 || !strings.Contains(ke.Msg, "x[threadIdx.x] >= 0") {
		t.Errorf("LastKernelError = %v: want thread 3 and the assertion", cudatest.LastKernelError())
	}
}

const mmaSrc = `
extern "C" __global__ void tensor(unsigned *d, const unsigned *a) {
	unsigned r0, r1;
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
		: "=r"(r0), "=r"(r1) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]));
	d[0] = r0; d[1] = r1;
}`

// An instruction outside what the interpreter runs fails the launch
// itself with CUDA_ERROR_NOT_SUPPORTED, and LastKernelError names it and
// its line; nothing is left sticky: the context runs the next kernel.
func TestUnsupportedInstructionIsNamed(t *testing.T) {
	onFake(t)
	e := ownContext(t)
	k := e.kernel(mmaSrc, "tensor")
	d, a := zeros[uint32](e, 2), zeros[uint32](e, 5)
	err := k.Launch(e.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, d, a)
	if !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		t.Fatalf("Launch = %v, want CUDA_ERROR_NOT_SUPPORTED", err)
	}
	var ke *cudatest.KernelError
	if !errors.As(cudatest.LastKernelError(), &ke) || !strings.HasPrefix(ke.Instruction, "mma.sync") || ke.Line == 0 ||
		ke.Kernel != "tensor" || !strings.Contains(ke.Error(), "line") {
		t.Errorf("LastKernelError = %v: want the entry, the instruction and its line", cudatest.LastKernelError())
	}
	if err := e.s.Synchronize(); err != nil {
		t.Fatalf("Synchronize after the refused launch: %v", err)
	}
	k2 := e.kernel(oobSrc, "oob")
	x, y := up(e, []float32{1, 2, 3, 4}), zeros[float32](e, 3)
	e.launch(k2, cuda.Linear(3, 32), x, y, int32(3))
	same(e, "y", down(e, y), []float32{4, 6, 8}, 0)
}

// outOfScope are kernels using what the interpreter does not run, each
// with the architecture it needs and the instruction its error names.
// Each module also has an entry the interpreter runs, fine.
var outOfScope = []struct {
	name, arch, inst, src string
}{
	{"wgmma", "compute_90a", "wgmma", `
extern "C" __global__ void k(float *d) {
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
	d[threadIdx.x] = 1.0f;
}`},
	{"bulk copy", "compute_90", "cp.async.bulk", `
extern "C" __global__ void k(float *d, const float *s) {
	__shared__ __align__(128) float buf[32];
	__shared__ __align__(8) unsigned long long bar;
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 128, [%2];"
		:: "r"((unsigned)__cvta_generic_to_shared(buf)), "l"(s), "r"((unsigned)__cvta_generic_to_shared(&bar)) : "memory");
	d[threadIdx.x] = buf[threadIdx.x];
}`},
	{"mbarrier", "compute_90", "mbarrier", `
extern "C" __global__ void k(float *d) {
	__shared__ __align__(8) unsigned long long bar;
	asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(32) : "memory");
	d[threadIdx.x] = 1.0f;
}`},
	{"texture", "compute_75", "tex", `
extern "C" __global__ void k(float *d, cudaTextureObject_t t) {
	d[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x);
}`},
	{"ldmatrix", "compute_90", "ldmatrix", `
extern "C" __global__ void k(unsigned *d) {
	__shared__ __align__(16) unsigned short m[8 * 8];
	unsigned r;
	asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"((unsigned)__cvta_generic_to_shared(m)));
	d[threadIdx.x] = r;
}`},
	{"wgmma accumulators", "compute_90a", "wgmma.mma_async", `
extern "C" __global__ void k(float *d, unsigned long long desc) {
	float c[64] = {};
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
		"{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
		"%64, %65, p, 1, 1, 0, 0;\n}"
		: "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]), "+f"(c[4]), "+f"(c[5]), "+f"(c[6]), "+f"(c[7]),
		  "+f"(c[8]), "+f"(c[9]), "+f"(c[10]), "+f"(c[11]), "+f"(c[12]), "+f"(c[13]), "+f"(c[14]), "+f"(c[15]),
		  "+f"(c[16]), "+f"(c[17]), "+f"(c[18]), "+f"(c[19]), "+f"(c[20]), "+f"(c[21]), "+f"(c[22]), "+f"(c[23]),
		  "+f"(c[24]), "+f"(c[25]), "+f"(c[26]), "+f"(c[27]), "+f"(c[28]), "+f"(c[29]), "+f"(c[30]), "+f"(c[31]),
		  "+f"(c[32]), "+f"(c[33]), "+f"(c[34]), "+f"(c[35]), "+f"(c[36]), "+f"(c[37]), "+f"(c[38]), "+f"(c[39]),
		  "+f"(c[40]), "+f"(c[41]), "+f"(c[42]), "+f"(c[43]), "+f"(c[44]), "+f"(c[45]), "+f"(c[46]), "+f"(c[47]),
		  "+f"(c[48]), "+f"(c[49]), "+f"(c[50]), "+f"(c[51]), "+f"(c[52]), "+f"(c[53]), "+f"(c[54]), "+f"(c[55]),
		  "+f"(c[56]), "+f"(c[57]), "+f"(c[58]), "+f"(c[59]), "+f"(c[60]), "+f"(c[61]), "+f"(c[62]), "+f"(c[63])
		: "l"(desc), "l"(desc), "r"(1));
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
	asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
	d[threadIdx.x] = c[threadIdx.x % 64];
}`},
}

// fineSrc is the entry every module of outOfScope also has: it doubles
// its input.
const fineSrc = `
extern "C" __global__ void twice(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = 2.0f * x[i];
}`

// Tensor-core, bulk-copy, mbarrier, texture and ldmatrix instructions
// fail the launch itself with CUDA_ERROR_NOT_SUPPORTED, and an error
// naming the entry, the instruction and its line; the module loads, as
// it does on a GPU of its architecture, and its other entry runs, in the
// same context, before and after the refused launches.
func TestOutOfScopeInstructionsAreNamed(t *testing.T) {
	onFake(t)
	for _, c := range outOfScope {
		t.Run(c.name, func(t *testing.T) {
			e := ownContext(t)
			e.arch = c.arch
			ks := e.kernels(c.src+fineSrc, "k", "twice")
			k, fine := ks[0], ks[1]
			n := 40
			in := floats(n, 7)
			want := make([]float32, n)
			for i, v := range in {
				want[i] = 2 * v
			}
			x := up(e, in)
			runFine := func() {
				t.Helper()
				y := zeros[float32](e, n)
				e.launch(fine, cuda.Linear(n, 32), x, y, int32(n))
				same(e, "twice", down(e, y), want, 0)
			}
			runFine()
			d := zeros[uint32](e, 64)
			cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}
			for try := range 2 {
				var err error
				switch c.name {
				case "texture", "bulk copy", "wgmma accumulators":
					err = k.Launch(e.s, cfg, d, uint64(d.Ptr()))
				default:
					err = k.Launch(e.s, cfg, d)
				}
				if !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
					t.Fatalf("launch %d: %v, want CUDA_ERROR_NOT_SUPPORTED from Launch itself", try, err)
				}
				var ke *cudatest.KernelError
				if !errors.As(cudatest.LastKernelError(), &ke) {
					t.Fatalf("LastKernelError = %v", cudatest.LastKernelError())
				}
				if ke.Kernel != "k" || ke.Line == 0 || !strings.HasPrefix(ke.Instruction, c.inst) ||
					!strings.Contains(ke.Error(), "line") || !strings.Contains(ke.Error(), c.inst) {
					t.Errorf("LastKernelError = %q (%+v): want the entry k, %s and its line", ke, ke, c.inst)
				}
			}
			if err := e.s.Synchronize(); err != nil {
				t.Fatalf("Synchronize after the refused launches: %v (nothing may be left sticky)", err)
			}
			runFine()
		})
	}
}

// Text that is not PTX (here an instruction missing its semicolon, and
// a stray token at module scope) fails the load with
// CUDA_ERROR_INVALID_PTX, as the driver refuses it; the context stays
// usable.
func TestMalformedPTXFailsLoad(t *testing.T) {
	onFake(t)
	e := ownContext(t)
	for name, src := range map[string]string{
		"no semicolon": ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\tret\n}\n",
		"stray token":  ".version 8.0\n.target sm_90\n.address_size 64\nfoo;\n.visible .entry k()\n{\n\tret;\n}\n",
		"no brace":     ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n",
	} {
		mod, err := cuda.LoadModule(e.s.Context(), []byte(src))
		if err == nil {
			mod.Close()
			t.Errorf("%s: LoadModule succeeded, want CUDA_ERROR_INVALID_PTX", name)
		} else if !errors.Is(err, cu.CUDA_ERROR_INVALID_PTX) {
			t.Errorf("%s: LoadModule = %v, want CUDA_ERROR_INVALID_PTX", name, err)
		}
	}
	k := e.kernel(fineSrc, "twice")
	x, y := up(e, []float32{1, 2}), zeros[float32](e, 2)
	e.launch(k, cuda.Linear(2, 32), x, y, int32(2))
	same(e, "y", down(e, y), []float32{2, 4}, 0)
}
