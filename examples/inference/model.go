package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// kernelSource is the model's own kernels, compiled by NVRTC at start-up.
// A bfloat16 is handled as its bits (unsigned short), so the source needs
// no toolkit header.
const kernelSource = `
typedef unsigned short bf16;

__device__ float from_bf16(bf16 v) { return __uint_as_float((unsigned)v << 16); }

// Nearest, ties to even, as cuda.ToBFloat16 and torch round.
__device__ bf16 to_bf16(float f) {
	unsigned u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (bf16)((u >> 16) | 0x40u);
	return (bf16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

extern "C" __global__ void f32_to_bf16(const float *in, bf16 *out, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = to_bf16(in[i]);
}

extern "C" __global__ void bf16_to_f32(const bf16 *in, float *out, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = from_bf16(in[i]);
}

// block_sum returns the sum of v over the block, whose size is a power of
// two of at most 1024.
__device__ float block_sum(float v, float *red) {
	red[threadIdx.x] = v;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	float sum = red[0];
	__syncthreads();
	return sum;
}

// add_layernorm: x = layernorm(x + y)·gamma + beta, one block per row of
// d elements, in float32 between the bfloat16 loads and stores.
extern "C" __global__ void add_layernorm(bf16 *x, const bf16 *y, const float *gamma, const float *beta, unsigned d, float eps) {
	__shared__ float red[1024];
	bf16 *xr = x + (size_t)blockIdx.x * d;
	const bf16 *yr = y + (size_t)blockIdx.x * d;
	float s = 0;
	for (unsigned j = threadIdx.x; j < d; j += blockDim.x)
		s += from_bf16(xr[j]) + from_bf16(yr[j]);
	float mean = block_sum(s, red) / d;
	float q = 0;
	for (unsigned j = threadIdx.x; j < d; j += blockDim.x) {
		float v = from_bf16(xr[j]) + from_bf16(yr[j]) - mean;
		q += v * v;
	}
	float rstd = rsqrtf(block_sum(q, red) / d + eps);
	for (unsigned j = threadIdx.x; j < d; j += blockDim.x) {
		float v = from_bf16(xr[j]) + from_bf16(yr[j]) - mean;
		xr[j] = to_bf16(v * rstd * gamma[j] + beta[j]);
	}
}
`

// Eps is the layernorm's epsilon.
const Eps = 1e-5

// Config is the model's shape.
type Config struct {
	D, Layers, MaxBatch int
	Seed                uint64
}

// Model is a stack of layers on the GPU, each
//
//	h = GELU(x·W1 + b1)            cuBLASLt, bias and GELU in its epilogue
//	y = h·W2 + b2                  cuBLASLt, bias in its epilogue
//	x = layernorm(x + y)·γ + β     an NVRTC kernel
//
// in bfloat16 (float32 accumulation), for batches of 1 to MaxBatch rows.
// Each batch size has its CUDA graph, captured at its first use: the copy
// of the input from page-locked memory, the layers, the copy back.
type Model struct {
	cfg    Config
	Layers []Layer // the weights, on the host too: the tests' reference uses them

	s                      *cuda.Stream
	lt                     *blas.LtHandle
	toBF16, toF32, addNorm *cuda.Kernel
	block                  uint32 // add_layernorm's threads per row
	w                      []devLayer
	in, out                *cuda.Slice[float32]       // MaxBatch×D
	x, y                   *cuda.Slice[cuda.BFloat16] // MaxBatch×D
	h                      *cuda.Slice[cuda.BFloat16] // MaxBatch×4D

	mu      sync.Mutex    // Forward's: one batch at a time uses the buffers
	graphs  []*batchGraph // by batch size - 1; nil until captured
	closers []func() error
	err     error // the first error of NewModel's allocations
}

type devLayer struct {
	w1, b1, w2, b2 *cuda.Slice[cuda.BFloat16]
	gamma, beta    *cuda.Slice[float32]
}

// batchGraph is the graph of one batch size and the page-locked rows it
// copies in and out.
type batchGraph struct {
	exec    *cuda.GraphExec
	in, out *cuda.HostBuffer[float32]
}

