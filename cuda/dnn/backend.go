//go:build linux && (amd64 || arm64)

package dnn

import (
	"errors"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cudnn"
)

// desc is a descriptor of cuDNN's backend (graph) API.
type desc = cudnn.CudnnBackendDescriptor_t

// backend builds backend descriptors: the first error stops the building
// (later calls do nothing) and is kept, and every descriptor made is
// remembered so that destroy ends them all.
type backend struct {
	op   string
	err  error
	made []desc
}

func (b *backend) create(t cudnn.CudnnBackendDescriptorType_t) desc {
	if b.err != nil {
		return nil
	}
	var d desc
	if err := cudnn.BackendCreateDescriptor(t, &d); err != nil {
		b.err = check(b.op, "cudnnBackendCreateDescriptor", err)
		return nil
	}
	b.made = append(b.made, d)
	return d
}

// set sets attribute name of d to vals, of cuDNN's type typ.
func set[V any](b *backend, d desc, name cudnn.CudnnBackendAttributeName_t, typ cudnn.CudnnBackendAttributeType_t, vals ...V) {
	if b.err != nil || len(vals) == 0 {
		return
	}
	if err := cudnn.BackendSetAttribute(d, name, typ, int64(len(vals)), unsafe.Pointer(&vals[0])); err != nil {
		b.err = check(b.op, "cudnnBackendSetAttribute", err)
	}
}

func (b *backend) finalize(d desc) {
	if b.err != nil {
		return
	}
	if err := cudnn.BackendFinalize(d); err != nil {
		b.err = check(b.op, "cudnnBackendFinalize", err)
	}
}

func (b *backend) destroy() error {
	var err error
	for _, d := range b.made {
		err = errors.Join(err, check(b.op, "cudnnBackendDestroyDescriptor", cudnn.BackendDestroyDescriptor(d)))
	}
	b.made = nil
	return err
}

// tensor makes a tensor descriptor: 16-byte aligned, as the tensor-core
// engines want.
func (b *backend) tensor(uid int64, dt cudnn.CudnnDataType_t, dims, strides [4]int64, virtual, byValue bool) desc {
	d := b.create(cudnn.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_DATA_TYPE, cudnn.CUDNN_TYPE_DATA_TYPE, dt)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_DIMENSIONS, cudnn.CUDNN_TYPE_INT64, dims[:]...)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_STRIDES, cudnn.CUDNN_TYPE_INT64, strides[:]...)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_UNIQUE_ID, cudnn.CUDNN_TYPE_INT64, uid)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, cudnn.CUDNN_TYPE_INT64, int64(16))
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_IS_VIRTUAL, cudnn.CUDNN_TYPE_BOOLEAN, virtual)
	set(b, d, cudnn.CUDNN_ATTR_TENSOR_IS_BY_VALUE, cudnn.CUDNN_TYPE_BOOLEAN, byValue)
	b.finalize(d)
	return d
}

// pointwise makes a pointwise operation y = mode(x, in2, t) computed in
// prec; in2 and t are nil where the mode takes no such input, axis < 0
// where it has no axis.
func (b *backend) pointwise(mode cudnn.CudnnPointwiseMode_t, prec cudnn.CudnnDataType_t, axis int64, x, in2, t, y desc) desc {
	pw := b.create(cudnn.CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
	set(b, pw, cudnn.CUDNN_ATTR_POINTWISE_MODE, cudnn.CUDNN_TYPE_POINTWISE_MODE, mode)
	set(b, pw, cudnn.CUDNN_ATTR_POINTWISE_MATH_PREC, cudnn.CUDNN_TYPE_DATA_TYPE, prec)
	if axis >= 0 {
		set(b, pw, cudnn.CUDNN_ATTR_POINTWISE_AXIS, cudnn.CUDNN_TYPE_INT64, axis)
	}
	b.finalize(pw)
	op := b.create(cudnn.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
	if in2 != nil {
		set(b, op, cudnn.CUDNN_ATTR_OPERATION_POINTWISE_BDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, in2)
	}
	if t != nil {
		set(b, op, cudnn.CUDNN_ATTR_OPERATION_POINTWISE_TDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, t)
	}
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
	b.finalize(op)
	return op
}

// matmul makes c = a·b over the last two dimensions, batched over the
// first two, accumulating in float32.
func (b *backend) matmul(a, bm, c desc) desc {
	mm := b.create(cudnn.CUDNN_BACKEND_MATMUL_DESCRIPTOR)
	set(b, mm, cudnn.CUDNN_ATTR_MATMUL_COMP_TYPE, cudnn.CUDNN_TYPE_DATA_TYPE, cudnn.CUDNN_DATA_FLOAT)
	b.finalize(mm)
	op := b.create(cudnn.CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_MATMUL_ADESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, a)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_MATMUL_BDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, bm)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_MATMUL_CDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, c)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_MATMUL_DESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, mm)
	b.finalize(op)
	return op
}

