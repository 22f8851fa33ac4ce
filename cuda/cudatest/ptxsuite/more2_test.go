package ptxsuite_test

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const switchSrc = `
extern "C" __global__ void ops(const int *__restrict__ op, const int *__restrict__ a, int *__restrict__ out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (__builtin_expect(i >= n, 0)) return;
	int x = a[i], r;
	switch (op[i]) {
	case 0: r = x + 7; break;
	case 1: r = x * 3; break;
	case 2: r = x ^ 0x55; break;
	case 3: r = x - 100; break;
	case 4: r = x << 2; break;
	case 5: r = ~x; break;
	case 6: r = x / 3; break;
	case 7: r = x % 5; break;
	case 8: r = -x; break;
	case 9: r = x & 0xf0; break;
	case 10: r = x | 1; break;
	case 11: r = x >> 1; break;
	case 12: r = x * x; break;
	default: r = 12345;
	}
	out[i] = r;
}`

// A dense switch of thirteen cases and a default (a tree of compares
// and branches in the PTX NVRTC writes),
// with lanes of a warp taking different cases.
func TestSwitchManyCases(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 1000
		op := ints(n, 201, 16)
		a := ints(n, 202, 1<<20)
		ops, as := make([]int32, n), make([]int32, n)
		want := make([]int32, n)
		for i := range n {
			ops[i], as[i] = int32(op[i]), int32(a[i])-1<<19
			x := as[i]
			var r int32
			switch ops[i] {
			case 0:
				r = x + 7
			case 1:
				r = x * 3
			case 2:
				r = x ^ 0x55
			case 3:
				r = x - 100
			case 4:
				r = x << 2
			case 5:
				r = ^x
			case 6:
				r = x / 3
			case 7:
				r = x % 5
			case 8:
				r = -x
			case 9:
				r = x & 0xf0
			case 10:
				r = x | 1
			case 11:
				r = x >> 1
			case 12:
				r = x * x
			default:
				r = 12345
			}
			want[i] = r
		}
		k := e.kernel(switchSrc, "ops")
		dout := zeros[int32](e, n)
		e.launch(k, cuda.Linear(n, 128), up(e, ops), up(e, as), dout, int32(n))
		same(e, "results", down(e, dout), want, 0)
	})
}

const onlineSoftmaxSrc = `
extern "C" __global__ void osoftmax(const float *x, float *y, int rows, int cols) {
	int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (row >= rows) return;
	const float *r = x + (size_t)row * cols;
	float m = -1e30f, s = 0.0f;
	for (int j = lane; j < cols; j += 32) {
		float v = r[j], nm = fmaxf(m, v);
		s = s * expf(m - nm) + expf(v - nm);
		m = nm;
	}
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		float om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
		float nm = fmaxf(m, om);
		s = s * expf(m - nm) + os * expf(om - nm);
		m = nm;
	}
	float inv = 1.0f / s;
	for (int j = lane; j < cols; j += 32) y[(size_t)row * cols + j] = expf(r[j] - m) * inv;
}`

// A softmax of one warp per row in one pass: each lane keeps a running
// maximum and a sum rescaled as the maximum grows, and the lanes merge
// theirs with butterfly shuffles.
func TestOnlineSoftmaxWarp(t *testing.T) {
	forArchs(t, func(e *env) {
		rows, cols := 37, 203
		x := floats(rows*cols, 203)
		for i := range x {
			x[i] *= 8
		}
		want := make([]float32, rows*cols)
		for r := range rows {
			m := math.Inf(-1)
			for _, v := range x[r*cols : (r+1)*cols] {
				m = math.Max(m, float64(v))
			}
			s := 0.0
			for _, v := range x[r*cols : (r+1)*cols] {
				s += math.Exp(float64(v) - m)
			}
			for j, v := range x[r*cols : (r+1)*cols] {
				want[r*cols+j] = float32(math.Exp(float64(v)-m) / s)
			}
		}
		k := e.kernel(onlineSoftmaxSrc, "osoftmax")
		dy := zeros[float32](e, rows*cols)
		e.launch(k, cuda.Linear(rows*32, 128), up(e, x), dy, int32(rows), int32(cols))
		same(e, "softmax", down(e, dy), want, 1e-5)
	})
}

const topKSrc = `
#define N 256
#define K 8
extern "C" __global__ void topk(const float *x, float *vals, int *idx) {
	__shared__ float v[N];
	__shared__ float rv[N];
	__shared__ int ri[N];
	int t = threadIdx.x;
	v[t] = x[blockIdx.x * N + t];
	__syncthreads();
	for (int k = 0; k < K; k++) {
		rv[t] = v[t]; ri[t] = t;
		__syncthreads();
		for (int s = N / 2; s > 0; s >>= 1) {
			if (t < s) {
				float a = rv[t], b = rv[t + s];
				int ia = ri[t], ib = ri[t + s];
				if (b > a || (b == a && ib < ia)) { rv[t] = b; ri[t] = ib; }
			}
			__syncthreads();
		}
		if (t == 0) {
			vals[blockIdx.x * K + k] = rv[0];
			idx[blockIdx.x * K + k] = ri[0];
			v[ri[0]] = -__int_as_float(0x7f800000);
		}
		__syncthreads();
	}
}`

// The eight largest of each block's 256 values and where they were, by
// repeated arg-max reductions in shared memory.
func TestTopKPerBlock(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks := 5
		x := floats(256*blocks, 207)
		wantV := make([]float32, 8*blocks)
		wantI := make([]int32, 8*blocks)
		for b := range blocks {
			ix := make([]int, 256)
			for i := range ix {
				ix[i] = i
			}
			row := x[256*b : 256*b+256]
			sort.SliceStable(ix, func(i, j int) bool { return row[ix[i]] > row[ix[j]] })
			for k := range 8 {
				wantV[8*b+k], wantI[8*b+k] = row[ix[k]], int32(ix[k])
			}
		}
		k := e.kernel(topKSrc, "topk")
		dv, di := zeros[float32](e, 8*blocks), zeros[int32](e, 8*blocks)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 256}}, up(e, x), dv, di)
		same(e, "values", down(e, dv), wantV, 0)
		same(e, "indices", down(e, di), wantI, 0)
	})
}

const segScanSrc = `
extern "C" __global__ void segscan(const int *v, const int *head, int *sum, int *info) {
	int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
	int x = v[i];
	unsigned heads = __ballot_sync(0xffffffffu, head[i] != 0 || lane == 0);
	unsigned mine = heads & (0xffffffffu >> (31 - lane));
	int start = 31 - __clz(mine);
	for (int d = 1; d < 32; d <<= 1) {
		int y = __shfl_up_sync(0xffffffffu, x, d);
		if (lane - d >= start) x += y;
	}
	sum[i] = x;
	unsigned after = lane == 31 ? 0u : heads >> (lane + 1);
	int next = __ffs(after);
	info[2 * i] = __popc(heads);
	info[2 * i + 1] = next == 0 ? 32 : lane + next;
}`

// A segmented inclusive scan within warps: segment heads from
// __ballot_sync, a lane's segment start from __clz, the next head from
// __ffs and the number of segments from __popc.
func TestSegmentedScanBallot(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 512
		v := ints(n, 211, 100)
		h := ints(n, 212, 5)
		vs, hs := make([]int32, n), make([]int32, n)
		for i := range n {
			vs[i] = int32(v[i]) - 50
			if h[i] == 0 {
				hs[i] = 1
			}
		}
		want := make([]int32, n)
		wantInfo := make([]int32, 2*n)
		for w := 0; w < n; w += 32 {
			heads := 0
			for l := range 32 {
				if l == 0 || hs[w+l] != 0 {
					heads++
				}
			}
			acc := int32(0)
			for l := range 32 {
				if l == 0 || hs[w+l] != 0 {
					acc = 0
				}
				acc += vs[w+l]
				want[w+l] = acc
				next := 32
				for m := l + 1; m < 32; m++ {
					if hs[w+m] != 0 {
						next = m
						break
					}
				}
				wantInfo[2*(w+l)], wantInfo[2*(w+l)+1] = int32(heads), int32(next)
			}
		}
		k := e.kernel(segScanSrc, "segscan")
		ds, di := zeros[int32](e, n), zeros[int32](e, 2*n)
		e.launch(k, cuda.Linear(n, 128), up(e, vs), up(e, hs), ds, di)
		same(e, "sums", down(e, ds), want, 0)
		same(e, "info", down(e, di), wantInfo, 0)
	})
}

