package ptx

import (
	"math"
	"math/bits"
	"strings"
)

// modset is an instruction's modifiers, its types in order apart.
type modset struct {
	types []dtype
	has   map[string]bool
	vec   int
}

func parseMods(in *instr) modset {
	ms := modset{has: map[string]bool{}, vec: 1}
	for _, m := range in.mods {
		if t, ok := dtypes[m]; ok {
			ms.types = append(ms.types, t)
			continue
		}
		switch m {
		case ".v2":
			ms.vec = 2
		case ".v4":
			ms.vec = 4
		case ".v8":
			ms.vec = 8
		}
		ms.has[m] = true
	}
	return ms
}

func (ms modset) rounding() byte {
	switch {
	case ms.has[".rz"], ms.has[".rzi"]:
		return 'z'
	case ms.has[".rm"], ms.has[".rmi"]:
		return 'm'
	case ms.has[".rp"], ms.has[".rpi"]:
		return 'p'
	}
	return 'n'
}

func (ms modset) space() space {
	for k, v := range spaceNames {
		if ms.has[k] {
			return v
		}
	}
	return spGeneric
}

func (c *compiler) typ(in *instr, ms modset, i int) dtype {
	if i < 0 || i >= len(ms.types) {
		c.bad(in, "a type is missing")
	}
	return ms.types[i]
}

func (c *compiler) nargs(in *instr, lo, hi int) {
	if len(in.args) < lo || len(in.args) > hi {
		c.bad(in, "%d operands", len(in.args))
	}
}

func tz(m uint32) int { return bits.TrailingZeros32(m) }

// Per-lane loops over registers d = f(a, b, c).
func un(f func(a uint64) uint64) execFn {
	return func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		d, a := int(o.d)*32, int(o.a)*32
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			r[d+l] = f(r[a+l])
		}
	}
}

func bin(f func(a, b uint64) uint64) execFn {
	return func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		d, a, b := int(o.d)*32, int(o.a)*32, int(o.b)*32
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			r[d+l] = f(r[a+l], r[b+l])
		}
	}
}

func tri(f func(a, b, c uint64) uint64) execFn {
	return func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		d, a, b, c := int(o.d)*32, int(o.a)*32, int(o.b)*32, int(o.c)*32
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			r[d+l] = f(r[a+l], r[b+l], r[c+l])
		}
	}
}

// unsupported lists instructions outside what the interpreter runs, to
// name them plainly.
var unsupported = map[string]string{
	"mma": "tensor-core mma", "wmma": "tensor-core wmma", "wgmma": "warpgroup mma", "ldmatrix": "ldmatrix", "stmatrix": "stmatrix",
	"tex": "texture fetch", "tld4": "texture gather", "txq": "texture query", "suld": "surface load", "sust": "surface store",
	"sured": "surface reduction", "suq": "surface query", "cp.async.bulk": "bulk async copy (TMA)", "mbarrier": "mbarrier",
	"tcgen05": "tensor-core gen5", "setmaxnreg": "setmaxnreg", "getctarank": "cluster ranks", "mapa": "cluster addresses",
	"istypep": "istypep", "alloca": "alloca", "stackrestore": "stack restore", "stacksave": "stack save", "brx": "indirect branch",
}

