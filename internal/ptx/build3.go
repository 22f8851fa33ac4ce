package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

func load(p unsafe.Pointer, n uint64) uint64 {
	switch n {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

func store(p unsafe.Pointer, n uint64, v uint64) {
	switch n {
	case 1:
		*(*uint8)(p) = uint8(v)
	case 2:
		*(*uint16)(p) = uint16(v)
	case 4:
		*(*uint32)(p) = uint32(v)
	default:
		*(*uint64)(p) = v
	}
}

// laneAddr is the address an instruction's lane reaches.
func laneAddr(fr *frame, o *op, l int) uint64 {
	if o.a < 0 {
		return uint64(o.off)
	}
	return fr.r[int(o.a)*32+l] + uint64(o.off)
}

func (c *compiler) buildLdSt(in *instr, o *op, ms modset) {
	c.nargs(in, 2, 2)
	t := c.typ(in, ms, 0)
	sp := ms.space()
	o.space = sp
	isSt := in.op == "st"
	vals, addr := in.args[0], in.args[1]
	if isSt {
		vals, addr = in.args[1], in.args[0]
	}
	o.a, o.off, o.funcParam = c.addr(in, addr, sp)
	esize := uint64(t.size)
	n := ms.vec
	var regs []int32
	if vals.kind == 'v' {
		if len(vals.elems) != n {
			c.bad(in, "a vector of %d for .v%d", len(vals.elems), n)
		}
		for _, e := range vals.elems {
			if isSt {
				regs = append(regs, c.src(in, e, t))
			} else {
				regs = append(regs, c.dst(in, e))
			}
		}
	} else {
		if n != 1 {
			c.bad(in, ".v%d with one register", n)
		}
		if isSt {
			regs = []int32{c.src(in, vals, t)}
		} else {
			regs = []int32{c.dst(in, vals)}
		}
	}
	o.vd = regs
	o.size = esize * uint64(n)
	total := o.size
	if esize == 16 {
		c.bad(in, "128-bit element types are not supported")
	}
	if isSt {
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				p := wp.at(fr, l, o, sp, laneAddr(fr, o, l), total, true)
				for i, s := range o.vd {
					store(unsafe.Add(p, uint64(i)*esize), esize, r[int(s)*32+l])
				}
			}
		}
		return
	}
	// loads sign-extend a signed narrow type into a wider register
	var rmask []uint64
	for _, d := range regs {
		rm := ^uint64(0)
		if sz := c.rsize[d]; sz > 0 && sz < 8 {
			rm = 1<<(8*sz) - 1
		}
		rmask = append(rmask, rm)
	}
	sgn := t.signed()
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			p := wp.at(fr, l, o, sp, laneAddr(fr, o, l), total, false)
			for i, d := range o.vd {
				v := load(unsafe.Add(p, uint64(i)*esize), esize)
				if sgn {
					v = uint64(sext(v, int(esize)))
				}
				r[int(d)*32+l] = v & rmask[i]
			}
		}
	}
}

// atomic32 applies f to the 32-bit word at p atomically and returns the
// old value.
func atomic32(p unsafe.Pointer, f func(old uint32) uint32) uint32 {
	w := (*uint32)(p)
	for {
		old := atomic.LoadUint32(w)
		if atomic.CompareAndSwapUint32(w, old, f(old)) {
			return old
		}
	}
}

func atomic64(p unsafe.Pointer, f func(old uint64) uint64) uint64 {
	w := (*uint64)(p)
	for {
		old := atomic.LoadUint64(w)
		if atomic.CompareAndSwapUint64(w, old, f(old)) {
			return old
		}
	}
}

// atomic16 works on the aligned 32-bit word that holds the 16 bits at p.
func atomic16(p unsafe.Pointer, f func(old uint16) uint16) uint16 {
	base := unsafe.Pointer(uintptr(p) &^ 3)
	shift := (uintptr(p) & 2) * 8
	old := atomic32(base, func(w uint32) uint32 {
		h := uint16(w >> shift)
		return w&^(0xffff<<shift) | uint32(f(h))<<shift
	})
	return uint16(old >> shift)
}

