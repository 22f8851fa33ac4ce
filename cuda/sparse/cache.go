//go:build linux && (amd64 || arm64)

package sparse

import (
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// descrCache keeps the cuSPARSE descriptors SpMV and SpMM make, and the
// workspace sizes cuSPARSE asked for, per handle, so that a loop of
// products on the same operands makes none after its first call, as a C
// program that makes its descriptors once. A descriptor is keyed by all
// it holds (format, shape, addresses, types): a cached one is the one a
// new call would make, even where memory was freed and another
// allocation took its addresses. Only the calls on the handle use it,
// under shared.mu. Each map is emptied (its descriptors destroyed) at the
// start of a call that finds it at cacheLimit entries or more (never
// during a call, which may be using what it took from it), and the whole
// at the handle's destroy.
type descrCache struct {
	sp   map[spKey]cusparse.CusparseSpMatDescr_t
	mat  map[dnKey]cusparse.CusparseDnMatDescr_t
	vec  map[dnKey]cusparse.CusparseDnVecDescr_t
	size map[sizeKey]uint64
}

// cacheLimit bounds each map: a program that multiplies many matrices
// keeps the descriptors of the last ones only.
const cacheLimit = 64

type spKey struct {
	format          Format
	rows, cols, nnz int
	p, q, v         cu.CUdeviceptr
	index           cusparse.CusparseIndexType_t
	value           libtypes.CudaDataType
	bs              int
	border          Order
}

// dnKey is a dense matrix's or vector's (cols 1, order ColMajor).
type dnKey struct {
	rows, cols, ld int
	order          Order
	p              cu.CUdeviceptr
	value          libtypes.CudaDataType
}

// sizeKey is what a workspace size depends on: the operation (spmv or
// spmm), the sparse matrix, op, and for SpMM the dense shape and order.
type sizeKey struct {
	spmm  bool
	sp    spKey
	op    Op
	cols  int
	order Order
	ldB   int
	ldC   int
}

func (c *descrCache) spMat(k spKey, create func() (cusparse.CusparseSpMatDescr_t, error)) (cusparse.CusparseSpMatDescr_t, error) {
	if d, ok := c.sp[k]; ok {
		return d, nil
	}
	d, err := create()
	if err != nil {
		return 0, err
	}
	if c.sp == nil {
		c.sp = map[spKey]cusparse.CusparseSpMatDescr_t{}
	}
	c.sp[k] = d
	return d, nil
}

func (c *descrCache) dnMat(k dnKey, create func() (cusparse.CusparseDnMatDescr_t, error)) (cusparse.CusparseDnMatDescr_t, error) {
	if d, ok := c.mat[k]; ok {
		return d, nil
	}
	d, err := create()
	if err != nil {
		return 0, err
	}
	if c.mat == nil {
		c.mat = map[dnKey]cusparse.CusparseDnMatDescr_t{}
	}
	c.mat[k] = d
	return d, nil
}

func (c *descrCache) dnVec(k dnKey, create func() (cusparse.CusparseDnVecDescr_t, error)) (cusparse.CusparseDnVecDescr_t, error) {
	if d, ok := c.vec[k]; ok {
		return d, nil
	}
	d, err := create()
	if err != nil {
		return 0, err
	}
	if c.vec == nil {
		c.vec = map[dnKey]cusparse.CusparseDnVecDescr_t{}
	}
	c.vec[k] = d
	return d, nil
}

// bufferSize returns the cached size for k, or asks ask and keeps its
// answer.
func (c *descrCache) bufferSize(k sizeKey, ask func(*uint64) error) (uint64, error) {
	if n, ok := c.size[k]; ok {
		return n, nil
	}
	var n uint64
	if err := ask(&n); err != nil {
		return 0, err
	}
	if c.size == nil {
		c.size = map[sizeKey]uint64{}
	}
	c.size[k] = n
	return n, nil
}

// trim empties the maps that reached cacheLimit; a call adds at most
// two entries to each.
func (c *descrCache) trim() {
	if len(c.sp) >= cacheLimit {
		c.dropSp()
	}
	if len(c.mat) >= cacheLimit {
		c.dropMat()
	}
	if len(c.vec) >= cacheLimit {
		c.dropVec()
	}
	if len(c.size) >= cacheLimit {
		c.size = nil
	}
}

func (c *descrCache) dropSp() {
	for _, d := range c.sp {
		destroySp(d)
	}
	c.sp = nil
}

func (c *descrCache) dropMat() {
	for _, d := range c.mat {
		destroyDnMat(d)
	}
	c.mat = nil
}

func (c *descrCache) dropVec() {
	for _, d := range c.vec {
		destroyDnVec(d)
	}
	c.vec = nil
}

// drop destroys every cached descriptor.
func (c *descrCache) drop() {
	c.dropSp()
	c.dropMat()
	c.dropVec()
	c.size = nil
}