const spmvSrc = `
extern "C" __global__ void spmv(int rows, const int *__restrict__ ptr, const int *__restrict__ col,
		const float *__restrict__ val, const float *__restrict__ x, float *__restrict__ y) {
	int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
	if (row >= rows) return;
	float s = 0.0f;
	for (int j = ptr[row] + lane; j < ptr[row + 1]; j += 32) s += val[j] * __ldg(&x[col[j]]);
	for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
	if (lane == 0) y[row] = s;
}`

// A sparse matrix (CSR) times a vector, one warp per row.
func TestSpMVCSRWarp(t *testing.T) {
	forArchs(t, func(e *env) {
		rows, cols := 91, 300
		r := rng(215)
		ptr := []int32{0}
		var col []int32
		var val []float32
		for range rows {
			nnz := int(r.next() % 80)
			for range nnz {
				col = append(col, int32(r.next()%uint64(cols)))
				val = append(val, r.float()*2-1)
			}
			ptr = append(ptr, int32(len(col)))
		}
		x := floats(cols, 216)
		want := make([]float32, rows)
		for i := range rows {
			s := 0.0
			for j := ptr[i]; j < ptr[i+1]; j++ {
				s += float64(val[j]) * float64(x[col[j]])
			}
			want[i] = float32(s)
		}
		k := e.kernel(spmvSrc, "spmv")
		dy := zeros[float32](e, rows)
		e.launch(k, cuda.Linear(rows*32, 64), int32(rows), up(e, ptr), up(e, col), up(e, val), up(e, x), dy)
		same(e, "y", down(e, dy), want, 1e-5)
	})
}

const stencil3Src = `
#define BX 8
#define BY 8
#define BZ 4
extern "C" __global__ void lap3(const float *in, float *out, int nx, int ny, int nz) {
	__shared__ float t[BZ + 2][BY + 2][BX + 2];
	int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
	int tid = (threadIdx.z * BY + threadIdx.y) * BX + threadIdx.x;
	for (int k = tid; k < (BZ + 2) * (BY + 2) * (BX + 2); k += BX * BY * BZ) {
		int dx = k % (BX + 2), dy = k / (BX + 2) % (BY + 2), dz = k / ((BX + 2) * (BY + 2));
		int gx = x0 + dx - 1, gy = y0 + dy - 1, gz = z0 + dz - 1;
		bool in_ = gx >= 0 && gx < nx && gy >= 0 && gy < ny && gz >= 0 && gz < nz;
		t[dz][dy][dx] = in_ ? in[((size_t)gz * ny + gy) * nx + gx] : 0.0f;
	}
	__syncthreads();
	int x = x0 + threadIdx.x, y = y0 + threadIdx.y, z = z0 + threadIdx.z;
	if (x >= nx || y >= ny || z >= nz) return;
	int i = threadIdx.x + 1, j = threadIdx.y + 1, l = threadIdx.z + 1;
	out[((size_t)z * ny + y) * nx + x] = t[l][j][i - 1] + t[l][j][i + 1] + t[l][j - 1][i] + t[l][j + 1][i]
		+ t[l - 1][j][i] + t[l + 1][j][i] - 6.0f * t[l][j][i];
}`

// A 7-point Laplacian on a 3D grid whose sides are not multiples of the
// block, the block's tile and halo loaded into shared memory with zeros
// outside.
func TestStencil3DShared(t *testing.T) {
	forArchs(t, func(e *env) {
		nx, ny, nz := 19, 13, 10
		in := floats(nx*ny*nz, 219)
		at := func(x, y, z int) float32 {
			if x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz {
				return 0
			}
			return in[(z*ny+y)*nx+x]
		}
		want := make([]float32, nx*ny*nz)
		for z := range nz {
			for y := range ny {
				for x := range nx {
					want[(z*ny+y)*nx+x] = at(x-1, y, z) + at(x+1, y, z) + at(x, y-1, z) + at(x, y+1, z) + at(x, y, z-1) + at(x, y, z+1) - 6*at(x, y, z)
				}
			}
		}
		k := e.kernel(stencil3Src, "lap3", fmadOff)
		dout := zeros[float32](e, nx*ny*nz)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((nx + 7) / 8), Y: uint32((ny + 7) / 8), Z: uint32((nz + 3) / 4)}, Block: cuda.Dim3{X: 8, Y: 8, Z: 4}}
		e.launch(k, cfg, up(e, in), dout, int32(nx), int32(ny), int32(nz))
		same(e, "laplacian", down(e, dout), want, 1e-6)
	})
}

const bitonic64Src = `
extern "C" __global__ void sortkv(unsigned long long *keys, unsigned *vals) {
	__shared__ unsigned long long k[256];
	__shared__ unsigned v[256];
	unsigned t = threadIdx.x, base = blockIdx.x * 256;
	k[t] = keys[base + t]; v[t] = vals[base + t];
	k[t + 128] = keys[base + t + 128]; v[t + 128] = vals[base + t + 128];
	__syncthreads();
	for (unsigned size = 2; size <= 256; size <<= 1)
		for (unsigned j = size >> 1; j > 0; j >>= 1) {
			unsigned i = 2 * t - (t & (j - 1)), l = i + j;
			bool asc = (i & size) == 0;
			if ((k[i] > k[l]) == asc) {
				unsigned long long a = k[i]; k[i] = k[l]; k[l] = a;
				unsigned b = v[i]; v[i] = v[l]; v[l] = b;
			}
			__syncthreads();
		}
	keys[base + t] = k[t]; vals[base + t] = v[t];
	keys[base + t + 128] = k[t + 128]; vals[base + t + 128] = v[t + 128];
}`

// A bitonic sort of 64-bit keys carrying a 32-bit payload, per block in
// shared memory.
func TestBitonicKeyValue64(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks := 3
		r := rng(223)
		keys := make([]uint64, 256*blocks)
		vals := make([]uint32, 256*blocks)
		for i := range keys {
			keys[i] = r.next()
			vals[i] = uint32(i)
		}
		type kv struct {
			k uint64
			v uint32
		}
		wantK := make([]uint64, len(keys))
		wantV := make([]uint32, len(keys))
		for b := range blocks {
			s := make([]kv, 256)
			for i := range s {
				s[i] = kv{keys[256*b+i], vals[256*b+i]}
			}
			sort.Slice(s, func(i, j int) bool { return s[i].k < s[j].k })
			for i := range s {
				wantK[256*b+i], wantV[256*b+i] = s[i].k, s[i].v
			}
		}
		k := e.kernel(bitonic64Src, "sortkv")
		dk, dv := up(e, keys), up(e, vals)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 128}}, dk, dv)
		gotK := down(e, dk)
		for i := range gotK {
			if gotK[i] != wantK[i] {
				e.t.Fatalf("key %d = %#x, want %#x", i, gotK[i], wantK[i])
			}
		}
		same(e, "payloads", down(e, dv), wantV, 0)
	})
}

const nbodySrc = `
extern "C" __global__ void nbody(const float4 *p, float4 *v, float4 *np, int n, float dt, float eps2) {
	extern __shared__ float4 tile[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float4 me = i < n ? p[i] : make_float4(0, 0, 0, 0);
	float ax = 0, ay = 0, az = 0;
	for (int base = 0; base < n; base += blockDim.x) {
		int j = base + threadIdx.x;
		tile[threadIdx.x] = j < n ? p[j] : make_float4(0, 0, 0, 0);
		__syncthreads();
#pragma unroll 4
		for (int k = 0; k < blockDim.x; k++) {
			float4 o = tile[k];
			float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
			float r2 = dx * dx + dy * dy + dz * dz + eps2;
			float inv = rsqrtf(r2);
			float s = o.w * inv * inv * inv;
			ax += dx * s; ay += dy * s; az += dz * s;
		}
		__syncthreads();
	}
	if (i >= n) return;
	float4 vi = v[i];
	vi.x += ax * dt; vi.y += ay * dt; vi.z += az * dt;
	v[i] = vi;
	np[i] = make_float4(me.x + vi.x * dt, me.y + vi.y * dt, me.z + vi.z * dt, me.w);
}`