func (c *compiler) buildAtom(in *instr, o *op, ms modset) {
	isRed := in.op == "red"
	t := c.typ(in, ms, len(ms.types)-1)
	opn := ""
	for _, k := range []string{".and", ".or", ".xor", ".cas", ".exch", ".add", ".inc", ".dec", ".min", ".max"} {
		if ms.has[k] {
			opn = k[1:]
		}
	}
	if opn == "" {
		c.bad(in, "no atomic operation")
	}
	vec := ms.vec
	if vec != 1 && (opn != "add" && opn != "min" && opn != "max" || !t.isFloat() && !t.x2) {
		c.bad(in, "vector atomics other than add, min and max of floating point")
	}
	sp := ms.space()
	o.space = sp
	o.atomic = true
	args := in.args
	var vdst, vsrc []int32 // a vector atomic's registers, element by element
	if vec != 1 {
		c.nargs(in, 2, 3)
		if len(args) == 2 != isRed {
			c.bad(in, "%d operands", len(args))
		}
		vals := args[len(args)-1]
		o.a, o.off, o.funcParam = c.addr(in, args[len(args)-2], sp)
		if vals.kind != 'v' || len(vals.elems) != vec || !isRed && (args[0].kind != 'v' || len(args[0].elems) != vec) {
			c.bad(in, "a vector atomic needs vectors of %d", vec)
		}
		for i, e := range vals.elems {
			vsrc = append(vsrc, c.src(in, e, t))
			if !isRed {
				vdst = append(vdst, c.dst(in, args[0].elems[i]))
			}
		}
	} else if isRed {
		c.nargs(in, 2, 2)
		o.d = c.scratch()
		o.a, o.off, o.funcParam = c.addr(in, args[0], sp)
		o.b = c.src(in, args[1], t)
	} else {
		n := 3
		if opn == "cas" {
			n = 4
		}
		c.nargs(in, n, n)
		o.d = c.dst(in, args[0])
		o.a, o.off, o.funcParam = c.addr(in, args[1], sp)
		o.b = c.src(in, args[2], t)
		if n == 4 {
			o.c = c.src(in, args[3], t)
		}
	}
	size := uint64(t.size)
	o.size = size
	var f func(old, b, cv uint64) uint64
	switch opn {
	case "add":
		switch {
		case t.x2:
			ht := dtype{t.kind, 2, false}
			f = func(old, b, _ uint64) uint64 {
				lo := fcalc(fAdd, ht, fmods{mode: 'n'}, old&0xffff, b&0xffff, 0)
				hi := fcalc(fAdd, ht, fmods{mode: 'n'}, old>>16, b>>16&0xffff, 0)
				return lo | hi<<16
			}
		case t.isFloat():
			f = func(old, b, _ uint64) uint64 { return fcalc(fAdd, t, fmods{mode: 'n'}, old, b, 0) }
		default:
			f = func(old, b, _ uint64) uint64 { return old + b }
		}
	case "and":
		f = func(old, b, _ uint64) uint64 { return old & b }
	case "or":
		f = func(old, b, _ uint64) uint64 { return old | b }
	case "xor":
		f = func(old, b, _ uint64) uint64 { return old ^ b }
	case "exch":
		f = func(_, b, _ uint64) uint64 { return b }
	case "cas":
		f = func(old, b, cv uint64) uint64 {
			if old == b&t.mask() {
				return cv
			}
			return old
		}
	case "inc":
		f = func(old, b, _ uint64) uint64 {
			if old >= b&t.mask() {
				return 0
			}
			return old + 1
		}
	case "dec":
		f = func(old, b, _ uint64) uint64 {
			if old == 0 || old > b&t.mask() {
				return b
			}
			return old - 1
		}
	case "min", "max":
		isMin := opn == "min"
		f = func(old, b, _ uint64) uint64 {
			var less bool
			switch {
			case t.isFloat():
				x, y := t.fval(old), t.fval(b)
				if math.IsNaN(y) {
					return old
				}
				if math.IsNaN(x) {
					return b
				}
				less = x < y
			case t.signed():
				less = int64(t.ival(old)) < int64(t.ival(b))
			default:
				less = old&t.mask() < b&t.mask()
			}
			if less == isMin {
				return old
			}
			return b
		}
	}
	mask := t.mask()
	if vec != 1 {
		// each element is its own atomic operation, as on the GPU; the
		// address is aligned to the whole vector
		total := size * uint64(vec)
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				p := wp.at(fr, l, o, sp, laneAddr(fr, o, l), total, true)
				for i, s := range vsrc {
					q := unsafe.Add(p, uint64(i)*size)
					b := r[int(s)*32+l] & mask
					var old uint64
					switch size {
					case 2:
						old = uint64(atomic16(q, func(x uint16) uint16 { return uint16(f(uint64(x), b, 0)) }))
					case 4:
						old = uint64(atomic32(q, func(x uint32) uint32 { return uint32(f(uint64(x), b, 0)) }))
					default:
						old = atomic64(q, func(x uint64) uint64 { return f(x, b, 0) })
					}
					if vdst != nil {
						r[int(vdst[i])*32+l] = old & mask
					}
				}
			}
		}
		return
	}
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			p := wp.at(fr, l, o, sp, laneAddr(fr, o, l), size, true)
			b := r[int(o.b)*32+l] & mask
			var cv uint64
			if o.c >= 0 {
				cv = r[int(o.c)*32+l] & mask
			}
			var old uint64
			switch size {
			case 2:
				old = uint64(atomic16(p, func(x uint16) uint16 { return uint16(f(uint64(x), b, cv)) }))
			case 4:
				if opn == "add" && !t.isFloat() {
					old = uint64(atomic.AddUint32((*uint32)(p), uint32(b)) - uint32(b))
				} else {
					old = uint64(atomic32(p, func(x uint32) uint32 { return uint32(f(uint64(x), b, cv)) }))
				}
			case 8:
				old = atomic64(p, func(x uint64) uint64 { return f(x, b, cv) })
			default:
				wp.fail(l, o, ResultIllegalInstr, "a %d-byte atomic", size)
			}
			if t.signed() {
				old = uint64(sext(old, int(size)))
			}
			r[int(o.d)*32+l] = old & mask
		}
	}
}