// build compiles in into o.
func (c *compiler) build(in *instr, o *op) {
	ms := parseMods(in)
	name := in.op
	if name == "cp" && (ms.has[".bulk"] || ms.has[".tensor"]) {
		c.bad(in, "not supported by the interpreter: bulk async copy (TMA)")
	}
	if what, ok := unsupported[name]; ok {
		c.bad(in, "not supported by the interpreter: %s", what)
	}
	o.kind = kNormal
	switch name {
	case "mov":
		c.buildMov(in, o, ms)
	case "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr", "not", "neg", "abs",
		"popc", "clz", "brev", "bfind", "cnot", "sqrt", "rsqrt", "rcp", "sin", "cos", "lg2", "ex2", "tanh", "copysign",
		"mul24", "mad24", "sad", "addc", "subc", "madc":
		c.buildArith(in, o, ms)
	case "bfe", "bfi", "prmt", "shf", "lop3", "dp4a", "dp2a", "fns", "szext", "bmsk":
		c.buildBits(in, o, ms)
	case "setp", "set":
		c.buildSetp(in, o, ms)
	case "selp", "slct":
		c.buildSelp(in, o, ms)
	case "cvt":
		c.buildCvt(in, o, ms)
	case "cvta":
		c.buildCvta(in, o, ms)
	case "testp":
		c.buildTestp(in, o, ms)
	case "ld", "ldu", "st":
		c.buildLdSt(in, o, ms)
	case "atom", "red":
		c.buildAtom(in, o, ms)
	case "bra":
		c.nargs(in, 1, 1)
		if in.args[0].kind != 'r' {
			c.bad(in, "a branch target that is not a label")
		}
		t, ok := c.labels[in.args[0].name]
		if !ok {
			c.bad(in, "unknown label %s", in.args[0].name)
		}
		o.kind, o.target = kBranch, t
	case "ret":
		o.kind = kRet
	case "exit":
		o.kind = kExit
	case "trap", "brkpt":
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			wp.fail(tz(m), o, ResultIllegalInstr, "%s", "the kernel executed trap")
		}
	case "call":
		c.buildCall(in, o, ms)
	case "bar", "barrier":
		c.buildBar(in, o, ms)
	case "membar", "fence", "nanosleep", "pmevent", "prefetch", "prefetchu", "discard", "applypriority", "griddepcontrol":
		o.exec = func(*warp, *frame, *op, uint32) {}
	case "createpolicy":
		o.d = c.dst(in, in.args[0])
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			for ; m != 0; m &= m - 1 {
				fr.r[int(o.d)*32+tz(m)] = 0
			}
		}
	case "shfl", "vote", "match", "activemask", "redux", "elect":
		c.buildWarp(in, o, ms)
	case "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4":
		c.buildSIMD(in, o, ms)
	case "isspacep":
		c.buildIsspacep(in, o, ms)
	case "cp":
		c.buildCpAsync(in, o, ms)
	default:
		c.bad(in, "not supported by the interpreter: %s", name)
	}
}

func (c *compiler) buildMov(in *instr, o *op, ms modset) {
	c.nargs(in, 2, 2)
	t := c.typ(in, ms, 0)
	d, a := in.args[0], in.args[1]
	switch {
	case d.kind == 'v':
		// unpack: mov.b64 {lo, hi}, %rd
		n := len(d.elems)
		o.a = c.src(in, a, t)
		for _, e := range d.elems {
			o.vd = append(o.vd, c.dst(in, e))
		}
		w := uint(8 * t.size / n)
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			mask := uint64(1)<<w - 1
			if w == 64 {
				mask = ^uint64(0)
			}
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				v := r[int(o.a)*32+l]
				for i, dr := range o.vd {
					r[int(dr)*32+l] = v >> (w * uint(i)) & mask
				}
			}
		}
	case a.kind == 'v':
		n := len(a.elems)
		o.d = c.dst(in, d)
		w := uint(8 * t.size / n)
		et := dtype{'b', t.size / n, false}
		for _, e := range a.elems {
			o.vd = append(o.vd, c.src(in, e, et))
		}
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			mask := uint64(1)<<w - 1
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				var v uint64
				for i, s := range o.vd {
					v |= (r[int(s)*32+l] & mask) << (w * uint(i))
				}
				r[int(o.d)*32+l] = v
			}
		}
	case a.kind == 'r' && (a.name == "%clock" || a.name == "%clock64" || a.name == "%globaltimer" || a.name == "%clock_hi" || strings.HasPrefix(a.name, "%globaltimer")):
		o.d = c.dst(in, d)
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			now := wp.b.g.clock.Add(uint64(bits.OnesCount32(m))) + wp.steps
			for ; m != 0; m &= m - 1 {
				fr.r[int(o.d)*32+tz(m)] = now & t.mask()
			}
		}
	default:
		o.d = c.dst(in, d)
		o.a = c.src(in, a, t)
		mask := t.mask()
		if t.kind == 'p' {
			mask = 1
			o.exec = un(func(a uint64) uint64 { return b2u(a != 0) })
			return
		}
		o.exec = un(func(a uint64) uint64 { return a & mask })
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (c *compiler) fmodsOf(ms modset) fmods {
	return fmods{mode: ms.rounding(), ftz: ms.has[".ftz"], sat: ms.has[".sat"], relu: ms.has[".relu"]}
}