// NewModel puts a model of cfg's shape, with weights from cfg.Seed, on
// the GPU of the given ordinal and compiles its kernels.
func NewModel(device int, cfg Config) (m *Model, err error) {
	if cfg.D < 1 || cfg.Layers < 1 || cfg.MaxBatch < 1 {
		return nil, fmt.Errorf("model: width %d, %d layers, batches of %d: each must be at least 1", cfg.D, cfg.Layers, cfg.MaxBatch)
	}
	m = &Model{cfg: cfg, Layers: NewLayers(cfg.D, cfg.Layers, cfg.Seed), graphs: make([]*batchGraph, cfg.MaxBatch)}
	defer func() {
		if err != nil {
			m.Close()
			m = nil
		}
	}()
	if m.s, err = cuda.OpenStream(device); err != nil {
		return nil, err
	}
	m.closers = append(m.closers, m.s.Close)
	if m.lt, err = blas.NewLt(m.s); err != nil {
		return nil, err
	}
	m.closers = append(m.closers, m.lt.Close)
	if err := m.loadKernels(); err != nil {
		return nil, err
	}
	for m.block = 32; m.block < 256 && int(m.block) < cfg.D; m.block *= 2 {
	}

	d, maxB := cfg.D, cfg.MaxBatch
	m.in, m.out = alloc[float32](m, maxB*d, nil), alloc[float32](m, maxB*d, nil)
	m.x, m.y = alloc[cuda.BFloat16](m, maxB*d, nil), alloc[cuda.BFloat16](m, maxB*d, nil)
	m.h = alloc[cuda.BFloat16](m, maxB*4*d, nil)
	for _, l := range m.Layers {
		m.w = append(m.w, devLayer{
			w1: alloc(m, 0, l.W1), b1: alloc(m, 0, l.B1),
			w2: alloc(m, 0, l.W2), b2: alloc(m, 0, l.B2),
			gamma: alloc(m, 0, l.Gamma), beta: alloc(m, 0, l.Beta),
		})
	}
	return m, m.err
}

// alloc makes a slice of n elements on m's stream, or a copy of src,
// which m frees on Close; after an error it does nothing.
func alloc[T cuda.Element](m *Model, n int, src []T) *cuda.Slice[T] {
	if m.err != nil {
		return nil
	}
	var s *cuda.Slice[T]
	if src != nil {
		s, m.err = cuda.AllocSliceFrom(m.s, src)
	} else {
		s, m.err = cuda.AllocSlice[T](m.s, n)
	}
	if m.err == nil {
		m.closers = append(m.closers, s.Close)
	}
	return s
}

func (m *Model) loadKernels() error {
	arch, err := nvrtc.ArchOf(m.s.Context().Device())
	if err != nil {
		return err
	}
	prog, err := nvrtc.Compile(kernelSource, nvrtc.WithArch(arch))
	if err != nil {
		return err
	}
	mod, err := cuda.LoadModule(m.s.Context(), prog.PTX)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, mod.Close)
	for _, k := range []struct {
		name string
		k    **cuda.Kernel
	}{{"f32_to_bf16", &m.toBF16}, {"bf16_to_f32", &m.toF32}, {"add_layernorm", &m.addNorm}} {
		if *k.k, err = mod.Function(k.name); err != nil {
			return err
		}
	}
	return nil
}

// Forward computes the model's output for each row of in (D floats
// each, at most MaxBatch rows) into the row of out of the same index.
func (m *Model) Forward(in, out [][]float32) error {
	n, d := len(in), m.cfg.D
	if n < 1 || n > m.cfg.MaxBatch || len(out) != n {
		return fmt.Errorf("model: a batch of %d rows in and %d out: want as many, 1 to %d", n, len(out), m.cfg.MaxBatch)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g, err := m.graph(n)
	if err != nil {
		return err
	}
	rows := g.in.Slice()
	for i, r := range in {
		if len(r) != d || len(out[i]) != d {
			return fmt.Errorf("model: row %d has %d floats in and %d out, want %d", i, len(r), len(out[i]), d)
		}
		copy(rows[i*d:], r)
	}
	if err := g.exec.Launch(m.s); err != nil {
		return err
	}
	if err := m.s.Synchronize(); err != nil {
		return err
	}
	rows = g.out.Slice()
	for i := range out {
		copy(out[i], rows[i*d:(i+1)*d])
	}
	return nil
}

// Warm captures the graphs of every batch size now rather than at their
// first batch.
func (m *Model) Warm() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := 1; n <= m.cfg.MaxBatch; n++ {
		if _, err := m.graph(n); err != nil {
			return err
		}
	}
	return nil
}