func (c *compiler) buildCall(in *instr, o *op, ms modset) {
	o.kind = kCall
	args := in.args
	var rets, params []operand
	i := 0
	if i < len(args) && args[i].kind == 'l' {
		rets = args[i].elems
		i++
	}
	if i >= len(args) || args[i].kind != 'r' {
		c.bad(in, "no function to call")
	}
	name := args[i].name
	i++
	if i < len(args) && args[i].kind == 'l' {
		params = args[i].elems
		i++
	}
	if i < len(args) && (args[i].kind != 'r' || i+1 < len(args)) {
		c.bad(in, "a call with operands after its arguments other than a prototype's label")
	}
	_, isReg := c.regs[name]
	if !isReg && i < len(args) {
		c.bad(in, "a direct call with a prototype")
	}
	ref := func(ops []operand) []paramRef {
		var refs []paramRef
		for _, a := range ops {
			if a.kind != 'r' {
				c.bad(in, "a call argument that is not a .param variable")
			}
			s := c.lookup(a.name)
			if s == nil || !s.funcParam {
				c.bad(in, "call argument %s is not a .param variable of the caller", a.name)
			}
			refs = append(refs, paramRef{int32(s.addr), int32(s.v.size())})
		}
		return refs
	}
	o.args, o.rets = ref(params), ref(rets)
	if isReg {
		c.buildIndirectCall(in, o, name)
		return
	}
	target := c.p.mod.funcs[name]
	if target == nil {
		c.bad(in, "call of unknown function %s", name)
	}
	if target.decl {
		if b := builtins[name]; b != nil {
			o.builtin = b
			if (name == "malloc" || name == "free") && c.p.heap.Load() == nil {
				// under p.mu, as all compiling is
				c.p.heap.Store(newDeviceHeap())
			}
			return
		}
		c.bad(in, "call of %s, which is declared and not defined (no device library is linked)", name)
	}
	callee, err := c.p.compile(target)
	if err != nil {
		panic(cerr{err.(*Error)})
	}
	if len(callee.argOff) != len(o.args) || len(callee.retOff) != len(o.rets) {
		c.bad(in, "%s takes %d arguments and returns %d values", name, len(callee.argOff), len(callee.retOff))
	}
	o.callee = callee
	if callee.syncs {
		c.f.syncs = true
	}
}

