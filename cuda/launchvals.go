package cuda

/*
// The argument values live in a Go array on the caller's stack: the
// driver reads them through kernelParams during cuLaunchKernel, which
// copies them before it returns, and never calls back into Go.
#cgo noescape gocuda_launch_values
#cgo nocallback gocuda_launch_values
#include <stdlib.h>
#include "zfused.h"

enum { maxLaunchValues = 16 };

// gocuda_launch_values launches f through fn (cuLaunchKernel) as a hot
// call, with n arguments whose bits are in vals, one 64-bit slot each, the
// value in its low-order bytes: on the little-endian ABIs this package
// builds for, a pointer to the slot is a pointer to the value, of whatever
// size the parameter has.
static int gocuda_launch_values(uintptr_t fn, uintptr_t mops, uintptr_t sops, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const uint64_t *vals, int n) {
	void *params[maxLaunchValues];
	for (int i = 0; i < n; i++)
		params[i] = (void *)&vals[i];
	return gocuda_hot_cuLaunchKernel(fn, mops, sops, f, gx, gy, gz, bx, by, bz, shmem, stream, n ? params : 0, 0);
}

// gocuda_launch_packed is gocuda_launch_values for arguments of any size:
// argument i is at offs[i] bytes into buf.
#cgo noescape gocuda_launch_packed
#cgo nocallback gocuda_launch_packed
static int gocuda_launch_packed(uintptr_t fn, uintptr_t mops, uintptr_t sops, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, const uint64_t *buf, const uint32_t *offs, int n) {
	void *params[maxLaunchValues];
	for (int i = 0; i < n; i++)
		params[i] = (char *)buf + offs[i];
	return gocuda_hot_cuLaunchKernel(fn, mops, sops, f, gx, gy, gz, bx, by, bz, shmem, stream, n ? params : 0, 0);
}
*/
import "C"

import (
	"errors"
	"math"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// launchHold is what a launch holds as a hot call (hot.go): the module's
// handle (so that it is not unloaded under the launch) and the stream's,
// with their cores marked so that their destroy waits for it.
type launchHold struct {
	mh *handle[moduleState]
	sh *handle[streamState]
}

// checkLaunch is what every launch checks first, before its arguments:
// the kernel's module and the stream open (ErrClosed, as for any handle),
// then the shape. It returns what the launch holds, with the cores marked
// for a hot call; the C side checks the handles again under the thread's
// mark.
func (k *Kernel) checkLaunch(op string, s *Stream, cfg LaunchConfig) (launchHold, error) {
	mh, sh := k.module(), s.handle()
	h := launchHold{mh: mh, sh: sh}
	// The cores are marked before the C side looks; peek reports a nil,
	// zero or closed handle.
	hotReady(mh)
	hotReady(sh)
	if _, ok := mh.peek(); !ok {
		return h, mh.closedError(op)
	}
	if _, ok := sh.peek(); !ok {
		return h, sh.closedError(op + " (stream)")
	}
	if err := checkConfig(op, cfg); err != nil {
		return h, err
	}
	// The limits, once known, are checked here in a few comparisons; the
	// first launch, and one that exceeds them, go out of line.
	if l := k.limits.Load(); l == nil || !l.fits(&cfg) {
		return h, k.checkShape(op, &cfg)
	}
	return h, nil
}

func (h launchHold) ops() (C.uintptr_t, C.uintptr_t) { return opsAddr(h.mh), opsAddr(h.sh) }

func (h launchHold) keepAlive() {
	runtime.KeepAlive(h.mh) // and so their cores
	runtime.KeepAlive(h.sh)
}

// launchEntry returns cuLaunchKernel's entry point, or op's error where
// the driver has none.
func launchEntry(op string) (uintptr, error) {
	f, err := procs(op, "cuLaunchKernel")
	if err != nil {
		return 0, err
	}
	if f.launch == 0 {
		return 0, newError(op, "cuLaunchKernel", f.launchErr)
	}
	return f.launch, nil
}

// maxLaunchValues is how many arguments Launch passes without allocating;
// more go through a prepared Args, as LaunchArgs's do.
const maxLaunchValues = 16

// Launch enqueues the kernel on s with cfg and args, converted as NewArgs
// does (cuLaunchKernel). It returns once the launch is enqueued; errors of
// the kernel's execution show at a later synchronization. Up to 16
// arguments it allocates nothing (the values the compiler can box without
// allocating: numbers, *DeviceMemory, structs and arrays a caller passes
// directly), structs and arrays passed by value included while all the
// arguments take at most 1 KiB; more are copied to C memory at each call.
// NewArgs and LaunchArgs save the encoding too. A *DeviceMemory argument
// gives its address and is not held: as with any work enqueued, the
// memory must stay allocated until the kernel has run.
//
// Before the driver, it refuses a shape beyond the limits of the kernel
// and its device, naming the limit (errors matching
// cu.CUDA_ERROR_INVALID_VALUE): threads per block (the device's, or the
// kernel's own where its registers or launch bounds lower it), block and
// grid dimensions, and dynamic shared memory beyond the kernel's limit,
// which Kernel.SetMaxDynamicSharedMemory raises. The limits are asked of
// the driver at the kernel's first launch and kept.
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
		if err == errByValue {
			return k.launchPacked(op, h, cfg, args)
		}
		return err
	}
	fn, err := launchEntry(op)
	if err != nil {
		return err
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	r := C.gocuda_launch_values(C.uintptr_t(fn), mops, sops, C.uintptr_t(k.raw),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw), (*C.uint64_t)(&vals[0]), C.int(len(args)))
	h.keepAlive()
	return hotResult(op, "cuLaunchKernel", " (stream)", int32(r))
}