func (c *compiler) buildArith(in *instr, o *op, ms modset) {
	t := c.typ(in, ms, len(ms.types)-1)
	name := in.op
	wide := ms.has[".wide"]
	hi := ms.has[".hi"]
	unary := map[string]bool{"not": true, "neg": true, "abs": true, "popc": true, "clz": true, "brev": true, "bfind": true, "cnot": true,
		"sqrt": true, "rsqrt": true, "rcp": true, "sin": true, "cos": true, "lg2": true, "ex2": true, "tanh": true}[name]
	ternary := name == "mad" || name == "fma" || name == "mad24" || name == "sad" || name == "madc"
	if t.x2 && !t.isFloat() {
		c.buildIntPair(in, o, ms, t)
		return
	}
	n := 3
	if unary {
		n = 2
	} else if ternary {
		n = 4
	}
	c.nargs(in, n, n)
	o.d = c.dst(in, in.args[0])
	st := t
	if wide {
		// the sources are half the destination's size
		st = t
	}
	o.a = c.src(in, in.args[1], st)
	if n > 2 {
		bt := st
		if name == "shl" || name == "shr" {
			bt = dtype{'u', 4, false}
		}
		o.b = c.src(in, in.args[2], bt)
	}
	if n > 3 {
		ct := st
		if wide {
			ct = dtype{t.kind, t.size * 2, false}
		}
		o.c = c.src(in, in.args[3], ct)
	}
	if t.isFloat() {
		c.floatArith(in, o, ms, t, name)
		return
	}
	if t.kind == 'p' {
		switch name {
		case "and":
			o.exec = bin(func(a, b uint64) uint64 { return b2u(a != 0 && b != 0) })
		case "or":
			o.exec = bin(func(a, b uint64) uint64 { return b2u(a != 0 || b != 0) })
		case "xor":
			o.exec = bin(func(a, b uint64) uint64 { return b2u((a != 0) != (b != 0)) })
		case "not":
			o.exec = un(func(a uint64) uint64 { return b2u(a == 0) })
		default:
			c.bad(in, "%s on predicates", name)
		}
		return
	}
	mask := t.mask()
	size := t.size
	sgn := t.signed()
	iv := t.ival
	sat := ms.has[".sat"]
	switch name {
	case "add", "sub":
		neg := name == "sub"
		if ms.has[".cc"] || name == "addc" || name == "subc" {
			c.carryArith(in, o, ms, t)
			return
		}
		switch {
		case sat && sgn && neg:
			o.exec = bin(func(a, b uint64) uint64 { return uint64(clampS(int64(iv(a))-int64(iv(b)), size)) & mask })
		case sat && sgn:
			o.exec = bin(func(a, b uint64) uint64 { return uint64(clampS(int64(iv(a))+int64(iv(b)), size)) & mask })
		case neg:
			o.exec = bin(func(a, b uint64) uint64 { return (a - b) & mask })
		default:
			o.exec = bin(func(a, b uint64) uint64 { return (a + b) & mask })
		}
	case "addc", "subc", "madc":
		c.carryArith(in, o, ms, t)
	case "mul", "mul24":
		switch {
		case wide:
			dm := uint64(1)<<(16*size) - 1
			if size == 4 {
				dm = ^uint64(0)
			}
			o.exec = bin(func(a, b uint64) uint64 { return iv(a) * iv(b) & dm })
		case hi:
			o.exec = bin(func(a, b uint64) uint64 { return mulHi(iv(a), iv(b), size, sgn) & mask })
		default:
			o.exec = bin(func(a, b uint64) uint64 { return a * b & mask })
		}
	case "mad", "mad24":
		if ms.has[".cc"] {
			c.carryArith(in, o, ms, t)
			return
		}
		switch {
		case wide:
			dm := uint64(1)<<(16*size) - 1
			if size == 4 {
				dm = ^uint64(0)
			}
			o.exec = tri(func(a, b, cc uint64) uint64 { return (iv(a)*iv(b) + cc) & dm })
		case hi:
			o.exec = tri(func(a, b, cc uint64) uint64 { return (mulHi(iv(a), iv(b), size, sgn) + cc) & mask })
		default:
			o.exec = tri(func(a, b, cc uint64) uint64 { return (a*b + cc) & mask })
		}
	case "sad":
		o.exec = tri(func(a, b, cc uint64) uint64 {
			x, y := iv(a), iv(b)
			var d uint64
			if (sgn && int64(x) < int64(y)) || (!sgn && x < y) {
				d = y - x
			} else {
				d = x - y
			}
			return (cc + d) & mask
		})
	case "div":
		o.exec = bin(func(a, b uint64) uint64 {
			x, y := iv(a), iv(b)
			if y&mask == 0 {
				return mask
			}
			if sgn {
				if int64(y) == -1 {
					return -x & mask
				}
				return uint64(int64(x)/int64(y)) & mask
			}
			return x / y & mask
		})
	case "rem":
		o.exec = bin(func(a, b uint64) uint64 {
			x, y := iv(a), iv(b)
			if y&mask == 0 {
				return x & mask
			}
			if sgn {
				if int64(y) == -1 {
					return 0
				}
				return uint64(int64(x)%int64(y)) & mask
			}
			return x % y & mask
		})
	case "min", "max":
		isMin := name == "min"
		if ms.has[".relu"] {
			// sm_90's max.relu.s32 and min.relu.s32: a negative result is 0
			if !sgn {
				c.bad(in, ".relu on an unsigned type")
			}
			o.exec = bin(func(a, b uint64) uint64 {
				x, y := int64(iv(a)), int64(iv(b))
				v := y
				if x < y == isMin {
					v = x
				}
				return uint64(max(v, 0)) & mask
			})
			break
		}
		o.exec = bin(func(a, b uint64) uint64 {
			x, y := iv(a), iv(b)
			less := x < y
			if sgn {
				less = int64(x) < int64(y)
			}
			if less == isMin {
				return x & mask
			}
			return y & mask
		})
	case "and":
		o.exec = bin(func(a, b uint64) uint64 { return a & b & mask })
	case "or":
		o.exec = bin(func(a, b uint64) uint64 { return (a | b) & mask })
	case "xor":
		o.exec = bin(func(a, b uint64) uint64 { return (a ^ b) & mask })
	case "not":
		o.exec = un(func(a uint64) uint64 { return ^a & mask })
	case "cnot":
		o.exec = un(func(a uint64) uint64 { return b2u(a&mask == 0) })
	case "neg":
		o.exec = un(func(a uint64) uint64 { return -a & mask })
	case "abs":
		o.exec = un(func(a uint64) uint64 {
			x := int64(iv(a))
			if x < 0 {
				x = -x
			}
			return uint64(x) & mask
		})
	case "shl":
		o.exec = bin(func(a, b uint64) uint64 {
			s := b & 0xffffffff
			if s >= uint64(8*size) {
				return 0
			}
			return a << s & mask
		})
	case "shr":
		o.exec = bin(func(a, b uint64) uint64 {
			s := b & 0xffffffff
			if sgn {
				if s >= uint64(8*size) {
					s = uint64(8*size) - 1
				}
				return uint64(int64(iv(a))>>s) & mask
			}
			if s >= uint64(8*size) {
				return 0
			}
			return (a & mask) >> s
		})
	case "popc":
		o.exec = un(func(a uint64) uint64 { return uint64(bits.OnesCount64(a & mask)) })
	case "clz":
		o.exec = un(func(a uint64) uint64 { return uint64(bits.LeadingZeros64(a&mask) - (64 - 8*size)) })
	case "brev":
		o.exec = un(func(a uint64) uint64 { return bits.Reverse64(a&mask) >> (64 - 8*size) })
	case "bfind":
		shiftAmt := ms.has[".shiftamt"]
		o.exec = un(func(a uint64) uint64 {
			x := iv(a)
			if sgn && int64(x) < 0 {
				x = ^x
			}
			x &= mask
			if x == 0 {
				return 0xffffffff
			}
			p := uint64(63 - bits.LeadingZeros64(x))
			if shiftAmt {
				return uint64(8*size-1) - p
			}
			return p
		})
	default:
		c.bad(in, "%s on integers", name)
	}
}

