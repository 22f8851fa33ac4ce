package ptxsuite_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const atomics64Src = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ double atomic_add_cas(double *a, double v) {
	unsigned long long *p = (unsigned long long *)a, old = *p, assumed;
	do {
		assumed = old;
		old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
	} while (assumed != old);
	return __longlong_as_double(old);
}
extern "C" __global__ void atomics64(const long long *x, int n, long long *s64, unsigned long long *u64,
		double *d, unsigned *u32, __half2 *h2, __nv_bfloat16 *bf, float *fs) {
	__shared__ double sd;
	__shared__ unsigned long long su;
	if (threadIdx.x == 0) { sd = 0; su = 0; }
	__syncthreads();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		long long v = x[i];
		unsigned long long w = (unsigned long long)v;
		atomicMin(&s64[0], v);
		atomicMax(&s64[1], v);
		atomicMin(&u64[0], w);
		atomicMax(&u64[1], w);
		atomicAnd(&u64[2], w | 0xffff0000ffff0000ull);
		atomicOr(&u64[3], w & 0x00ff00ff00ff00ffull);
		atomicXor(&u64[4], w);
		atomicExch(&u64[5], 5ull);
		atomicCAS(&u64[6], 0ull, (unsigned long long)i + 1);
		atomic_add_cas(&d[0], (double)(v % 1000) * 0.25);
		atomicAdd(&d[1], (double)(v % 1000) * 0.5);
		atomicAdd_block(&sd, 1.0);
		atomicAdd(&su, 2ull);
		atomicInc(&u32[0], 99u);
		atomicDec(&u32[1], 77u);
		atomicAdd_system(&u32[2], 3u);
		atomicSub(&u32[3], 1u);
		atomicAdd(&h2[i % 4], __floats2half2_rn(1.0f, -0.5f));
		atomicAdd(&bf[i % 4], __float2bfloat16(1.0f));
		atomicAdd(&fs[0], 0.5f);
		atomicExch(&fs[1], 2.0f);
		atomic_add_cas((double *)&fs[2], 1.0);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		atomicAdd(&d[2], sd);
		atomicAdd(&u64[7], su);
	}
}`

// 64-bit atomics (signed and unsigned min and max, and, or, xor, exch,
// CAS), double adds both native and as a CAS loop, shared-memory double
// and 64-bit adds, atomicInc and atomicDec wrapping, block- and
// system-scoped adds, and adds on __half2 and __nv_bfloat16.
func TestAtomics64AndHalf(t *testing.T) {
	forArchs(t, func(e *env) {
		n, block := 1000, 128
		x := make([]int64, n)
		r := rng(107)
		for i := range x {
			x[i] = int64(r.next())
		}
		x[5] = -3
		s64 := []int64{1<<63 - 1, -1 << 63}
		u64 := []uint64{^uint64(0), 0, ^uint64(0), 0, 0, 0, 0, 0}
		var d [3]float64
		var u32 [4]uint32
		for _, v := range x {
			w := uint64(v)
			s64[0], s64[1] = min(s64[0], v), max(s64[1], v)
			u64[0], u64[1] = min(u64[0], w), max(u64[1], w)
			u64[2] &= w | 0xffff0000ffff0000
			u64[3] |= w & 0x00ff00ff00ff00ff
			u64[4] ^= w
			d[0] += float64(v%1000) * 0.25
			d[1] += float64(v%1000) * 0.5
			if u32[0] >= 99 {
				u32[0] = 0
			} else {
				u32[0]++
			}
			if u32[1] == 0 || u32[1] > 77 {
				u32[1] = 77
			} else {
				u32[1]--
			}
			u32[2] += 3
			u32[3]--
		}
		u64[5], u64[7] = 5, 2*uint64(n)
		d[2] = float64(n)
		k := e.kernel(atomics64Src, "atomics64", nvrtc.WithToolkitHeaders())
		dx, ds, du := up(e, x), up(e, []int64{1<<63 - 1, -1 << 63}), up(e, []uint64{^uint64(0), 0, ^uint64(0), 0, 0, 0, 0, 0})
		dd, du32, dh, db, df := zeros[float64](e, 3), zeros[uint32](e, 4), zeros[uint32](e, 4), zeros[uint16](e, 4), zeros[float32](e, 4)
		e.launch(k, cuda.Linear(n, block), dx, int32(n), ds, du, dd, du32, dh, db, df)
		same(e, "signed 64", down(e, ds), s64, 0)
		got := down(e, du)
		if got[6] < 1 || got[6] > uint64(n) {
			e.t.Errorf("CAS winner %d: want one of 1..%d", got[6], n)
		}
		got[6] = 0
		for i := range got {
			if got[i] != u64[i] {
				e.t.Errorf("unsigned 64 [%d] = %#x, want %#x", i, got[i], u64[i])
			}
		}
		same(e, "doubles", down(e, dd), d[:], 0)
		same(e, "inc dec", down(e, du32), u32[:], 0)
		// Each __half2 gets n/4 adds of (1, -0.5): 250 and -125, exact.
		h := uint32(0xd7d0)<<16 | 0x5bd0
		same(e, "half2", down(e, dh), []uint32{h, h, h, h}, 0)
		// 250 in bfloat16 is 0x437a.
		same(e, "bfloat16", down(e, db), []uint16{0x437a, 0x437a, 0x437a, 0x437a}, 0)
		fs := down(e, df)
		same(e, "floats", fs[:2], []float32{float32(n) / 2, 2}, 0)
		// fs[2:4] hold one double, n additions of 1.0.
		if d := math.Float64frombits(uint64(math.Float32bits(fs[3]))<<32 | uint64(math.Float32bits(fs[2]))); d != float64(n) {
			e.t.Errorf("double in a float array = %v, want %d", d, n)
		}
	})
}

const atomicOrdersSrc = `
extern "C" __global__ void orders(unsigned *data, unsigned *counter, unsigned *out, int *lock, int *guarded) {
	__shared__ unsigned sh;
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (threadIdx.x == 0) asm volatile("st.relaxed.cta.shared.u32 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&sh)), "r"(0u) : "memory");
	__syncthreads();
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(data + i), "r"(i * 7) : "memory");
	asm volatile("fence.acq_rel.gpu;" ::: "memory");
	unsigned old, v, c;
	asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(1u) : "memory");
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(data + i) : "memory");
	asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(out + 2 * i), "r"(v + 1) : "memory");
	asm volatile("red.release.gpu.global.add.u32 [%0], %1;" :: "l"(counter + 1), "r"(2u) : "memory");
	asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(c) : "l"(counter + 2), "r"(0u), "r"(i + 1) : "memory");
	asm volatile("fence.sc.sys;" ::: "memory");
	asm volatile("atom.acquire.cta.shared.add.u32 %0, [%1], %2;" : "=r"(c) : "r"((unsigned)__cvta_generic_to_shared(&sh)), "r"(1u) : "memory");
	asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(data + i) : "memory");
	out[2 * i + 1] = v;
	__syncthreads();
	unsigned s;
	asm volatile("ld.relaxed.cta.shared.u32 %0, [%1];" : "=r"(s) : "r"((unsigned)__cvta_generic_to_shared(&sh)) : "memory");
	if (threadIdx.x == 0) {
		atomicAdd(counter + 3, s);
		// A spin lock between blocks, taken by one thread of each.
		while (atomicCAS(lock, 0, 1) != 0) __nanosleep(32);
		__threadfence();
		int g = *(volatile int *)guarded;
		*(volatile int *)guarded = g + 1;
		__threadfence();
		atomicExch(lock, 0);
	}
}`

// Loads, stores, fences and atomics with memory orders and scopes, as
// libcu++'s cuda::atomic_ref emits them (ld.acquire, st.release,
// atom.acq_rel, red.release, fence.sc), and a spin lock between blocks.
func TestAtomicMemoryOrders(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks, block := 12, 64
		n := blocks * block
		want := make([]uint32, 2*n)
		for i := range n {
			want[2*i], want[2*i+1] = uint32(i*7+1), uint32(i*7)
		}
		k := e.kernel(atomicOrdersSrc, "orders")
		data, counter, out, lock, guarded := zeros[uint32](e, n), zeros[uint32](e, 4), zeros[uint32](e, 2*n), zeros[int32](e, 1), zeros[int32](e, 1)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: uint32(block)}}, data, counter, out, lock, guarded)
		same(e, "out", down(e, out), want, 0)
		c := down(e, counter)
		if c[2] < 1 || c[2] > uint32(n) {
			e.t.Errorf("CAS winner %d: want one of 1..%d", c[2], n)
		}
		c[2] = 0
		same(e, "counters", c, []uint32{uint32(n), uint32(2 * n), 0, uint32(n)}, 0)
		same(e, "guarded", down(e, guarded), []int32{int32(blocks)}, 0)
	})
}
