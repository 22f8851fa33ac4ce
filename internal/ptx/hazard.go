package ptx

import "sync"

// hazards finds races on a block's shared memory, as a race checker on a
// GPU does: for each byte, the thread that last wrote it and the one that
// last read it, with the barrier epoch they did it in. A second thread's
// access in the same epoch, one of the two a write, is a hazard; a
// barrier (bar.sync) starts a new epoch for the block, and bar.warp.sync
// one for the threads of a warp. Atomics are not hazards with each other.
type hazards struct {
	mu    sync.Mutex
	write []hzRec
	read  []hzRec
	seen  map[[2]int]bool // line pairs reported, to report each once per block
}

type hzRec struct {
	thread int32 // linear thread index + 1; 0: none
	epoch  uint32
	wepoch uint32
	line   int32
	atomic bool
}

func newHazards(n int) *hazards {
	return &hazards{write: make([]hzRec, n), read: make([]hzRec, n), seen: map[[2]int]bool{}}
}

func (h *hazards) access(wp *warp, lane int, o *op, off, n uint64, write bool) {
	b := wp.b
	t := int32(wp.id*32+lane) + 1
	cur := hzRec{thread: t, epoch: b.epoch, wepoch: wp.wepoch, line: int32(o.line), atomic: o.atomic}
	h.mu.Lock()
	defer h.mu.Unlock()
	conflict := func(p hzRec) bool {
		if p.thread == 0 || p.thread == t || p.epoch != b.epoch {
			return false
		}
		if p.atomic && cur.atomic {
			return false
		}
		// a warp barrier orders the threads of one warp
		if (p.thread-1)/32 == (t-1)/32 && p.wepoch != cur.wepoch {
			return false
		}
		return true
	}
	for i := off; i < off+n; i++ {
		if pw := h.write[i]; conflict(pw) {
			h.report(wp, lane, o, i, write, true, pw)
		}
		if write {
			if pr := h.read[i]; conflict(pr) {
				h.report(wp, lane, o, i, true, false, pr)
			}
			h.write[i] = cur
		} else {
			h.read[i] = cur
		}
	}
}

func (h *hazards) report(wp *warp, lane int, o *op, off uint64, write, prevWrite bool, p hzRec) {
	key := [2]int{o.line, int(p.line)}
	if h.seen[key] {
		return
	}
	h.seen[key] = true
	l := wp.b.g.l
	pt := int(p.thread - 1)
	prev := [3]uint32{uint32(pt) % l.Block[0], uint32(pt) / l.Block[0] % l.Block[1], uint32(pt) / l.Block[0] / l.Block[1]}
	if wp.b.g.shRace.Add(1) > 100 {
		return
	}
	l.SharedRace(SharedHazard{Block: wp.b.idx, Thread: wp.tid[lane], Previous: prev, Offset: off,
		Write: write, PrevWrite: prevWrite, Line: o.line, PrevLine: int(p.line), Inst: o.text})
}