// One step of an all-pairs N-body simulation: float4 bodies through a
// dynamic shared-memory tile, rsqrtf for the inverse distance.
func TestNBodyStep(t *testing.T) {
	forArchs(t, func(e *env) {
		n, bs := 300, 64
		p := floats(4*n, 227)
		v := floats(4*n, 228)
		for i := 0; i < n; i++ {
			p[4*i+3] = p[4*i+3]*0.5 + 1
		}
		dt, eps2 := float32(0.01), float32(0.05)
		wantV := append([]float32(nil), v...)
		wantP := make([]float32, 4*n)
		for i := range n {
			var ax, ay, az float64
			for j := range n {
				dx := float64(p[4*j]) - float64(p[4*i])
				dy := float64(p[4*j+1]) - float64(p[4*i+1])
				dz := float64(p[4*j+2]) - float64(p[4*i+2])
				inv := 1 / math.Sqrt(dx*dx+dy*dy+dz*dz+float64(eps2))
				s := float64(p[4*j+3]) * inv * inv * inv
				ax, ay, az = ax+dx*s, ay+dy*s, az+dz*s
			}
			wantV[4*i] += float32(ax) * dt
			wantV[4*i+1] += float32(ay) * dt
			wantV[4*i+2] += float32(az) * dt
			for c := range 3 {
				wantP[4*i+c] = p[4*i+c] + wantV[4*i+c]*dt
			}
			wantP[4*i+3] = p[4*i+3]
		}
		k := e.kernel(nbodySrc, "nbody")
		dv, dnp := up(e, v), zeros[float32](e, 4*n)
		cfg := cuda.Linear(n, bs)
		cfg.SharedMemBytes = uint32(16 * bs)
		e.launch(k, cfg, up(e, p), dv, dnp, int32(n), dt, eps2)
		same(e, "velocities", down(e, dv), wantV, 2e-4)
		same(e, "positions", down(e, dnp), wantP, 2e-5)
	})
}

const lookbackSrc = `
#define T 128
extern "C" __global__ void lbscan(const unsigned *in, unsigned *out, unsigned *counter, unsigned long long *status) {
	__shared__ unsigned s[T];
	__shared__ unsigned tile, prefix;
	if (threadIdx.x == 0) tile = atomicAdd(counter, 1u);
	__syncthreads();
	unsigned b = tile, i = b * T + threadIdx.x;
	s[threadIdx.x] = in[i];
	__syncthreads();
	for (unsigned d = 1; d < T; d <<= 1) {
		unsigned y = threadIdx.x >= d ? s[threadIdx.x - d] : 0;
		__syncthreads();
		s[threadIdx.x] += y;
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		unsigned agg = s[T - 1];
		volatile unsigned long long *st = status;
		if (b == 0) {
			st[0] = (2ull << 32) | agg;
			prefix = 0;
		} else {
			st[b] = (1ull << 32) | agg;
			__threadfence();
			unsigned excl = 0;
			for (int p = b - 1; p >= 0; p--) {
				unsigned long long w;
				do { w = st[p]; } while ((w >> 32) == 0);
				excl += (unsigned)w;
				if ((w >> 32) == 2) break;
			}
			__threadfence();
			st[b] = (2ull << 32) | (excl + agg);
			prefix = excl;
		}
	}
	__syncthreads();
	out[i] = s[threadIdx.x] + prefix;
}`

// An inclusive scan across blocks in one pass with a decoupled look-back:
// tiles numbered in order of start by an atomic counter, each publishing
// its aggregate and then its inclusive prefix in a status word that later
// tiles spin on with volatile loads.
func TestDecoupledLookbackScan(t *testing.T) {
	forArchs(t, func(e *env) {
		tiles := 24
		n := 128 * tiles
		in := ints(n, 231, 1000)
		want := make([]uint32, n)
		acc := uint32(0)
		for i, v := range in {
			acc += v
			want[i] = acc
		}
		k := e.kernel(lookbackSrc, "lbscan")
		dout := zeros[uint32](e, n)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(tiles)}, Block: cuda.Dim3{X: 128}}, up(e, in), dout, zeros[uint32](e, 1), zeros[uint64](e, tiles))
		same(e, "scan", down(e, dout), want, 0)
	})
}

const histMatchSrc = `
#define W 4
extern "C" __global__ void hist(const unsigned *x, int n, unsigned *bins) {
	__shared__ unsigned h[W][256];
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	for (int k = threadIdx.x; k < W * 256; k += blockDim.x) h[k / 256][k % 256] = 0;
	__syncthreads();
	int stride = gridDim.x * blockDim.x;
	for (int base = blockIdx.x * blockDim.x; base < n; base += stride) {
		int i = base + threadIdx.x;
		int bin = i < n ? (int)(x[i] & 255u) : -1;
		unsigned peers = __match_any_sync(0xffffffffu, bin);
		if (bin >= 0 && lane == __ffs(peers) - 1) h[warp][bin] += __popc(peers);
		__syncwarp();
	}
	__syncthreads();
	for (int b = threadIdx.x; b < 256; b += blockDim.x) {
		unsigned s = 0;
		for (int w = 0; w < W; w++) s += h[w][b];
		if (s) atomicAdd(&bins[b], s);
	}
}`

// A 256-bin histogram with a private copy per warp in shared memory: the
// lanes holding the same bin find each other with __match_any_sync and
// the lowest adds their count, so no shared atomics are needed.
func TestHistogramMatchAny(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 5000
		x := ints(n, 235, 1<<16)
		for i := range x {
			if i%3 == 0 {
				x[i] = 7 // many lanes agree
			}
		}
		want := make([]uint32, 256)
		for _, v := range x {
			want[v&255]++
		}
		k := e.kernel(histMatchSrc, "hist")
		dbins := zeros[uint32](e, 256)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 6}, Block: cuda.Dim3{X: 128}}, up(e, x), int32(n), dbins)
		same(e, "bins", down(e, dbins), want, 0)
	})
}

const dp4aSrc = `
#define TS 16
extern "C" __global__ void igemm(const int *a, const int *bt, int *c, int m, int n, int k4) {
	__shared__ int as[TS][TS], bs[TS][TS];
	int row = blockIdx.y * TS + threadIdx.y, col = blockIdx.x * TS + threadIdx.x;
	int acc = 0;
	for (int t = 0; t < k4; t += TS) {
		as[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k4 ? a[row * k4 + t + threadIdx.x] : 0;
		int bc = blockIdx.x * TS + threadIdx.y;
		bs[threadIdx.y][threadIdx.x] = bc < n && t + threadIdx.x < k4 ? bt[bc * k4 + t + threadIdx.x] : 0;
		__syncthreads();
#pragma unroll
		for (int q = 0; q < TS; q++) acc = __dp4a(as[threadIdx.y][q], bs[threadIdx.x][q], acc);
		__syncthreads();
	}
	if (row < m && col < n) c[row * n + col] = acc;
}`

// An int8 matrix product into int32 tiles: four signed bytes per word,
// multiplied and summed by __dp4a.
func TestDp4aInt8GEMM(t *testing.T) {
	forArchs(t, func(e *env) {
		m, n, k := 37, 29, 88 // k a multiple of 4
		r := rng(239)
		a := make([]int8, m*k)
		b := make([]int8, n*k) // transposed: row j is column j
		for i := range a {
			a[i] = int8(r.next())
		}
		for i := range b {
			b[i] = int8(r.next())
		}
		pack := func(s []int8) []int32 {
			out := make([]int32, len(s)/4)
			for i := range out {
				out[i] = int32(uint32(uint8(s[4*i])) | uint32(uint8(s[4*i+1]))<<8 | uint32(uint8(s[4*i+2]))<<16 | uint32(uint8(s[4*i+3]))<<24)
			}
			return out
		}
		want := make([]int32, m*n)
		for i := range m {
			for j := range n {
				s := int32(0)
				for q := range k {
					s += int32(a[i*k+q]) * int32(b[j*k+q])
				}
				want[i*n+j] = s
			}
		}
		kk := e.kernel(dp4aSrc, "igemm")
		dc := zeros[int32](e, m*n)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((n + 15) / 16), Y: uint32((m + 15) / 16)}, Block: cuda.Dim3{X: 16, Y: 16}}
		e.launch(kk, cfg, up(e, pack(a)), up(e, pack(b)), dc, int32(m), int32(n), int32(k/4))
		same(e, "c", down(e, dc), want, 0)
	})
}

