package ptx

import (
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Generic addresses of the windows that are not host memory: shared
// memory, a thread's local memory and the kernel's parameters. Host
// addresses (global and constant memory, which are the host memory of
// the fake's allocations) lie far below them.
const (
	winShared uint64 = 1 << 56
	winLocal  uint64 = 2 << 56
	winParam  uint64 = 3 << 56
	winCode   uint64 = 4 << 56 // functions' addresses, for calls through pointers
	winMask   uint64 = 0xff << 56
)

// CUresults a launch fails with.
const (
	ResultIllegalAddress    = 700
	ResultLaunchOutOfRes    = 701
	ResultLaunchTimeout     = 702
	ResultAssert            = 710
	ResultMisaligned        = 716
	ResultIllegalInstr      = 715
	ResultLaunchFailed      = 719
	ResultInvalidPTX        = 218
	ResultNotSupported      = 801
	ResultCooperativeTooBig = 720
)

// Memory is the device memory a launch reaches: the host memory of the
// fake driver's allocations.
type Memory interface {
	// Find returns the allocation that holds [addr, addr+n), or false.
	// It is called from several goroutines at once.
	Find(addr, n uint64) (base, size uint64, ok bool)
}

// Access is a range of global memory a launch read or wrote, for the
// race detector.
type Access struct {
	Addr, Size uint64
	Write      bool
}

// Launch is one launch of a kernel.
type Launch struct {
	Grid, Block [3]uint32
	// DynamicShared is the launch's dynamic shared memory in bytes.
	DynamicShared uint32
	// Params is the parameter buffer, each parameter at its offset.
	Params []byte
	Memory Memory
	// Printf receives the output of the kernel's printf calls, in the
	// order the threads ran them, after the launch.
	Printf io.Writer
	// Cooperative launches run every block at once, so that a grid-wide
	// barrier can complete.
	Cooperative bool
	// MaxSteps bounds the instructions one warp may run (0: 1<<40).
	MaxSteps uint64
	// Workers is the number of goroutines blocks run on (0: GOMAXPROCS).
	Workers int
	// Accesses, when set, receives the global memory ranges read and
	// written, merged, after the launch.
	Accesses func([]Access)
	// SharedRace, when set, receives each shared-memory hazard: two
	// threads of a block that touch the same bytes, one writing, with no
	// barrier between them.
	SharedRace func(SharedHazard)
	// SMs is the number of multiprocessors %smid ranges over (0: 132).
	SMs int
	// ThreadInstructions is set by Run: the instructions the launch's
	// threads ran, each thread's counted.
	ThreadInstructions uint64
}

// SharedHazard is a race on shared memory between two threads of a block.
type SharedHazard struct {
	Block            [3]uint32
	Thread, Previous [3]uint32
	Offset           uint64
	Write, PrevWrite bool
	Line, PrevLine   int
	Inst             string
}

func (h SharedHazard) String() string {
	rw := func(w bool) string {
		if w {
			return "write"
		}
		return "read"
	}
	return fmt.Sprintf("shared memory race at offset %d of block %v: %s by thread %v (line %d: %s) and %s by thread %v (line %d), no barrier between them",
		h.Offset, h.Block, rw(h.Write), h.Thread, h.Line, h.Inst, rw(h.PrevWrite), h.Previous, h.PrevLine)
}

// Fault is a launch that failed: which thread, at which instruction.
type Fault struct {
	Result        int // a CUresult
	Block, Thread [3]uint32
	Line          int
	Inst          string
	Msg           string
}

func (f *Fault) Error() string {
	return fmt.Sprintf("block (%d,%d,%d) thread (%d,%d,%d), PTX line %d (%s): %s",
		f.Block[0], f.Block[1], f.Block[2], f.Thread[0], f.Thread[1], f.Thread[2], f.Line, f.Inst, f.Msg)
}

// grid is one launch as it runs.
type grid struct {
	k         *Kernel
	l         *Launch
	fault     atomic.Pointer[Fault]
	stop      atomic.Bool
	nblocks   uint64
	next      atomic.Uint64
	maxStep   uint64
	tinstr    atomic.Uint64
	workspace []byte
	// grid-wide barrier of cooperative launches
	gmu    sync.Mutex
	gcond  *sync.Cond
	garr   int
	ggen   uint64
	glive  int
	outMu  sync.Mutex
	out    []printRecord
	accMu  sync.Mutex
	acc    []Access
	clock  atomic.Uint64
	shRace atomic.Int32
}

type printRecord struct {
	block uint64
	seq   uint64
	text  string
}

// worker is a goroutine's state: the allocations it has seen and the
// ranges it has touched.
type worker struct {
	g      *grid
	spans  []span
	last   int
	reads  rangeSet
	writes rangeSet
}

type span struct{ base, end uint64 }

// block is a thread block as it runs.
type block struct {
	g        *grid
	w        *worker
	idx      [3]uint32
	linear   uint64
	shared   []byte
	sharedHz *hazards
	warps    []*warp
	// the block's barrier, for kernels whose warps run as goroutines
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     uint64
	live    int
	epoch   uint32
	printSq uint64
	// seq is the first warp not yet started when warps run one after
	// the other; spill, once those were started as goroutines for a warp
	// that spun waiting on them
	seq    int
	spill  *sync.WaitGroup
	redAcc [2]uint64
	redOut [2]uint64
}

// warp is 32 threads (fewer in a block's last warp) run in step.
type warp struct {
	b          *block
	id         int
	lanes      uint32 // the lanes that exist
	exited     uint32
	tid        [32][3]uint32
	local      [32][]byte
	sp         [32]uint64 // local stack tops
	steps      uint64
	w          *worker
	wepoch     uint32
	depth      int
	cc         uint32 // the carry flag of each lane
	tsteps     uint64 // thread-instructions run
	frameBytes uint64
}

// frame is one function's activation on a warp's lanes.
type frame struct {
	f      *fn
	r      []uint64
	pc     [32]int32
	params []byte // per lane: f.paramSize bytes each
	lbase  [32]uint64
	done   uint32 // lanes that returned
}

func (w *warp) newFrame(f *fn) *frame {
	fr := f.pool.Get().(*frame)
	clear(fr.r)
	clear(fr.params)
	for i, c := range f.consts {
		base := int(c.reg) * 32
		for l := range 32 {
			fr.r[base+l] = f.constVals[i]
		}
	}
	fr.done = 0
	return fr
}

func (w *warp) freeFrame(fr *frame) { fr.f.pool.Put(fr) }

// offHeap returns n zeroed bytes outside the Go heap: memory that kernel
// threads running on several goroutines read and write as a GPU's do,
// without ordering, which Go's race detector must not see.
func offHeap(n int) []byte {
	if n == 0 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("ptx: cannot map %d bytes: %v", n, err))
	}
	return b
}