// graph returns the graph of batches of n rows, capturing it the first
// time. m.mu is held.
func (m *Model) graph(n int) (*batchGraph, error) {
	if g := m.graphs[n-1]; g != nil {
		return g, nil
	}
	d := m.cfg.D
	g := &batchGraph{}
	var err error
	if g.in, err = cuda.AllocHost[float32](m.s.Context(), n*d); err != nil {
		return nil, err
	}
	m.closers = append(m.closers, g.in.Close)
	if g.out, err = cuda.AllocHost[float32](m.s.Context(), n*d); err != nil {
		return nil, err
	}
	m.closers = append(m.closers, g.out.Close)

	// The multiplies' plans fix their shapes; each layer gives its own
	// weights. They are needed only while capturing: the graph keeps
	// what cuBLASLt enqueued.
	bf := blas.BFloat16
	up := blas.Matmul{
		A: blas.Matrix{Mem: m.x, Rows: n, Cols: d}, B: blas.Matrix{Mem: m.w[0].w1, Rows: d, Cols: 4 * d},
		C: blas.Matrix{Mem: m.h, Rows: n, Cols: 4 * d}, AType: bf, BType: bf, CType: bf,
		Epilogue: blas.BiasGELU, Bias: m.w[0].b1,
	}
	down := blas.Matmul{
		A: up.C, B: blas.Matrix{Mem: m.w[0].w2, Rows: 4 * d, Cols: d},
		C: blas.Matrix{Mem: m.y, Rows: n, Cols: d}, AType: bf, BType: bf, CType: bf,
		Epilogue: blas.Bias, Bias: m.w[0].b2,
	}
	upPlan, err := m.lt.Prepare(up, nil)
	if err != nil {
		return nil, err
	}
	defer upPlan.Close()
	downPlan, err := m.lt.Prepare(down, nil)
	if err != nil {
		return nil, err
	}
	defer downPlan.Close()

	rows := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(n)}, Block: cuda.Dim3{X: m.block}}
	graph, err := m.s.Capture(cuda.CaptureThreadLocal, func() error {
		if err := m.in.CopyFromAsync(m.s, g.in); err != nil {
			return err
		}
		if err := m.toBF16.Launch(m.s, cuda.Linear(n*d, 256), m.in, m.x, uint32(n*d)); err != nil {
			return err
		}
		for _, w := range m.w {
			up.B.Mem, up.Bias = w.w1, w.b1
			down.B.Mem, down.Bias = w.w2, w.b2
			if err := upPlan.Run(up, 1, 0); err != nil {
				return err
			}
			if err := downPlan.Run(down, 1, 0); err != nil {
				return err
			}
			if err := m.addNorm.Launch(m.s, rows, m.x, m.y, w.gamma, w.beta, uint32(d), float32(Eps)); err != nil {
				return err
			}
		}
		if err := m.toF32.Launch(m.s, cuda.Linear(n*d, 256), m.x, m.out, uint32(n*d)); err != nil {
			return err
		}
		return m.out.CopyToAsync(m.s, g.out)
	})
	if err != nil {
		return nil, fmt.Errorf("model: capturing the graph of batches of %d: %w", n, err)
	}
	defer graph.Close()
	if g.exec, err = graph.Instantiate(); err != nil {
		return nil, err
	}
	m.closers = append(m.closers, g.exec.Close)
	m.graphs[n-1] = g
	return g, nil
}

// Close frees everything the model holds, after its work, in the reverse
// order of its making. Closing it again does nothing.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.closers) == 0 {
		return nil // closed already
	}
	err := m.s.Synchronize()
	for i := len(m.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, m.closers[i]())
	}
	m.closers = nil
	return err
}