const hgemmSrc = `
#include <cuda_fp16.h>
#define TS 16
extern "C" __global__ void hgemm(const __half *a, const __half2 *b, float2 *c, int m, int n2, int k) {
	__shared__ __half as[TS][TS];
	__shared__ __half2 bs[TS][TS];
	int row = blockIdx.y * TS + threadIdx.y, col = blockIdx.x * TS + threadIdx.x;
	float2 acc = make_float2(0.0f, 0.0f);
	for (int t = 0; t < k; t += TS) {
		as[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? a[row * k + t + threadIdx.x] : __float2half(0.0f);
		bs[threadIdx.y][threadIdx.x] = col < n2 && t + threadIdx.y < k ? b[(t + threadIdx.y) * n2 + col] : __float2half2_rn(0.0f);
		__syncthreads();
		for (int q = 0; q < TS; q++) {
			float2 p = __half22float2(__hmul2(__half2half2(as[threadIdx.y][q]), bs[q][threadIdx.x]));
			acc.x += p.x; acc.y += p.y;
		}
		__syncthreads();
	}
	if (row < m && col < n2) c[row * n2 + col] = acc;
}`

// A half-precision matrix product two columns at a time: __half2
// products, rounded to half, accumulated in float.
func TestHalf2GEMMTile(t *testing.T) {
	forArchs(t, func(e *env) {
		m, n, k := 21, 38, 40 // n even: pairs of columns
		af, bf := floats(m*k, 241), floats(k*n, 242)
		a, b := make([]uint16, m*k), make([]uint16, k*n)
		ah, bh := make([]float64, m*k), make([]float64, k*n)
		for i, v := range af {
			ah[i] = f16(float64(v))
			a[i] = uint16(halfBits(ah[i]))
		}
		for i, v := range bf {
			bh[i] = f16(float64(v))
			b[i] = uint16(halfBits(bh[i]))
		}
		want := make([]float32, m*n)
		for i := range m {
			for j := range n {
				var s float32
				for q := range k {
					s += float32(f16(ah[i*k+q] * bh[q*n+j]))
				}
				want[i*n+j] = s
			}
		}
		// -lineinfo marks the header's inlined functions with
		// ".loc ..., function_name ..., inlined_at ..."
		for _, opt := range []string{"-DNOTHING", "-lineinfo"} {
			kk := e.kernel(hgemmSrc, "hgemm", nvrtc.WithToolkitHeaders(), fmadOff, nvrtc.WithOptions(opt))
			dc := zeros[float32](e, m*n)
			cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((n/2 + 15) / 16), Y: uint32((m + 15) / 16)}, Block: cuda.Dim3{X: 16, Y: 16}}
			e.launch(kk, cfg, up(e, a), up(e, b), dc, int32(m), int32(n/2), int32(k))
			same(e, "c "+opt, down(e, dc), want, 0)
		}
	})
}

const complexSrc = `
#include <cuComplex.h>
extern "C" __global__ void cplx(const cuFloatComplex *a, const cuFloatComplex *b, cuFloatComplex *p, cuDoubleComplex *q, float *mag, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	cuFloatComplex x = a[i], y = b[i];
	p[i] = cuCaddf(cuCmulf(x, y), cuConjf(x));
	cuDoubleComplex dx = cuComplexFloatToDouble(x), dy = cuComplexFloatToDouble(y);
	q[i] = cuCdiv(cuCsub(dx, dy), dy);
	mag[i] = cuCabsf(y);
}`

// Complex arithmetic from cuComplex.h: product, conjugate, double
// division and magnitude.
func TestComplexArithmetic(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		a, b := floats(2*n, 245), floats(2*n, 246)
		wantP := make([]float32, 2*n)
		wantQ := make([]float64, 2*n)
		wantM := make([]float32, n)
		for i := range n {
			xr, xi, yr, yi := a[2*i], a[2*i+1], b[2*i], b[2*i+1]
			wantP[2*i] = (xr*yr - xi*yi) + xr
			wantP[2*i+1] = (xr*yi + xi*yr) - xi
			q := (complex(float64(xr), float64(xi)) - complex(float64(yr), float64(yi))) / complex(float64(yr), float64(yi))
			wantQ[2*i], wantQ[2*i+1] = real(q), imag(q)
			wantM[i] = float32(math.Hypot(float64(yr), float64(yi)))
		}
		k := e.kernel(complexSrc, "cplx", nvrtc.WithToolkitHeaders(), fmadOff)
		dp, dq, dm := zeros[float32](e, 2*n), zeros[float64](e, 2*n), zeros[float32](e, n)
		e.launch(k, cuda.Linear(n, 128), up(e, a), up(e, b), dp, dq, dm, int32(n))
		same(e, "products", down(e, dp), wantP, 1e-6)
		same(e, "quotients", down(e, dq), wantQ, 1e-12)
		same(e, "magnitudes", down(e, dm), wantM, 1e-6)
	})
}

const philoxSrc = `
__device__ __forceinline__ void round1(unsigned *c, unsigned *k) {
	unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
	unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
	unsigned n0 = hi1 ^ c[1] ^ k[0], n2 = hi0 ^ c[3] ^ k[1];
	c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
	k[0] += 0x9E3779B9u; k[1] += 0xBB67AE85u;
}
extern "C" __global__ void philox(unsigned long long seed, unsigned *out, unsigned long long *mix, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned c[4] = {(unsigned)i, 0u, 0x1234u, 0u};
	unsigned k[2] = {(unsigned)seed, (unsigned)(seed >> 32)};
#pragma unroll
	for (int r = 0; r < 10; r++) round1(c, k);
	for (int j = 0; j < 4; j++) out[4 * i + j] = c[j];
	unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	mix[2 * i] = z;
	mix[2 * i + 1] = __umul64hi(z, 0xFFFFFFFFFFFFFFC5ull) ^ (z << (i & 63)) ^ ((long long)z >> (i % 61));
}`

// Philox4x32-10 counters (32-bit high multiplies) and a splitmix64
// finaliser (64-bit shifts, multiplies and high multiplies).
func TestPhiloxAndSplitMix(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 333
		seed := uint64(0xDEADBEEF12345678)
		want := make([]uint32, 4*n)
		wantMix := make([]uint64, 2*n)
		for i := range n {
			c := [4]uint32{uint32(i), 0, 0x1234, 0}
			k := [2]uint32{uint32(seed), uint32(seed >> 32)}
			for range 10 {
				hi0, lo0 := bits.Mul32(0xD2511F53, c[0])
				hi1, lo1 := bits.Mul32(0xCD9E8D57, c[2])
				c = [4]uint32{hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0}
				k[0] += 0x9E3779B9
				k[1] += 0xBB67AE85
			}
			copy(want[4*i:], c[:])
			z := seed + 0x9E3779B97F4A7C15*uint64(i+1)
			z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
			z = (z ^ z>>27) * 0x94D049BB133111EB
			z ^= z >> 31
			hi, _ := bits.Mul64(z, 0xFFFFFFFFFFFFFFC5)
			wantMix[2*i] = z
			wantMix[2*i+1] = hi ^ z<<uint(i&63) ^ uint64(int64(z)>>uint(i%61))
		}
		k := e.kernel(philoxSrc, "philox")
		dout, dmix := zeros[uint32](e, 4*n), zeros[uint64](e, 2*n)
		e.launch(k, cuda.Linear(n, 96), seed, dout, dmix, int32(n))
		same(e, "philox", down(e, dout), want, 0)
		got := down(e, dmix)
		for i := range got {
			if got[i] != wantMix[i] {
				e.t.Fatalf("mix[%d] = %#x, want %#x", i, got[i], wantMix[i])
			}
		}
	})
}