func freeOffHeap(b []byte) {
	if len(b) > 0 {
		_ = syscall.Munmap(b)
	}
}

// kfault stops the thread's launch with f.
type kfault struct{ f *Fault }

func (w *warp) fail(lane int, o *op, result int, format string, args ...any) {
	f := &Fault{Result: result, Block: w.b.idx, Thread: w.tid[lane], Msg: fmt.Sprintf(format, args...)}
	if o != nil {
		f.Line, f.Inst = o.line, o.text
	}
	panic(kfault{f})
}

// Run runs the launch to its end and returns nil or the *Fault that
// stopped it.
func (k *Kernel) Run(l *Launch) (err error) {
	for d := range 3 {
		if l.Grid[d] == 0 || l.Block[d] == 0 {
			return &Fault{Result: ResultLaunchFailed, Msg: "a grid or block of no threads"}
		}
	}
	threads := uint64(l.Block[0]) * uint64(l.Block[1]) * uint64(l.Block[2])
	if threads > 1024 {
		return &Fault{Result: ResultLaunchOutOfRes, Msg: fmt.Sprintf("%d threads per block", threads)}
	}
	if len(l.Params) < k.f.kparamSize {
		return &Fault{Result: ResultLaunchFailed, Msg: fmt.Sprintf("a parameter buffer of %d bytes for parameters of %d", len(l.Params), k.f.kparamSize)}
	}
	g := &grid{k: k, l: l, maxStep: l.MaxSteps}
	if g.maxStep == 0 {
		g.maxStep = 1 << 40
	}
	g.gcond = sync.NewCond(&g.gmu)
	if l.Cooperative {
		// the grid's workspace, where cooperative groups' grid.sync keeps its
		// barrier: the driver hands its address over in %envreg1 (high half)
		// and %envreg2 (low half)
		g.workspace = offHeap(64)
		defer freeOffHeap(g.workspace)
		putBytes(g.workspace, 4, 64)
	}
	g.nblocks = uint64(l.Grid[0]) * uint64(l.Grid[1]) * uint64(l.Grid[2])
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if l.Cooperative {
		if g.nblocks > 1<<14 {
			return &Fault{Result: ResultCooperativeTooBig, Msg: fmt.Sprintf("a cooperative grid of %d blocks", g.nblocks)}
		}
		workers = int(g.nblocks)
		g.glive = workers
	}
	if uint64(workers) > g.nblocks {
		workers = int(g.nblocks)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.work()
		}()
	}
	wg.Wait()
	if l.Printf != nil && len(g.out) > 0 {
		sortPrints(g.out)
		for _, r := range g.out {
			io.WriteString(l.Printf, r.text)
		}
	}
	if l.Accesses != nil && len(g.acc) > 0 {
		l.Accesses(mergeAccesses(g.acc))
	}
	l.ThreadInstructions = g.tinstr.Load()
	if f := g.fault.Load(); f != nil {
		return f
	}
	return nil
}

