//go:build linux && (amd64 || arm64)

package solver

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusolver"
)

// A call is one cuSOLVER function with its workspace query: size asks
// for the workspace in elements of T (nil: the function takes none),
// run queues the work with work and info in device memory.
type call[T Float] struct {
	op, fn   string
	size     func(h cusolver.CusolverDnHandle_t) (lwork int32, err error)
	run      func(h cusolver.CusolverDnHandle_t, work *T, lwork int32, info *int32) error
	positive error // what an info > 0 means; nil where the call has none
	// batch is the number of info words of a batched call, one per
	// matrix; 0 for a call with one.
	batch int
	// scratch is a number of elements of T the call needs beside its
	// workspace, allocated with it and handed to useScratch before run.
	scratch    int
	useScratch func(p *T)
}

// do makes the call on h, holding hold, and returns its info as an
// error. The workspace and the info words are the handle's (buffers),
// grown if the call needs more; do queues the work, waits for the
// stream and reads info back: a synchronizing call, so that an error is
// never missed.
func (c call[T]) do(h *Handle, hold []cuda.Holder) error {
	infos := make([]int32, max(c.batch, 1))
	infoBytes := uint64(4 * len(infos))
	err := h.call("solver."+c.op, func(raw cusolver.CusolverDnHandle_t, stream cu.CUstream) error {
		var lwork int32
		if c.size != nil {
			var err error
			if lwork, err = c.size(raw); err != nil {
				return check(c.op, c.fn+"_bufferSize", err)
			}
			if lwork < 0 {
				return fmt.Errorf("solver: %s: %s_bufferSize gave a workspace of %d elements", c.op, c.fn, lwork)
			}
		}
		// The scratch follows the workspace, aligned as it is.
		lwBytes := alignWork(uint64(lwork) * uint64(sizeOf[T]()))
		b := h.buf
		if err := b.reserve(c.op, uint64(len(infos)), lwBytes+uint64(c.scratch)*uint64(sizeOf[T]()), stream); err != nil {
			return err
		}
		infoPtr, mem := b.info(), b.work()
		if c.scratch > 0 {
			c.useScratch((*T)(devptr.Of(mem + cu.CUdeviceptr(lwBytes))))
		}
		var work *T
		if lwork > 0 {
			work = (*T)(devptr.Of(mem))
		}
		if err := c.run(raw, work, lwork, (*int32)(devptr.Of(infoPtr))); err != nil {
			// An illegal argument may have its position in info too, as
			// LAPACK reports it; the word is put back to zero.
			err = check(c.op, c.fn, err)
			var v int32
			if cu.StreamSynchronize(stream) == nil && cu.MemcpyDtoH(unsafe.Pointer(&v), infoPtr, 4) == nil && v < 0 {
				err = errors.Join(err, infoError(c.op, c.fn, int(v), nil))
				if zerr := cu.MemsetD32(infoPtr, 0, 1); zerr != nil {
					err = errors.Join(err, check(c.op, "cuMemsetD32", zerr))
				}
			}
			return err
		}
		if err := cu.StreamSynchronize(stream); err != nil {
			return check(c.op, "cuStreamSynchronize", err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&infos[0]), infoPtr, infoBytes); err != nil {
			return check(c.op, "cuMemcpyDtoH", err)
		}
		return nil
	}, hold...)
	if err != nil {
		return err
	}
	if c.batch == 0 {
		return infoError(c.op, c.fn, int(infos[0]), c.positive)
	}
	var errs []error
	for i, v := range infos {
		if err := infoError(c.op, c.fn, int(v), c.positive); err != nil {
			err.(*InfoError).Batch = i
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fnName is cuSOLVER's name of the S or D function for T.
func fnName[T Float](base string) string {
	if sizeOf[T]() == 4 {
		return "cusolverDnS" + base
	}
	return "cusolverDnD" + base
}

// as64 reinterprets a *T as the binding's pointer type when T is float64
// (and as32 when float32): the two functions of a pair differ only in it.
func as32[T Float](p *T) *float32 { return (*float32)(unsafe.Pointer(p)) }
func as64[T Float](p *T) *float64 { return (*float64)(unsafe.Pointer(p)) }

// elemAt is the address of element i of the device array at p.
func elemAt[T Float](p *T, i int) *T {
	return (*T)(unsafe.Add(unsafe.Pointer(p), i*sizeOf[T]()))
}