const shiftSrc = `
extern "C" __global__ void shifts(const unsigned *amt, const unsigned *x, unsigned *o32, unsigned long long *o64) {
	int i = threadIdx.x;
	unsigned a = amt[i], v = x[i], r0, r1, r2;
	asm("shl.b32 %0, %1, %2;" : "=r"(r0) : "r"(v), "r"(a));
	asm("shr.u32 %0, %1, %2;" : "=r"(r1) : "r"(v), "r"(a));
	asm("shr.s32 %0, %1, %2;" : "=r"(r2) : "r"(v), "r"(a));
	o32[4 * i] = r0; o32[4 * i + 1] = r1; o32[4 * i + 2] = r2;
	o32[4 * i + 3] = (v + 0x7fffffffu) * 0x10001u - (unsigned)(-(int)v);
	unsigned long long w = ((unsigned long long)v << 32) | (v ^ 0x80000001u), s0, s1, s2;
	asm("shl.b64 %0, %1, %2;" : "=l"(s0) : "l"(w), "r"(a));
	asm("shr.u64 %0, %1, %2;" : "=l"(s1) : "l"(w), "r"(a));
	asm("shr.s64 %0, %1, %2;" : "=l"(s2) : "l"(w), "r"(a));
	o64[3 * i] = s0; o64[3 * i + 1] = s1; o64[3 * i + 2] = s2;
}`

// Shifts by amounts at and beyond the operand's width, which PTX clamps
// to the width (zero, or the sign for an arithmetic right shift), and
// 32-bit arithmetic that wraps.
func TestShiftClampAndWrap(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 128
		amt := make([]uint32, n)
		x := ints(n, 251, 1<<32-1)
		for i := range amt {
			amt[i] = uint32(i)
			if i >= 100 {
				amt[i] = 1<<31 + uint32(i) // huge amounts clamp too
			}
			if i%2 == 1 {
				x[i] |= 1 << 31
			}
		}
		want32 := make([]uint32, 4*n)
		want64 := make([]uint64, 3*n)
		for i := range n {
			a, v := amt[i], x[i]
			a32, a64 := min(a, 32), min(a, 64)
			want32[4*i] = v << a32
			want32[4*i+1] = v >> a32
			want32[4*i+2] = uint32(int32(v) >> a32)
			want32[4*i+3] = (v+0x7fffffff)*0x10001 - uint32(-int32(v))
			w := uint64(v)<<32 | uint64(v^0x80000001)
			want64[3*i] = w << a64
			want64[3*i+1] = w >> a64
			want64[3*i+2] = uint64(int64(w) >> a64)
		}
		k := e.kernel(shiftSrc, "shifts")
		d32, d64 := zeros[uint32](e, 4*n), zeros[uint64](e, 3*n)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: uint32(n)}}, up(e, amt), up(e, x), d32, d64)
		same(e, "32-bit", down(e, d32), want32, 0)
		got := down(e, d64)
		for i := range got {
			if got[i] != want64[i] {
				e.t.Errorf("64-bit[%d] (shift %d) = %#x, want %#x", i, amt[i/3], got[i], want64[i])
			}
		}
	})
}

const edgesSrc = `
extern "C" __global__ void edges(const float *x, const float *y, float *o, int *io, double *d, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float a = x[i], b = y[i];
	float *r = o + 12 * i;
	r[0] = fminf(a, b);
	r[1] = fmaxf(a, b);
	r[2] = copysignf(a, b);
	r[3] = truncf(a);
	r[4] = roundf(a);
	r[5] = rintf(a);
	r[6] = nearbyintf(a);
	int q;
	r[7] = remquof(a, b, &q);
	r[8] = scalbnf(a, (int)(b * 100.0f));
	float s, c;
	sincosf(a, &s, &c);
	r[9] = s; r[10] = c;
	r[11] = fdimf(a, b);
	io[2 * i] = q;
	io[2 * i + 1] = ilogbf(a);
	long double la = a, lb = b;
	d[i] = (double)(la * lb / 3.0L);
}`

// The maths library's edge functions on signed zeros, NaNs, infinities,
// subnormals and ties: fminf/fmaxf ignoring a NaN, copysignf, the four
// roundings to integer, remquof, scalbnf, sincosf, fdimf, ilogbf, and
// long double (which is double on the device).
func TestFloatEdgeFunctions(t *testing.T) {
	forArchs(t, func(e *env) {
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3.49999, 1e-40, -3e-42, 7.75, -1e30, 123456.5, 8388609}
		ys := []float32{nan, 1, float32(math.Copysign(0, -1)), 3, 2, -0.75, 0.3, 1.25, -inf, 1, 0.7, -2, nan, 0.5, 1.5, 4}
		for i := range 48 {
			r := rng(uint64(300 + i))
			xs = append(xs, (r.float()*2-1)*20)
			ys = append(ys, (r.float()*2-1)*3+0.01)
		}
		n := len(xs)
		want := make([]float32, 12*n)
		wantI := make([]int32, 2*n)
		wantD := make([]float64, n)
		for i := range n {
			a, b := float64(xs[i]), float64(ys[i])
			w := want[12*i:]
			switch {
			case math.IsNaN(b):
				w[0], w[1] = float32(a), float32(a)
			default:
				w[0], w[1] = float32(math.Min(a, b)), float32(math.Max(a, b))
			}
			w[2] = float32(math.Copysign(a, b))
			w[3], w[4], w[5], w[6] = float32(math.Trunc(a)), float32(math.Round(a)), float32(math.RoundToEven(a)), float32(math.RoundToEven(a))
			rem := math.Remainder(a, b)
			w[7] = float32(rem)
			sc := 0 // a NaN converts to 0, an infinity saturates
			switch bb := float64(float32(b) * 100); {
			case math.IsInf(bb, -1):
				sc = math.MinInt32
			case math.IsInf(bb, 1):
				sc = math.MaxInt32
			case !math.IsNaN(bb):
				sc = int(bb)
			}
			w[8] = float32(math.Ldexp(a, sc))
			w[9], w[10] = float32(math.Sin(a)), float32(math.Cos(a))
			w[11] = float32(math.Max(a-b, 0))
			if math.IsNaN(b) {
				w[11] = float32(math.NaN())
			}
			wantI[2*i] = -1 // checked below
			if a == 0 {
				wantI[2*i+1] = math.MinInt32
			} else {
				wantI[2*i+1] = int32(math.Ilogb(a))
			}
			wantD[i] = a * b / 3
		}
		k := e.kernel(edgesSrc, "edges")
		do, di, dd := zeros[float32](e, 12*n), zeros[int32](e, 2*n), zeros[float64](e, n)
		e.launch(k, cuda.Linear(n, 64), up(e, xs), up(e, ys), do, di, dd, int32(n))
		got, gotI := down(e, do), down(e, di)
		names := []string{"fminf", "fmaxf", "copysignf", "truncf", "roundf", "rintf", "nearbyintf", "remquof", "scalbnf", "sinf", "cosf", "fdimf"}
		for i := range n {
			for j, name := range names {
				g, w := got[12*i+j], want[12*i+j]
				tol := float32(0)
				if j == 9 || j == 10 {
					tol = 2e-7
				}
				nanOK := math.IsNaN(float64(g)) == math.IsNaN(float64(w))
				if !nanOK || !math.IsNaN(float64(w)) && math.Abs(float64(g-w)) > float64(tol) || w == 0 && j == 2 && math.Signbit(float64(g)) != math.Signbit(float64(w)) {
					e.t.Errorf("%s(%g, %g) = %g, want %g", name, xs[i], ys[i], g, w)
				}
			}
			a, b := float64(xs[i]), float64(ys[i])
			if !math.IsNaN(b) && !math.IsInf(b, 0) && b != 0 {
				// remquo's quotient: the sign of a/b and at least its three low bits
				n := math.Round((a - math.Remainder(a, b)) / b)
				q := gotI[2*i]
				low := int32(math.Mod(math.Abs(n), 8))
				if q != 0 && (q < 0) != (n < 0) || max(q, -q)&7 != low {
					e.t.Errorf("remquof(%g, %g) quotient %d, want low bits of %g", a, b, q, n)
				}
			}
			if gotI[2*i+1] != wantI[2*i+1] {
				e.t.Errorf("ilogbf(%g) = %d, want %d", a, gotI[2*i+1], wantI[2*i+1])
			}
		}
		same(e, "long double", down(e, dd), wantD, 1e-15)
	})
}

const ftzSrc = `
extern "C" __global__ void tiny(const float *x, const float *y, float *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float a = x[i], b = y[i];
	o[4 * i] = a * b;
	o[4 * i + 1] = a + b;
	o[4 * i + 2] = sqrtf(fabsf(a));
	o[4 * i + 3] = a / b;
}`

