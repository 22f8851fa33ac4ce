//go:build linux && (amd64 || arm64)

package solver

import (
	"github.com/gocuda/gocuda/generated/cu"
)

// buffers is the device memory a handle's calls reuse, the workspace
// first and its info words after it: grown when a call needs more, freed
// with the cuSOLVER handle, so that a solve costs the driver no
// allocation, as a C program's loop does not. It is guarded by the
// handle's mu. The info words are zero when made; cuSOLVER writes every
// one a call is given, and the error path puts back zero where it read a
// negative, so the position of an illegal argument read there is never a
// previous call's.
type buffers struct {
	mem       cu.CUdeviceptr
	infoWords uint64
	workBytes uint64 // a multiple of workAlign
}

// workAlign is where the workspace, and the scratch that follows it in
// some calls, start: at the allocation's own alignment, as a workspace of
// its own would, so that cuSOLVER's kernels see the alignment a C
// program's workspace has. (When syevd of order 4096 ran 3 % slower than
// a C loop, an 8-byte-aligned workspace was the one difference left.)
const workAlign = 256

func alignWork(bytes uint64) uint64 { return (bytes + workAlign - 1) &^ (workAlign - 1) }

// reserve makes room for infoWords info words and workBytes of workspace,
// queued on stream; on failure the buffers are as they were.
func (b *buffers) reserve(op string, infoWords, workBytes uint64, stream cu.CUstream) error {
	if infoWords <= b.infoWords && workBytes <= b.workBytes {
		return nil
	}
	iw := max(infoWords, b.infoWords)
	wb := alignWork(max(workBytes, b.workBytes))
	// Stream-ordered, from the device's pool: the old memory goes back
	// after the work queued with it, and cuMemFree's wait for the whole
	// device is avoided.
	var mem cu.CUdeviceptr
	if err := cu.MemAllocAsync(&mem, wb+4*iw, stream); err != nil {
		return check(op, "cuMemAllocAsync", err)
	}
	if err := cu.MemsetD32Async(mem+cu.CUdeviceptr(wb), 0, iw, stream); err != nil {
		_ = cu.MemFreeAsync(mem, stream)
		return check(op, "cuMemsetD32Async", err)
	}
	if b.mem != 0 {
		_ = cu.MemFreeAsync(b.mem, stream)
	}
	b.mem, b.infoWords, b.workBytes = mem, iw, wb
	return nil
}

func (b *buffers) work() cu.CUdeviceptr { return b.mem }
func (b *buffers) info() cu.CUdeviceptr { return b.mem + cu.CUdeviceptr(b.workBytes) }

// free gives the memory back, with the handle's context current.
func (b *buffers) free(op string) error {
	if b.mem == 0 {
		return nil
	}
	err := cu.MemFree(b.mem)
	*b = buffers{}
	return check(op, "cuMemFree", err)
}
