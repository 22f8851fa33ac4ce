package ptx

import (
	"sort"
	"sync"
)

// heapSize is the device heap's size, that of a GPU's heap until
// cudaLimitMallocHeapSize changes it.
const heapSize = 8 << 20

// deviceHeap is a module's heap for device-side malloc and free: an arena
// outside the Go heap, mapped when a kernel that calls malloc is
// compiled and kept, as a module's variables are, for the module's life.
// Its memory is global memory to every launch of the module.
type deviceHeap struct {
	mem  []byte
	base uint64
	mu   sync.Mutex
	free []heapBlock       // sorted by offset, none adjacent
	used map[uint64]uint64 // offset → size of each block handed out
}

type heapBlock struct{ off, size uint64 }

func newDeviceHeap() *deviceHeap {
	mem := offHeap(heapSize)
	return &deviceHeap{mem: mem, base: addrOf(mem), free: []heapBlock{{0, heapSize}}, used: map[uint64]uint64{}}
}

// alloc returns the address of n bytes aligned to 16, or 0 when the heap
// has no room, as malloc returns NULL.
func (h *deviceHeap) alloc(n uint64) uint64 {
	if n == 0 {
		n = 1
	}
	if n > heapSize {
		return 0
	}
	n = (n + 15) &^ 15
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, b := range h.free {
		if b.size < n {
			continue
		}
		if b.size == n {
			h.free = append(h.free[:i], h.free[i+1:]...)
		} else {
			h.free[i] = heapBlock{b.off + n, b.size - n}
		}
		h.used[b.off] = n
		return h.base + b.off
	}
	return 0
}

// release returns the block at addr to the heap; false when addr is not
// a block alloc handed out and has not been released since.
func (h *deviceHeap) release(addr uint64) bool {
	if addr < h.base {
		return false
	}
	off := addr - h.base
	h.mu.Lock()
	defer h.mu.Unlock()
	n, ok := h.used[off]
	if !ok {
		return false
	}
	delete(h.used, off)
	i := sort.Search(len(h.free), func(i int) bool { return h.free[i].off > off })
	h.free = append(h.free, heapBlock{})
	copy(h.free[i+1:], h.free[i:])
	h.free[i] = heapBlock{off, n}
	if i+1 < len(h.free) && h.free[i].off+h.free[i].size == h.free[i+1].off {
		h.free[i].size += h.free[i+1].size
		h.free = append(h.free[:i+1], h.free[i+2:]...)
	}
	if i > 0 && h.free[i-1].off+h.free[i-1].size == h.free[i].off {
		h.free[i-1].size += h.free[i].size
		h.free = append(h.free[:i], h.free[i+1:]...)
	}
	return true
}

func builtinMalloc(wp *warp, fr *frame, o *op, m uint32) {
	h := wp.b.g.k.p.heap.Load()
	for x := m; x != 0; x &= x - 1 {
		l := tz(x)
		var p uint64
		if len(o.args) == 1 {
			p = h.alloc(argBytes(fr, l, o.args[0]))
		}
		if len(o.rets) == 1 {
			setRet(fr, l, o.rets[0], p)
		}
	}
}

func builtinFree(wp *warp, fr *frame, o *op, m uint32) {
	h := wp.b.g.k.p.heap.Load()
	for x := m; x != 0; x &= x - 1 {
		l := tz(x)
		if len(o.args) != 1 {
			continue
		}
		if p := argBytes(fr, l, o.args[0]); p != 0 && !h.release(p) {
			wp.fail(l, o, ResultIllegalAddress, "free of %#x, which malloc did not return or which was freed already", p)
		}
	}
}