// Subnormal operands and results, kept by default and flushed to zero
// under -ftz=true.
func TestSubnormalsAndFlushToZero(t *testing.T) {
	forArchs(t, func(e *env) {
		xs := []float32{1e-40, -2e-39, 1e-20, 3e-30, 1.5e-38, 1, -5e-45, 2e-38}
		ys := []float32{2, 0.5, 1e-19, -1e-9, 0.75, 1e-40, 3, 4}
		n := len(xs)
		flush := func(v float32) float32 {
			if math.Abs(float64(v)) < 0x1p-126 {
				return float32(math.Copysign(0, float64(v)))
			}
			return v
		}
		for _, ftz := range []bool{false, true} {
			want := make([]float32, 4*n)
			for i := range n {
				a, b := xs[i], ys[i]
				if ftz {
					a, b = flush(a), flush(b)
				}
				want[4*i], want[4*i+1] = a*b, a+b
				want[4*i+2] = float32(math.Sqrt(math.Abs(float64(a))))
				want[4*i+3] = float32(float64(a) / float64(b))
				if ftz {
					for j := range 4 {
						want[4*i+j] = flush(want[4*i+j])
					}
				}
			}
			opt := nvrtc.WithOptions("-ftz=false", "-prec-div=true", "-prec-sqrt=true")
			if ftz {
				opt = nvrtc.WithOptions("-ftz=true", "-prec-div=true", "-prec-sqrt=true")
			}
			k := e.kernel(ftzSrc, "tiny", opt, fmadOff)
			do := zeros[float32](e, 4*n)
			e.launch(k, cuda.Linear(n, 32), up(e, xs), up(e, ys), do, int32(n))
			got := down(e, do)
			for i := range got {
				if got[i] != want[i] {
					e.t.Errorf("ftz=%v: element %d of (%g, %g) = %g, want %g", ftz, i%4, xs[i/4], ys[i/4], got[i], want[i])
				}
			}
		}
	})
}

const cas16Src = `
extern "C" __global__ void __launch_bounds__(128) cas16(unsigned short *c, const unsigned *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned short *p = c + x[i] % 37u;
	unsigned short old = *p, assumed;
	do {
		assumed = old;
		old = atomicCAS(p, assumed, (unsigned short)(assumed + 3u));
	} while (old != assumed);
	if (i % 97 == 0) __nanosleep(100);
}`

// A 16-bit compare-and-swap loop (atom.cas.b16, sm_70 and later) on
// neighbouring halfword counters, which must not disturb each other.
func TestAtomicCAS16(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 4000
		x := ints(n, 307, 1<<20)
		want := make([]uint16, 38)
		for _, v := range x {
			want[v%37] += 3
		}
		want[37] = 0xbeef
		init := make([]uint16, 38)
		init[37] = 0xbeef
		k := e.kernel(cas16Src, "cas16")
		dc := up(e, init)
		e.launch(k, cuda.Linear(n, 128), dc, up(e, x), int32(n))
		same(e, "counters", down(e, dc), want, 0)
	})
}

const printf2Src = `
extern "C" __global__ void fmts(long long big, unsigned long long ubig, double x, const int *p) {
	if (threadIdx.x == 0)
		printf("lld=%lld llu=%llu e=%e g=%g E=%.3E o=%o X=%X plus=%+d pad=[%-6d] pct=%% p=%p s=%.2s\n",
			big, ubig, x, x, x, 511, 48879, 42, -7, p, "abcdef");
}`

// printf with 64-bit integers, %e/%g/%E, octal, upper-case hex, flags and
// widths, a pointer and a string precision.
func TestPrintfFormats(t *testing.T) {
	forArchs(t, func(e *env) {
		k := e.kernel(printf2Src, "fmts")
		buf := zeros[int32](e, 4)
		out := captureStdout(e.t, func() {
			e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, int64(-1234567890123), uint64(18446744073709551615), 6.02214076e23, buf)
			if err := e.s.Synchronize(); err != nil {
				e.t.Fatal(err)
			}
		})
		out = strings.TrimSpace(out)
		prefix := "lld=-1234567890123 llu=18446744073709551615 e=6.022141e+23 g=6.02214e+23 E=6.022E+23 o=777 X=BEEF plus=+42 pad=[-7    ] pct=% p="
		if !strings.HasPrefix(out, prefix) || !strings.HasSuffix(out, " s=ab") || strings.Count(out, "\n") != 0 {
			e.t.Fatalf("printed %q, want %q<pointer> s=ab", out, prefix)
		}
		ptr := strings.TrimSuffix(strings.TrimPrefix(out, prefix), " s=ab")
		if !strings.Contains(strings.ToLower(ptr), fmt.Sprintf("%x", buf.Ptr())) {
			e.t.Errorf("pointer printed as %q, want one showing %#x", ptr, buf.Ptr())
		}
	})
}

// Line information (.file and .loc) and full device debug information
// (-G: no optimisation, .section .debug_* blocks) in the PTX.
func TestDebugInfoBuilds(t *testing.T) {
	forArchs(t, func(e *env) {
		for _, opt := range [][]string{{"-lineinfo"}, {"-G"}, {"-G", "-lineinfo", "--use_fast_math"}} {
			rows, cols := 5, 70
			x := floats(rows*cols, 331)
			want := make([]float32, rows*cols)
			for r := range rows {
				m, s := math.Inf(-1), 0.0
				for _, v := range x[r*cols : (r+1)*cols] {
					m = math.Max(m, float64(v))
				}
				for _, v := range x[r*cols : (r+1)*cols] {
					s += math.Exp(float64(v) - m)
				}
				for j, v := range x[r*cols : (r+1)*cols] {
					want[r*cols+j] = float32(math.Exp(float64(v)-m) / s)
				}
			}
			k := e.kernel(onlineSoftmaxSrc, "osoftmax", nvrtc.WithOptions(opt...))
			dy := zeros[float32](e, rows*cols)
			e.launch(k, cuda.Linear(rows*32, 64), up(e, x), dy, int32(rows), int32(cols))
			same(e, fmt.Sprint("softmax ", opt), down(e, dy), want, 1e-5)
		}
	})
}

const gridConstSrc = `
struct Params { float scale; int n; float w[8]; };
__device__ __noinline__ float pick(const float *w, int k) { return w[k]; }
extern "C" __global__ void gc(const __grid_constant__ Params p, const float *x, float *y, float2 *acc, int *o) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	__prof_trigger(3);
	if (i < p.n) {
		y[2 * i] = x[i] * p.scale + p.w[i & 7];
		y[2 * i + 1] = pick(p.w, (i * 5) & 7); // the parameter's generic address
	}
	unsigned lane = threadIdx.x & 31;
	int v = __shfl_sync(0xffffffffu, (int)lane * 3 - 40, (lane + 1) & 7, 8);
	bool ge;
	int *r = o + 6 * i;
	r[0] = v;
#if __CUDACC_VER_MAJOR__ >= 12
	r[1] = __vimax3_s32(v, -v, 5);
	r[2] = __viaddmax_s32_relu(v, 1, -3);
	r[3] = __vibmax_s32(v, 7, &ge);
	r[5] = __vimin_s32_relu(v, 9);
#else
	r[1] = max(max(v, -v), 5);
	r[2] = max(max(v + 1, -3), 0);
	r[3] = max(v, 7);
	ge = v >= 7;
	r[5] = max(min(v, 9), 0);
#endif
	r[4] = ge;
#if __CUDA_ARCH__ >= 800
	r[5] += __reduce_add_sync(0xffffffffu, v) * 1000;
#endif
#if __CUDA_ARCH__ >= 900 && (__CUDACC_VER_MAJOR__ > 12 || __CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4)
	atomicAdd(acc, make_float2(1.0f, 2.0f));
	atomicAdd((float4 *)(acc + 2), make_float4(0.5f, -1.0f, 0.25f, 3.0f));
#elif __CUDA_ARCH__ >= 900
	float *a = (float *)acc;
	atomicAdd(a, 1.0f); atomicAdd(a + 1, 2.0f);
	atomicAdd(a + 4, 0.5f); atomicAdd(a + 5, -1.0f); atomicAdd(a + 6, 0.25f); atomicAdd(a + 7, 3.0f);
#endif
	__threadfence_system();
}`

