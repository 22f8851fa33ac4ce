package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const barRedSrc = `
extern "C" __global__ void barred(const int *x, int *out) {
	int v = x[blockIdx.x * blockDim.x + threadIdx.x];
	int c = __syncthreads_count(v > 0);
	int a = __syncthreads_and(v > -90) != 0;
	int o = __syncthreads_or(v == 42) != 0;
	// Every thread got the same answers: thread 0 checks its neighbours'.
	__shared__ int agree;
	if (threadIdx.x == 0) agree = 1;
	__syncthreads();
	int c0 = __shfl_sync(0xffffffffu, c, 0);
	if (c != c0) atomicAnd(&agree, 0);
	__syncthreads();
	if (threadIdx.x == 0) {
		out[4 * blockIdx.x + 0] = c;
		out[4 * blockIdx.x + 1] = a;
		out[4 * blockIdx.x + 2] = o;
		out[4 * blockIdx.x + 3] = agree;
	}
}`

// __syncthreads_count, _and and _or (bar.red.popc, .and, .or) over blocks
// of several warps.
func TestSyncthreadsCountAndOr(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks, block := 6, 160
		x := make([]int32, blocks*block)
		r := rng(101)
		for i := range x {
			x[i] = int32(r.next()%181) - 90
		}
		x[3*block+7] = 42
		for i := range block {
			x[4*block+i] = int32(i%50) + 1
		}
		want := make([]int32, 4*blocks)
		for b := range blocks {
			a, o := int32(1), int32(0)
			for _, v := range x[b*block : (b+1)*block] {
				if v > 0 {
					want[4*b]++
				}
				if v <= -90 {
					a = 0
				}
				if v == 42 {
					o = 1
				}
			}
			want[4*b+1], want[4*b+2], want[4*b+3] = a, o, 1
		}
		k := e.kernel(barRedSrc, "barred")
		dx, out := up(e, x), zeros[int32](e, 4*blocks)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: uint32(block)}}, dx, out)
		same(e, "bar.red", down(e, out), want, 0)
	})
}

const sregSrc = `
extern "C" __global__ void sregs(unsigned *out, unsigned long long *times) {
	extern __shared__ unsigned dyn[];
	unsigned t = threadIdx.x, lt, le, gt, ge, eq, dsz, lane;
	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
	asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
	asm("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
	asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
	asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
	asm("mov.u32 %0, %%laneid;" : "=r"(lane));
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
	dyn[t] = t * 3;
	__syncthreads();
	unsigned long long c0 = clock64(), g0, g1;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
	__nanosleep(200);
	__threadfence_block();
	__threadfence();
	__threadfence_system();
	unsigned long long c1 = clock64();
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
	unsigned c32 = clock();
	out[8 * t + 0] = lt;
	out[8 * t + 1] = le;
	out[8 * t + 2] = gt;
	out[8 * t + 3] = ge;
	out[8 * t + 4] = eq;
	out[8 * t + 5] = lane;
	out[8 * t + 6] = dsz;
	out[8 * t + 7] = dyn[blockDim.x - 1 - t];
	times[3 * t + 0] = c1 >= c0;
	times[3 * t + 1] = g1 >= g0 && g0 > 0;
	times[3 * t + 2] = c32 != 0 || c1 != 0;
}`

// The lane masks, %laneid, %dynamic_smem_size, clock64, clock and
// %globaltimer, with __nanosleep and the fences between the readings.
func TestSpecialRegisters(t *testing.T) {
	forArchs(t, func(e *env) {
		block := 96
		smem := 4 * 128
		want := make([]uint32, 8*block)
		for t := range block {
			l := uint32(t % 32)
			lt := uint32(1)<<l - 1
			want[8*t+0] = lt
			want[8*t+1] = lt | 1<<l
			want[8*t+2] = ^(lt | 1<<l)
			want[8*t+3] = ^lt
			want[8*t+4] = 1 << l
			want[8*t+5] = l
			want[8*t+6] = uint32(smem)
			want[8*t+7] = uint32(3 * (block - 1 - t))
		}
		k := e.kernel(sregSrc, "sregs")
		out, times := zeros[uint32](e, 8*block), zeros[uint64](e, 3*block)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: uint32(block)}, SharedMemBytes: uint32(smem)}, out, times)
		same(e, "registers", down(e, out), want, 0)
		ones := make([]uint64, 3*block)
		for i := range ones {
			ones[i] = 1
		}
		same(e, "clocks", down(e, times), ones, 0)
	})
}

const lastBlockSrc = `
__device__ unsigned done = 0;
extern "C" __global__ void sum_last_block(const float *x, int n, float *partial, float *total) {
	__shared__ float s[128];
	__shared__ bool last;
	int t = threadIdx.x;
	float v = 0;
	for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
	s[t] = v;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1) {
		if (t < o) s[t] += s[t + o];
		__syncthreads();
	}
	if (t == 0) {
		partial[blockIdx.x] = s[0];
		__threadfence();
		unsigned ticket = atomicInc(&done, gridDim.x - 1);
		last = ticket == gridDim.x - 1;
	}
	__syncthreads();
	if (last) {
		volatile float *vp = partial;
		float u = 0;
		for (int i = t; i < gridDim.x; i += blockDim.x) u += vp[i];
		s[t] = u;
		__syncthreads();
		for (int o = blockDim.x / 2; o > 0; o >>= 1) {
			if (t < o) s[t] += s[t + o];
			__syncthreads();
		}
		if (t == 0) *total = s[0];
	}
}`

// The last block to finish, found with __threadfence and an atomicInc
// that wraps the counter back to zero, sums every block's partial sum
// through volatile loads.
func TestThreadFenceLastBlock(t *testing.T) {
	forArchs(t, func(e *env) {
		n, blocks := 50000, 40
		x := floats(n, 103)
		for i := range x {
			x[i] = float32(int(x[i]*64)) / 64
		}
		var want float64
		for _, v := range x {
			want += float64(v)
		}
		k := e.kernel(lastBlockSrc, "sum_last_block")
		dx, partial, total := up(e, x), zeros[float32](e, blocks), zeros[float32](e, 1)
		for range 2 {
			e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 128}}, dx, int32(n), partial, total)
			same(e, "total", down(e, total), []float32{float32(want)}, 0)
		}
	})
}