// packedBytes is how many bytes of arguments Launch and LaunchEx pass from
// the stack when some pass by value (structs, arrays); more are copied to
// C memory at each call, as for more than maxLaunchValues arguments.
const packedBytes = 1024

// packedArgs are arguments of any size, each at an offset of buf that is a
// multiple of 8 (the largest alignment of a Go type here).
type packedArgs struct {
	buf  [packedBytes / 8]uint64
	offs [maxLaunchValues]uint32
}

// errPackedFull is packArgs's answer for arguments that do not fit a
// packedArgs.
var errPackedFull = errors.New("arguments larger than a packedArgs")

// packArgs encodes up to maxLaunchValues arguments of any kind into p and
// checks them against k's parameters where known: sizes, and the offsets
// of the values passed by their bytes against their alignment. It returns
// errPackedFull for arguments that do not fit.
func (k *Kernel) packArgs(op string, args []any, p *packedArgs) error {
	var sizes [maxLaunchValues]uint32
	var aligns [maxLaunchValues]uint8
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&p.buf[0])), packedBytes)
	end := uint32(0)
	for i, v := range args {
		bits, size, why := encodeArg(v)
		switch why {
		case argOK:
			if end+8 > packedBytes {
				return errPackedFull
			}
			writeArg(unsafe.Pointer(&buf[end]), bits, size)
			p.offs[i], sizes[i] = end, uint32(size)
			end += 8
		case argByValue:
			l, err := byValueArg(op, i, v)
			if err != nil {
				return err
			}
			if uint64(end)+uint64(l.size) > packedBytes {
				return errPackedFull
			}
			copy(buf[end:end+l.size], unsafe.Slice((*byte)(argBytes(&args[i])), l.size))
			p.offs[i], sizes[i], aligns[i] = end, l.size, uint8(l.align)
			end += (l.size + 7) &^ 7
		default:
			return argError(op, i, v, why)
		}
	}
	return k.checkSizes(op, sizes[:len(args)], aligns[:len(args)], args)
}

// launchPacked is Launch for arguments of which some pass by value.
func (k *Kernel) launchPacked(op string, h launchHold, cfg LaunchConfig, args []any) error {
	var p packedArgs
	if err := k.packArgs(op, args, &p); err != nil {
		if err != errPackedFull {
			return err
		}
		a, err := k.newArgs(op, args, false)
		if err != nil {
			return err
		}
		err = k.hotParams(op, h, cfg, a)
		C.free(a.mem)
		return err
	}
	fn, err := launchEntry(op)
	if err != nil {
		return err
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	r := C.gocuda_launch_packed(C.uintptr_t(fn), mops, sops, C.uintptr_t(k.raw),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw),
		(*C.uint64_t)(&p.buf[0]), (*C.uint32_t)(&p.offs[0]), C.int(len(args)))
	h.keepAlive()
	return hotResult(op, "cuLaunchKernel", " (stream)", int32(r))
}

// hotParams launches with the prepared arguments a (their kernelParams
// array in C memory) as a hot call, h from checkLaunch.
func (k *Kernel) hotParams(op string, h launchHold, cfg LaunchConfig, a *Args) error {
	fn, err := launchEntry(op)
	if err != nil {
		return err
	}
	var params unsafe.Pointer
	if len(a.sizes) > 0 {
		params = a.mem
	}
	mops, sops := h.ops()
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	r := C.gocuda_hot_cuLaunchKernel(C.uintptr_t(fn), mops, sops, C.uintptr_t(k.raw),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(h.sh.core.val.raw), params, nil)
	h.keepAlive()
	return hotResult(op, "cuLaunchKernel", " (stream)", int32(r))
}

// errByValue is encodeValues's answer for arguments of which some pass by
// their bytes, which the caller then packs (packArgs).
var errByValue = errors.New("arguments passed by value")

// encodeValues is Launch's encoding of up to maxLaunchValues
// arguments into vals, checked against k's parameter sizes where known.
// The sizes are packed into one word as they come, compared once with the
// kernel's (sizeSig), so that a launch that fits costs little more than
// the copy; valuesError works out what is wrong only when something is.
// Arguments of which some pass by value give errByValue.
func (k *Kernel) encodeValues(op string, args []any, vals *[maxLaunchValues]uint64) error {
	out := vals[:len(args)]
	var sig uint64
	for i, v := range args {
		// The numbers a launch passes most often are taken here, where
		// the switch compiles to a few comparisons of the type word;
		// encodeArg's longer switch, a call away, takes the rest.
		switch x := v.(type) {
		case uint64:
			out[i], sig = x, sig<<4|8
		case cu.CUdeviceptr:
			out[i], sig = uint64(x), sig<<4|8
		case int64:
			out[i], sig = uint64(x), sig<<4|8
		case float32:
			out[i], sig = uint64(math.Float32bits(x)), sig<<4|4
		case int32:
			out[i], sig = uint64(uint32(x)), sig<<4|4
		case uint32:
			out[i], sig = uint64(x), sig<<4|4
		default:
			bits, size, why := encodeArg(v)
			if why != argOK {
				if why == argByValue {
					return errByValue
				}
				return argError(op, i, v, why)
			}
			out[i], sig = bits, sig<<4|uint64(size)
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
	sizes := make([]uint32, len(args))
	for i, v := range args {
		_, size, why := encodeArg(v)
		if why != argOK {
			return argError(op, i, v, why)
		}
		sizes[i] = uint32(size)
	}
	if err := k.checkSizes(op, sizes, nil, args); err != nil {
		return err
	}
	// Only an argument that changed between the two passes (device memory
	// closed meanwhile gives its own error above) gets here.
	return argsErr(op, "the arguments of kernel %s changed during the launch", k.name)
}