// A __grid_constant__ parameter read directly and through its address
// in a called function, a shuffle of width 8, the DPX integer max/min
// intrinsics (emulated before sm_90; NVRTC 11 lacks them), __reduce_add_sync
// on sm_80 and later, vector float atomics (red.global.add.v2/v4.f32) on
// sm_90 with NVRTC 12.4 and later,
// __prof_trigger and __threadfence_system.
func TestGridConstantDPXAndVectorAtomics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 256 // threads; the kernel's p.n is smaller
		x := floats(n, 341)
		type params struct {
			Scale float32
			N     int32
			W     [8]float32
		}
		p := params{Scale: 1.5, N: 150, W: [8]float32{1, -2, 3, -4, 5.5, 6, -7, 8}}
		want := make([]float32, 2*n)
		for i := range int(p.N) {
			want[2*i] = x[i]*p.Scale + p.W[i&7]
			want[2*i+1] = p.W[(i*5)&7]
		}
		sm80 := e.arch != "compute_75"
		wantO := make([]int32, 6*n)
		for i := range n {
			lane := i % 32
			src := lane&^7 | (lane+1)&7
			v := int32(src*3 - 40)
			r := wantO[6*i:]
			r[0] = v
			r[1] = max(v, -v, 5)
			r[2] = max(v+1, -3, 0)
			r[3] = max(v, 7)
			if v >= 7 {
				r[4] = 1
			}
			r[5] = max(min(v, 9), 0)
			if sm80 {
				s := int32(0)
				for l := range 32 {
					s += int32((l&^7|(l+1)&7)*3 - 40)
				}
				r[5] += s * 1000
			}
		}
		k := e.kernel(gridConstSrc, "gc", fmadOff)
		dy, dacc, do := zeros[float32](e, 2*n), zeros[float32](e, 8), zeros[int32](e, 6*n)
		e.launch(k, cuda.Linear(n, 64), p, up(e, x), dy, dacc, do)
		same(e, "y", down(e, dy), want, 0)
		same(e, "ints", down(e, do), wantO, 0)
		wantAcc := make([]float32, 8)
		if e.arch == "compute_90" {
			threads := float32(cuda.Blocks(n, 64) * 64)
			wantAcc = []float32{threads, 2 * threads, 0, 0, 0.5 * threads, -threads, 0.25 * threads, 3 * threads}
		}
		same(e, "vector atomics", down(e, dacc), wantAcc, 0)
	})
}

