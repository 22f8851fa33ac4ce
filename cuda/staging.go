package cuda

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Go memory cannot take part in an asynchronous copy: the driver would read
// or write it after the call returns, and only page-locked memory is
// copied by DMA without the driver staging it itself. The stream-ordered
// copies of Go slices (Slice.CopyFromHost, Slice.CopyToHost) therefore go
// through page-locked buffers of the context's own, in chunks, so that the
// CPU's copy of one chunk overlaps the DMA of the one before.

const (
	// stagingChunk is the size of one staging buffer: large enough that a
	// chunk's DMA runs at the bus's speed, small enough that the first
	// chunk's DMA starts early.
	stagingChunk = 4 << 20
	// stagingMax is the most buffers one context makes: when all are in
	// flight, the next copy waits for the oldest.
	stagingMax = 8
	// stagingDepth is how many chunks of one copy out are in flight at a
	// time.
	stagingDepth = 3
	// pageableOutMin is the size from which a copy out goes straight into
	// the Go memory, pinned, by the driver's own copy of pageable memory:
	// its CPU side outruns one goroutine's copy out of the staging buffers
	// there (about 2x at 64 MiB on an H200), and loses below a few MiB.
	pageableOutMin = 2 * stagingChunk
)

// stagingBuf is one page-locked buffer and the event recorded after the
// last copy that used it.
type stagingBuf struct {
	ptr      unsafe.Pointer
	ev       cu.CUevent
	recorded bool
}

func (b *stagingBuf) bytes(n int) []byte { return unsafe.Slice((*byte)(b.ptr), n) }

// stagingPool is a context's staging buffers. Idle buffers wait in idle,
// some of them still in flight (their event recorded): a buffer is handed
// out again only after its event has been waited for.
type stagingPool struct {
	mu    sync.Mutex
	freed sync.Cond // signalled when a buffer comes back
	idle  []*stagingBuf
	made  int
}

func newStagingPool() *stagingPool {
	p := &stagingPool{}
	p.freed.L = &p.mu
	return p
}

// get returns a buffer ready for a new copy; the context is bound. It
// prefers an idle buffer whose copy has finished, then a new one, then
// waits for the oldest in flight.
func (p *stagingPool) get(op string) (*stagingBuf, error) {
	p.mu.Lock()
	for {
		for i, b := range p.idle {
			if !b.recorded || cu.EventQuery(b.ev) == nil {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				p.mu.Unlock()
				return b, b.wait(op)
			}
		}
		if p.made < stagingMax {
			p.made++
			p.mu.Unlock()
			b, err := newStagingBuf(op)
			if err != nil {
				p.mu.Lock()
				p.made--
				p.freed.Signal()
				p.mu.Unlock()
			}
			return b, err
		}
		if len(p.idle) > 0 {
			b := p.idle[0]
			p.idle = p.idle[1:]
			p.mu.Unlock()
			return b, b.wait(op)
		}
		p.freed.Wait()
	}
}

// put gives b back, in flight or not.
func (p *stagingPool) put(b *stagingBuf) {
	p.mu.Lock()
	p.idle = append(p.idle, b)
	p.freed.Signal()
	p.mu.Unlock()
}

// wait returns once the last copy that used b has run. The wait is made
// even when a query said so, since cuEventSynchronize is what orders the
// host after the copy for tools that check such orders.
func (b *stagingBuf) wait(op string) error {
	if !b.recorded {
		return nil
	}
	b.recorded = false
	return check(op, "cuEventSynchronize", cu.EventSynchronize(b.ev))
}

func newStagingBuf(op string) (*stagingBuf, error) {
	b := &stagingBuf{}
	if err := cu.MemHostAlloc(&b.ptr, stagingChunk, uint32(cu.CU_MEMHOSTALLOC_PORTABLE)); err != nil {
		return nil, newError(op, "cuMemHostAlloc", err)
	}
	if err := cu.EventCreate(&b.ev, uint32(cu.CU_EVENT_DISABLE_TIMING)); err != nil {
		_ = cu.MemFreeHost(b.ptr)
		return nil, newError(op, "cuEventCreate", err)
	}
	return b, nil
}

