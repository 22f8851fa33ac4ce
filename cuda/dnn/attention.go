//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cudnn"
)

// Half is the element types of AttentionForward: cuDNN's fused attention
// runs on 16-bit inputs.
type Half interface {
	cuda.Float16 | cuda.BFloat16
}

// Attention is the shape of a scaled dot-product attention: Batch×Heads
// queries of SeqQ rows against keys and values of SeqKV rows, every row
// HeadDim wide.
type Attention struct {
	Batch, Heads, SeqQ, SeqKV, HeadDim int
	// Scale multiplies Q·Kᵀ before the softmax; 0 means 1/√HeadDim.
	Scale float32
	// Causal masks out key j for query i where j > i (the mask's
	// diagonal starts at the top left, also when SeqQ ≠ SeqKV).
	Causal bool
}

// maxHeadDim is the widest row cuDNN 9's fused attention takes.
const maxHeadDim = 256

func (a Attention) check(op string) error {
	for _, d := range []struct {
		name string
		v    int
	}{{"Batch", a.Batch}, {"Heads", a.Heads}, {"SeqQ", a.SeqQ}, {"SeqKV", a.SeqKV}, {"HeadDim", a.HeadDim}} {
		if d.v <= 0 {
			return fmt.Errorf("dnn: %s: %s is %d: it must be positive", op, d.name, d.v)
		}
	}
	if a.HeadDim%8 != 0 || a.HeadDim > maxHeadDim {
		return fmt.Errorf("dnn: %s: HeadDim %d: cuDNN's fused attention takes multiples of 8 up to %d", op, a.HeadDim, maxHeadDim)
	}
	if s := float64(a.Scale); math.IsNaN(s) || math.IsInf(s, 0) {
		return fmt.Errorf("dnn: %s: scale %g", op, a.Scale)
	}
	// The backend API counts in int64: the bound only keeps the
	// products below from overflowing.
	for _, seq := range []int{a.SeqQ, a.SeqKV} {
		if _, ok := product(a.Batch, a.Heads, seq, a.HeadDim); !ok {
			return fmt.Errorf("dnn: %s: %d×%d×%d×%d: more than %d elements in a tensor", op, a.Batch, a.Heads, seq, a.HeadDim, maxAttnElements)
		}
	}
	if _, ok := product(a.Batch, a.Heads, a.SeqQ, a.SeqKV); !ok {
		return fmt.Errorf("dnn: %s: %d×%d×%d×%d scores: more than %d", op, a.Batch, a.Heads, a.SeqQ, a.SeqKV, maxAttnElements)
	}
	return nil
}

// maxAttnElements bounds an attention's tensors and its count of scores.
const maxAttnElements = 1 << 48

// product is the product of positive factors, and whether it is at most
// maxAttnElements.
func product(factors ...int) (int, bool) {
	n := 1
	for _, f := range factors {
		if f > maxAttnElements/n {
			return 0, false
		}
		n *= f
	}
	return n, true
}

// elements is the size of a checked attention's tensor of seq rows: Q
// and O have SeqQ, K and V SeqKV.
func (a Attention) elements(seq int) int {
	n, _ := product(a.Batch, a.Heads, seq, a.HeadDim)
	return n
}

