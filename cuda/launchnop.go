package cuda

/*
#include <stdint.h>

// gocuda_launch_nop has cuLaunchKernel's signature and does nothing: the
// benchmarks of the Go side of a launch (launch_bench_test.go) put it in
// place of the driver's entry point, so that they run on the fake driver,
// which has no cuLaunchKernel, and measure only this package's work.
static int gocuda_launch_nop(uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t stream, void **params, void **extra) {
	return 0;
}

static uintptr_t gocuda_launch_nop_addr(void) { return (uintptr_t)gocuda_launch_nop; }
*/
import "C"

// launchNop returns the address of a C function with cuLaunchKernel's
// signature that returns CUDA_SUCCESS and does nothing (for benchmarks).
func launchNop() uintptr { return uintptr(C.gocuda_launch_nop_addr()) }
