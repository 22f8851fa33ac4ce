package cuda

/*
// The argument values live in a Go array on the caller's stack: the
// driver reads them through kernelParams during cuLaunchKernel, which
// copies them before it returns, and never calls back into Go.
#cgo noescape gocuda_launch_values
#cgo nocallback gocuda_launch_values
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
*/
import "C"

import (
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
)

// launchProc is cuLaunchKernel's entry point, resolved on the first
// launch: apart from the lifecycle calls (bound.go), which drivers without
// kernels (the fake driver of cudatest) still serve.
var launchProc = sync.OnceValues(func() (uintptr, error) { return cu.Proc("cuLaunchKernel") })

// maxLaunchValues is how many arguments Launch passes without allocating;
// more go through a prepared Args, as LaunchArgs's do.
const maxLaunchValues = 16

// launchValues is Launch for up to maxLaunchValues arguments: encoded into
// an array on the stack and launched in one C call, without allocating.
func (k *Kernel) launchValues(op string, s *Stream, cfg LaunchConfig, args []any) error {
	var vals [maxLaunchValues]uint64
	var sizes [maxLaunchValues]uint8
	for i, v := range args {
		b, size, why := encodeArg(v)
		if why != argOK {
			return argError(op, i, v, why)
		}
		vals[i], sizes[i] = b, size
	}
	n := len(args)
	if err := k.checkSizes(op, sizes[:n], args); err != nil {
		return err
	}
	fn, err := launchProc()
	if err != nil {
		return newError(op, "cuLaunchKernel", err)
	}
	st, err := k.enterLaunch(op, s)
	if err != nil {
		return err
	}
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	r := C.gocuda_launch_values(C.uintptr_t(fn), C.uintptr_t(k.raw),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedMemBytes), C.uintptr_t(st.raw), (*C.uint64_t)(&vals[0]), C.int(n))
	k.exitLaunch(s)
	if r != 0 {
		return newError(op, "cuLaunchKernel", cu.CUresult(r))
	}
	return nil
}