func (c *compiler) buildBar(in *instr, o *op, ms modset) {
	if ms.has[".warp"] {
		// bar.warp.sync: the lanes of the mask meet; in step already
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) { wp.wepoch++ }
		return
	}
	if ms.has[".cluster"] {
		o.exec = func(*warp, *frame, *op, uint32) {}
		return
	}
	if ms.has[".arrive"] {
		c.bad(in, "bar.arrive (producer-consumer barriers) is not supported")
	}
	o.kind = kBarrier
	c.f.syncs = true
	if ms.has[".red"] {
		c.buildBarRed(in, o, ms)
		return
	}
	if len(in.args) > 1 {
		o.b = c.src(in, in.args[1], dtype{'u', 4, false})
	}
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		if o.b >= 0 {
			n := fr.r[int(o.b)*32+tz(m)]
			l := wp.b.g.l
			all := uint64(l.Block[0] * l.Block[1] * l.Block[2])
			if n < (all+31)/32*32 && n < all {
				wp.fail(tz(m), o, ResultIllegalInstr, "a barrier of %d of the block's %d threads (named barriers with a thread count are not supported)", n, all)
			}
		}
		wp.b.barrier()
	}
}

func (c *compiler) buildBarRed(in *instr, o *op, ms modset) {
	// bar.red.popc.u32 d, a, {b,} {!}p ; bar.red.and.pred p, a, {b,} {!}q
	if len(in.args) < 3 {
		c.bad(in, "%d operands", len(in.args))
	}
	o.d = c.dst(in, in.args[0])
	pa := in.args[len(in.args)-1]
	o.c = c.src(in, pa, dtype{'p', 1, false})
	o.neg[0] = pa.neg
	kind := "popc"
	if ms.has[".and"] {
		kind = "and"
	} else if ms.has[".or"] {
		kind = "or"
	}
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		cnt := uint64(0)
		for x := m; x != 0; x &= x - 1 {
			if (fr.r[int(o.c)*32+tz(x)] != 0) != o.neg[0] {
				cnt++
			}
		}
		total := wp.b.reduce(cnt, uint64(popcount(m)))
		var v uint64
		switch kind {
		case "popc":
			v = total[0]
		case "and":
			v = b2u(total[0] == total[1])
		case "or":
			v = b2u(total[0] > 0)
		}
		for x := m; x != 0; x &= x - 1 {
			fr.r[int(o.d)*32+tz(x)] = v
		}
	}
}

func popcount(m uint32) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// reduce is a barrier that also sums each warp's count and threads.
func (b *block) reduce(count, threads uint64) [2]uint64 {
	b.mu.Lock()
	if b.arrived == 0 {
		b.redAcc = [2]uint64{}
	}
	b.redAcc[0] += count
	b.redAcc[1] += threads
	b.mu.Unlock()
	if len(b.warps) == 1 {
		b.epoch++
		return b.redAcc
	}
	b.mu.Lock()
	b.arrived++
	if b.arrived >= b.live {
		b.arrived = 0
		b.gen++
		b.epoch++
		b.redOut = b.redAcc
		b.cond.Broadcast()
	} else {
		gen := b.gen
		for gen == b.gen && !b.g.stop.Load() {
			b.cond.Wait()
		}
	}
	out := b.redOut
	b.mu.Unlock()
	if b.g.stop.Load() {
		panic(kfault{b.g.fault.Load()})
	}
	return out
}