func (g *grid) work() {
	w := &worker{g: g}
	w.spans = append(w.spans, g.k.p.hostSpans...)
	if h := g.k.p.heap.Load(); h != nil {
		w.spans = append(w.spans, span{h.base, h.base + heapSize})
	}
	if g.workspace != nil {
		a := addrOf(g.workspace)
		w.spans = append(w.spans, span{a, a + uint64(len(g.workspace))})
	}
	defer w.flush()
	for !g.stop.Load() {
		n := g.next.Add(1) - 1
		if n >= g.nblocks {
			break
		}
		g.runBlock(w, n)
		if g.l.Cooperative {
			break
		}
	}
	if g.l.Cooperative {
		g.gmu.Lock()
		g.glive--
		if g.garr > 0 && g.garr == g.glive {
			g.garr = 0
			g.ggen++
			g.gcond.Broadcast()
		}
		g.gmu.Unlock()
	}
}

func (w *worker) flush() {
	g := w.g
	if len(w.reads.r) == 0 && len(w.writes.r) == 0 {
		return
	}
	g.accMu.Lock()
	for _, r := range w.reads.compact() {
		g.acc = append(g.acc, Access{r.base, r.end - r.base, false})
	}
	for _, r := range w.writes.compact() {
		g.acc = append(g.acc, Access{r.base, r.end - r.base, true})
	}
	g.accMu.Unlock()
}

func (g *grid) setFault(f *Fault) {
	g.fault.CompareAndSwap(nil, f)
	g.stop.Store(true)
	// release the blocks waiting at a grid barrier
	g.gmu.Lock()
	g.ggen++
	g.gcond.Broadcast()
	g.gmu.Unlock()
}

func (g *grid) runBlock(w *worker, n uint64) {
	l := g.l
	k := g.k
	b := &block{g: g, w: w, linear: n}
	b.idx[0] = uint32(n % uint64(l.Grid[0]))
	b.idx[1] = uint32(n / uint64(l.Grid[0]) % uint64(l.Grid[1]))
	b.idx[2] = uint32(n / uint64(l.Grid[0]) / uint64(l.Grid[1]))
	shBytes := k.p.sharedStatic + int(l.DynamicShared)
	b.shared = k.p.sharedPool(shBytes)
	defer k.p.sharedRelease(b.shared)
	if l.SharedRace != nil && shBytes > 0 {
		b.sharedHz = newHazards(shBytes)
	}
	b.cond = sync.NewCond(&b.mu)
	nthreads := int(l.Block[0] * l.Block[1] * l.Block[2])
	nwarps := (nthreads + 31) / 32
	b.warps = make([]*warp, nwarps)
	for i := range nwarps {
		wp := &warp{b: b, id: i, w: w}
		for lane := range 32 {
			t := i*32 + lane
			if t >= nthreads {
				break
			}
			wp.lanes |= 1 << lane
			wp.tid[lane] = [3]uint32{uint32(t) % l.Block[0], uint32(t) / l.Block[0] % l.Block[1], uint32(t) / l.Block[0] / l.Block[1]}
		}
		b.warps[i] = wp
	}
	b.live = nwarps
	if !k.f.syncs && !l.Cooperative {
		for i, wp := range b.warps {
			b.seq = i + 1
			if !wp.run() || b.spill != nil {
				break
			}
		}
		if b.spill != nil {
			b.spill.Wait()
		}
		return
	}
	b.seq = nwarps
	var wg sync.WaitGroup
	for _, wp := range b.warps[1:] {
		wg.Add(1)
		wpw := &worker{g: g, spans: append([]span(nil), w.spans...)}
		go func() {
			defer wg.Done()
			wp.w = wpw
			wp.run()
			wpw.flush()
		}()
	}
	b.warps[0].run()
	wg.Wait()
}