func clampS(s int64, size int) int64 {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if size == 8 {
		return s
	}
	if s < lo {
		return lo
	}
	if s > hi {
		return hi
	}
	return s
}

func mulHi(x, y uint64, size int, sgn bool) uint64 {
	if size < 8 {
		if sgn {
			return uint64((int64(x) * int64(y)) >> (8 * size))
		}
		return (x * y) >> (8 * size)
	}
	h, _ := bits.Mul64(x, y)
	if sgn {
		if int64(x) < 0 {
			h -= y
		}
		if int64(y) < 0 {
			h -= x
		}
	}
	return h
}

// carryArith is add.cc, addc, sub.cc, subc, mad.cc and madc: the carry
// flag is one bit per lane of the warp, a carry out of the adder for
// subtractions too (set when nothing was borrowed).
func (c *compiler) carryArith(in *instr, o *op, ms modset, t dtype) {
	setCC := ms.has[".cc"]
	mask := t.mask()
	size := t.size
	name := in.op
	useCC := name == "addc" || name == "subc" || name == "madc"
	hi := ms.has[".hi"]
	sgn := t.signed()
	iv := t.ival
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			a, b := r[int(o.a)*32+l]&mask, r[int(o.b)*32+l]&mask
			cin := uint64(0)
			if useCC {
				cin = uint64(wp.cc >> l & 1)
			}
			var res, cout uint64
			switch name {
			case "add", "addc":
				if size == 8 {
					res, cout = bits.Add64(a, b, cin)
				} else {
					s := a + b + cin
					res, cout = s&mask, s>>(8*size)&1
				}
			case "sub", "subc":
				// The hardware subtracts as a + ^b + carry: its carry
				// flag is set when no borrow occurred, and a
				// subtraction with no carry in takes one more away
				// (the compiler's own multi-word division relies on it).
				if name == "sub" {
					cin = 1
				}
				nb := ^b & mask
				if size == 8 {
					res, cout = bits.Add64(a, nb, cin)
				} else {
					s := a + nb + cin
					res, cout = s&mask, s>>(8*size)&1
				}
			case "mad", "madc":
				var p uint64
				if hi {
					p = mulHi(iv(a), iv(b), size, sgn) & mask
				} else {
					p = a * b & mask
				}
				cc := r[int(o.c)*32+l] & mask
				if size == 8 {
					var c1, c2 uint64
					res, c1 = bits.Add64(p, cc, 0)
					res, c2 = bits.Add64(res, cin, 0)
					cout = c1 | c2
				} else {
					s := p + cc + cin
					res, cout = s&mask, s>>(8*size)&1
				}
			}
			r[int(o.d)*32+l] = res
			if setCC {
				wp.cc = wp.cc&^(1<<l) | uint32(cout)<<l
			}
		}
	}
}