func (c *compiler) buildWarp(in *instr, o *op, ms modset) {
	switch in.op {
	case "elect":
		// elect.sync d|p, membermask: the lowest lane of the mask among
		// those here leads
		c.nargs(in, 2, 2)
		d := in.args[0]
		o.d = c.dst(in, d)
		o.dp = -1
		if d.pair != "" {
			r, ok := c.regs[d.pair]
			if !ok {
				c.bad(in, "unknown predicate %s", d.pair)
			}
			o.dp = r
		}
		o.a = c.src(in, in.args[1], dtype{'u', 4, false})
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			mask := uint32(r[int(o.a)*32+tz(m)]) & m
			leader := uint64(tz(mask))
			for x := m; x != 0; x &= x - 1 {
				l := tz(x)
				if mask == 0 {
					leader = 0
				}
				r[int(o.d)*32+l] = leader
				if o.dp >= 0 {
					r[int(o.dp)*32+l] = b2u(mask != 0 && uint64(l) == leader)
				}
			}
		}
	case "activemask":
		c.nargs(in, 1, 1)
		o.d = c.dst(in, in.args[0])
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			for x := m; x != 0; x &= x - 1 {
				fr.r[int(o.d)*32+tz(x)] = uint64(m)
			}
		}
	case "shfl":
		c.nargs(in, 4, 5)
		d := in.args[0]
		o.d = c.dst(in, d)
		if d.pair != "" {
			o.dp = c.regs[d.pair]
		}
		u32 := dtype{'u', 4, false}
		o.a, o.b, o.c = c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
		mode := 0
		switch {
		case ms.has[".up"]:
			mode = 1
		case ms.has[".down"]:
			mode = 2
		case ms.has[".bfly"]:
			mode = 3
		case ms.has[".idx"]:
			mode = 4
		default:
			c.bad(in, "no shuffle mode")
		}
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			var out, pv [32]uint64
			for x := m; x != 0; x &= x - 1 {
				lane := tz(x)
				bval := uint32(r[int(o.b)*32+lane])
				cval := uint32(r[int(o.c)*32+lane])
				segmask := cval >> 8 & 0x1f
				maxLane := uint32(lane)&segmask | cval&0x1f&^segmask
				minLane := uint32(lane) & segmask
				var j uint32
				var ok bool
				switch mode {
				case 1:
					j = uint32(lane) - bval
					ok = int32(j) >= int32(maxLane)
				case 2:
					j = uint32(lane) + bval
					ok = j <= maxLane
				case 3:
					j = uint32(lane) ^ bval
					ok = j <= maxLane
				case 4:
					j = minLane | bval&0x1f&^segmask
					ok = j <= maxLane
				}
				if !ok {
					j = uint32(lane)
				}
				out[lane] = r[int(o.a)*32+int(j&31)]
				pv[lane] = b2u(ok)
			}
			for x := m; x != 0; x &= x - 1 {
				lane := tz(x)
				r[int(o.d)*32+lane] = out[lane]
				if o.dp >= 0 {
					r[int(o.dp)*32+lane] = pv[lane]
				}
			}
		}
	case "vote":
		c.nargs(in, 2, 3)
		o.d = c.dst(in, in.args[0])
		o.a = c.src(in, in.args[1], dtype{'p', 1, false})
		o.neg[0] = in.args[1].neg
		if len(in.args) == 3 {
			o.b = c.src(in, in.args[2], dtype{'u', 4, false})
		}
		kind := ""
		for _, k := range []string{"all", "any", "uni", "ballot"} {
			if ms.has["."+k] {
				kind = k
			}
		}
		if kind == "" {
			c.bad(in, "no vote mode")
		}
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			part := m
			if o.b >= 0 {
				part &= uint32(r[int(o.b)*32+tz(m)])
			}
			var ballot uint32
			for x := part; x != 0; x &= x - 1 {
				l := tz(x)
				if (r[int(o.a)*32+l] != 0) != o.neg[0] {
					ballot |= 1 << l
				}
			}
			var v uint64
			switch kind {
			case "all":
				v = b2u(ballot == part)
			case "any":
				v = b2u(ballot != 0)
			case "uni":
				v = b2u(ballot == 0 || ballot == part)
			case "ballot":
				v = uint64(ballot)
			}
			for x := m; x != 0; x &= x - 1 {
				r[int(o.d)*32+tz(x)] = v
			}
		}
	case "match":
		c.nargs(in, 3, 3)
		t := c.typ(in, ms, 0)
		d := in.args[0]
		o.d = c.dst(in, d)
		if d.pair != "" {
			o.dp = c.regs[d.pair]
		}
		o.a = c.src(in, in.args[1], t)
		o.b = c.src(in, in.args[2], dtype{'u', 4, false})
		all := ms.has[".all"]
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			part := m & uint32(r[int(o.b)*32+tz(m)])
			var res [32]uint64
			var pred [32]bool
			for x := m; x != 0; x &= x - 1 {
				l := tz(x)
				v := r[int(o.a)*32+l]
				var same uint32
				for y := part; y != 0; y &= y - 1 {
					k := tz(y)
					if r[int(o.a)*32+k] == v {
						same |= 1 << k
					}
				}
				if all {
					if same == part {
						res[l], pred[l] = uint64(part), true
					}
				} else {
					res[l] = uint64(same)
				}
			}
			for x := m; x != 0; x &= x - 1 {
				l := tz(x)
				r[int(o.d)*32+l] = res[l]
				if o.dp >= 0 {
					r[int(o.dp)*32+l] = b2u(pred[l])
				}
			}
		}
	case "redux":
		c.nargs(in, 3, 3)
		t := c.typ(in, ms, 0)
		o.d = c.dst(in, in.args[0])
		o.a = c.src(in, in.args[1], t)
		o.b = c.src(in, in.args[2], dtype{'u', 4, false})
		kind := ""
		for _, k := range []string{"add", "min", "max", "and", "or", "xor"} {
			if ms.has["."+k] {
				kind = k
			}
		}
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			part := m & uint32(r[int(o.b)*32+tz(m)])
			first := true
			var acc uint64
			for x := part; x != 0; x &= x - 1 {
				v := t.ival(r[int(o.a)*32+tz(x)])
				if first {
					acc, first = v, false
					continue
				}
				switch kind {
				case "add":
					acc += v
				case "and":
					acc &= v
				case "or":
					acc |= v
				case "xor":
					acc ^= v
				case "min":
					if (t.signed() && int64(v) < int64(acc)) || (!t.signed() && v < acc) {
						acc = v
					}
				case "max":
					if (t.signed() && int64(v) > int64(acc)) || (!t.signed() && v > acc) {
						acc = v
					}
				}
			}
			for x := m; x != 0; x &= x - 1 {
				r[int(o.d)*32+tz(x)] = acc & 0xffffffff
			}
		}
	}
}

