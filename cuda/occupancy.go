package cuda

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
)

// KernelAttributes are what a kernel needs of the device, as compiled
// (cuFuncGetAttribute).
type KernelAttributes struct {
	MaxThreadsPerBlock int // the most threads a block of it may have
	SharedBytes        int // static shared memory per block
	ConstBytes         int // constant memory
	LocalBytes         int // local memory per thread
	Registers          int // registers per thread
	PTXVersion         int // virtual architecture it was compiled for, 10*major+minor (90 for compute_90)
	BinaryVersion      int // architecture of its binary, 10*major+minor (90 for sm_90)
	// MaxDynamicSharedBytes is the dynamic shared memory a launch may ask
	// for; SetMaxDynamicSharedMemory raises it.
	MaxDynamicSharedBytes int
}

// withKernel runs fn with k's module held and its context current: the
// occupancy calls use the current context's device.
func (k *Kernel) withKernel(op string, fn func(st *moduleState) error) error {
	h := k.module()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	return bind(op, st.ctx.raw(), func() error { return fn(st) })
}

// open returns the closed error of op for a nil, zero or closed Kernel
// (its module handle closed), before the arguments are looked at.
func (k *Kernel) open(op string) error {
	if _, ok := k.module().peek(); !ok {
		return k.module().closedError(op)
	}
	return nil
}

// Attributes returns the kernel's resource needs.
func (k *Kernel) Attributes() (KernelAttributes, error) {
	const op = "Kernel.Attributes"
	var a KernelAttributes
	err := k.withKernel(op, func(*moduleState) error {
		for _, f := range []struct {
			attr cu.CUfunction_attribute
			v    *int
		}{
			{cu.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &a.MaxThreadsPerBlock},
			{cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &a.SharedBytes},
			{cu.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &a.ConstBytes},
			{cu.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &a.LocalBytes},
			{cu.CU_FUNC_ATTRIBUTE_NUM_REGS, &a.Registers},
			{cu.CU_FUNC_ATTRIBUTE_PTX_VERSION, &a.PTXVersion},
			{cu.CU_FUNC_ATTRIBUTE_BINARY_VERSION, &a.BinaryVersion},
			{cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &a.MaxDynamicSharedBytes},
		} {
			var v int32
			if err := cu.FuncGetAttribute(&v, f.attr, k.raw); err != nil {
				return newError(op, "cuFuncGetAttribute", fmt.Errorf("%v: %w", f.attr, err))
			}
			*f.v = int(v)
		}
		return nil
	})
	return a, err
}

// SetMaxDynamicSharedMemory opts the kernel in to launches with up to bytes
// of dynamic shared memory per block (cuFuncSetAttribute,
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): past 48 KiB a kernel
// must opt in. More than the device allows a block (its
// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, less the kernel's
// static shared memory) is an error naming that limit, before the driver.
func (k *Kernel) SetMaxDynamicSharedMemory(bytes int) error {
	const op = "Kernel.SetMaxDynamicSharedMemory"
	if err := k.open(op); err != nil {
		return err
	}
	if bytes < 0 {
		return invalidArg(op, "%d bytes", bytes)
	}
	return k.withKernel(op, func(st *moduleState) error {
		var static int32
		if err := cu.FuncGetAttribute(&static, cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.raw); err != nil {
			return newError(op, "cuFuncGetAttribute", err)
		}
		optin, err := st.ctx.core.val.dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
		if err != nil {
			return err
		}
		if limit := optin - int(static); bytes > limit {
			return invalidArg(op, "%d bytes of dynamic shared memory: the device allows a block %d bytes, of which kernel %s uses %d statically, leaving %d",
				bytes, optin, k.name, static, limit)
		}
		if err := check(op, "cuFuncSetAttribute", cu.FuncSetAttribute(k.raw, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int32(bytes))); err != nil {
			return err
		}
		// The launches' check of the shape takes the new limit.
		if l := k.limits.Load(); l != nil {
			n := *l
			n.dynShared = uint32(bytes)
			k.limits.Store(&n)
		}
		return nil
	})
}

// MaxActiveBlocksPerMultiprocessor returns how many blocks of blockSize
// threads, each with dynamicSharedBytes of dynamic shared memory, fit on
// one multiprocessor at once (cuOccupancyMaxActiveBlocksPerMultiprocessor):
// times the device's MultiprocessorCount, the largest grid that runs in one
// wave, which a cooperative launch must not exceed.
func (k *Kernel) MaxActiveBlocksPerMultiprocessor(blockSize, dynamicSharedBytes int) (int, error) {
	const op = "Kernel.MaxActiveBlocksPerMultiprocessor"
	if err := k.open(op); err != nil {
		return 0, err
	}
	if blockSize <= 0 || dynamicSharedBytes < 0 {
		return 0, invalidArg(op, "block size %d, %d bytes of dynamic shared memory", blockSize, dynamicSharedBytes)
	}
	var n int32
	err := k.withKernel(op, func(*moduleState) error {
		return check(op, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
			cu.OccupancyMaxActiveBlocksPerMultiprocessor(&n, k.raw, int32(blockSize), uint64(dynamicSharedBytes)))
	})
	return int(n), err
}

// SuggestedBlockSize returns the block size that gives the kernel the most
// resident threads per multiprocessor, with dynamicSharedBytes of dynamic
// shared memory per block whatever the block size, and the smallest grid
// that reaches full occupancy with it (cuOccupancyMaxPotentialBlockSize).
// A one-dimensional launch over n elements then takes
// LaunchConfig{Grid: Dim3{X: Blocks(n, blockSize)}, Block: Dim3{X: uint32(blockSize)}}.
func (k *Kernel) SuggestedBlockSize(dynamicSharedBytes int) (blockSize, minGridSize int, err error) {
	const op = "Kernel.SuggestedBlockSize"
	if err := k.open(op); err != nil {
		return 0, 0, err
	}
	if dynamicSharedBytes < 0 {
		return 0, 0, invalidArg(op, "%d bytes of dynamic shared memory", dynamicSharedBytes)
	}
	var grid, block int32
	err = k.withKernel(op, func(*moduleState) error {
		return check(op, "cuOccupancyMaxPotentialBlockSize",
			cu.OccupancyMaxPotentialBlockSize(&grid, &block, k.raw, 0, uint64(dynamicSharedBytes), 0))
	})
	return int(block), int(grid), err
}
