package cuda

/*
// The attributes and the argument values live in Go arrays on the
// caller's stack: the driver reads them during cuLaunchKernelEx, which
// copies what it keeps before it returns, and never calls back into Go.
#cgo noescape gocuda_launch_ex
#cgo nocallback gocuda_launch_ex
#include <stdlib.h>
#include "zfused.h"

enum { gocudaMaxExValues = 16 };

// gocuda_launch_ex launches f through fn (cuLaunchKernelEx) as a hot
// call, with nattrs attributes (CUlaunchAttribute, 72 bytes each: typed
// as 64-bit words, so that cgo sees memory without pointers and checks
// nothing, which would move the array to the heap) and either prepared,
// the address of a kernelParams array in C memory, or n values in 64-bit
// slots, as gocuda_launch_values takes them, or, where offs is given, at
// offs[i] bytes into vals, as gocuda_launch_packed takes them.
static int gocuda_launch_ex(uintptr_t fn, uintptr_t mops, uintptr_t sops, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream,
		const uint64_t *attrs, unsigned nattrs, uintptr_t prepared, const uint64_t *vals, const uint32_t *offs, int n) {
	gocuda_CUlaunchConfig cfg = {gx, gy, gz, bx, by, bz, shmem, stream, nattrs ? (void *)attrs : 0, nattrs};
	void **params = (void **)prepared;
	void *p[gocudaMaxExValues];
	if (params == 0 && n > 0) {
		for (int i = 0; i < n; i++)
			p[i] = offs ? (void *)((char *)vals + offs[i]) : (void *)&vals[i];
		params = p;
	}
	return gocuda_hot_cuLaunchKernelEx(fn, mops, sops, &cfg, f, params, 0);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The attributes are passed to C as an array of cu.CUlaunchAttribute: its
// layout must be cuda.h's (the bindings' layout tests check it against gcc).
var _ [72 - unsafe.Sizeof(cu.CUlaunchAttribute{})]struct{}
var _ [unsafe.Sizeof(cu.CUlaunchAttribute{}) - 72]struct{}

// PortableClusterSize is the most blocks a thread-block cluster may have
// on every device that has clusters (compute capability 9.0 and later).
// A kernel may opt in to more where its device allows them (16 on an H100
// or H200) with Kernel.AllowNonPortableClusterSize.
const PortableClusterSize = 8

// maxLaunchAttrs bounds the attributes of one launch: the typed ones and
// Raw together. The driver knows fewer kinds than that, and one launch
// may not repeat a kind.
const maxLaunchAttrs = 16

// LaunchAttributes are what a launch asks of the driver beyond its shape,
// for Kernel.LaunchEx and Kernel.LaunchArgsEx (cuLaunchKernelEx, whose
// CUlaunchAttribute list they become). The zero value asks for nothing: a
// launch as Launch makes.
type LaunchAttributes struct {
	// Cluster groups the grid's blocks into thread-block clusters of
	// Cluster blocks in each dimension (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	// compute capability 9.0 and later): the blocks of a cluster run at
	// once on one GPU processing cluster, can synchronize
	// (cooperative_groups::this_cluster().sync()) and reach each other's
	// shared memory (cluster.map_shared_rank). The zero value asks for no
	// cluster; otherwise X must be set, a zero Y or Z counts as 1, the
	// cluster must divide the grid in each dimension, and it may have at
	// most PortableClusterSize blocks unless the kernel opted in to more.
	Cluster Dim3
	// Cooperative launches the grid so that all its blocks are resident at
	// once and may synchronize grid-wide (cooperative_groups::this_grid().sync())
	// (CU_LAUNCH_ATTRIBUTE_COOPERATIVE). The grid may then have at most
	// MaxActiveBlocksPerMultiprocessor blocks of its size per multiprocessor,
	// times the device's MultiprocessorCount.
	Cooperative bool
	// ProgrammaticStreamSerialization lets the launch begin before the
	// kernel before it on the stream has finished: programmatic dependent
	// launch (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; compute
	// capability 9.0 and later). The kernel must wait for the data of the
	// one before it with cudaGridDependencySynchronize() (PTX
	// griddepcontrol.wait), which the earlier kernel may release early
	// with cudaTriggerProgrammaticLaunchCompletion() (griddepcontrol.launch_dependents).
	ProgrammaticStreamSerialization bool
	// HasPriority gives the launch the priority Priority instead of its
	// stream's (CU_LAUNCH_ATTRIBUTE_PRIORITY): a stream priority, lower
	// numbers first, in the range Context.StreamPriorityRange reports.
	HasPriority bool
	Priority    int
	// Raw are further attributes passed as they are, after the typed ones:
	// the rest of cuda.h's CUlaunchAttributeID list (memory synchronization
	// domains, an access policy window, a programmatic event...). Entries
	// of CU_LAUNCH_ATTRIBUTE_IGNORE are left out. A cluster dimension or a
	// cooperative launch given here is checked as the typed one is; an
	// attribute may not be given twice.
	Raw []cu.CUlaunchAttribute
}

// launchAttrs are LaunchAttributes encoded for the driver, in an array on
// the launching goroutine's stack, with what the checks need.
type launchAttrs struct {
	a       []cu.CUlaunchAttribute // an array of the launch's frame (withAttrs)
	n       int
	cluster Dim3 // normalized; X == 0: none
	coop    bool
}

// fewLaunchAttrs is the size of the attribute array of launches with that
// many attributes or fewer: most have one or two, and the array is zeroed
// at each launch (72 bytes an attribute), which for all of
// maxLaunchAttrs would cost more than the rest of the launch's work.
const fewLaunchAttrs = 2

// count is how many attributes attrs can become (at most; Raw's ignored
// entries are counted too).
func (attrs *LaunchAttributes) count() int {
	n := len(attrs.Raw)
	if attrs.Cluster != (Dim3{}) {
		n++
	}
	if attrs.Cooperative {
		n++
	}
	if attrs.ProgrammaticStreamSerialization {
		n++
	}
	if attrs.HasPriority {
		n++
	}
	return n
}

// attrError is the error of attributes refused before the driver, with the
// result the driver gives the same mistake.
func attrError(op string, r cu.CUresult, format string, args ...any) error {
	return &Error{Op: op, Result: r, Err: fmt.Errorf(format+": %w", append(args, r)...)}
}

func (la *launchAttrs) add(op string, id cu.CUlaunchAttributeID, seen *uint64) (*cu.CUlaunchAttributeValue, error) {
	if id >= 0 && id < 64 {
		if *seen&(1<<id) != 0 {
			return nil, attrError(op, cu.CUDA_ERROR_INVALID_VALUE, "launch attribute %v given twice", id)
		}
		*seen |= 1 << id
	}
	if la.n == len(la.a) {
		// An array of fewer than maxLaunchAttrs is only given to
		// attributes that fit it (count).
		return nil, attrError(op, cu.CUDA_ERROR_INVALID_VALUE, "more than %d launch attributes", maxLaunchAttrs)
	}
	e := &la.a[la.n]
	e.Id = id
	la.n++
	return &e.Value, nil
}

// encode fills la from attrs and checks what needs no driver: the
// cluster's shape against the grid's.
func (la *launchAttrs) encode(op string, attrs *LaunchAttributes, cfg *LaunchConfig) error {
	var seen uint64
	if attrs.Cluster != (Dim3{}) {
		if attrs.Cluster.X == 0 {
			return attrError(op, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE, "cluster of %d×%d×%d blocks: Cluster.X is 0", attrs.Cluster.X, attrs.Cluster.Y, attrs.Cluster.Z)
		}
		v, err := la.add(op, cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &seen)
		if err != nil {
			return err
		}
		c := attrs.Cluster.norm()
		*v.ClusterDim() = cu.CUlaunchAttributeValue_clusterDim{X: c.X, Y: c.Y, Z: c.Z}
		la.cluster = c
	}
	if attrs.Cooperative {
		v, err := la.add(op, cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &seen)
		if err != nil {
			return err
		}
		*v.Cooperative() = 1
		la.coop = true
	}
	if attrs.ProgrammaticStreamSerialization {
		v, err := la.add(op, cu.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, &seen)
		if err != nil {
			return err
		}
		*v.ProgrammaticStreamSerializationAllowed() = 1
	}
	if attrs.HasPriority {
		if attrs.Priority < math.MinInt32 || attrs.Priority > math.MaxInt32 {
			return attrError(op, cu.CUDA_ERROR_INVALID_VALUE, "launch priority %d", attrs.Priority)
		}
		v, err := la.add(op, cu.CU_LAUNCH_ATTRIBUTE_PRIORITY, &seen)
		if err != nil {
			return err
		}
		*v.Priority() = int32(attrs.Priority)
	}
	for i := range attrs.Raw {
		r := &attrs.Raw[i]
		if r.Id == cu.CU_LAUNCH_ATTRIBUTE_IGNORE {
			continue
		}
		v, err := la.add(op, r.Id, &seen)
		if err != nil {
			return err
		}
		*v = r.Value
		switch r.Id {
		case cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
			d := v.ClusterDim()
			if d.X == 0 || d.Y == 0 || d.Z == 0 {
				return attrError(op, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE, "cluster of %d×%d×%d blocks (a Raw attribute): a dimension is 0", d.X, d.Y, d.Z)
			}
			la.cluster = Dim3{d.X, d.Y, d.Z}
		case cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
			la.coop = *v.Cooperative() != 0
		}
	}
	// The grid divides into clusters: checked dimension by dimension only
	// to name the one that does not, and without dividing by the
	// dimensions of 1 (a division costs more than the rest of the check).
	if c, g := la.cluster, cfg.Grid.norm(); c.X != 0 &&
		(c.X != 1 && g.X%c.X != 0 || c.Y != 1 && g.Y%c.Y != 0 || c.Z != 1 && g.Z%c.Z != 0) {
		for _, d := range [3]struct {
			name       string
			grid, size uint32
		}{{"X", g.X, c.X}, {"Y", g.Y, c.Y}, {"Z", g.Z, c.Z}} {
			if d.grid%d.size != 0 {
				return attrError(op, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE,
					"a grid of %d×%d×%d blocks does not divide into clusters of %d×%d×%d: %d blocks in %s is not a multiple of %d",
					g.X, g.Y, g.Z, c.X, c.Y, c.Z, d.grid, d.name, d.size)
			}
		}
	}
	return nil
}

// launchExState is what a Kernel keeps of LaunchEx's checks that need the
// driver, so that repeated launches of one shape ask it once.
type launchExState struct {
	// coop is the last co-residency limit computed for a cooperative
	// launch. A launch within it passes; one beyond it is checked again,
	// so that a limit that grew since (a larger shared memory carveout)
	// never refuses a launch the driver would take.
	coop atomic.Pointer[coopLimit]
	// nonPortable is set once the kernel was seen allowed non-portable
	// cluster sizes (kept: the driver refuses the launch anyway if it
	// was allowed and then forbidden behind this package's back).
	nonPortable atomic.Bool
}

// coopLimit is how many blocks of threads threads with shmem bytes of
// dynamic shared memory can be resident at once.
type coopLimit struct {
	threads, shmem uint32
	perSM, sms     int
}

func (l *coopLimit) blocks() uint64 { return uint64(l.perSM) * uint64(l.sms) }

// checkLimits checks what needs the driver: a cluster beyond the portable
// size against the kernel's opt-in, a cooperative grid against the blocks
// that can be resident at once.
func (k *Kernel) checkLimits(op string, cfg *LaunchConfig, la *launchAttrs) error {
	if c := la.cluster; c.X != 0 {
		if size := uint64(c.X) * uint64(c.Y) * uint64(c.Z); size > PortableClusterSize && !k.ex.nonPortable.Load() {
			allowed, err := k.nonPortableAllowed(op)
			if err != nil {
				return err
			}
			if !allowed {
				return attrError(op, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE,
					"a cluster of %d blocks (%d×%d×%d) is more than the portable limit of %d blocks per cluster: kernel %s must opt in to non-portable sizes first (Kernel.AllowNonPortableClusterSize)",
					size, c.X, c.Y, c.Z, PortableClusterSize, k.name)
			}
		}
	}
	if !la.coop {
		return nil
	}
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	blocks := uint64(g.X) * uint64(g.Y) * uint64(g.Z)
	threads64 := uint64(b.X) * uint64(b.Y) * uint64(b.Z)
	if threads64 > math.MaxInt32 {
		return nil // the driver refuses such a block
	}
	threads := uint32(threads64)
	if l := k.ex.coop.Load(); l != nil && l.threads == threads && l.shmem == cfg.SharedMemBytes && blocks <= l.blocks() {
		return nil
	}
	l, err := k.coopLimit(op, threads, cfg.SharedMemBytes)
	if err != nil {
		return err
	}
	k.ex.coop.Store(l)
	if blocks > l.blocks() {
		return attrError(op, cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
			"a cooperative launch of %d blocks (grid %d×%d×%d) is more than can be resident at once: at most %d blocks of kernel %s, %d per multiprocessor (blocks of %d threads with %d bytes of dynamic shared memory) on %d multiprocessors",
			blocks, g.X, g.Y, g.Z, l.blocks(), k.name, l.perSM, threads, cfg.SharedMemBytes, l.sms)
	}
	return nil
}

// coopLimit asks the driver how many blocks of k can be resident at once.
func (k *Kernel) coopLimit(op string, threads, shmem uint32) (*coopLimit, error) {
	l := &coopLimit{threads: threads, shmem: shmem}
	err := k.withKernel(op, func(st *moduleState) error {
		var n int32
		if err := cu.OccupancyMaxActiveBlocksPerMultiprocessor(&n, k.raw, int32(threads), uint64(shmem)); err != nil {
			return newError(op, "cuOccupancyMaxActiveBlocksPerMultiprocessor", err)
		}
		sms, err := st.ctx.core.val.dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
		if err != nil {
			return err
		}
		l.perSM, l.sms = int(n), sms
		return nil
	})
	return l, err
}

// nonPortableAllowed asks the driver whether k may have clusters beyond
// the portable size.
func (k *Kernel) nonPortableAllowed(op string) (bool, error) {
	var v int32
	err := k.withKernel(op, func(*moduleState) error {
		return check(op, "cuFuncGetAttribute", cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, k.raw))
	})
	if err != nil {
		return false, err
	}
	if v != 0 {
		k.ex.nonPortable.Store(true)
	}
	return v != 0, nil
}

// AllowNonPortableClusterSize lets launches of the kernel have clusters of
// more than PortableClusterSize blocks, where the device has them (16 on
// an H100 or H200; cuFuncSetAttribute,
// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED), or forbids them
// again. The setting is the driver's, for the function: every Kernel of
// it sees it.
func (k *Kernel) AllowNonPortableClusterSize(allow bool) error {
	const op = "Kernel.AllowNonPortableClusterSize"
	if err := k.open(op); err != nil {
		return err
	}
	var v int32
	if allow {
		v = 1
	}
	err := k.withKernel(op, func(*moduleState) error {
		return check(op, "cuFuncSetAttribute", cu.FuncSetAttribute(k.raw, cu.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, v))
	})
	if err == nil {
		k.ex.nonPortable.Store(allow)
	}
	return err
}

// LaunchEx is Launch with attributes: it enqueues the kernel on s with cfg,
// attrs and args, converted as NewArgs does (cuLaunchKernelEx). Up to 16
// arguments, it allocates nothing, attributes included (a Raw slice the
// caller makes on its stack stays there).
//
// Before the driver, it refuses a shape beyond the kernel's limits, as
// Launch does, a cluster that does not divide the grid or
// has more than PortableClusterSize blocks while the kernel has not opted
// in to more (errors matching cu.CUDA_ERROR_INVALID_CLUSTER_SIZE), and a
// cooperative grid larger than can be resident at once (matching
// cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), naming the limit; the
// driver checks the rest. The occupancy behind that limit is asked of the
// driver at the first cooperative launch of a block shape and kept.
//
// cuLaunchKernelEx is in the driver API since CUDA 11.8 (with clusters,
// cooperative launches, programmatic serialization and priorities); an
// older driver gives an error matching ErrMissingFunction.
func (k *Kernel) LaunchEx(s *Stream, cfg LaunchConfig, attrs LaunchAttributes, args ...any) error {
	const op = "Kernel.LaunchEx"
	h, err := k.checkLaunch(op, s, cfg)
	if err != nil {
		return err
	}
	if attrs.count() <= fewLaunchAttrs {
		var buf [fewLaunchAttrs]cu.CUlaunchAttribute
		return k.launchExWith(op, h, &cfg, &attrs, buf[:], nil, args)
	}
	var buf [maxLaunchAttrs]cu.CUlaunchAttribute
	return k.launchExWith(op, h, &cfg, &attrs, buf[:], nil, args)
}

// LaunchArgsEx is LaunchArgs with attributes, as LaunchEx takes them
// (cuLaunchKernelEx): prepared arguments, no allocation.
func (k *Kernel) LaunchArgsEx(s *Stream, cfg LaunchConfig, attrs LaunchAttributes, a *Args) error {
	const op = "Kernel.LaunchArgsEx"
	h, err := k.checkLaunch(op, s, cfg)
	if err != nil {
		return err
	}
	if a == nil {
		return nilError(op + " (args)")
	}
	if a.mem == nil {
		return closedError(op + " (args)")
	}
	if attrs.count() <= fewLaunchAttrs {
		var buf [fewLaunchAttrs]cu.CUlaunchAttribute
		err = k.launchExWith(op, h, &cfg, &attrs, buf[:], a, nil)
	} else {
		var buf [maxLaunchAttrs]cu.CUlaunchAttribute
		err = k.launchExWith(op, h, &cfg, &attrs, buf[:], a, nil)
	}
	runtime.KeepAlive(a)
	return err
}

// launchExWith encodes attrs into buf and launches with the prepared
// arguments a or, when a is nil, with the values args.
func (k *Kernel) launchExWith(op string, h launchHold, cfg *LaunchConfig, attrs *LaunchAttributes, buf []cu.CUlaunchAttribute, a *Args, args []any) error {
	la := launchAttrs{a: buf}
	if err := la.encode(op, attrs, cfg); err != nil {
		return err
	}
	if a != nil {
		if a.k != k {
			if err := k.checkSizes(op, a.sizes, a.aligns, nil); err != nil {
				return err
			}
		}
		var params unsafe.Pointer
		if len(a.sizes) > 0 {
			params = a.mem
		}
		return k.launchEx(op, h, cfg, &la, params, nil, nil, 0)
	}
	if len(args) > maxLaunchValues {
		a, err := k.newArgs(op, args, false)
		if err != nil {
			return err
		}
		err = k.launchEx(op, h, cfg, &la, a.mem, nil, nil, 0)
		C.free(a.mem)
		return err
	}
	var vals [maxLaunchValues]uint64
	if err := k.encodeValues(op, args, &vals); err != nil {
		if err == errByValue {
			return k.launchExPacked(op, h, cfg, &la, args)
		}
		return err
	}
	return k.launchEx(op, h, cfg, &la, nil, &vals[0], nil, len(args))
}

// launchExPacked is launchExWith for arguments of which some pass by value.
func (k *Kernel) launchExPacked(op string, h launchHold, cfg *LaunchConfig, la *launchAttrs, args []any) error {
	var p packedArgs
	if err := k.packArgs(op, args, &p); err != nil {
		if err != errPackedFull {
			return err
		}
		a, err := k.newArgs(op, args, false)
		if err != nil {
			return err
		}
		err = k.launchEx(op, h, cfg, la, a.mem, nil, nil, 0)
		C.free(a.mem)
		return err
	}
	return k.launchEx(op, h, cfg, la, nil, &p.buf[0], &p.offs[0], len(args))
}

// launchEx checks what needs the driver and launches, with params (a
// prepared kernelParams array in C memory) or n values at vals: in 8-byte
// slots, or at the offsets offs where given.
func (k *Kernel) launchEx(op string, h launchHold, cfg *LaunchConfig, la *launchAttrs, params unsafe.Pointer, vals *uint64, offs *uint32, n int) error {
	f, err := procs(op, "cuLaunchKernelEx")
	if err != nil {
		return err
	}
	if f.launchEx == 0 {
		return newError(op, "cuLaunchKernelEx", f.launchExErr)
	}
	if err := k.checkLimits(op, cfg, la); err != nil {
		return err
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	r := C.gocuda_launch_ex(C.uintptr_t(f.launchEx), mops, sops, C.uintptr_t(k.raw),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw),
		(*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(la.a))), C.uint(la.n), C.uintptr_t(uintptr(params)), (*C.uint64_t)(vals), (*C.uint32_t)(offs), C.int(n))
	h.keepAlive()
	return hotResult(op, "cuLaunchKernelEx", " (stream)", int32(r))
}