// run runs the warp's threads to their end; false when the launch failed.
func (wp *warp) run() (ok bool) {
	b := wp.b
	g := b.g
	defer func() {
		if r := recover(); r != nil {
			kf, isFault := r.(kfault)
			if !isFault {
				kf = kfault{&Fault{Result: ResultLaunchFailed, Block: b.idx, Msg: fmt.Sprintf("interpreter panic: %v", r)}}
			}
			g.setFault(kf.f)
			ok = false
		}
		g.tinstr.Add(wp.tsteps)
		b.exitWarp()
	}()
	fr := wp.newFrame(g.k.f)
	defer wp.freeFrame(fr)
	for l := range 32 {
		fr.pc[l] = 0
		wp.sp[l] = 0
		fr.lbase[l] = 0
	}
	wp.enterLocal(fr)
	wp.fillSpecials(fr)
	wp.exec(fr, wp.lanes)
	return !g.stop.Load()
}

// enterLocal gives the frame its local memory on each lane's stack.
func (wp *warp) enterLocal(fr *frame) {
	n := uint64(fr.f.localSize)
	if n == 0 {
		return
	}
	for l := range 32 {
		if wp.lanes&(1<<l) == 0 {
			continue
		}
		base := (wp.sp[l] + 15) &^ 15
		fr.lbase[l] = base
		wp.sp[l] = base + n
		if need := int(wp.sp[l]); need > len(wp.local[l]) {
			if need > maxLocal {
				wp.fail(l, nil, ResultLaunchOutOfRes, "local memory (stack) of %d bytes per thread, over %d", need, maxLocal)
			}
			nb := make([]byte, max(need*2, 256))
			copy(nb, wp.local[l])
			wp.local[l] = nb
		}
		clear(wp.local[l][base:wp.sp[l]])
	}
}

func (wp *warp) leaveLocal(fr *frame) {
	if fr.f.localSize == 0 {
		return
	}
	for l := range 32 {
		if wp.lanes&(1<<l) != 0 {
			wp.sp[l] = fr.lbase[l]
		}
	}
}

// spillRest starts the block's warps that have not run yet, each on its
// goroutine, when warps run one after the other and the one running spun
// long in a loop: it may wait for them (a flag another warp sets), as the
// warps of a block run at once on a GPU. It runs on the block's
// goroutine, the only one then.
func (b *block) spillRest() {
	if b.spill != nil || b.seq >= len(b.warps) {
		return
	}
	b.spill = &sync.WaitGroup{}
	for _, wp := range b.warps[b.seq:] {
		b.spill.Add(1)
		wpw := &worker{g: b.g, spans: append([]span(nil), b.w.spans...)}
		go func() {
			defer b.spill.Done()
			wp.w = wpw
			wp.run()
			wpw.flush()
		}()
	}
	b.seq = len(b.warps)
}

// warpSpinLimit is how many times all of a warp's lanes go round a loop
// before the warps of its block that have not started yet get started
// beside it.
const warpSpinLimit = 1 << 16

// spinLimit is how many times a group of a warp's lanes goes round a
// loop while the warp's other lanes wait elsewhere before those get to
// run: a GPU schedules a warp's lanes independently (sm_70 and later), so
// a lane may spin on a lock another lane of its warp holds.
const spinLimit = 1024

const maxLocal = 1 << 20
const maxDepth = 4096

// maxFrameBytes bounds the registers of a warp's nested calls.
const maxFrameBytes = 64 << 20

func (b *block) exitWarp() {
	b.mu.Lock()
	b.live--
	if b.arrived > 0 && b.arrived >= b.live {
		b.arrived = 0
		b.gen++
		b.epoch++
		b.cond.Broadcast()
	}
	b.mu.Unlock()
}