// AttentionForward computes O = softmax(Scale·Q·Kᵀ [causally masked])·V
// for every batch and head in one fused cuDNN kernel, built through
// cuDNN's backend graph API and cached per shape in the handle. Q and O
// are Batch×Heads×SeqQ×HeadDim, K and V Batch×Heads×SeqKV×HeadDim, each
// packed in that order (BHSD); O must not share memory with the inputs.
// Scores and the softmax are computed in float32, the probabilities
// rounded to T before they multiply V. It needs a GPU of compute
// capability 8.0 or later.
func AttentionForward[T Half](h *Handle, a Attention, q, k, v, o *cuda.Slice[T]) error {
	const op = "AttentionForward"
	if err := a.check(op); err != nil {
		return err
	}
	nq, nkv := a.elements(a.SeqQ), a.elements(a.SeqKV)
	for _, x := range []struct {
		name string
		s    *cuda.Slice[T]
		n    int
	}{{"Q", q, nq}, {"K", k, nkv}, {"V", v, nkv}, {"O", o, nq}} {
		if err := checkData(op, x.name, x.s, x.n); err != nil {
			return err
		}
	}
	if overlaps(o, nq, q, nq) || overlaps(o, nq, k, nkv) || overlaps(o, nq, v, nkv) {
		return fmt.Errorf("dnn: %s: O shares memory with Q, K or V", op)
	}
	scale := a.Scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(a.HeadDim)))
	}
	key := attnKey{dt: dataType[T](), a: a}
	key.a.Scale = 0 // passed by value at run time, not part of the graph
	pq, pk, pv, po := q.Ptr(), k.Ptr(), v.Ptr(), o.Ptr()
	return h.call("dnn."+op, func(st *state) error {
		p, err := st.attnPlan(op, key)
		if err != nil {
			return err
		}
		if err := st.ensureWorkspace(op, uint64(p.wsSize)); err != nil {
			return err
		}
		return p.run(op, st, scale, pq, pk, pv, po)
	}, q, k, v, o)
}

// attnKey is what an attention's graph depends on.
type attnKey struct {
	dt cudnn.CudnnDataType_t
	a  Attention
}

// The unique ids of the graph's tensors that the variant pack names.
const (
	uidQ int64 = iota + 1
	uidK
	uidV
	uidO
	uidScale
	uidLowest
	uidVirtual int64 = 100 // and up: the graph's intermediate tensors
)

// attnPlan is an attention's backend descriptors and execution plan.
type attnPlan struct {
	b      backend
	plan   desc
	wsSize int64
	causal bool
}

func (st *state) attnPlan(op string, key attnKey) (*attnPlan, error) {
	if p, ok := st.attn[key]; ok {
		return p, nil
	}
	p := &attnPlan{b: backend{op: op}, causal: key.a.Causal}
	p.build(st.h, key)
	if p.b.err != nil {
		err := p.b.err
		return nil, errors.Join(err, p.b.destroy())
	}
	if st.attn == nil {
		st.attn = map[attnKey]*attnPlan{}
	}
	if len(st.attn) >= maxPlans {
		for k, old := range st.attn {
			_ = old.b.destroy()
			delete(st.attn, k)
		}
	}
	st.attn[key] = p
	return p, nil
}

