package cuda

// The limits of a launch's shape, checked before the driver so that an
// error can name the limit.

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/gocuda/gocuda/generated/cu"
)

// launchLimits are the shapes the driver takes for a kernel: its device's
// block and grid dimensions and threads per block, the kernel's own
// threads per block (its registers, or its launch bounds, can lower it
// below the device's) and its dynamic shared memory. A limit the driver
// did not tell is the largest value, so that nothing is refused for it.
type launchLimits struct {
	threads                      uint64 // per block: the kernel's, which is at most the device's
	block, grid                  Dim3
	dynShared                    uint32
	kernelThreads, deviceThreads uint32 // for the messages
}

// fits reports whether cfg is within l. A zero Y or Z is within any
// dimension's limit, and counts as 1 in the threads.
func (l *launchLimits) fits(cfg *LaunchConfig) bool {
	b, g := &cfg.Block, &cfg.Grid
	return b.X <= l.block.X && b.Y <= l.block.Y && b.Z <= l.block.Z &&
		g.X <= l.grid.X && g.Y <= l.grid.Y && g.Z <= l.grid.Z &&
		cfg.SharedMemBytes <= l.dynShared &&
		uint64(b.X)*uint64(max(b.Y, 1))*uint64(max(b.Z, 1)) <= l.threads
}

var noLimits = launchLimits{threads: math.MaxUint64, block: Dim3{math.MaxUint32, math.MaxUint32, math.MaxUint32},
	grid: Dim3{math.MaxUint32, math.MaxUint32, math.MaxUint32}, dynShared: math.MaxUint32,
	kernelThreads: math.MaxUint32, deviceThreads: math.MaxUint32}

// queryLimits asks the driver for k's launch limits: the device's
// attributes of the module's context, the kernel's function attributes.
// What it cannot ask (a module without a context, an attribute the driver
// does not answer) stays unlimited: the driver then checks it alone.
func (k *Kernel) queryLimits(op string) *launchLimits {
	l := noLimits
	h := k.module()
	st, ok := h.enter()
	if !ok {
		return &l
	}
	defer h.exit()
	if st.ctx.core == nil {
		return &l
	}
	dev := st.ctx.core.val.dev
	attr := func(a cu.CUdevice_attribute, v *uint32) {
		if n, err := dev.Attribute(a); err == nil && n > 0 {
			*v = uint32(n)
		}
	}
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &l.deviceThreads)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &l.block.X)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &l.block.Y)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &l.block.Z)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &l.grid.X)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &l.grid.Y)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &l.grid.Z)
	_ = bind(op, st.ctx.raw(), func() error {
		var v int32
		if cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.raw) == nil && v > 0 {
			l.kernelThreads = uint32(v)
		}
		if cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.raw) == nil && v >= 0 {
			l.dynShared = uint32(v)
		}
		return nil
	})
	l.threads = uint64(min(l.kernelThreads, l.deviceThreads))
	return &l
}

// checkShape is checkLaunch's check of cfg against k's limits where the
// limits are not known yet or cfg exceeds them: it names the limit
// exceeded. The dynamic shared memory a kernel may have can be raised
// behind this Kernel's back (another Kernel of the function, the raw
// cuFuncSetAttribute), so it is asked again before a launch is refused.
func (k *Kernel) checkShape(op string, cfg *LaunchConfig) error {
	l := k.limits.Load()
	if l == nil {
		l = k.queryLimits(op)
		k.limits.Store(l)
		if l.fits(cfg) {
			return nil
		}
	}
	b, g := cfg.Block.norm(), cfg.Grid.norm()
	hi, threads := bits.Mul64(uint64(b.X)*uint64(b.Y), uint64(b.Z))
	if hi != 0 {
		threads = math.MaxUint64
	}
	shape := ""
	if b.Y != 1 || b.Z != 1 {
		shape = fmt.Sprintf(" (%d×%d×%d)", b.X, b.Y, b.Z)
	}
	switch {
	case threads > l.threads && l.kernelThreads < l.deviceThreads:
		return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
			"block of %d threads%s exceeds kernel %s's limit of %d threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers per thread or its launch bounds keep it below the device's %d)",
			threads, shape, k.name, l.kernelThreads, l.deviceThreads)
	case threads > l.threads:
		return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
			"block of %d threads%s exceeds kernel %s's limit of %d threads per block, the device's",
			threads, shape, k.name, l.threads)
	}
	for _, d := range [...]struct {
		what       string
		n, limit   uint32
		axis, unit string
	}{
		{"block", b.X, l.block.X, "X", "threads"}, {"block", b.Y, l.block.Y, "Y", "threads"}, {"block", b.Z, l.block.Z, "Z", "threads"},
		{"grid", g.X, l.grid.X, "X", "blocks"}, {"grid", g.Y, l.grid.Y, "Y", "blocks"}, {"grid", g.Z, l.grid.Z, "Z", "blocks"},
	} {
		if d.n > d.limit {
			v, lim := b, l.block
			if d.what == "grid" {
				v, lim = g, l.grid
			}
			return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
				"%s of %d×%d×%d %s: %d in %s exceeds the device's limit of %d (the largest %s is %d×%d×%d %s)",
				d.what, v.X, v.Y, v.Z, d.unit, d.n, d.axis, d.limit, d.what, lim.X, lim.Y, lim.Z, d.unit)
		}
	}
	if cfg.SharedMemBytes > l.dynShared {
		return k.sharedMemError(op, cfg.SharedMemBytes, l)
	}
	return nil
}

// sharedMemError is the error of a launch asking for more dynamic shared
// memory than l allows, unless the kernel's limit was raised since: then
// the limits are kept with the new value and the launch goes on.
func (k *Kernel) sharedMemError(op string, bytes uint32, l *launchLimits) error {
	var limit, static int32 = -1, -1
	optin := -1
	_ = k.withKernel(op, func(st *moduleState) error {
		if cu.FuncGetAttribute(&limit, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.raw) != nil {
			limit = -1
		}
		if cu.FuncGetAttribute(&static, cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.raw) != nil {
			static = -1
		}
		if st.ctx.core != nil {
			if n, err := st.ctx.core.val.dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); err == nil {
				optin = n
			}
		}
		return nil
	})
	if limit < 0 {
		return nil // the driver checks it
	}
	if uint32(limit) != l.dynShared {
		n := *l
		n.dynShared = uint32(limit)
		k.limits.Store(&n)
		if bytes <= n.dynShared {
			return nil
		}
	}
	msg := fmt.Sprintf("%d bytes of dynamic shared memory per block exceed kernel %s's limit of %d bytes (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
		bytes, k.name, limit)
	if optin >= 0 && static >= 0 {
		if most := optin - int(static); int64(bytes) <= int64(most) {
			msg += fmt.Sprintf(": Kernel.SetMaxDynamicSharedMemory(%d) raises it, up to %d bytes on this device (its opt-in maximum of %d bytes per block, less the kernel's %d bytes of static shared memory)",
				bytes, most, optin, static)
		} else {
			msg += fmt.Sprintf(", and more than this device allows it: at most %d bytes (its opt-in maximum of %d bytes per block, less the kernel's %d bytes of static shared memory), which Kernel.SetMaxDynamicSharedMemory sets",
				max(most, 0), optin, static)
		}
	}
	return attrError(op, cu.CUDA_ERROR_INVALID_VALUE, "%s", msg)
}
