//go:build linux && (amd64 || arm64)

package blas

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// matKey is what a prepared multiply fixes of one matrix.
type matKey struct {
	rows, cols, stride int
	layout             Layout
	count              int
	batchStride        int64
}

func matKeyOf(x Matrix) matKey {
	k := matKey{rows: x.Rows, cols: x.Cols, stride: x.stride(), layout: x.Layout, count: x.count()}
	if k.count > 1 {
		k.batchStride = x.batchStride()
	}
	return k
}

// matmulKey is what a prepared multiply fixes of a Matmul: everything but
// its memory, and whether it has a bias and scales (their addresses may
// change from call to call).
type matmulKey struct {
	a, b, c              matKey
	at, bt, ct           DataType
	epi                  Epilogue
	tf32                 bool
	bias, aScale, bScale bool
}

func keyOf(mm *Matmul) matmulKey {
	return matmulKey{
		a: matKeyOf(mm.A), b: matKeyOf(mm.B), c: matKeyOf(mm.C),
		at: mm.AType, bt: mm.BType, ct: mm.CType, epi: mm.Epilogue, tf32: mm.TF32,
		bias: given(mm.Bias), aScale: given(mm.AScale), bScale: given(mm.BScale),
	}
}

// empty says that the product has no element: nothing to compute.
func (k matmulKey) empty() bool { return k.c.rows == 0 || k.c.cols == 0 }

// prepared is a multiply ready to run: its descriptors in one formulation
// and its algorithm. Its descriptors do not belong to a cuBLASLt handle:
// any handle may run it.
type prepared struct {
	key  matmulKey
	form Formulation
	algo Algo
	// mu is held around a call that sets the descriptor's pointers (bias,
	// scales) and multiplies, so that concurrent calls with different
	// pointers each run with their own: cuBLASLt reads the descriptor
	// when cublasLtMatmul is called, not when the work runs.
	mu  sync.Mutex
	d   *descs
	ptr bool // the descriptor holds pointers
}

// prepare makes the descriptors of mm in f and, for a nil algo, asks the
// heuristic for its first choice. The handle's context is current.
func prepare(op string, st ltState, mm *Matmul, raw [6]uint64, f Formulation, algo *Algo) (*prepared, error) {
	d, err := describe(op, mm, raw, f)
	if err != nil {
		return nil, err
	}
	p := &prepared{key: keyOf(mm), form: f, d: d, ptr: given(mm.Bias) || given(mm.AScale) || given(mm.BScale)}
	if algo != nil {
		p.algo = *algo
		return p, nil
	}
	algos, err := heuristic(op, st, d, 1)
	if err != nil {
		d.destroy()
		return nil, err
	}
	p.algo = algos[0]
	return p, nil
}

func (p *prepared) destroy() { p.d.destroy() }

