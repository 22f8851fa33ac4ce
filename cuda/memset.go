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

// memsetColumnsSync sets n elements of 4·len(words) bytes at p, whose
// 32-bit words are words, in ctx and returns when it is done: each word is
// a column of cuMemsetD2D32, one 32-bit value per element-wide row (the
// driver wants the pointer and the pitch 4-byte aligned, which 8- and
// 16-byte elements are), then the legacy stream's synchronize as with
// memsetSync.
func memsetColumnsSync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, words []uint32, n int) error {
	pitch := uint64(4 * len(words))
	return bind(op, ctx, func() error {
		for i, w := range words {
			if err := cu.MemsetD2D32(p+cu.CUdeviceptr(4*i), pitch, w, 1, uint64(n)); err != nil {
				return newError(op, "cuMemsetD2D32", err)
			}
		}
		return check(op, "cuStreamSynchronize", cu.StreamSynchronize(cu.CUstream(cu.CU_STREAM_LEGACY)))
	})
}

// memsetColumnsAsync enqueues memsetColumnsSync's columns on s, a stream
// of ctx.
func memsetColumnsAsync(op string, ctx cu.CUcontext, p cu.CUdeviceptr, words []uint32, n int, s cu.CUstream) error {
	pitch := uint64(4 * len(words))
	return bind(op, ctx, func() error {
		for i, w := range words {
			if err := cu.MemsetD2D32Async(p+cu.CUdeviceptr(4*i), pitch, w, 1, uint64(n), s); err != nil {
				return newError(op, "cuMemsetD2D32Async", err)
			}
		}
		return nil
	})
}
