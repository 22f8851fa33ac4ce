package cuda

/*
// The argument values live in a Go array on the caller's stack: the
// driver reads them through kernelParams during cuLaunchKernel, which
// copies them before it returns, and never calls back into Go.
#cgo noescape gocuda_hot_launch_values
#cgo nocallback gocuda_hot_launch_values
#include "hot.h"
#include <stdint.h>

enum { maxLaunchValues = 16 };

// gocuda_launch_values launches f with n arguments whose bits are in vals,
// one 64-bit slot each, the value in its low-order bytes: on the
// little-endian ABIs this package builds for, a pointer to the slot is a
// pointer to the value, of whatever size the parameter has.
static int gocuda_launch_values(uintptr_t fn, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const uint64_t *vals, int n) {
	void *params[maxLaunchValues];
	for (int i = 0; i < n; i++)
		params[i] = (void *)&vals[i];
	return ((int (*)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		uintptr_t, void **, void **))fn)(f, gx, gy, gz, bx, by, bz, shmem, stream, n ? params : 0, 0);
}

// gocuda_launch_params launches f with the kernelParams array params (C
// memory, or null, passed as an integer: C memory needs no cgo pointer
// check): LaunchArgs's call, through the same entry point.
static int gocuda_launch_params(uintptr_t fn, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, uintptr_t params) {
	return ((int (*)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		uintptr_t, void **, void **))fn)(f, gx, gy, gz, bx, by, bz, shmem, stream, (void **)params, 0);
}

// The two as light hot calls (hot.go), through the entry point in
// gocuda_hot_fns: unless the module's or the stream's handle (ops words at
// mops, sops) is closed.
static int gocuda_hot_launch_values(uintptr_t mops, uintptr_t sops, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const uint64_t *vals, int n) {
	GOCUDA_HOT_FN(gocuda_hot_fn_launch);
	return GOCUDA_HOT_CALL(mops, sops, gocuda_launch_values(fn, f, gx, gy, gz, bx, by, bz, shmem, stream, vals, n));
}

static int gocuda_hot_launch_params(uintptr_t mops, uintptr_t sops, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, uintptr_t params) {
	GOCUDA_HOT_FN(gocuda_hot_fn_launch);
	return GOCUDA_HOT_CALL(mops, sops, gocuda_launch_params(fn, f, gx, gy, gz, bx, by, bz, shmem, stream, params));
}
*/
import "C"

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The entry point of cuLaunchKernel is resolved on the first launch, apart
// from the lifecycle calls of bound.go, which drivers without kernels
// serve, and kept in gocuda_hot_fns, where the launches read it from C; a
// launch that finds it unset resolves it and launches again. That of
// cuLaunchKernelEx, which needs checks in Go before its call, is read from
// launchExEntry.
var launchExEntry atomic.Uintptr

// launchProc resolves the entry point of cuLaunchKernel.
func launchProc() (uintptr, error) {
	if f := hotFnOf(hotLaunch); f != 0 {
		return f, nil
	}
	f, err := cu.Proc("cuLaunchKernel")
	if err != nil {
		return 0, err
	}
	setHotFn(hotLaunch, f)
	return f, nil
}

func launchExProc() (uintptr, error) {
	if f := launchExEntry.Load(); f != 0 {
		return f, nil
	}
	f, err := cu.Proc("cuLaunchKernelEx")
	if err != nil {
		return 0, err
	}
	launchExEntry.Store(f)
	return f, nil
}

// launchResolved resolves cuLaunchKernel's entry point after a launch
// found it unset (r, hotUnresolved), and reports whether to launch again:
// r otherwise, or a failed lookup, is the launch's result.
func launchResolved(r C.int) bool {
	if int32(r) != hotUnresolved {
		return false
	}
	_, err := launchProc()
	return err == nil
}

// setLaunchEntries puts launch and launchEx in place of the driver's entry
// points, for tests and benchmarks of the Go side; restore puts back what
// was there.
func setLaunchEntries(launch, launchEx uintptr) (restore func()) {
	l := hotFnOf(hotLaunch)
	setHotFn(hotLaunch, launch)
	x := launchExEntry.Swap(launchEx)
	return func() { setHotFn(hotLaunch, l); launchExEntry.Store(x) }
}

// maxLaunchValues is how many arguments Launch passes without allocating;
// more go through a prepared Args, as LaunchArgs's do.
const maxLaunchValues = 16

// Launch enqueues the kernel on s with cfg and args, converted as NewArgs
// does (cuLaunchKernel). It returns once the launch is enqueued; errors of
// the kernel's execution show at a later synchronization. Up to 16
// arguments it allocates nothing (the values the compiler can box without
// allocating: numbers, *DeviceMemory); more are copied to C memory at each
// call. NewArgs and LaunchArgs save the encoding too. A *DeviceMemory
// argument gives its address and is not held: as with any work enqueued,
// the memory must stay allocated until the kernel has run.
func (k *Kernel) Launch(s *Stream, cfg LaunchConfig, args ...any) error {
	const op = "Kernel.Launch"
	if len(args) > maxLaunchValues {
		return k.launchMany(op, s, cfg, args)
	}
	h, err := k.checkLaunch(op, s, cfg)
	if err != nil {
		return err
	}
	// The values are encoded into an array on the stack and launched in
	// one C call (encodeValues reads the common numbers by their type
	// word and checks every size in the same pass).
	var vals [maxLaunchValues]uint64
	if err := k.encodeValues(op, args, &vals); err != nil {
		return err
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	launch := func() C.int {
		return C.gocuda_hot_launch_values(mops, sops, C.uintptr_t(k.raw),
			C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
			C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw), (*C.uint64_t)(&vals[0]), C.int(len(args)))
	}
	r := launch()
	if launchResolved(r) {
		r = launch()
	}
	h.keepAlive()
	return launchResult(op, int32(r))
}

