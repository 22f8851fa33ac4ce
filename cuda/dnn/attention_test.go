//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

func TestAttentionForwardRefusesBadArgumentsBeforeCuDNN(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[cuda.Float16] { return allocIn[cuda.Float16](t, ctx, n) }
	a := dnn.Attention{Batch: 2, Heads: 2, SeqQ: 8, SeqKV: 16, HeadDim: 32}
	nq, nkv := 2*2*8*32, 2*2*16*32
	q, k, v, o := alloc(nq), alloc(nkv), alloc(nkv), alloc(nq)
	with := func(f func(a *dnn.Attention)) dnn.Attention {
		b := a
		f(&b)
		return b
	}
	var h *dnn.Handle
	for _, tc := range []struct {
		name       string
		a          dnn.Attention
		q, k, v, o *cuda.Slice[cuda.Float16]
		want       string
	}{
		{"zero batch", with(func(a *dnn.Attention) { a.Batch = 0 }), q, k, v, o, "Batch is 0: it must be positive"},
		{"head dim 12", with(func(a *dnn.Attention) { a.HeadDim = 12 }), q, k, v, o, "HeadDim 12: cuDNN's fused attention takes multiples of 8 up to 256"},
		{"head dim 264", with(func(a *dnn.Attention) { a.HeadDim = 264 }), q, k, v, o, "HeadDim 264"},
		{"NaN scale", with(func(a *dnn.Attention) { a.Scale = float32(math.NaN()) }), q, k, v, o, "scale NaN"},
		{"overflowing sizes", with(func(a *dnn.Attention) { a.Batch, a.Heads, a.SeqKV = 1<<20, 1<<20, 1<<20 }), q, k, v, o, "more than"},
		{"short Q", a, alloc(nq - 1), k, v, o, "Q needs 1024 elements but its Slice has 1023"},
		{"nil V", a, q, k, nil, o, "V has no data"},
		{"O is K", a, q, k, v, k, "O shares memory with Q, K or V"},
	} {
		checkRefused(t, tc.name, dnn.AttentionForward(h, tc.a, tc.q, tc.k, tc.v, tc.o), tc.want)
	}
	if err := dnn.AttentionForward(h, a, q, k, v, o); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("valid arguments on a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
}

// refAttention is softmax(scale·Q·Kᵀ)·V per batch and head in float64,
// from its definition, with key j left out of query i's softmax where
// causal and j > i; tensors packed BHSD.
func refAttention(a dnn.Attention, scale float64, q, k, v []float64) []float64 {
	D := a.HeadDim
	o := make([]float64, a.Batch*a.Heads*a.SeqQ*D)
	for bh := range a.Batch * a.Heads {
		qb, kb, ob := bh*a.SeqQ*D, bh*a.SeqKV*D, bh*a.SeqQ*D
		for i := range a.SeqQ {
			s := make([]float64, a.SeqKV)
			m := math.Inf(-1)
			for j := range a.SeqKV {
				if a.Causal && j > i {
					s[j] = math.Inf(-1)
					continue
				}
				var dot float64
				for d := range D {
					dot += q[qb+i*D+d] * k[kb+j*D+d]
				}
				s[j] = scale * dot
				m = math.Max(m, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			for d := range D {
				var acc float64
				for j := range s {
					acc += s[j] / sum * v[kb+j*D+d]
				}
				o[ob+i*D+d] = acc
			}
		}
	}
	return o
}

func testAttentionMatchesReference[T dnn.Half](t *testing.T) {
	s, h := gpuHandle(t)
	for i, a := range []dnn.Attention{
		{Batch: 2, Heads: 3, SeqQ: 64, SeqKV: 64, HeadDim: 64},
		{Batch: 1, Heads: 2, SeqQ: 33, SeqKV: 70, HeadDim: 128},
		{Batch: 2, Heads: 2, SeqQ: 50, SeqKV: 50, HeadDim: 64, Causal: true},
		{Batch: 1, Heads: 1, SeqQ: 16, SeqKV: 40, HeadDim: 32, Causal: true, Scale: 0.3},
	} {
		t.Run(fmt.Sprintf("%+v", a), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 41))
			nq, nkv := a.Batch*a.Heads*a.SeqQ*a.HeadDim, a.Batch*a.Heads*a.SeqKV*a.HeadDim
			qh, kh, vh := random[T](r, nq), random[T](r, nkv), random[T](r, nkv)
			o := filledSlice[T](t, s, nq, float32(math.NaN()))
			if err := dnn.AttentionForward(h, a, upload(t, s, qh), upload(t, s, kh), upload(t, s, vh), o); err != nil {
				t.Fatalf("AttentionForward: %v", err)
			}
			got := to64(download(t, s, o))
			scale := float64(a.Scale)
			if scale == 0 {
				scale = 1 / math.Sqrt(float64(a.HeadDim))
			}
			want := refAttention(a, scale, to64(qh), to64(kh), to64(vh))
			// The probabilities are rounded to T (2⁻¹¹ of each for
			// float16, 2⁻⁸ for bfloat16) before they weight V, whose
			// elements are below 1 in size: an error below that
			// rounding times Σ p = 1, four times over, plus O's own
			// rounding.
			var z T
			abs, rel := 4*0x1p-11, 0x1p-10
			if _, bf := any(z).(cuda.BFloat16); bf {
				abs, rel = 4*0x1p-8, 0x1p-7
			}
			bad := 0
			for i := range want {
				if d := math.Abs(got[i] - want[i]); !(d <= abs+rel*math.Abs(want[i])) {
					if bad < 5 {
						t.Errorf("O[%d] = %g, want %g", i, got[i], want[i])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d elements wrong", bad, len(want))
			}
		})
	}
}

func TestAttentionForwardFloat16MatchesReference(t *testing.T) {
	testAttentionMatchesReference[cuda.Float16](t)
}

func TestAttentionForwardBFloat16MatchesReference(t *testing.T) {
	testAttentionMatchesReference[cuda.BFloat16](t)
}