func (c *compiler) floatArith(in *instr, o *op, ms modset, t dtype, name string) {
	md := c.fmodsOf(ms)
	var f fop
	switch name {
	case "add":
		f = fAdd
	case "sub":
		f = fSub
	case "mul":
		f = fMul
	case "div":
		f = fDiv
		if ms.has[".approx"] || ms.has[".full"] {
			md.mode = 'n'
		}
	case "fma", "mad":
		f = fFma
	case "sqrt":
		f = fSqrt
		if ms.has[".approx"] {
			md.mode = 'n'
		}
	case "rcp":
		f = fRcp
		if ms.has[".approx"] {
			md.mode = 'n'
		}
	case "rsqrt":
		f = fRsqrt
	case "min":
		f = fMin
		if ms.has[".NaN"] {
			f = fMinNaN
		}
	case "max":
		f = fMax
		if ms.has[".NaN"] {
			f = fMaxNaN
		}
	case "neg":
		f = fNeg
	case "abs":
		f = fAbs
	case "sin":
		f = fSin
	case "cos":
		f = fCos
	case "lg2":
		f = fLg2
	case "ex2":
		f = fEx2
	case "tanh":
		f = fTanh
	case "copysign":
		f = fCopysign
	default:
		c.bad(in, "%s on floating point", name)
	}
	if t.x2 {
		ht := dtype{t.kind, 2, false}
		o.exec = tri3(o, func(a, b, cc uint64) uint64 {
			lo := fcalc(f, ht, md, a&0xffff, b&0xffff, cc&0xffff)
			hi := fcalc(f, ht, md, a>>16&0xffff, b>>16&0xffff, cc>>16&0xffff)
			return lo | hi<<16
		})
		return
	}
	if f == fAdd && t.kind == 'f' && t.size == 4 && md == (fmods{mode: 'n'}) {
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			d, a, b := int(o.d)*32, int(o.a)*32, int(o.b)*32
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				r[d+l] = uint64(math.Float32bits(math.Float32frombits(uint32(r[a+l])) + math.Float32frombits(uint32(r[b+l]))))
			}
		}
		return
	}
	if f == fFma && t.kind == 'f' && t.size == 4 && md == (fmods{mode: 'n'}) {
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			d, a, b, cc := int(o.d)*32, int(o.a)*32, int(o.b)*32, int(o.c)*32
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				x := float64(math.Float32frombits(uint32(r[a+l])))
				y := float64(math.Float32frombits(uint32(r[b+l])))
				z := float64(math.Float32frombits(uint32(r[cc+l])))
				r[d+l] = uint64(math.Float32bits(float32(roundOdd(x, y, z))))
			}
		}
		return
	}
	o.exec = tri3(o, func(a, b, cc uint64) uint64 { return fcalc(f, t, md, a, b, cc) })
}

// tri3 runs f on the operands o has (unused ones read as 0).
func tri3(o *op, f func(a, b, c uint64) uint64) execFn {
	return func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		d := int(o.d) * 32
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			var a, b, c uint64
			if o.a >= 0 {
				a = r[int(o.a)*32+l]
			}
			if o.b >= 0 {
				b = r[int(o.b)*32+l]
			}
			if o.c >= 0 {
				c = r[int(o.c)*32+l]
			}
			r[d+l] = f(a, b, c)
		}
	}
}
