package cuda

import (
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The bodies of the copies that DeviceMemory and Slice share. The exported
// functions differ only in where the device end starts and how a size that
// does not fit is reported (bytes or elements): fit answers both for the
// caller while it holds the memory.

// waitWriters makes a synchronous copy or memset of memory see the work
// queued before it: the synchronous calls run on the context's legacy
// default stream, which the non-blocking streams of this package do not
// order. Memory made on a stream waits for that stream
// (cuStreamSynchronize); memory of two streams, or of none, for the whole
// context (cuCtxSynchronize).
func waitWriters(op string, st *memState, other ...*memState) error {
	s := st.stream
	for _, o := range other {
		if o.stream != s {
			s = nil
		}
	}
	return bind(op, st.ctx.raw(), func() error {
		if s != nil {
			return check(op, "cuStreamSynchronize", cu.StreamSynchronize(s.val.raw))
		}
		return check(op, "cuCtxSynchronize", cu.CtxSynchronize())
	})
}

// copySync copies n bytes between host memory and device memory h, from
// host to device (toDevice, cuMemcpyHtoD) or back (cuMemcpyDtoH), after
// the work queued before it (waitWriters), and returns when the data is
// there; fit gives the device address.
func copySync(op string, h *handle[memState], toDevice bool, host unsafe.Pointer, n int, fit func(*memState) (cu.CUdeviceptr, error)) error {
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	p, err := fit(st)
	if err != nil || n == 0 {
		return err
	}
	fn := "cuMemcpyDtoH"
	if toDevice {
		fn = "cuMemcpyHtoD"
	}
	f, err := procs(op, fn)
	if err != nil {
		return err
	}
	if err := waitWriters(op, st); err != nil {
		return err
	}
	if toDevice {
		return boundHtoD(op, st.ctx.raw(), f, p, host, n)
	}
	return boundDtoH(op, st.ctx.raw(), f, host, p, n)
}

// copyHostAsync enqueues on s a copy of the whole of the page-locked
// buffer hh into device memory dh (toDevice) or of device memory dh into
// the whole of hh (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync). It holds the
// stream and both ends for the whole driver call; fit gives the device
// address, or the error of a buffer that does not fit.
func copyHostAsync(op string, s *Stream, toDevice bool, dh *handle[memState], hh *handle[hostState], fit func(dm *memState, bytes int) (cu.CUdeviceptr, error)) error {
	var hs holds
	defer hs.release()
	sh := s.handle()
	var err error
	if toDevice {
		err = hs.all(op, arg{"stream", sh}, arg{"destination", dh}, arg{"source", hh})
	} else {
		err = hs.all(op, arg{"stream", sh}, arg{"destination", hh}, arg{"source", dh})
	}
	if err != nil {
		return err
	}
	ss, dm, hb := &sh.core.val, &dh.core.val, &hh.core.val
	p, err := fit(dm, hb.bytes)
	if err != nil || hb.bytes == 0 {
		return err
	}
	return bind(op, dm.ctx.raw(), func() error {
		if toDevice {
			return check(op, "cuMemcpyHtoDAsync", cu.MemcpyHtoDAsync(p, hb.ptr, uint64(hb.bytes), ss.raw))
		}
		return check(op, "cuMemcpyDtoHAsync", cu.MemcpyDtoHAsync(hb.ptr, p, uint64(hb.bytes), ss.raw))
	})
}

// copyDeviceAsync enqueues on s a copy between device memories dh and sh
// (cuMemcpyDtoDAsync), holding all three for the whole driver call; fit
// gives both addresses and the byte count, or the error of a copy that
// does not fit.
func copyDeviceAsync(op string, s *Stream, dh, sh *handle[memState], fit func(d, s *memState) (dst, src cu.CUdeviceptr, n int, err error)) error {
	var hs holds
	defer hs.release()
	th := s.handle()
	if err := hs.all(op, arg{"stream", th}, arg{"destination", dh}, arg{"source", sh}); err != nil {
		return err
	}
	ss, d := &th.core.val, &dh.core.val
	dp, sp, n, err := fit(d, &sh.core.val)
	if err != nil || n == 0 {
		return err
	}
	return bind(op, d.ctx.raw(), func() error {
		return check(op, "cuMemcpyDtoDAsync", cu.MemcpyDtoDAsync(dp, sp, uint64(n), ss.raw))
	})
}

// copyGoSlice runs copy, a stream-ordered copy of n bytes between device
// memory dh and a Go slice through the context's staging buffers (see
// Slice.CopyFromHost), with the stream and the memory held and the
// context bound; fits refuses a copy that does not fit first. An empty
// copy makes no driver call.
func copyGoSlice(op string, s *Stream, dh *handle[memState], n int, fits func() error, copy func(m *memState, pool *stagingPool, raw cu.CUstream) error) error {
	var hs holds
	defer hs.release()
	sh := s.handle()
	if err := hs.all(op, arg{"stream", sh}, arg{"slice", dh}); err != nil {
		return err
	}
	ss, m := &sh.core.val, &dh.core.val
	if err := fits(); err != nil || n == 0 {
		return err
	}
	if ss.ctx.raw() != m.ctx.raw() {
		return invalidArg(op, "the stream is of another context than the memory")
	}
	return bind(op, m.ctx.raw(), func() error { return copy(m, m.ctx.core.val.staging, ss.raw) })
}