const halfMathSrc = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void hm(const float *x, float *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half h = __float2half(x[i]);
	__half2 h2 = __floats2half2_rn(x[i], -x[i] * 0.5f);
	__nv_bfloat16 b = __float2bfloat16(x[i]);
	__nv_bfloat162 b2 = __floats2bfloat162_rn(x[i], 0.25f);
	float *r = o + 24 * i;
	r[0] = __half2float(hexp(h)); r[1] = __half2float(hexp2(h)); r[2] = __half2float(hexp10(h));
	r[3] = __half2float(hlog(__habs(h))); r[4] = __half2float(hlog2(__habs(h))); r[5] = __half2float(hlog10(__habs(h)));
	r[6] = __half2float(hsin(h)); r[7] = __half2float(hcos(h)); r[8] = __half2float(hsqrt(__habs(h)));
	r[9] = __half2float(hrsqrt(__habs(h))); r[10] = __half2float(hrcp(h)); r[11] = __half2float(hfloor(h));
	r[12] = __half2float(hceil(h)); r[13] = __half2float(htrunc(h)); r[14] = __half2float(hrint(h));
	__half2 e2 = h2exp(h2), s2 = h2sin(h2);
	r[15] = __low2float(e2); r[16] = __high2float(s2);
	r[17] = __bfloat162float(hexp(b)); r[18] = __bfloat162float(hsqrt(__habs(b))); r[19] = __bfloat162float(hrcp(b));
	__nv_bfloat162 bl = h2log2(b2);
	r[20] = __low2float(bl); r[21] = __high2float(bl);
	r[22] = __bfloat162float(hfloor(b));
	r[23] = __half2float(__hmax_nan(h, __float2half(0.1f)));
}
`

// The half and bfloat16 maths functions of cuda_fp16.h and cuda_bf16.h:
// exponentials, logarithms, sine and cosine, roots and reciprocals (on
// approximate float instructions inside), the roundings to integer
// (cvt.rmi.f16.f16 and kin), paired forms and __hmax_nan.
func TestHalfMathFunctions(t *testing.T) {
	forArchs(t, func(e *env) {
		x := floats(256, 347)
		x = append(x, 0.5, -0.5, 1.5, -2.5, 2.5, 0, 1)
		n := len(x)
		k := e.kernel(halfMathSrc, "hm", nvrtc.WithToolkitHeaders())
		do := zeros[float32](e, 24*n)
		e.launch(k, cuda.Linear(n, 64), up(e, x), do, int32(n))
		got := down(e, do)
		for i := range n {
			h, b := f16(float64(x[i])), bf16(float64(x[i]))
			ah, ab := math.Abs(h), math.Abs(b)
			want := []float64{
				f16(math.Exp(h)), f16(math.Exp2(h)), f16(math.Pow(10, h)),
				f16(math.Log(ah)), f16(math.Log2(ah)), f16(math.Log10(ah)),
				f16(math.Sin(h)), f16(math.Cos(h)), f16(math.Sqrt(ah)),
				f16(1 / math.Sqrt(ah)), f16(1 / h), math.Floor(h),
				math.Ceil(h), math.Trunc(h), math.RoundToEven(h),
				f16(math.Exp(h)), f16(math.Sin(f16(-float64(x[i]) * 0.5))),
				bf16(math.Exp(b)), bf16(math.Sqrt(ab)), bf16(1 / b),
				bf16(math.Log2(b)), bf16(math.Log2(0.25)),
				math.Floor(b),
				math.Max(h, f16(0.1)),
			}
			for j, w := range want {
				g := float64(got[24*i+j])
				tol := 2.5e-3 // a half's ulp, the approximate functions' error
				if j >= 17 && j <= 22 {
					tol = 1.6e-2
				}
				switch {
				case math.IsNaN(w) || math.IsNaN(g):
					if math.IsNaN(w) != math.IsNaN(g) {
						e.t.Errorf("function %d of %g = %g, want %g", j, x[i], g, w)
					}
				case math.IsInf(w, 0) || math.Abs(w) > 65504:
					if math.Abs(g) < 60000 || math.Signbit(g) != math.Signbit(w) {
						e.t.Errorf("function %d of %g = %g, want %g", j, x[i], g, w)
					}
				case math.Abs(g-w) > tol*max(1, math.Abs(w)):
					e.t.Errorf("function %d of %g = %g, want %g", j, x[i], g, w)
				}
			}
		}
	})
}

const virtualSrc = `
struct Shape {
	__device__ virtual float area() const = 0;
	__device__ virtual int sides() const { return 0; }
	__device__ virtual ~Shape() {}
};
struct Rect : Shape {
	float w, h;
	__device__ Rect(float w, float h) : w(w), h(h) {}
	__device__ float area() const override { return w * h; }
	__device__ int sides() const override { return 4; }
};
struct Tri : Shape {
	float b, h;
	__device__ Tri(float b, float h) : b(b), h(h) {}
	__device__ float area() const override { return 0.5f * b * h; }
	__device__ int sides() const override { return 3; }
};
struct Circle : Shape {
	float r;
	__device__ Circle(float r) : r(r) {}
	__device__ float area() const override { return 3.0f * r * r; }
};
struct Big { float v[1000]; int n; };
__device__ __noinline__ float4 stats(const Shape &s, float k) {
	return make_float4(s.area(), (float)s.sides(), s.area() * k, k);
}
extern "C" __global__ void shapes(const Big big, const float *x, float4 *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	alignas(8) unsigned char buf[sizeof(Rect) > sizeof(Tri) ? sizeof(Rect) : sizeof(Tri)];
	Shape *s;
	switch (i % 3) {
	case 0: s = new (buf) Rect(x[i], 2.0f); break;
	case 1: s = new (buf) Tri(x[i], 3.0f); break;
	default: s = new (buf) Circle(x[i]); break;
	}
	out[i] = stats(*s, big.v[i % big.n]);
	s->~Shape();
}`

// Virtual functions: objects built by placement new in local memory,
// calls through their vtables (module-scope tables of function
// addresses), a float4 returned from a called function, and a kernel
// parameter of 4 KB, near the limit of CUDA before 12.1.
func TestVirtualDispatchAndBigParameter(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		x := floats(n, 353)
		type big struct {
			V [1000]float32
			N int32
		}
		var b big
		b.N = 937
		for i := range b.V {
			b.V[i] = float32(i%97) * 0.25
		}
		want := make([]float32, 4*n)
		for i := range n {
			var area float32
			var sides float32
			switch i % 3 {
			case 0:
				area, sides = x[i]*2, 4
			case 1:
				area, sides = 0.5*x[i]*3, 3
			default:
				area = 3 * x[i] * x[i]
			}
			k := b.V[i%int(b.N)]
			want[4*i], want[4*i+1], want[4*i+2], want[4*i+3] = area, sides, area*k, k
		}
		k := e.kernel(virtualSrc, "shapes", fmadOff)
		dout := zeros[float32](e, 4*n)
		e.launch(k, cuda.Linear(n, 64), b, up(e, x), dout, int32(n))
		same(e, "shapes", down(e, dout), want, 1e-6)
	})
}

const spinLockSrc = `
extern "C" __global__ void locked(int *lock, unsigned long long *sum, unsigned *order, const unsigned *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	// each thread takes the lock in turn: on sm_70 and later a warp's
	// lanes are scheduled independently, so the holder runs while the
	// others spin
	while (atomicCAS(lock, 0, 1) != 0) {
	}
	__threadfence();
	volatile unsigned long long *s = sum;
	unsigned long long v = *s;
	*s = v * 31 + x[i];
	volatile unsigned *o = order;
	o[0] = o[0] + 1;
	__threadfence();
	atomicExch(lock, 0);
}`

// A global spin lock taken by every thread, lanes of one warp included:
// the critical sections run one at a time, whatever the order.
func TestSpinLockPerThread(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 96
		x := ints(n, 359, 1000)
		k := e.kernel(spinLockSrc, "locked")
		dsum, dcount := zeros[uint64](e, 1), zeros[uint32](e, 1)
		e.launch(k, cuda.Linear(n, 64), zeros[int32](e, 1), dsum, dcount, up(e, x), int32(n))
		if c := down(e, dcount)[0]; c != uint32(n) {
			e.t.Errorf("%d critical sections ran, want %d", c, n)
		}
		if s := down(e, dsum)[0]; s == 0 {
			e.t.Errorf("sum = 0")
		}
	})
}

const warpHandoffSrc = `
extern "C" __global__ void handoff(const int *x, int *y, int *flags, int *tmp) {
	// the data go through global memory: racecheck would call a flag in
	// shared memory a hazard
	int *data = tmp + blockIdx.x * 32;
	volatile int &ready = flags[blockIdx.x]; // zero before the launch
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	if (warp == 1) {
		// the second warp produces
		data[lane] = x[blockIdx.x * 32 + lane] * 3;
		__threadfence_block();
		__syncwarp();
		if (lane == 0) ready = 1;
	} else {
		// the first waits for it, with no barrier between them
		while (ready == 0) {
		}
		__threadfence_block();
		y[blockIdx.x * 32 + lane] = ((volatile int *)data)[31 - lane] + 1;
	}
}`

// One warp of a block waits on a flag that another warp sets after
// writing its data, with no __syncthreads in the kernel: the warps of a block run
// at once on a GPU.
func TestWarpHandoffWithoutBarrier(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks := 3
		x := ints(32*blocks, 361, 1000)
		xs := make([]int32, len(x))
		want := make([]int32, len(x))
		for i, v := range x {
			xs[i] = int32(v)
		}
		for b := range blocks {
			for l := range 32 {
				want[32*b+l] = xs[32*b+31-l]*3 + 1
			}
		}
		k := e.kernel(warpHandoffSrc, "handoff")
		dy := zeros[int32](e, len(x))
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 64}}, up(e, xs), dy, zeros[int32](e, blocks), zeros[int32](e, 32*blocks))
		same(e, "y", down(e, dy), want, 0)
	})
}

const halfConvSrc = `
#include <cuda_fp16.h>
extern "C" __global__ void hc(const float *x, const int *iv, int *o, float *f, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half h = __float2half(x[i]);
	int *r = o + 8 * i;
	r[0] = __half2int_rn(h); r[1] = __half2int_rz(h); r[2] = __half2int_rd(h); r[3] = __half2int_ru(h);
	r[4] = (int)__half2uint_rd(h); r[5] = (int)__half2short_rn(h); r[6] = (int)__half2ll_ru(h); r[7] = __half_as_short(h);
	float *q = f + 4 * i;
	int v = iv[i];
	q[0] = __half2float(__int2half_rn(v)); q[1] = __half2float(__int2half_rz(v));
	q[2] = __half2float(__int2half_rd(v)); q[3] = __half2float(__int2half_ru(v));
}`

// Conversions between half and integers in each rounding mode
// (cvt.rni.s32.f16, cvt.rm.f16.s32 and kin), saturating at the
// destination's range, and __half_as_short.
func TestHalfIntegerConversions(t *testing.T) {
	forArchs(t, func(e *env) {
		x := floats(200, 367)
		for i := range x {
			x[i] *= 300
		}
		x = append(x, 2.5, -2.5, 3.5, -0.5, 0.5, 65504, -65504)
		n := len(x)
		r := rng(368)
		iv := make([]int32, n)
		for i := range iv {
			iv[i] = int32(r.next()%140001) - 70000
		}
		iv[0], iv[1], iv[2], iv[3] = 2049, -2051, 65519, 65520
		want := make([]int32, 8*n)
		wantF := make([]float32, 4*n)
		// directed rounds v to a half's grid toward -inf (down) or +inf
		directed := func(v float64, up bool) float64 {
			a := math.Abs(v)
			if a == 0 {
				return 0
			}
			e := math.Floor(math.Log2(a))
			sp := math.Max(math.Ldexp(1, int(e)-10), math.Ldexp(1, -24))
			q := math.Floor(v / sp)
			if up {
				q = math.Ceil(v / sp)
			}
			res := q * sp
			if res > 65504 {
				return math.Inf(1)
			}
			if res < -65504 {
				return math.Inf(-1)
			}
			return res
		}
		sat := func(v float64) float64 { // directed rounding to a finite half stays finite toward zero
			return math.Max(-65504, math.Min(65504, v))
		}
		for i := range n {
			h := f16(float64(x[i]))
			w := want[8*i:]
			w[0], w[1], w[2], w[3] = int32(math.RoundToEven(h)), int32(math.Trunc(h)), int32(math.Floor(h)), int32(math.Ceil(h))
			w[4] = int32(max(math.Floor(h), 0))
			w[5] = int32(max(-32768, min(32767, math.RoundToEven(h))))
			w[6] = int32(math.Ceil(h))
			w[7] = int32(int16(halfBits(h)))
			v := float64(iv[i])
			q := wantF[4*i:]
			q[0] = float32(f16(v))
			if math.Abs(f16(v)) > 65504 {
				q[0] = float32(math.Copysign(math.Inf(1), v))
			}
			down, up := directed(v, false), directed(v, true)
			if v >= 0 {
				q[1] = float32(sat(down))
			} else {
				q[1] = float32(sat(up))
			}
			q[2], q[3] = float32(down), float32(up)
			if v > 0 {
				q[2] = float32(sat(down))
			} else {
				q[3] = float32(sat(up))
			}
		}
		k := e.kernel(halfConvSrc, "hc", nvrtc.WithToolkitHeaders())
		do, df := zeros[int32](e, 8*n), zeros[float32](e, 4*n)
		e.launch(k, cuda.Linear(n, 64), up(e, x), up(e, iv), do, df, int32(n))
		same(e, "half to integer", down(e, do), want, 0)
		got := down(e, df)
		for i := range got {
			if got[i] != wantF[i] {
				e.t.Errorf("integer %d to half, mode %d = %g, want %g", iv[i/4], i%4, got[i], wantF[i])
			}
		}
	})
}
