package cuda

import "github.com/gocuda/gocuda/generated/cu"

// The memsets of DeviceMemory and Slice: n elements of width bytes (1, 2
// or 4, the driver's memset widths) at p, set to the low width bytes of v.
// The callers hold the memory (and the stream) and check the span.

var (
	memsetFns      = [...]string{1: "cuMemsetD8", 2: "cuMemsetD16", 4: "cuMemsetD32"}
	memsetAsyncFns = [...]string{1: "cuMemsetD8Async", 2: "cuMemsetD16Async", 4: "cuMemsetD32Async"}
)

// memsetSync sets the span in ctx and returns when it is done, after the
// legacy stream's synchronize (boundMemset).
func memsetSync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, width int, v uint32, n int) error {
	f, err := procs(op, memsetFns[width])
	if err != nil {
		return err
	}
	return boundMemset(op, f, ctx, p, width, v, n)
}

// memsetAsync enqueues setting the span on s, a stream of ctx.
func memsetAsync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, width int, v uint32, n int, s cu.CUstream) error {
	return bind(op, ctx, func() error {
		var err error
		switch width {
		case 1:
			err = cu.MemsetD8Async(p, uint8(v), uint64(n), s)
		case 2:
			err = cu.MemsetD16Async(p, uint16(v), uint64(n), s)
		default:
			err = cu.MemsetD32Async(p, v, uint64(n), s)
		}
		return check(op, memsetAsyncFns[width], err)
	})
}

// memsetHalvesSync sets n 8-byte elements at p, whose 32-bit halves are lo
// and hi, in ctx and returns when it is done: each half is a column of
// cuMemsetD2D32, one 32-bit value per 8-byte row (the driver wants the
// pointer and the pitch 4-byte aligned, which 8-byte elements are), then
// the legacy stream's synchronize as with memsetSync.
func memsetHalvesSync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, lo, hi uint32, n int) error {
	return bind(op, ctx, func() error {
		if err := cu.MemsetD2D32(p, 8, lo, 1, uint64(n)); err != nil {
			return newError(op, "cuMemsetD2D32", err)
		}
		if err := cu.MemsetD2D32(p+4, 8, hi, 1, uint64(n)); err != nil {
			return newError(op, "cuMemsetD2D32", err)
		}
		return check(op, "cuStreamSynchronize", cu.StreamSynchronize(cu.CUstream(cu.CU_STREAM_LEGACY)))
	})
}

// memsetHalvesAsync enqueues memsetHalvesSync's two columns on s, a stream
// of ctx.
func memsetHalvesAsync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, lo, hi uint32, n int, s cu.CUstream) error {
	return bind(op, ctx, func() error {
		if err := cu.MemsetD2D32Async(p, 8, lo, 1, uint64(n), s); err != nil {
			return newError(op, "cuMemsetD2D32Async", err)
		}
		return check(op, "cuMemsetD2D32Async", cu.MemsetD2D32Async(p+4, 8, hi, 1, uint64(n), s))
	})
}