// cp.async copies at once; its groups and waits have nothing to wait for.
func (c *compiler) buildCpAsync(in *instr, o *op, ms modset) {
	if !ms.has[".async"] {
		c.bad(in, "not supported by the interpreter: cp")
	}
	if ms.has[".commit_group"] || ms.has[".wait_group"] || ms.has[".wait_all"] {
		o.exec = func(*warp, *frame, *op, uint32) {}
		return
	}
	if ms.has[".mbarrier"] {
		c.bad(in, "not supported by the interpreter: cp.async.mbarrier")
	}
	if len(in.args) < 3 {
		c.bad(in, "%d operands", len(in.args))
	}
	o.a, o.off, _ = c.addr(in, in.args[0], spShared)
	var soff int64
	o.b, soff, _ = c.addr(in, in.args[1], spGlobal)
	if in.args[2].kind != 'n' {
		c.bad(in, "the copy size must be an immediate")
	}
	n, _ := parseInt(in.args[2].num)
	if n != 4 && n != 8 && n != 16 {
		c.bad(in, "a copy of %d bytes", n)
	}
	o.size = n
	if len(in.args) >= 4 && in.args[3].kind != 'n' && in.args[3].kind != 'r' {
		c.bad(in, "a bad source size")
	}
	if len(in.args) >= 4 {
		o.c = c.src(in, in.args[3], dtype{'u', 4, false})
	}
	o.e = int32(soff)
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			dst := wp.at(fr, l, o, spShared, laneAddr(fr, o, l), o.size, true)
			src := uint64(o.e)
			if o.b >= 0 {
				src += fr.r[int(o.b)*32+l]
			}
			avail := o.size
			if o.c >= 0 {
				avail = min(fr.r[int(o.c)*32+l], o.size)
			}
			var sp unsafe.Pointer
			if avail > 0 {
				sp = wp.at(fr, l, o, spGlobal, src, o.size, false)
			}
			d := unsafe.Slice((*byte)(dst), o.size)
			for i := range d {
				if uint64(i) < avail {
					d[i] = *(*byte)(unsafe.Add(sp, i))
				} else {
					d[i] = 0
				}
			}
		}
	}
}

var builtins = map[string]execFn{
	"vprintf":      builtinPrintf,
	"__assertfail": builtinAssert,
	"malloc":       builtinMalloc,
	"free":         builtinFree,
}

// cString reads the NUL-terminated string at a generic address.
func (wp *warp) cString(fr *frame, lane int, o *op, addr uint64) string {
	var b strings.Builder
	for i := uint64(0); i < 4096; i++ {
		p := wp.at(fr, lane, o, spGeneric, addr+i, 1, false)
		ch := *(*byte)(p)
		if ch == 0 {
			break
		}
		b.WriteByte(ch)
	}
	return b.String()
}

func argBytes(fr *frame, lane int, ref paramRef) uint64 {
	p := fr.params[lane*fr.f.paramSize+int(ref.off):]
	var v uint64
	for i := 0; i < int(ref.size) && i < 8; i++ {
		v |= uint64(p[i]) << (8 * i)
	}
	return v
}

func setRet(fr *frame, lane int, ref paramRef, v uint64) {
	p := fr.params[lane*fr.f.paramSize+int(ref.off):]
	for i := 0; i < int(ref.size) && i < 8; i++ {
		p[i] = byte(v >> (8 * i))
	}
}

