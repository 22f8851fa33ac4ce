// Package testkernels holds small hand-written PTX kernels shared by the
// tests, examples and benchmarks of package cuda. The driver JIT-compiles
// PTX for whatever GPU it runs on, so no CUDA toolkit is needed to build or
// run them: PTX 7.0 for sm_75 is accepted by every driver since CUDA 11.0
// and compiles for every later architecture (sm_80, sm_90, ...).
package testkernels

// VectorAdd is the PTX of one kernel, VectorAddName:
//
//	extern "C" __global__ void vadd(const float *a, const float *b, float *c, unsigned n)
//	{
//		unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//		if (i < n)
//			c[i] = a[i] + b[i];
//	}
//
// Its parameters are three device pointers (8 bytes each) and one 32-bit
// count: launch it with two *DeviceMemory or cu.CUdeviceptr inputs, one
// output and a uint32, and at least n threads in all. c may be a or b.
const VectorAdd = `//
// c[i] = a[i] + b[i] for i < n, with one thread per element.
//
.version 7.0
.target sm_75
.address_size 64

.visible .entry vadd(
	.param .u64 vadd_a,
	.param .u64 vadd_b,
	.param .u64 vadd_c,
	.param .u32 vadd_n
)
{
	.reg .pred	%p<2>;
	.reg .b32	%r<6>;
	.reg .f32	%f<4>;
	.reg .b64	%rd<11>;

	ld.param.u64	%rd1, [vadd_a];
	ld.param.u64	%rd2, [vadd_b];
	ld.param.u64	%rd3, [vadd_c];
	ld.param.u32	%r1, [vadd_n];
	mov.u32		%r2, %ctaid.x;
	mov.u32		%r3, %ntid.x;
	mov.u32		%r4, %tid.x;
	mad.lo.u32	%r5, %r2, %r3, %r4;
	setp.ge.u32	%p1, %r5, %r1;
	@%p1 bra	DONE;

	cvta.to.global.u64	%rd4, %rd1;
	cvta.to.global.u64	%rd5, %rd2;
	cvta.to.global.u64	%rd6, %rd3;
	mul.wide.u32	%rd7, %r5, 4;
	add.s64		%rd8, %rd4, %rd7;
	add.s64		%rd9, %rd5, %rd7;
	add.s64		%rd10, %rd6, %rd7;
	ld.global.f32	%f1, [%rd8];
	ld.global.f32	%f2, [%rd9];
	add.f32		%f3, %f1, %f2;
	st.global.f32	[%rd10], %f3;

DONE:
	ret;
}
`

// VectorAddName is the entry point of VectorAdd.
const VectorAddName = "vadd"

// VectorAddParams is the number of parameters of VectorAddName.
const VectorAddParams = 4

// Empty is the PTX of two kernels that do nothing, for launch benchmarks:
// EmptyName1 takes one 64-bit parameter and EmptyName16 sixteen. It is the
// text of bench/kernels/empty.ptx.
const Empty = `//
// Empty kernels for launch benchmarks, written by hand: one taking a single
// 64-bit argument and one taking sixteen. The driver JIT-compiles this PTX for
// whatever GPU it runs on.
//
.version 7.0
.target sm_75
.address_size 64

.visible .entry empty1(.param .u64 a0)
{
	ret;
}

.visible .entry empty16(
	.param .u64 a0, .param .u64 a1, .param .u64 a2, .param .u64 a3,
	.param .u64 a4, .param .u64 a5, .param .u64 a6, .param .u64 a7,
	.param .u64 a8, .param .u64 a9, .param .u64 a10, .param .u64 a11,
	.param .u64 a12, .param .u64 a13, .param .u64 a14, .param .u64 a15)
{
	ret;
}
`

// Entry points of Empty.
const (
	EmptyName1  = "empty1"
	EmptyName16 = "empty16"
)

// Bad is PTX that the JIT compiler rejects: it uses a register it never
// declares. Loading it fails (CUDA_ERROR_INVALID_PTX) with an error log
// naming the line.
const Bad = `.version 7.0
.target sm_75
.address_size 64

.visible .entry bad(.param .u64 p)
{
	.reg .f32	%f<2>;
	add.f32		%f1, %f1, %undeclared;
	ret;
}
`