// run is one cublasLtMatmul of p on raw's memory: the descriptor gets the
// call's bias and scale addresses first if they differ from the last.
func (p *prepared) run(op string, st ltState, raw [6]uint64, alpha, beta float32, stream cu.CUstream) error {
	if p.key.empty() {
		return nil
	}
	pa, pb, pc, ptrs := operands(raw, p.d.g.swap)
	if !p.ptr {
		return matmul(op, st, p.d, &p.algo, alpha, beta, pa, pb, pc, stream)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.d.setPtrs(ptrs); err != nil {
		return check(op, "cublasLtMatmulDescSetAttribute", err)
	}
	return matmul(op, st, p.d, &p.algo, alpha, beta, pa, pb, pc, stream)
}

// LtRunCache is how many multiplies an LtHandle's Run keeps prepared.
const LtRunCache = 64

// runKey is a multiply Run has prepared: its key and the algorithm it was
// given (algo false: the heuristic's first choice).
type runKey struct {
	m    matmulKey
	algo bool
	a    Algo
}

// ltCache is Run's prepared multiplies. They live until the handle is
// destroyed: none is evicted, so a call never loses one that another is
// running; past LtRunCache, Run prepares afresh each call.
type ltCache struct {
	mu sync.RWMutex
	m  map[runKey]*prepared
}

// get returns the prepared multiply of key, making it if needed, and
// whether the cache keeps it (if not, the caller destroys it after use).
// A hit takes the lock shared, so that Runs on one handle do not queue;
// a miss prepares without the lock (the heuristic takes microseconds),
// so that it does not hold up the hits of other goroutines. Two that miss
// on one key at once both prepare, and the second keeps the first's.
func (c *ltCache) get(op string, st ltState, mm *Matmul, raw [6]uint64, key runKey, algo *Algo) (*prepared, bool, error) {
	c.mu.RLock()
	p, ok := c.m[key]
	full := len(c.m) >= LtRunCache
	c.mu.RUnlock()
	if ok {
		return p, true, nil
	}
	p, err := prepare(op, st, mm, raw, ColumnOrder, algo)
	if err != nil || full {
		return p, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[key]; ok {
		p.destroy()
		return q, true, nil
	}
	if len(c.m) >= LtRunCache {
		return p, false, nil
	}
	if c.m == nil {
		c.m = make(map[runKey]*prepared)
	}
	c.m[key] = p
	return p, true, nil
}

// destroy frees every prepared multiply; the handle is being destroyed,
// with no call in flight.
func (c *ltCache) destroy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.m {
		p.destroy()
		delete(c.m, k)
	}
}

// LtPlan is a Matmul prepared on an LtHandle: its cuBLASLt descriptors,
// made once, and its algorithm, chosen once (the heuristic's first choice,
// or a tuned Plan's). Each Run is then the checks and one cublasLtMatmul.
//
// Fixed at Prepare: the element types, shapes, layouts, strides and batch
// of A, B and C, the epilogue, TF32, the formulation, the algorithm, and
// whether the Matmul has a bias, an A scale and a B scale. Given on each
// Run: the memory of A, B and C (any that fits the shapes), alpha and
// beta (read from the host when Run is called: cuBLASLt's host pointer
// mode), and the addresses of the bias and the scales, which Run puts in
// the descriptor when they differ from the last call's (calls of one plan
// that carry a bias or scales are serialized for that; others run at
// once).
//
// A plan runs on the LtHandle it was prepared on, on that handle's
// current stream and workspace, holding the handle for each call as the
// handle's own methods do: once that handle is closed, Run returns an
// error matching cuda.ErrClosed. The plan does not keep the cuBLASLt
// handle alive. Close frees the descriptors, after the calls in flight; a
// plan dropped without Close is freed by a cleanup. A nil or closed plan
// returns ErrClosed. All methods are safe for concurrent use.
type LtPlan struct {
	lt *LtHandle
	mu sync.RWMutex // held shared by Run, exclusively by Close
	p  *prepared    // nil once closed
	c  runtime.Cleanup
}

// Prepare makes the plan of mm: with the heuristic's first choice in the
// ColumnOrder formulation when plan is nil (what Run does), else with
// plan's formulation and algorithm; plan.Key must be PlanKey(mm). mm's
// memory is not used beyond its checks and its bias and scales, which
// the descriptor starts with.
func (lt *LtHandle) Prepare(mm Matmul, plan *Plan) (*LtPlan, error) {
	const op = "LtHandle.Prepare"
	if err := mm.check(op); err != nil {
		return nil, err
	}
	f, algo := ColumnOrder, (*Algo)(nil)
	if plan != nil {
		if k := PlanKey(mm); plan.Key != k {
			return nil, fmt.Errorf("blas: %s: the plan is for %s, the Matmul is %s", op, plan.Key, k)
		}
		f, algo = plan.Formulation, &plan.Algo
	}
	if err := f.check(op, &mm); err != nil {
		return nil, err
	}
	raw := rawAddrs(&mm)
	var p *prepared
	err := lt.object().Call("blas."+op, func(st ltState) error {
		var err error
		p, err = prepare(op, st, &mm, raw, f, algo)
		return err
	}, mm.holders()...)
	if err != nil {
		return nil, err
	}
	lp := &LtPlan{lt: lt, p: p}
	lp.c = runtime.AddCleanup(lp, (*prepared).destroy, p)
	return lp, nil
}

// Run computes mm, which must match the plan (the Matmul it was prepared
// for, with any memory of the same sizes), on the plan's handle's stream.
func (lp *LtPlan) Run(mm Matmul, alpha, beta float32) error {
	const op = "LtPlan.Run"
	if lp == nil {
		return closedErr(op)
	}
	lp.mu.RLock()
	defer lp.mu.RUnlock()
	p := lp.p
	if p == nil {
		return closedErr(op)
	}
	if k := keyOf(&mm); k != p.key {
		if err := mm.checkShapes(op); err != nil {
			return err
		}
		return fmt.Errorf("blas: %s: the plan is for %s, the Matmul is %s", op, p.keyString(), PlanKey(mm))
	}
	if err := mm.checkMemory(op); err != nil {
		return err
	}
	raw := rawAddrs(&mm)
	return lp.lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		return p.run(op, st, raw, alpha, beta, stream)
	}, mm.holders()...)
}

// keyString is PlanKey of the Matmul p was prepared for.
func (p *prepared) keyString() string {
	mat := func(k matKey) Matrix {
		m := Matrix{Rows: k.rows, Cols: k.cols, Stride: k.stride, Layout: k.layout}
		if k.count > 1 {
			m.Batch = Batch{Count: k.count, Stride: int(k.batchStride)}
		}
		return m
	}
	k := p.key
	return PlanKey(Matmul{A: mat(k.a), B: mat(k.b), C: mat(k.c), AType: k.at, BType: k.bt, CType: k.ct, Epilogue: k.epi, TF32: k.tf32})
}

// Algo returns the plan's algorithm; the zero Algo once closed.
func (lp *LtPlan) Algo() Algo {
	if lp == nil {
		return Algo{}
	}
	lp.mu.RLock()
	defer lp.mu.RUnlock()
	if lp.p == nil {
		return Algo{}
	}
	return lp.p.algo
}

// Formulation returns how the plan puts its Matmul to cuBLASLt.
func (lp *LtPlan) Formulation() Formulation {
	if lp == nil {
		return ColumnOrder
	}
	lp.mu.RLock()
	defer lp.mu.RUnlock()
	if lp.p == nil {
		return ColumnOrder
	}
	return lp.p.form
}

// Close frees the plan's descriptors after the calls in flight on it.
// Closing it again returns nil.
func (lp *LtPlan) Close() error {
	if lp == nil {
		return nil
	}
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.p == nil {
		return nil
	}
	lp.c.Stop()
	lp.p.destroy()
	lp.p = nil
	return nil
}

// closedErr is the error of a call on a nil or closed plan.
func closedErr(op string) error { return fmt.Errorf("blas: %s: %w", op, cuda.ErrClosed) }
