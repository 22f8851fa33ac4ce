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

// An instruction outside what the interpreter runs fails the launch with
// an error that names it and its line.
func TestUnsupportedInstructionIsNamed(t *testing.T) {
	onFake(t)
	e := ownContext(t)
	s := e.s
	k := e.kernel(mmaSrc, "tensor")
	d, a := zeros[uint32](e, 2), zeros[uint32](e, 5)
	e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, d, a)
	if err := s.Synchronize(); !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		t.Fatalf("Synchronize = %v, want CUDA_ERROR_NOT_SUPPORTED", err)
	}
	msg := cudatest.LastKernelError().Error()
	if !strings.Contains(msg, "mma") || !strings.Contains(msg, "line") {
		t.Errorf("LastKernelError = %q: want the instruction and its line", msg)
	}
}

// outOfScope are kernels using what the interpreter does not run, each
// with the architecture it needs and the instruction its error names.
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
}

// Tensor-core, bulk-copy, mbarrier, texture and ldmatrix instructions
// fail the launch with an error naming the instruction and its line.
func TestOutOfScopeInstructionsAreNamed(t *testing.T) {
	onFake(t)
	for _, c := range outOfScope {
		t.Run(c.name, func(t *testing.T) {
			e := ownContext(t)
			e.arch = c.arch
			k := e.kernel(c.src, "k")
			d := zeros[uint32](e, 32)
			var err error
			if c.name == "texture" || c.name == "bulk copy" {
				err = k.Launch(e.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, d, uint64(d.Ptr()))
			} else {
				err = k.Launch(e.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, d)
			}
			if err == nil {
				err = e.s.Synchronize()
			}
			if !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
				t.Fatalf("launch and synchronize: %v, want CUDA_ERROR_NOT_SUPPORTED", err)
			}
			msg := cudatest.LastKernelError().Error()
			if !strings.Contains(msg, c.inst) || !strings.Contains(msg, "line") {
				t.Errorf("LastKernelError = %q: want %s and its line", msg, c.inst)
			}
		})
	}
}