// launchResult is hotResult for cuLaunchKernel: still unresolved after
// launchResolved, the entry point's lookup failed.
func launchResult(op string, r int32) error {
	if r == 0 {
		return nil
	}
	if r == hotUnresolved {
		if _, err := launchProc(); err != nil {
			return newError(op, "cuLaunchKernel", err)
		}
		// Resolved, yet unset: nothing clears it once set.
		return newError(op, "cuLaunchKernel", errors.New("cuda: the entry point of cuLaunchKernel is still unset after it was resolved"))
	}
	return hotError(op, "cuLaunchKernel", " (stream)", r)
}

// hotParams launches with the prepared arguments a (their kernelParams
// array in C memory) as a hot call, h from checkLaunch.
func (k *Kernel) hotParams(op string, h launchHold, cfg LaunchConfig, a *Args) error {
	var params unsafe.Pointer
	if len(a.sizes) > 0 {
		params = a.mem
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	launch := func() C.int {
		return C.gocuda_hot_launch_params(mops, sops, C.uintptr_t(k.raw),
			C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
			C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw), C.uintptr_t(uintptr(params)))
	}
	r := launch()
	if launchResolved(r) {
		r = launch()
	}
	h.keepAlive()
	return launchResult(op, int32(r))
}

// encodeValues is Launch's encoding of up to maxLaunchValues
// arguments into vals, checked against k's parameter sizes where known.
//
// It reads each interface value's two words in place: the fixed-size
// numbers of the fast path are recognized by their type word and copied
// from where the data word points, and only the other types go through
// encodeArg. The sizes are packed into one word as they come, compared
// once with the kernel's (sizeSig), so that a launch that fits costs
// little more than the copy; valuesError works out what is wrong only
// when something is.
func (k *Kernel) encodeValues(op string, args []any, vals *[maxLaunchValues]uint64) error {
	n := len(args)
	efs := unsafe.Slice((*eface)(unsafe.Pointer(unsafe.SliceData(args))), n)
	out := vals[:n]
	var sig uint64
	for i := range efs {
		e := &efs[i]
		switch e.typ {
		case typeUint64, typeDevicePtr, typeInt64, typeFloat64, typeUintptr:
			out[i] = *(*uint64)(e.data)
			sig = sig<<4 | 8
		case typeFloat32, typeInt32, typeUint32:
			out[i] = uint64(*(*uint32)(e.data))
			sig = sig<<4 | 4
		default:
			bits, size, why := encodeArg(args[i])
			if why != argOK {
				return argError(op, i, args[i], why)
			}
			out[i] = bits
			sig = sig<<4 | uint64(size)
		}
	}
	if k.paramsKnown && sig != k.sig {
		return k.valuesError(op, args)
	}
	return nil
}

// sigNone is the size signature of a kernel whose parameters no arguments
// of Launch fit on the stack: more than maxLaunchValues of them, or a size other
// than 1, 2, 4 or 8 bytes. No arguments give it, as their sizes are
// never 15.
const sigNone = ^uint64(0)

// sizeSig returns parameter sizes packed as encodeValues packs the
// arguments' (4 bits each, the last parameter in the low bits). The count
// is in it too: no size is 0.
func sizeSig(params []uint32) uint64 {
	if len(params) > maxLaunchValues {
		return sigNone
	}
	var sig uint64
	for _, s := range params {
		if s != 1 && s != 2 && s != 4 && s != 8 {
			return sigNone
		}
		sig = sig<<4 | uint64(s)
	}
	return sig
}

// valuesError is the error of arguments that do not fit k: the first one
// that is no kernel argument, else the mismatch checkSizes describes.
func (k *Kernel) valuesError(op string, args []any) error {
	sizes := make([]uint8, len(args))
	for i, v := range args {
		_, size, why := encodeArg(v)
		if why != argOK {
			return argError(op, i, v, why)
		}
		sizes[i] = size
	}
	if err := k.checkSizes(op, sizes, args); err != nil {
		return err
	}
	// Only an argument that changed between the two passes (device memory
	// closed meanwhile gives its own error above) gets here.
	return argsErr(op, "the arguments of kernel %s changed during the launch", k.name)
}

// launchRaw calls fn as cuLaunchKernel with a prepared kernelParams array
// in C memory, as a C program would: the baseline of the benchmarks of the
// Go side (launch_bench_test.go). LaunchArgs makes the same call through
// gocuda_hot_launch_params.
func launchRaw(fn uintptr, f cu.CUfunction, cfg LaunchConfig, s cu.CUstream, params unsafe.Pointer) cu.CUresult {
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	return cu.CUresult(C.gocuda_launch_params(C.uintptr_t(fn), C.uintptr_t(f),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(s), C.uintptr_t(uintptr(params))))
}

// eface is the layout of an interface value of type any: its dynamic
// type's descriptor and its data word (for the types of Launch's
// fast path, which are not pointer-shaped, a pointer to the value).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// The type words of the arguments Launch reads without encodeArg.
var (
	typeUint64    = typeWord(uint64(0))
	typeDevicePtr = typeWord(cu.CUdeviceptr(0))
	typeInt64     = typeWord(int64(0))
	typeFloat64   = typeWord(float64(0))
	typeUintptr   = typeWord(uintptr(0))
	typeFloat32   = typeWord(float32(0))
	typeInt32     = typeWord(int32(0))
	typeUint32    = typeWord(uint32(0))
)
