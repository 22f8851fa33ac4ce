package cuda

import (
	"github.com/gocuda/gocuda/generated/cu"
)

// Peer copies move device memory between contexts, of one device or of two
// (cuMemcpyPeer): the driver copies straight over NVLink or PCIe where the
// destination's context has peer access to the source's (EnablePeerAccess,
// EnablePeers), and stages the copy through the host otherwise, so they
// work either way.

// CopyPeer copies the whole of src to the start of dst, memory of any two
// contexts (cuMemcpyPeer), and returns when the copy is done; src.Size()
// must be at most dst.Size(). Like CopyDevice it does not wait for streams
// made by NewStream, in either context.
func CopyPeer(dst, src *DeviceMemory) error {
	return copyPeer("CopyPeer", false, nil, dst.handle(), src.handle(), fitMemory("CopyPeer"))
}

// CopyPeerAsync enqueues on st a copy of the whole of src to the start of
// dst, memory of any two contexts (cuMemcpyPeerAsync), under CopyPeer's
// rules. st may be of either context; the copy is ordered after the work
// queued on st only: order it after work on the other device's streams
// with an event (Stream.WaitEvent), which works across devices.
func CopyPeerAsync(st *Stream, dst, src *DeviceMemory) error {
	return copyPeer("CopyPeerAsync", true, st, dst.handle(), src.handle(), fitMemory("CopyPeerAsync"))
}

// CopySlicePeer copies the whole of src to the start of dst, slices of any
// two contexts (cuMemcpyPeer), and returns when the copy is done;
// src.Len() must be at most dst.Len(). Two views of one allocation must not
// overlap. Like CopySlice it does not wait for streams made by NewStream.
func CopySlicePeer[T Element](dst, src *Slice[T]) error {
	return copyPeer("CopySlicePeer", false, nil, dst.handle(), src.handle(), fitSlices("CopySlicePeer", dst, src))
}

// CopySlicePeerAsync enqueues on st a copy of the whole of src to the start
// of dst, slices of any two contexts (cuMemcpyPeerAsync), under
// CopySlicePeer's rules and CopyPeerAsync's ordering.
func CopySlicePeerAsync[T Element](st *Stream, dst, src *Slice[T]) error {
	return copyPeer("CopySlicePeerAsync", true, st, dst.handle(), src.handle(), fitSlices("CopySlicePeerAsync", dst, src))
}

// fitMemory is the fit of a copy of the whole of one DeviceMemory to the
// start of another.
func fitMemory(op string) func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
	return func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
		if s.size > d.size {
			return 0, 0, 0, invalidArg(op, "copy of %d bytes into device memory of %d", s.size, d.size)
		}
		return d.ptr, s.ptr, s.size, nil
	}
}

// fitSlices is the fit of a copy of the whole of slice src to the start of
// dst (checkSliceCopy's rules).
func fitSlices[T Element](op string, dst, src *Slice[T]) func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
	return func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error) {
		if err := checkSliceCopy(op, dst, src); err != nil {
			return 0, 0, 0, err
		}
		return dst.addr(d, 0), src.addr(s, 0), src.n * sizeOf[T](), nil
	}
}

// copyPeer holds the stream of an asynchronous copy and both ends for the
// whole driver call, asks fit for the addresses and the byte count, and
// copies with peerCopy or peerCopyAsync.
func copyPeer(op string, async bool, st *Stream, dh, sh *handle[memState], fit func(d, s *memState) (cu.CUdeviceptr, cu.CUdeviceptr, int, error)) error {
	var hs holds
	defer hs.release()
	var err error
	if !async {
		err = hs.all(op, arg{"destination", dh}, arg{"source", sh})
	} else {
		err = hs.all(op, arg{"stream", st.handle()}, arg{"destination", dh}, arg{"source", sh})
	}
	if err != nil {
		return err
	}
	d, s := &dh.core.val, &sh.core.val
	dp, sp, n, err := fit(d, s)
	if err != nil {
		return err
	}
	if !async {
		return peerCopy(op, d, s, dp, sp, n)
	}
	return peerCopyAsync(op, &st.h.core.val, d, s, dp, sp, n)
}

// peerCopy is cuMemcpyPeer of n bytes with the destination's context
// current, then a wait on its legacy stream: cuMemcpyPeer returns before
// the copy is done, ordered like work on that stream.
func peerCopy(op string, d, s *memState, dst, src cu.CUdeviceptr, n int) error {
	if n == 0 {
		return nil
	}
	dctx, sctx := d.ctx.raw(), s.ctx.raw()
	return bind(op, dctx, func() error {
		if err := check(op, "cuMemcpyPeer", cu.MemcpyPeer(dst, dctx, src, sctx, uint64(n))); err != nil {
			return err
		}
		return check(op, "cuStreamSynchronize", cu.StreamSynchronize(cu.CUstream(cu.CU_STREAM_LEGACY)))
	})
}

// peerCopyAsync is cuMemcpyPeerAsync of n bytes on ss, with its context
// current.
func peerCopyAsync(op string, ss *streamState, d, s *memState, dst, src cu.CUdeviceptr, n int) error {
	if n == 0 {
		return nil
	}
	dctx, sctx := d.ctx.raw(), s.ctx.raw()
	return bind(op, ss.ctx.raw(), func() error {
		return check(op, "cuMemcpyPeerAsync", cu.MemcpyPeerAsync(dst, dctx, src, sctx, uint64(n), ss.raw))
	})
}

// EnablePeers lets work in each of ctxs access the memory of every other
// one of them that its device can reach (CanAccessPeer), enabling what is
// not enabled yet (EnablePeerAccess both ways); contexts of one device need
// nothing. Pairs the hardware cannot connect are left as they are: peer
// copies between them go through the host, and kernels cannot reach
// across them.
func EnablePeers(ctxs ...*Context) error {
	const op = "EnablePeers"
	for i, a := range ctxs {
		for j, b := range ctxs {
			if i == j {
				continue
			}
			if a.Raw() == 0 || b.Raw() == 0 {
				return closedError(op)
			}
			da, db := a.Device(), b.Device()
			if da.Ordinal() == db.Ordinal() {
				continue
			}
			ok, err := CanAccessPeer(da, db)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if err := EnablePeerAccess(a, b); err != nil {
				return err
			}
		}
	}
	return nil
}