func builtinAssert(wp *warp, fr *frame, o *op, m uint32) {
	l := tz(m)
	msg, file, fn := "?", "?", "?"
	var line uint64
	if len(o.args) >= 4 {
		msg = wp.cString(fr, l, o, argBytes(fr, l, o.args[0]))
		file = wp.cString(fr, l, o, argBytes(fr, l, o.args[1]))
		line = argBytes(fr, l, o.args[2]) & 0xffffffff
		fn = wp.cString(fr, l, o, argBytes(fr, l, o.args[3]))
	}
	wp.fail(l, o, ResultAssert, "assertion %q failed at %s:%d in %s", msg, file, line, fn)
}

func builtinPrintf(wp *warp, fr *frame, o *op, m uint32) {
	if len(o.args) != 2 {
		wp.fail(tz(m), o, ResultIllegalInstr, "vprintf with %d arguments", len(o.args))
	}
	for x := m; x != 0; x &= x - 1 {
		l := tz(x)
		format := wp.cString(fr, l, o, argBytes(fr, l, o.args[0]))
		args := argBytes(fr, l, o.args[1])
		text, n := wp.cFormat(fr, l, o, format, args)
		b := wp.b
		g := b.g
		g.outMu.Lock()
		b.printSq++
		if len(g.out) < 1<<20 {
			g.out = append(g.out, printRecord{block: b.linear, seq: uint64(wp.id)<<40 | b.printSq, text: text})
		}
		g.outMu.Unlock()
		if len(o.rets) == 1 {
			setRet(fr, l, o.rets[0], uint64(n))
		}
	}
}

// cFormat formats as C's printf does, taking the arguments from the
// buffer at args, each aligned to its size.
func (wp *warp) cFormat(fr *frame, lane int, o *op, format string, args uint64) (string, int) {
	off := uint64(0)
	next := func(size uint64) uint64 {
		off = (off + size - 1) &^ (size - 1)
		p := wp.at(fr, lane, o, spGeneric, args+off, size, false)
		off += size
		return load(p, size)
	}
	return formatC(format, next, func(p uint64) string { return wp.cString(fr, lane, o, p) })
}

// formatC formats as C's printf does, next giving each argument of the
// size asked (4 or 8 bytes, as the caller's variadic promotion stores
// them) and str the string at an address; it returns the text and the
// number of arguments converted. Go's fmt differs from C in what it
// prints for %g without a precision, NaN and infinities, the exponent of
// %a and the h length modifiers, so those are done here.
func formatC(format string, next func(size uint64) uint64, str func(p uint64) string) (string, int) {
	var out strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' {
			out.WriteByte(ch)
			continue
		}
		start, j := i, i+1
		var spec strings.Builder
		spec.WriteByte('%')
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			spec.WriteByte(format[j])
			j++
		}
		// a '*' width or precision is an int argument before the value; a
		// negative width means '-', a negative precision none
		star := func(precision bool) bool {
			if j < len(format) && format[j] == '*' {
				j++
				n++
				w := int32(next(4))
				if w < 0 {
					if precision {
						return false
					}
					spec.WriteByte('-')
					w = -w
				}
				spec.WriteString(strconv.Itoa(int(w)))
				return true
			}
			for j < len(format) && format[j] >= '0' && format[j] <= '9' {
				spec.WriteByte(format[j])
				j++
			}
			return true
		}
		star(false)
		prec := false
		if j < len(format) && format[j] == '.' {
			j++
			mark := spec.Len()
			spec.WriteByte('.')
			if prec = star(true); !prec {
				s := spec.String()[:mark]
				spec.Reset()
				spec.WriteString(s)
			}
		}
		long, short := 0, 0
		for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 {
			switch format[j] {
			case 'h':
				short++
			default:
				long++
			}
			j++
		}
		if j >= len(format) {
			out.WriteString(format[i:])
			break
		}
		conv := format[j]
		sp := spec.String()
		i = j
		size := uint64(4)
		if long > 0 {
			size = 8
		}
		// the h modifiers print the promoted argument converted back
		narrow := func(v uint64) uint64 {
			switch {
			case long > 0:
				return v
			case short == 1:
				return v & 0xffff
			case short >= 2:
				return v & 0xff
			}
			return v & 0xffffffff
		}
		switch conv {
		case '%':
			out.WriteByte('%')
			continue
		case 'd', 'i':
			n++
			v := narrow(next(size))
			w := 8
			switch {
			case long > 0:
			case short == 1:
				w = 2
			case short >= 2:
				w = 1
			default:
				w = 4
			}
			out.WriteString(fmt.Sprintf(sp+"d", sext(v, w)))
		case 'u':
			n++
			out.WriteString(fmt.Sprintf(sp+"d", narrow(next(size))))
		case 'x', 'X', 'o':
			n++
			out.WriteString(fmt.Sprintf(sp+string(conv), narrow(next(size))))
		case 'c':
			n++
			out.WriteString(fmt.Sprintf(sp+"c", rune(byte(next(size)))))
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			n++
			out.WriteString(formatFloat(sp, conv, prec, math.Float64frombits(next(8))))
		case 's':
			n++
			p := next(8)
			if p == 0 {
				out.WriteString(fmt.Sprintf(sp+"s", "(null)"))
			} else {
				out.WriteString(fmt.Sprintf(sp+"s", str(p)))
			}
		case 'p':
			n++
			out.WriteString(fmt.Sprintf("0x%x", next(8)))
		default:
			out.WriteString(format[start : j+1])
		}
	}
	return out.String(), n
}