// barrier waits until every warp of the block that has not exited has
// arrived.
func (b *block) barrier() {
	if len(b.warps) == 1 {
		b.epoch++
		return
	}
	b.mu.Lock()
	b.arrived++
	if b.arrived >= b.live {
		b.arrived = 0
		b.gen++
		b.epoch++
		b.cond.Broadcast()
	} else {
		gen := b.gen
		for gen == b.gen && !b.g.stop.Load() {
			b.cond.Wait()
		}
	}
	b.mu.Unlock()
	if b.g.stop.Load() {
		panic(kfault{b.g.fault.Load()})
	}
}

// exec runs fr on the lanes of mask until each returns or exits.
func (wp *warp) exec(fr *frame, mask uint32) {
	f := fr.f
	code := f.code
	g := wp.b.g
	yield := false
	for {
		act := mask &^ fr.done &^ wp.exited
		if act == 0 {
			return
		}
		// the lanes furthest behind go first: they reconverge with the others
		// when they reach them
		pc := int32(1 << 30)
		for m := act; m != 0; m &= m - 1 {
			if p := fr.pc[bits.TrailingZeros32(m)]; p < pc {
				pc = p
			}
		}
		behind := false
		if yield {
			// the lanes behind spun in a loop: the next lanes ahead run,
			// as a GPU's independent thread scheduling lets them, so
			// that a lane holding what the others wait for (a lock)
			// gets on
			yield = false
			next := int32(1 << 30)
			for m := act; m != 0; m &= m - 1 {
				if p := fr.pc[bits.TrailingZeros32(m)]; p > pc && p < next {
					next = p
				}
			}
			if next < 1<<30 {
				pc, behind = next, true
			}
		}
		grp := uint32(0)
		other := int32(1 << 30) // the next lanes' place: where the group meets them
		for m := act; m != 0; m &= m - 1 {
			l := bits.TrailingZeros32(m)
			if p := fr.pc[l]; p == pc {
				grp |= 1 << l
			} else if p > pc && p < other {
				other = p
			}
		}
		spins := 0 // backward branches the group took, all together
	straight:
		for {
			if pc >= other {
				break
			}
			if int(pc) >= len(code) {
				// falling off the end returns
				fr.done |= grp
				break
			}
			o := &code[pc]
			wp.steps++
			wp.tsteps += uint64(bits.OnesCount32(grp))
			if wp.steps > g.maxStep {
				wp.fail(bits.TrailingZeros32(grp), o, ResultLaunchTimeout, "a warp ran more than %d instructions", g.maxStep)
			}
			m := grp
			if o.guard >= 0 {
				m = wp.guard(fr, o, grp)
			}
			switch o.kind {
			case kNormal:
				if m != 0 {
					o.exec(wp, fr, o, m)
				}
				pc++
			case kBranch:
				if m == grp {
					if o.target <= pc {
						if spins++; spins >= spinLimit {
							if act != grp {
								// the others are somewhere else: let them run
								pc = o.target
								yield = true
								break straight
							}
							if spins >= warpSpinLimit {
								wp.b.spillRest()
								spins = 0
							}
						}
					}
					pc = o.target
				} else if m != 0 {
					for x := m; x != 0; x &= x - 1 {
						fr.pc[bits.TrailingZeros32(x)] = o.target
					}
					for x := grp &^ m; x != 0; x &= x - 1 {
						fr.pc[bits.TrailingZeros32(x)] = pc + 1
					}
					grp = 0
					break straight
				} else {
					pc++
				}
			case kRet:
				fr.done |= m
				grp &^= m
				pc++
				if grp == 0 {
					break straight
				}
			case kExit:
				wp.exited |= m
				grp &^= m
				pc++
				if grp == 0 {
					break straight
				}
			case kBarrier:
				if behind {
					// the lanes this group went ahead of meet it here
					break straight
				}
				if m != 0 {
					o.exec(wp, fr, o, m)
				}
				pc++
				if g.stop.Load() {
					panic(kfault{g.fault.Load()})
				}
			case kCall:
				if m != 0 {
					for x := grp; x != 0; x &= x - 1 {
						fr.pc[bits.TrailingZeros32(x)] = pc
					}
					wp.call(fr, o, m)
				}
				pc++
				// lanes may have exited in the callee
				grp &^= wp.exited
				if grp == 0 {
					break straight
				}
			}
		}
		for x := grp; x != 0; x &= x - 1 {
			fr.pc[bits.TrailingZeros32(x)] = pc
		}
	}
}

