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
	fn := memsetFns[width]
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	entry := f.memsetD8
	switch width {
	case 2:
		entry = f.memsetD16
	case 4:
		entry = f.memsetD32
	}
	return boundMemset(op, fn, ctx, entry, f.syncStream, p, v, n)
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