// formatFloat is one floating-point conversion of C's printf: spec is
// the flags, width and precision ("%-8.3"), conv the conversion letter.
func formatFloat(spec string, conv byte, prec bool, v float64) string {
	upper := conv == 'F' || conv == 'E' || conv == 'G' || conv == 'A'
	flags := spec[1 : 1+len(spec[1:])-len(strings.TrimLeft(spec[1:], "-+ #0"))]
	rest := spec[1+len(flags):]
	w := 0
	for k := 0; k < len(rest) && rest[k] >= '0' && rest[k] <= '9'; k++ {
		w = w*10 + int(rest[k]-'0')
	}
	pad := func(s string) string {
		if len(s) >= w {
			return s
		}
		if strings.Contains(flags, "-") {
			return s + strings.Repeat(" ", w-len(s))
		}
		return strings.Repeat(" ", w-len(s)) + s
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		// C prints nan and inf (NAN, INF in the upper-case conversions),
		// padded by the width but never with zeros
		s := "inf"
		if math.IsNaN(v) {
			s = "nan"
		}
		switch {
		case math.Signbit(v):
			s = "-" + s
		case strings.Contains(flags, "+"):
			s = "+" + s
		case strings.Contains(flags, " "):
			s = " " + s
		}
		if upper {
			s = strings.ToUpper(s)
		}
		return pad(s)
	}
	switch conv {
	case 'F':
		conv = 'f'
	case 'g', 'G':
		if !prec {
			spec += ".6" // C's default precision; Go's is the shortest exact
		}
	case 'a', 'A':
		// C writes the exponent without leading zeros: 0x1.8p+1, not p+01
		s := fmt.Sprintf("%"+strings.ReplaceAll(flags, "0", "")+strings.TrimLeft(rest, "0123456789")+"x", v)
		if k := strings.LastIndexByte(s, 'p'); k >= 0 && k+3 < len(s) && s[k+2] == '0' {
			s = s[:k+2] + s[k+3:]
		}
		if upper {
			s = strings.ToUpper(s)
		}
		return pad(s)
	}
	return fmt.Sprintf(spec+string(conv), v)
}

// buildIndirectCall compiles a call through the function address in
// register reg: every function of the module with as many arguments and
// return values may be its target. Those that do not compile are errors
// only when called.
func (c *compiler) buildIndirectCall(in *instr, o *op, reg string) {
	o.a = c.regs[reg]
	ind := &indirect{targets: map[uint64]*fn{}}
	o.ind = ind
	for _, f := range c.p.mod.order {
		if f.entry || f.decl || len(f.params) != len(o.args) || len(f.rets) != len(o.rets) {
			continue
		}
		callee, err := c.p.compile(f)
		a := c.p.fnAddr[f.name]
		if err != nil {
			if ind.errs == nil {
				ind.errs = map[uint64]string{}
			}
			ind.errs[a] = fmt.Sprintf("%s, which does not compile: %v", f.name, err)
			continue
		}
		ind.targets[a] = callee
		if callee.syncs {
			c.f.syncs = true
		}
	}
}