func (wp *warp) guard(fr *frame, o *op, grp uint32) uint32 {
	base := int(o.guard) * 32
	var m uint32
	for x := grp; x != 0; x &= x - 1 {
		l := bits.TrailingZeros32(x)
		if (fr.r[base+l] != 0) != o.guardNeg {
			m |= 1 << l
		}
	}
	return m
}

// call runs a .func on the lanes of m: the arguments' bytes are copied
// into the callee's parameters, and its return values back.
func (wp *warp) call(fr *frame, o *op, m uint32) {
	if o.builtin != nil {
		o.builtin(wp, fr, o, m)
		return
	}
	if o.ind != nil {
		// lanes calling different functions call them one after the
		// other, as a GPU serializes them
		for m != 0 {
			l := bits.TrailingZeros32(m)
			a := fr.r[int(o.a)*32+l]
			var grp uint32
			for x := m; x != 0; x &= x - 1 {
				if k := bits.TrailingZeros32(x); fr.r[int(o.a)*32+k] == a {
					grp |= 1 << k
				}
			}
			callee := o.ind.targets[a]
			if callee == nil {
				if e := o.ind.errs[a]; e != "" {
					wp.fail(l, o, ResultIllegalInstr, "call through a pointer to %s", e)
				}
				wp.fail(l, o, ResultIllegalAddress, "call through %#x, which is not the address of a function taking %d arguments and returning %d values", a, len(o.args), len(o.rets))
			}
			wp.callFn(fr, o, grp, callee)
			m &^= grp
		}
		return
	}
	wp.callFn(fr, o, m, o.callee)
}

// callFn runs callee on the lanes of m.
func (wp *warp) callFn(fr *frame, o *op, m uint32, callee *fn) {
	if wp.depth >= maxDepth {
		wp.fail(bits.TrailingZeros32(m), o, ResultLaunchOutOfRes, "calls nested more than %d deep", maxDepth)
	}
	size := uint64(callee.nregs*32*8 + 32*callee.paramSize)
	if wp.frameBytes+size > maxFrameBytes {
		wp.fail(bits.TrailingZeros32(m), o, ResultLaunchOutOfRes, "calls nested %d deep need more than %d bytes of registers", wp.depth, maxFrameBytes)
	}
	wp.frameBytes += size
	defer func() { wp.frameBytes -= size }()
	nf := wp.newFrame(callee)
	defer wp.freeFrame(nf)
	for x := m; x != 0; x &= x - 1 {
		l := bits.TrailingZeros32(x)
		nf.pc[l] = 0
		for i, a := range o.args {
			dst := nf.params[l*callee.paramSize+int(callee.argOff[i]):]
			src := fr.params[l*fr.f.paramSize+int(a.off):]
			copy(dst[:a.size], src[:a.size])
		}
	}
	wp.enterLocalMask(nf, m)
	wp.fillSpecials(nf)
	wp.depth++
	wp.exec(nf, m)
	wp.depth--
	wp.leaveLocalMask(nf, m)
	for x := m &^ wp.exited; x != 0; x &= x - 1 {
		l := bits.TrailingZeros32(x)
		for i, r := range o.rets {
			src := nf.params[l*callee.paramSize+int(callee.retOff[i]):]
			dst := fr.params[l*fr.f.paramSize+int(r.off):]
			copy(dst[:r.size], src[:r.size])
		}
	}
}

func (wp *warp) enterLocalMask(fr *frame, m uint32) {
	saved := wp.lanes
	wp.lanes = m
	wp.enterLocal(fr)
	wp.lanes = saved
}

func (wp *warp) leaveLocalMask(fr *frame, m uint32) {
	saved := wp.lanes
	wp.lanes = m
	wp.leaveLocal(fr)
	wp.lanes = saved
}

// ---- global memory ----

