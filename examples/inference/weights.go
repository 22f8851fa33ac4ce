package main

import (
	"math"

	"github.com/gocuda/gocuda/cuda"
)

// Layer is one layer's weights on the host: row-major W1 (d×4d) and W2
// (4d×d) with their biases in bfloat16, the layernorm's scale and shift
// in float32.
type Layer struct {
	W1, B1, W2, B2 []cuda.BFloat16
	Gamma, Beta    []float32
}

// hashed returns n numbers in [-1, 1)·scale + offset, element i a hash
// of (i, tensor, seed). The hash uses only 32-bit values and multipliers
// below 2³¹, so bench/python/inference_server.py computes the same bits
// with int64 tensor arithmetic: both services hold the same model, and
// their answers can be compared.
func hashed(n, tensor int, seed uint64, scale, offset float32) []float32 {
	const m32 = 0xffffffff
	out := make([]float32, n)
	for i := range out {
		h := (uint64(i)*0x9e3779b1 + uint64(tensor)*0x85ebca77 + seed) & m32
		h ^= h >> 16
		h = h * 0x7feb352d & m32
		h ^= h >> 15
		h = h * 0x5bd1e995 & m32
		h ^= h >> 16
		// 24 bits: exact in float32, as is 2u-1. The conversion rounds
		// the product before the sum, which Go could otherwise fuse.
		u := float32(h>>8) * (1.0 / (1 << 24))
		out[i] = float32((2*u-1)*scale) + offset
	}
	return out
}

// NewLayers makes the weights of layers layers of width d from seed.
func NewLayers(d, layers int, seed uint64) []Layer {
	s1 := float32(1 / math.Sqrt(float64(d)))
	s2 := float32(1 / math.Sqrt(float64(4*d)))
	ls := make([]Layer, layers)
	for l := range ls {
		t := 6 * l
		ls[l] = Layer{
			W1:    cuda.ToBFloat16s(hashed(d*4*d, t, seed, s1, 0)),
			B1:    cuda.ToBFloat16s(hashed(4*d, t+1, seed, 0.1, 0)),
			W2:    cuda.ToBFloat16s(hashed(4*d*d, t+2, seed, s2, 0)),
			B2:    cuda.ToBFloat16s(hashed(d, t+3, seed, 0.1, 0)),
			Gamma: hashed(d, t+4, seed, 0.1, 1),
			Beta:  hashed(d, t+5, seed, 0.1, 0),
		}
	}
	return ls
}