// reduction makes y = reduce(x) over the dimensions where y has size 1.
func (b *backend) reduction(red cudnn.CudnnReduceTensorOp_t, x, y desc) desc {
	rd := b.create(cudnn.CUDNN_BACKEND_REDUCTION_DESCRIPTOR)
	set(b, rd, cudnn.CUDNN_ATTR_REDUCTION_OPERATOR, cudnn.CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, red)
	set(b, rd, cudnn.CUDNN_ATTR_REDUCTION_COMP_TYPE, cudnn.CUDNN_TYPE_DATA_TYPE, cudnn.CUDNN_DATA_FLOAT)
	b.finalize(rd)
	op := b.create(cudnn.CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_REDUCTION_XDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_REDUCTION_YDESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
	set(b, op, cudnn.CUDNN_ATTR_OPERATION_REDUCTION_DESC, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, rd)
	b.finalize(op)
	return op
}

// plan makes the operation graph of ops on h, asks cuDNN's heuristics
// for engine configurations (mode A, then the fallback list), and returns
// the execution plan of the first that cuDNN can build, with its
// workspace size.
func (b *backend) plan(h cudnn.CudnnHandle_t, ops []desc) (desc, int64) {
	g := b.create(cudnn.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
	set(b, g, cudnn.CUDNN_ATTR_OPERATIONGRAPH_HANDLE, cudnn.CUDNN_TYPE_HANDLE, h)
	set(b, g, cudnn.CUDNN_ATTR_OPERATIONGRAPH_OPS, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, ops...)
	b.finalize(g)
	last := error(cudnn.CUDNN_STATUS_NOT_SUPPORTED)
	for _, mode := range []cudnn.CudnnBackendHeurMode_t{cudnn.CUDNN_HEUR_MODE_A, cudnn.CUDNN_HEUR_MODE_FALLBACK} {
		cfgs := b.configs(g, mode)
		if b.err != nil {
			return nil, 0
		}
		for _, cfg := range cfgs {
			p := b.create(cudnn.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
			set(b, p, cudnn.CUDNN_ATTR_EXECUTION_PLAN_HANDLE, cudnn.CUDNN_TYPE_HANDLE, h)
			set(b, p, cudnn.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, cfg)
			if b.err != nil {
				return nil, 0
			}
			// An engine the heuristics list may still refuse this
			// graph: the next one is tried.
			if err := cudnn.BackendFinalize(p); err != nil {
				last = err
				continue
			}
			var ws, count int64
			if err := cudnn.BackendGetAttribute(p, cudnn.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, cudnn.CUDNN_TYPE_INT64, 1, &count, unsafe.Pointer(&ws)); err != nil {
				b.err = check(b.op, "cudnnBackendGetAttribute", err)
				return nil, 0
			}
			return p, ws
		}
	}
	b.err = check(b.op, "cudnnBackendFinalize", last)
	return nil, 0
}

// configs returns the engine configurations cuDNN's heuristics of mode
// give for graph g, best first; none is no error.
func (b *backend) configs(g desc, mode cudnn.CudnnBackendHeurMode_t) []desc {
	heur := b.create(cudnn.CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
	set(b, heur, cudnn.CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, g)
	set(b, heur, cudnn.CUDNN_ATTR_ENGINEHEUR_MODE, cudnn.CUDNN_TYPE_HEUR_MODE, mode)
	b.finalize(heur)
	if b.err != nil {
		return nil
	}
	var n int64
	if err := cudnn.BackendGetAttribute(heur, cudnn.CUDNN_ATTR_ENGINEHEUR_RESULTS, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nil); err != nil {
		b.err = check(b.op, "cudnnBackendGetAttribute", err)
		return nil
	}
	if n <= 0 {
		return nil
	}
	cfgs := make([]desc, n)
	for i := range cfgs {
		cfgs[i] = b.create(cudnn.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
	}
	if b.err != nil {
		return nil
	}
	var got int64
	if err := cudnn.BackendGetAttribute(heur, cudnn.CUDNN_ATTR_ENGINEHEUR_RESULTS, cudnn.CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, unsafe.Pointer(&cfgs[0])); err != nil {
		b.err = check(b.op, "cudnnBackendGetAttribute", err)
		return nil
	}
	return cfgs[:min(got, n)]
}