// global returns the host memory at addr for an access of n bytes by
// lane, checked against the allocations.
func (wp *warp) global(lane int, o *op, addr uint64, n uint64, write bool) unsafe.Pointer {
	if addr&(n-1) != 0 && n <= 16 {
		wp.fail(lane, o, ResultMisaligned, "misaligned %d-byte access at %#x", n, addr)
	}
	w := wp.w
	if w.last < len(w.spans) {
		s := w.spans[w.last]
		if addr >= s.base && addr+n <= s.end {
			wp.note(addr, n, write)
			return hostPtr(addr)
		}
	}
	for i, s := range w.spans {
		if addr >= s.base && addr+n <= s.end {
			w.last = i
			wp.note(addr, n, write)
			return hostPtr(addr)
		}
	}
	if addr&winMask != 0 || addr < 4096 {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at %#x, outside every allocation", n, addr)
	}
	mem := wp.b.g.l.Memory
	if mem == nil {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at %#x, outside every allocation", n, addr)
	}
	base, size, ok := mem.Find(addr, n)
	if !ok {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at %#x, outside every allocation", n, addr)
	}
	w.spans = append(w.spans, span{base, base + size})
	w.last = len(w.spans) - 1
	wp.note(addr, n, write)
	return hostPtr(addr)
}

func (wp *warp) note(addr, n uint64, write bool) {
	if wp.b.g.l.Accesses == nil {
		return
	}
	if write {
		wp.w.writes.add(addr, addr+n)
	} else {
		wp.w.reads.add(addr, addr+n)
	}
}

// sharedAt returns the shared memory at offset off for an access of n
// bytes.
func (wp *warp) sharedAt(lane int, o *op, off uint64, n uint64, write bool) unsafe.Pointer {
	sh := wp.b.shared
	if off&(n-1) != 0 && n <= 16 {
		wp.fail(lane, o, ResultMisaligned, "misaligned %d-byte access at shared offset %d", n, off)
	}
	if off >= uint64(len(sh)) || off+n > uint64(len(sh)) {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at shared offset %d, outside the block's %d bytes", n, off, len(sh))
	}
	if hz := wp.b.sharedHz; hz != nil {
		hz.access(wp, lane, o, off, n, write)
	}
	return unsafe.Pointer(&sh[off])
}

func (wp *warp) localAt(lane int, o *op, off uint64, n uint64) unsafe.Pointer {
	lm := wp.local[lane]
	if off&(n-1) != 0 && n <= 16 {
		wp.fail(lane, o, ResultMisaligned, "misaligned %d-byte access at local offset %d", n, off)
	}
	if off >= wp.sp[lane] || off+n > wp.sp[lane] {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at local offset %d, outside the thread's %d bytes", n, off, wp.sp[lane])
	}
	return unsafe.Pointer(&lm[off])
}

func (wp *warp) paramAt(lane int, o *op, fr *frame, off uint64, n uint64) unsafe.Pointer {
	pb := wp.b.g.l.Params
	if off >= uint64(len(pb)) || off+n > uint64(len(pb)) {
		wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at parameter offset %d, outside the %d bytes of parameters", n, off, len(pb))
	}
	return unsafe.Pointer(&pb[off])
}

// at resolves an address of space sp for lane.
func (wp *warp) at(fr *frame, lane int, o *op, sp space, addr uint64, n uint64, write bool) unsafe.Pointer {
	switch sp {
	case spGlobal, spConst:
		if write && sp == spConst {
			wp.fail(lane, o, ResultIllegalAddress, "a write to constant memory")
		}
		return wp.global(lane, o, addr, n, write)
	case spShared:
		return wp.sharedAt(lane, o, addr, n, write)
	case spLocal:
		return wp.localAt(lane, o, addr, n)
	case spParam:
		if o.funcParam {
			off := uint64(lane*fr.f.paramSize) + addr
			if addr+n > uint64(fr.f.paramSize) {
				wp.fail(lane, o, ResultIllegalAddress, "%d-byte access at parameter offset %d", n, addr)
			}
			return unsafe.Pointer(&fr.params[off])
		}
		if write {
			wp.fail(lane, o, ResultIllegalAddress, "a write to a kernel parameter")
		}
		return wp.paramAt(lane, o, fr, addr, n)
	}
	switch addr & winMask {
	case winShared:
		return wp.sharedAt(lane, o, addr-winShared, n, write)
	case winLocal:
		return wp.localAt(lane, o, addr-winLocal, n)
	case winParam:
		if write {
			wp.fail(lane, o, ResultIllegalAddress, "a write to a kernel parameter")
		}
		return wp.paramAt(lane, o, fr, addr-winParam, n)
	}
	return wp.global(lane, o, addr, n, write)
}

// hostPtr is the host memory at a device address: the fake's device
// memory is host memory, outside the Go heap.
func hostPtr(a uint64) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }
