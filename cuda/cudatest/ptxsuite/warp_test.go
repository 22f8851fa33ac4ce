package ptxsuite_test

import (
	"math/bits"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const voteSrc = `
extern "C" __global__ void votes(const int *x, unsigned *out) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	int v = x[t];
	unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
	int all = __all_sync(0xffffffffu, v > -1000), any = __any_sync(0xffffffffu, v == 7);
	unsigned peers = __match_any_sync(0xffffffffu, v % 4);
	unsigned active = 0;
	if (v % 3 == 0) active = __activemask();
	out[4 * t + 0] = ballot;
	out[4 * t + 1] = all | (any << 1);
	out[4 * t + 2] = peers;
	out[4 * t + 3] = active;
}`

// Votes, ballots, __match_any_sync, and __activemask inside a branch.
func TestWarpVoteAndMatch(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 256
		x := make([]int32, n)
		r := rng(53)
		for i := range x {
			x[i] = int32(r.next()%21) - 10
		}
		want := make([]uint32, 4*n)
		for w := 0; w < n; w += 32 {
			var ballot, three uint32
			all, any := uint32(1), uint32(0)
			for l := range 32 {
				v := x[w+l]
				if v > 0 {
					ballot |= 1 << l
				}
				if v == 7 {
					any = 1
				}
				if v%3 == 0 {
					three |= 1 << l
				}
			}
			for l := range 32 {
				var peers uint32
				for m := range 32 {
					if x[w+m]%4 == x[w+l]%4 {
						peers |= 1 << m
					}
				}
				want[4*(w+l)+0] = ballot
				want[4*(w+l)+1] = all | any<<1
				want[4*(w+l)+2] = peers
				if x[w+l]%3 == 0 {
					want[4*(w+l)+3] = three
				}
			}
		}
		k := e.kernel(voteSrc, "votes")
		dx, out := up(e, x), zeros[uint32](e, 4*n)
		e.launch(k, cuda.Linear(n, 64), dx, out)
		same(e, "votes", down(e, out), want, 0)
	})
}

const bitsSrc = `
extern "C" __global__ void bitops(const unsigned *x, const unsigned long long *y, unsigned *out, unsigned long long *out64, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned v = x[i];
	unsigned long long w = y[i];
	out[8 * i + 0] = __popc(v);
	out[8 * i + 1] = __clz(v);
	out[8 * i + 2] = __brev(v);
	out[8 * i + 3] = __ffs(v);
	out[8 * i + 4] = __umulhi(v, 0x9e3779b9u);
	out[8 * i + 5] = __byte_perm(v, 0x01234567u, 0x5140);
	out[8 * i + 6] = __funnelshift_l(v, 0xdeadbeefu, i & 31);
	out[8 * i + 7] = (v >> 7) & 0x3ff;
	out64[3 * i + 0] = __umul64hi(w, 0x9e3779b97f4a7c15ull);
	out64[3 * i + 1] = __popcll(w) + ((unsigned long long)__clzll(w) << 32);
	out64[3 * i + 2] = (w * 0x100000001b3ull) ^ (w >> 33) ^ (unsigned long long)(((long long)w) >> 60);
}`

// Bit manipulation intrinsics, 32- and 64-bit, and 64-bit multiply-high.
func TestBitIntrinsics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 333
		x := ints(n, 59, 1<<31)
		r := rng(61)
		y := make([]uint64, n)
		for i := range y {
			y[i] = r.next()
			x[i] |= uint32(r.next()) & 0x80000000
		}
		x[0], y[0] = 0, 0
		want := make([]uint32, 8*n)
		want64 := make([]uint64, 3*n)
		for i, v := range x {
			ffs := uint32(0)
			if v != 0 {
				ffs = uint32(bits.TrailingZeros32(v)) + 1
			}
			hi, _ := bits.Mul32(v, 0x9e3779b9)
			sel := uint32(0x5140)
			bs := [8]uint32{v & 0xff, v >> 8 & 0xff, v >> 16 & 0xff, v >> 24, 0x67, 0x45, 0x23, 0x01}
			var perm uint32
			for k := range 4 {
				perm |= bs[sel>>(4*k)&7] << (8 * k)
			}
			sh := uint(i & 31)
			funnel := uint32((uint64(0xdeadbeef)<<32 | uint64(v)) << sh >> 32)
			for j, w := range []uint32{uint32(bits.OnesCount32(v)), uint32(bits.LeadingZeros32(v)), bits.Reverse32(v), ffs, hi, perm, funnel, v >> 7 & 0x3ff} {
				want[8*i+j] = w
			}
			w := y[i]
			h64, _ := bits.Mul64(w, 0x9e3779b97f4a7c15)
			want64[3*i+0] = h64
			want64[3*i+1] = uint64(bits.OnesCount64(w)) + uint64(bits.LeadingZeros64(w))<<32
			want64[3*i+2] = (w * 0x100000001b3) ^ (w >> 33) ^ uint64(int64(w)>>60)
		}
		k := e.kernel(bitsSrc, "bitops")
		dx, dy, out, out64 := up(e, x), up(e, y), zeros[uint32](e, 8*n), zeros[uint64](e, 3*n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, out, out64, int32(n))
		same(e, "bits", down(e, out), want, 0)
		got64 := down(e, out64)
		for i := range got64 {
			if got64[i] != want64[i] {
				e.t.Errorf("64-bit result %d = %#x, want %#x", i, got64[i], want64[i])
				break
			}
		}
	})
}