// build makes the graph cuDNN's fused attention engines recognize: the
// first matmul into float32 scores, the scale, the causal mask as index
// comparisons and a select, the softmax as max, subtract, exp, sum and
// divide (with the log-sum-exp statistics those engines expect, left
// virtual), the probabilities in the inputs' type, and the second matmul.
func (p *attnPlan) build(h cudnn.CudnnHandle_t, key attnKey) {
	b := &p.b
	a := key.a
	B, H, Sq, Skv, D := int64(a.Batch), int64(a.Heads), int64(a.SeqQ), int64(a.SeqKV), int64(a.HeadDim)
	f32 := cudnn.CUDNN_DATA_FLOAT
	one := [4]int64{1, 1, 1, 1}
	sDims, sStrides := [4]int64{B, H, Sq, Skv}, [4]int64{H * Sq * Skv, Sq * Skv, Skv, 1}
	rDims, rStrides := [4]int64{B, H, Sq, 1}, [4]int64{H * Sq, Sq, 1, 1}
	uid := uidVirtual
	virtual := func(dt cudnn.CudnnDataType_t, dims, strides [4]int64) desc {
		uid++
		return b.tensor(uid, dt, dims, strides, true, false)
	}
	q := b.tensor(uidQ, key.dt, [4]int64{B, H, Sq, D}, [4]int64{H * Sq * D, Sq * D, D, 1}, false, false)
	// Kᵀ: K's memory read with the last two dimensions swapped.
	kT := b.tensor(uidK, key.dt, [4]int64{B, H, D, Skv}, [4]int64{H * Skv * D, Skv * D, 1, D}, false, false)
	v := b.tensor(uidV, key.dt, [4]int64{B, H, Skv, D}, [4]int64{H * Skv * D, Skv * D, D, 1}, false, false)
	o := b.tensor(uidO, key.dt, [4]int64{B, H, Sq, D}, [4]int64{H * Sq * D, Sq * D, D, 1}, false, false)
	scale := b.tensor(uidScale, f32, one, one, false, true)

	var ops []desc
	s := virtual(f32, sDims, sStrides)
	ops = append(ops, b.matmul(q, kT, s))
	scaled := virtual(f32, sDims, sStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_MUL, f32, -1, s, scale, nil, scaled))
	last := scaled
	if a.Causal {
		lowest := b.tensor(uidLowest, f32, one, one, false, true)
		row := virtual(cudnn.CUDNN_DATA_INT32, sDims, sStrides)
		ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_GEN_INDEX, cudnn.CUDNN_DATA_INT32, 2, last, nil, nil, row))
		col := virtual(cudnn.CUDNN_DATA_INT32, sDims, sStrides)
		ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_GEN_INDEX, cudnn.CUDNN_DATA_INT32, 3, last, nil, nil, col))
		keep := virtual(cudnn.CUDNN_DATA_BOOLEAN, sDims, sStrides)
		ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_CMP_GE, cudnn.CUDNN_DATA_BOOLEAN, -1, row, col, nil, keep))
		masked := virtual(f32, sDims, sStrides)
		ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_BINARY_SELECT, f32, -1, last, lowest, keep, masked))
		last = masked
	}
	m := virtual(f32, rDims, rStrides)
	ops = append(ops, b.reduction(cudnn.CUDNN_REDUCE_TENSOR_MAX, last, m))
	sub := virtual(f32, sDims, sStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_SUB, f32, -1, last, m, nil, sub))
	e := virtual(f32, sDims, sStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_EXP, f32, -1, sub, nil, nil, e))
	z := virtual(f32, rDims, rStrides)
	ops = append(ops, b.reduction(cudnn.CUDNN_REDUCE_TENSOR_ADD, e, z))
	lz := virtual(f32, rDims, rStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_LOG, f32, -1, z, nil, nil, lz))
	stats := virtual(f32, rDims, rStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_ADD, f32, -1, m, lz, nil, stats))
	// The second matmul takes its first operand in the inputs' type.
	prob := virtual(key.dt, sDims, sStrides)
	ops = append(ops, b.pointwise(cudnn.CUDNN_POINTWISE_DIV, f32, -1, e, z, nil, prob))
	ops = append(ops, b.matmul(prob, v, o))
	p.plan, p.wsSize = b.plan(h, ops)
}

// run executes the plan on the handle's stream (cudnnBackendExecute). The
// by-value scalars are host memory cuDNN reads during the call; they and
// the arrays of the variant pack are pinned until it returns.
func (p *attnPlan) run(op string, st *state, scale float32, q, k, v, o cu.CUdeviceptr) (err error) {
	scalars := new([2]float32)
	scalars[0], scalars[1] = scale, -math.MaxFloat32
	uids := []int64{uidQ, uidK, uidV, uidO, uidScale}
	ptrs := []unsafe.Pointer{devptr.Of(q), devptr.Of(k), devptr.Of(v), devptr.Of(o), unsafe.Pointer(&scalars[0])}
	if p.causal {
		uids = append(uids, uidLowest)
		ptrs = append(ptrs, unsafe.Pointer(&scalars[1]))
	}
	ws := devptr.Of(st.ws)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(scalars)
	pin.Pin(&uids[0])
	pin.Pin(&ptrs[0])

	b := &backend{op: op}
	defer func() { err = errors.Join(err, b.destroy()) }()
	vp := b.create(cudnn.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
	set(b, vp, cudnn.CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, cudnn.CUDNN_TYPE_INT64, uids...)
	set(b, vp, cudnn.CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, cudnn.CUDNN_TYPE_VOID_PTR, ptrs...)
	set(b, vp, cudnn.CUDNN_ATTR_VARIANT_PACK_WORKSPACE, cudnn.CUDNN_TYPE_VOID_PTR, ws)
	b.finalize(vp)
	if b.err != nil {
		return b.err
	}
	return check(op, "cudnnBackendExecute", cudnn.BackendExecute(st.h, p.plan, vp))
}