// free gives every buffer back to the driver, after its last copy; the
// context is bound and nothing else uses the pool any more.
func (p *stagingPool) free() error {
	var first error
	for _, b := range p.idle {
		err := b.wait("Context.Close")
		if e := cu.EventDestroy(b.ev); err == nil && e != nil {
			err = newError("Context.Close", "cuEventDestroy", e)
		}
		if e := cu.MemFreeHost(b.ptr); err == nil && e != nil {
			err = newError("Context.Close", "cuMemFreeHost", e)
		}
		if first == nil {
			first = err
		}
	}
	p.idle, p.made = nil, 0
	return first
}

// copyIn enqueues on s, a stream of the bound context, a copy of src to
// dst through staging buffers, and returns once src has been read.
func (p *stagingPool) copyIn(op string, s cu.CUstream, dst cu.CUdeviceptr, src []byte) error {
	for off := 0; off < len(src); off += stagingChunk {
		n := min(stagingChunk, len(src)-off)
		b, err := p.get(op)
		if err != nil {
			return err
		}
		copy(b.bytes(n), src[off:off+n])
		err = check(op, "cuMemcpyHtoDAsync", cu.MemcpyHtoDAsync(dst+cu.CUdeviceptr(off), b.ptr, uint64(n), s))
		if err == nil {
			err = b.record(op, s)
		}
		p.put(b)
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *stagingBuf) record(op string, s cu.CUstream) error {
	if err := cu.EventRecord(b.ev, s); err != nil {
		return newError(op, "cuEventRecord", err)
	}
	b.recorded = true
	return nil
}

// copyOut enqueues on s, a stream of the bound context, a copy of src into
// dst, and returns once dst holds it: through staging buffers, or, from
// pageableOutMin bytes, by the driver into dst itself.
func (p *stagingPool) copyOut(op string, s cu.CUstream, dst []byte, src cu.CUdeviceptr) error {
	if len(dst) >= pageableOutMin {
		return p.copyOutPageable(op, s, dst, src)
	}
	return p.copyOutStaged(op, s, dst, src)
}

// copyOutPageable has the driver copy src into dst, Go memory pinned
// while the driver may write it. The driver returns from such a copy once
// it is done; the wait for an event recorded after it keeps that so if a
// driver ever returns sooner, and orders the host after the copy for tools
// that check such orders.
func (p *stagingPool) copyOutPageable(op string, s cu.CUstream, dst []byte, src cu.CUdeviceptr) error {
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), src, uint64(len(dst)), s); err != nil {
		return newError(op, "cuMemcpyDtoHAsync", err)
	}
	b, err := p.get(op)
	if err != nil {
		return err
	}
	err = b.record(op, s)
	if err == nil {
		err = b.wait(op)
	}
	p.put(b)
	return err
}

// copyOutStaged is copyOut through staging buffers, stagingDepth chunks
// in flight.
func (p *stagingPool) copyOutStaged(op string, s cu.CUstream, dst []byte, src cu.CUdeviceptr) error {
	type chunk struct {
		b   *stagingBuf
		off int
	}
	var ring [stagingDepth]chunk
	head, inFlight := 0, 0
	// land waits for the oldest chunk in flight and copies it out.
	land := func(keep bool) error {
		c := ring[head]
		head = (head + 1) % stagingDepth
		inFlight--
		err := c.b.wait(op)
		if err == nil && keep {
			n := min(stagingChunk, len(dst)-c.off)
			copy(dst[c.off:c.off+n], c.b.bytes(n))
		}
		p.put(c.b)
		return err
	}
	var err error
	for off := 0; off < len(dst) && err == nil; off += stagingChunk {
		if inFlight == stagingDepth {
			if err = land(true); err != nil {
				break
			}
		}
		var b *stagingBuf
		if b, err = p.get(op); err != nil {
			break
		}
		n := min(stagingChunk, len(dst)-off)
		err = check(op, "cuMemcpyDtoHAsync", cu.MemcpyDtoHAsync(b.ptr, src+cu.CUdeviceptr(off), uint64(n), s))
		if err == nil {
			err = b.record(op, s)
		}
		if err != nil {
			p.put(b)
			break
		}
		ring[(head+inFlight)%stagingDepth] = chunk{b, off}
		inFlight++
	}
	for inFlight > 0 {
		if e := land(err == nil); err == nil {
			err = e
		}
	}
	return err
}
