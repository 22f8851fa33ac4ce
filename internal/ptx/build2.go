package ptx

import (
	"math"
	"math/big"
	"math/bits"
)

func (c *compiler) buildBits(in *instr, o *op, ms modset) {
	t := c.typ(in, ms, len(ms.types)-1)
	mask := t.mask()
	size := t.size
	u32 := dtype{'u', 4, false}
	switch in.op {
	case "bfe":
		c.nargs(in, 4, 4)
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
		sgn := t.signed()
		o.exec = tri(func(a, b, cc uint64) uint64 {
			pos, ln := b&0xff, cc&0xff
			msb := uint64(8*size - 1)
			var sbit uint64
			if sgn && ln != 0 {
				top := min(pos+ln-1, msb)
				sbit = a >> top & 1
			}
			var d uint64
			for i := uint64(0); i <= msb; i++ {
				var bit uint64
				if i < ln && pos+i <= msb {
					bit = a >> (pos + i) & 1
				} else {
					bit = sbit
				}
				d |= bit << i
			}
			return d & mask
		})
	case "bfi":
		c.nargs(in, 5, 5)
		o.d, o.a, o.b, o.c, o.e = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], t), c.src(in, in.args[3], u32), c.src(in, in.args[4], u32)
		o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
			r := fr.r
			for ; m != 0; m &= m - 1 {
				l := tz(m)
				a, b := r[int(o.a)*32+l], r[int(o.b)*32+l]
				pos, ln := r[int(o.c)*32+l]&0xff, r[int(o.e)*32+l]&0xff
				d := b
				for i := uint64(0); i < ln && pos+i < uint64(8*size); i++ {
					d = d&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
				}
				r[int(o.d)*32+l] = d & mask
			}
		}
	case "prmt":
		c.nargs(in, 4, 4)
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
		mode := ""
		for _, m := range []string{".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"} {
			if ms.has[m] {
				mode = m
			}
		}
		o.exec = tri(func(a, b, cc uint64) uint64 { return prmt(uint32(a), uint32(b), uint32(cc), mode) })
	case "shf":
		c.nargs(in, 4, 4)
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
		left, wrap := ms.has[".l"], ms.has[".wrap"]
		o.exec = tri(func(a, b, cc uint64) uint64 {
			n := cc & 0xffffffff
			if wrap {
				n &= 31
			} else if n > 32 {
				n = 32
			}
			v := b<<32 | a&0xffffffff
			if left {
				return (v << n >> 32) & 0xffffffff
			}
			return (v >> n) & 0xffffffff
		})
	case "lop3":
		c.nargs(in, 5, 5)
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], t), c.src(in, in.args[3], t)
		if in.args[4].kind != 'n' {
			c.bad(in, "lop3's table must be an immediate")
		}
		lut, _ := parseInt(in.args[4].num)
		o.exec = tri(func(a, b, cc uint64) uint64 {
			var d uint64
			for i := range 8 {
				if lut>>i&1 == 0 {
					continue
				}
				x := a
				if i&4 == 0 {
					x = ^a
				}
				y := b
				if i&2 == 0 {
					y = ^b
				}
				z := cc
				if i&1 == 0 {
					z = ^cc
				}
				d |= x & y & z
			}
			return d & mask
		})
	case "dp4a", "dp2a":
		c.nargs(in, 4, 4)
		if len(ms.types) < 2 {
			c.bad(in, "two types expected")
		}
		ta, tb := ms.types[0], ms.types[1]
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
		four := in.op == "dp4a"
		hiHalf := ms.has[".hi"]
		o.exec = tri(func(a, b, cc uint64) uint64 {
			acc := int64(int32(uint32(cc)))
			if ta.kind == 'u' && tb.kind == 'u' {
				acc = int64(uint32(cc))
			}
			if four {
				for i := range 4 {
					x, y := int64(a>>(8*i)&0xff), int64(b>>(8*i)&0xff)
					if ta.kind == 's' {
						x = int64(int8(x))
					}
					if tb.kind == 's' {
						y = int64(int8(y))
					}
					acc += x * y
				}
			} else {
				for i := range 2 {
					x := int64(a >> (16 * i) & 0xffff)
					if ta.kind == 's' {
						x = int64(int16(x))
					}
					j := i
					if hiHalf {
						j += 2
					}
					y := int64(b >> (8 * j) & 0xff)
					if tb.kind == 's' {
						y = int64(int8(y))
					}
					acc += x * y
				}
			}
			return uint64(acc) & 0xffffffff
		})
	case "szext":
		c.nargs(in, 3, 3)
		o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], u32)
		sgn := t.signed()
		o.exec = bin(func(a, b uint64) uint64 {
			n := min(b&0xffffffff, 32)
			if n == 0 {
				return 0
			}
			v := a & (1<<n - 1)
			if sgn && v>>(n-1)&1 == 1 {
				v |= ^uint64(0) << n
			}
			return v & 0xffffffff
		})
	case "fns":
		c.nargs(in, 4, 4)
		o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], dtype{'s', 4, false})
		o.exec = tri(func(a, b, cc uint64) uint64 { return uint64(fns(uint32(a), uint32(b), int32(uint32(cc)))) })
	case "bmsk":
		c.nargs(in, 3, 3)
		o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32)
		clamp := ms.has[".clamp"]
		o.exec = bin(func(a, b uint64) uint64 {
			pos, w := a&0xffffffff, b&0xffffffff
			if clamp {
				pos, w = min(pos, 32), min(w, 32)
			} else {
				pos, w = pos&0xff, w&0xff
			}
			if pos >= 32 {
				return 0
			}
			return ((uint64(1)<<w - 1) << pos) & 0xffffffff
		})
	default:
		c.bad(in, "not supported by the interpreter: %s", in.op)
	}
}

func prmt(a, b, c uint32, mode string) uint64 {
	bytes := [8]uint32{a & 0xff, a >> 8 & 0xff, a >> 16 & 0xff, a >> 24, b & 0xff, b >> 8 & 0xff, b >> 16 & 0xff, b >> 24}
	var d uint32
	if mode == "" {
		for i := range 4 {
			sel := c >> (4 * i) & 0xf
			v := bytes[sel&7]
			if sel&8 != 0 {
				if v&0x80 != 0 {
					v = 0xff
				} else {
					v = 0
				}
			}
			d |= v << (8 * i)
		}
		return uint64(d)
	}
	s := c & 3
	var idx [4]uint32
	switch mode {
	case ".f4e":
		idx = [4]uint32{s, s + 1, s + 2, s + 3}
	case ".b4e":
		idx = [4]uint32{(s + 0) & 7, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7}
	case ".rc8":
		idx = [4]uint32{s, s, s, s}
	case ".ecl":
		idx = [4]uint32{s, max(s, 1), max(s, 2), 3}
	case ".ecr":
		idx = [4]uint32{0, min(s, 1), min(s, 2), s}
	case ".rc16":
		x := (s & 1) * 2
		idx = [4]uint32{x, x + 1, x, x + 1}
	}
	for i := range 4 {
		d |= bytes[idx[i]&7] << (8 * i)
	}
	return uint64(d)
}

func (c *compiler) buildSetp(in *instr, o *op, ms modset) {
	var t dtype
	if in.op == "set" {
		if len(ms.types) < 2 {
			c.bad(in, "two types expected")
		}
		t = ms.types[1]
	} else {
		t = c.typ(in, ms, 0)
	}
	c.nargs(in, 3, 4)
	cmp := ""
	for _, k := range []string{".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs", ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"} {
		if ms.has[k] {
			cmp = k[1:]
		}
	}
	if cmp == "" {
		c.bad(in, "no comparison")
	}
	bop := ""
	for _, k := range []string{".and", ".or", ".xor"} {
		if ms.has[k] {
			bop = k
		}
	}
	d := in.args[0]
	o.d = c.dst(in, d)
	if d.pair != "" {
		r, ok := c.regs[d.pair]
		if !ok {
			c.bad(in, "unknown register %s", d.pair)
		}
		o.dp = r
	}
	o.a, o.b = c.src(in, in.args[1], t), c.src(in, in.args[2], t)
	if len(in.args) == 4 {
		if bop == "" {
			c.bad(in, "a fourth operand without .and, .or or .xor")
		}
		o.c = c.src(in, in.args[3], dtype{'p', 1, false})
		o.neg[0] = in.args[3].neg
	}
	ftz := ms.has[".ftz"]
	var dt dtype
	if in.op == "set" {
		dt = ms.types[0]
	}
	halves := 1
	et := t
	if t.x2 {
		halves, et = 2, dtype{t.kind, 2, false}
	}
	isSet := in.op == "set"
	o.exec = func(wp *warp, fr *frame, o *op, m uint32) {
		r := fr.r
		for ; m != 0; m &= m - 1 {
			l := tz(m)
			a, b := r[int(o.a)*32+l], r[int(o.b)*32+l]
			var res [2]bool
			for h := range halves {
				x, y := a>>(16*h), b>>(16*h)
				res[h] = compare(et, cmp, x, y, ftz)
			}
			pc := true
			if o.c >= 0 {
				pc = (r[int(o.c)*32+l] != 0) != o.neg[0]
			}
			for h := range halves {
				p, q := res[h], !res[h]
				switch bop {
				case ".and":
					p, q = p && pc, q && pc
				case ".or":
					p, q = p || pc, q || pc
				case ".xor":
					p, q = p != pc, q != pc
				}
				if isSet {
					var v uint64
					if p {
						if dt.kind == 'f' {
							v = dt.fbits(1)
						} else {
							v = dt.mask()
						}
					}
					r[int(o.d)*32+l] = v
					continue
				}
				dr, qr := o.d, o.dp
				if halves == 2 {
					// setp.f16x2 p|q: p the low half, q the high
					if h == 0 {
						r[int(o.d)*32+l] = b2u(p)
					} else if o.dp >= 0 {
						r[int(o.dp)*32+l] = b2u(p)
					}
					continue
				}
				r[int(dr)*32+l] = b2u(p)
				if qr >= 0 {
					r[int(qr)*32+l] = b2u(q)
				}
			}
		}
	}
}

func compare(t dtype, cmp string, a, b uint64, ftz bool) bool {
	if t.isFloat() {
		x, y := t.fval(a), t.fval(b)
		if ftz && t.kind == 'f' && t.size == 4 {
			x, y = flush32(x), flush32(y)
		}
		nan := math.IsNaN(x) || math.IsNaN(y)
		switch cmp {
		case "eq":
			return !nan && x == y
		case "ne":
			return !nan && x != y
		case "lt":
			return !nan && x < y
		case "le":
			return !nan && x <= y
		case "gt":
			return !nan && x > y
		case "ge":
			return !nan && x >= y
		case "equ":
			return nan || x == y
		case "neu":
			return nan || x != y
		case "ltu":
			return nan || x < y
		case "leu":
			return nan || x <= y
		case "gtu":
			return nan || x > y
		case "geu":
			return nan || x >= y
		case "num":
			return !nan
		case "nan":
			return nan
		}
		return false
	}
	x, y := t.ival(a), t.ival(b)
	sx, sy := int64(x), int64(y)
	signed := t.signed()
	switch cmp {
	case "eq":
		return x == y
	case "ne":
		return x != y
	case "lt":
		if signed {
			return sx < sy
		}
		return x < y
	case "le":
		if signed {
			return sx <= sy
		}
		return x <= y
	case "gt":
		if signed {
			return sx > sy
		}
		return x > y
	case "ge":
		if signed {
			return sx >= sy
		}
		return x >= y
	case "lo":
		return x < y
	case "ls":
		return x <= y
	case "hi":
		return x > y
	case "hs":
		return x >= y
	}
	return false
}

func (c *compiler) buildSelp(in *instr, o *op, ms modset) {
	c.nargs(in, 4, 4)
	t := c.typ(in, ms, 0)
	o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], t)
	if in.op == "slct" {
		ct := c.typ(in, ms, 1)
		o.c = c.src(in, in.args[3], ct)
		o.exec = tri(func(a, b, cc uint64) uint64 {
			neg := false
			if ct.kind == 'f' {
				neg = ct.fval(cc) < 0
			} else {
				neg = int64(ct.ival(cc)) < 0
			}
			if neg {
				return b
			}
			return a
		})
		return
	}
	o.c = c.src(in, in.args[3], dtype{'p', 1, false})
	neg := in.args[3].neg
	o.exec = tri(func(a, b, cc uint64) uint64 {
		if (cc != 0) != neg {
			return a
		}
		return b
	})
}

func (c *compiler) buildTestp(in *instr, o *op, ms modset) {
	c.nargs(in, 2, 2)
	t := c.typ(in, ms, 0)
	o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], t)
	var test func(x float64) bool
	switch {
	case ms.has[".finite"]:
		test = func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
	case ms.has[".infinite"]:
		test = func(x float64) bool { return math.IsInf(x, 0) }
	case ms.has[".number"]:
		test = func(x float64) bool { return !math.IsNaN(x) }
	case ms.has[".notanumber"]:
		test = math.IsNaN
	case ms.has[".normal"]:
		min := 0x1p-126
		if t.size == 8 {
			min = 0x1p-1022
		}
		test = func(x float64) bool { a := math.Abs(x); return a >= min && !math.IsInf(x, 0) && !math.IsNaN(x) }
	case ms.has[".subnormal"]:
		min := 0x1p-126
		if t.size == 8 {
			min = 0x1p-1022
		}
		test = func(x float64) bool { a := math.Abs(x); return a > 0 && a < min }
	default:
		c.bad(in, "no test")
	}
	o.exec = un(func(a uint64) uint64 { return b2u(test(t.fval(a))) })
}

func (c *compiler) buildCvt(in *instr, o *op, ms modset) {
	for _, f := range fp8Formats {
		if ms.has[f.name] {
			c.buildCvtFP8(in, o, ms, f)
			return
		}
	}
	if len(ms.types) < 2 {
		c.bad(in, "two types expected")
	}
	dt, st := ms.types[0], ms.types[1]
	mode := ms.rounding()
	intRound := ms.has[".rni"] || ms.has[".rzi"] || ms.has[".rmi"] || ms.has[".rpi"]
	sat := ms.has[".sat"]
	ftz := ms.has[".ftz"]
	relu := ms.has[".relu"]
	if dt.x2 {
		// cvt.rn.f16x2.f32 d, a, b: a in the high half
		c.nargs(in, 3, 3)
		o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], st), c.src(in, in.args[2], st)
		ht := dtype{dt.kind, 2, false}
		o.exec = bin(func(a, b uint64) uint64 {
			hi := cvtOne(ht, st, mode, false, sat, ftz, relu, a)
			lo := cvtOne(ht, st, mode, false, sat, ftz, relu, b)
			return hi<<16 | lo
		})
		return
	}
	c.nargs(in, 2, 2)
	o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], st)
	dmask := dt.mask()
	if r, ok := c.regs[in.args[0].name]; ok {
		if sz := c.rsize[r]; sz > dt.size && dt.signed() {
			// a narrow signed result is sign-extended into its register
			rm := dtype{'b', sz, false}.mask()
			dsz := dt.size
			o.exec = un(func(a uint64) uint64 {
				return uint64(sext(cvtOne(dt, st, mode, intRound, sat, ftz, relu, a), dsz)) & rm
			})
			return
		}
	}
	if !dt.isFloat() && !st.isFloat() && !sat {
		if st.size >= dt.size {
			o.exec = un(func(a uint64) uint64 { return a & dmask })
			return
		}
	}
	o.exec = un(func(a uint64) uint64 { return cvtOne(dt, st, mode, intRound, sat, ftz, relu, a) })
}

// cvtOne converts v of type st to dt.
func cvtOne(dt, st dtype, mode byte, intRound, sat, ftz, relu bool, v uint64) uint64 {
	if st.isFloat() {
		x := st.fval(v)
		if ftz && st.kind == 'f' && st.size == 4 {
			x = flush32(x)
		}
		if dt.isFloat() {
			if intRound {
				x = roundInt(x, mode)
				mode = 'n'
			}
			if relu && (x < 0 || math.IsNaN(x)) {
				x = 0
			}
			if sat {
				if math.IsNaN(x) || x < 0 {
					x = 0
				} else if x > 1 {
					x = 1
				}
			}
			if mode != 'n' && !math.IsNaN(x) && !math.IsInf(x, 0) && narrower(dt, st) {
				return roundBits(dt, mode, new(big.Float).SetFloat64(x))
			}
			r := dt.fbits(x)
			if ftz && dt.kind == 'f' && dt.size == 4 {
				r = uint64(math.Float32bits(float32(flush32(float64(math.Float32frombits(uint32(r)))))))
			}
			return r
		}
		if math.IsNaN(x) {
			return 0
		}
		x = roundInt(x, mode)
		if !intRound && mode == 'n' {
			x = math.Trunc(st.fval(v))
		}
		if dt.signed() {
			lo, hi := -math.Ldexp(1, 8*dt.size-1), math.Ldexp(1, 8*dt.size-1)-1
			if x <= lo {
				return uint64(int64(lo)) & dt.mask()
			}
			if x >= hi {
				if dt.size == 8 {
					return math.MaxInt64
				}
				return uint64(int64(hi)) & dt.mask()
			}
			return uint64(int64(x)) & dt.mask()
		}
		if x <= 0 {
			return 0
		}
		if x >= math.Ldexp(1, 8*dt.size) {
			return dt.mask()
		}
		return uint64(x) & dt.mask()
	}
	iv := st.ival(v)
	if dt.isFloat() && (mode != 'n' || dt.kind != 'f') {
		// directed rounding, and the half types, whose conversion
		// through float64 could round twice
		b := new(big.Float).SetUint64(iv)
		if st.signed() {
			b.SetInt64(int64(iv))
		}
		return roundBits(dt, mode, b)
	}
	if dt.isFloat() {
		var x float64
		if st.signed() {
			if dt.kind == 'f' && dt.size == 4 {
				return uint64(math.Float32bits(float32(int64(iv))))
			}
			x = float64(int64(iv))
		} else {
			if dt.kind == 'f' && dt.size == 4 {
				return uint64(math.Float32bits(float32(iv)))
			}
			x = float64(iv)
		}
		return dt.fbits(x)
	}
	if sat {
		if st.signed() {
			s := int64(iv)
			if dt.signed() {
				lo, hi := -int64(1)<<(8*dt.size-1), int64(1)<<(8*dt.size-1)-1
				if dt.size == 8 {
					return uint64(s)
				}
				return uint64(min(max(s, lo), hi)) & dt.mask()
			}
			if s < 0 {
				return 0
			}
			if dt.size < 8 && uint64(s) > dt.mask() {
				return dt.mask()
			}
			return uint64(s)
		}
		if dt.signed() {
			hi := uint64(1)<<(8*dt.size-1) - 1
			return min(iv, hi)
		}
		return min(iv, dt.mask())
	}
	return iv & dt.mask()
}

func (c *compiler) buildCvta(in *instr, o *op, ms modset) {
	c.nargs(in, 2, 2)
	t := c.typ(in, ms, 0)
	sp := ms.space()
	to := ms.has[".to"]
	o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], t)
	var win uint64
	switch sp {
	case spShared:
		win = winShared
	case spLocal:
		win = winLocal
	case spParam:
		win = winParam
	case spGlobal, spConst:
		o.exec = un(func(a uint64) uint64 { return a })
		return
	default:
		c.bad(in, "cvta of no state space")
	}
	if to {
		o.exec = un(func(a uint64) uint64 {
			if a&winMask == win {
				return a - win
			}
			return a | 1<<63 // not of that window: an address nothing has
		})
		return
	}
	o.exec = un(func(a uint64) uint64 { return a + win })
	_ = bits.Len
}

func (c *compiler) buildIsspacep(in *instr, o *op, ms modset) {
	c.nargs(in, 2, 2)
	sp := ms.space()
	o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], dtype{'u', 8, false})
	o.exec = un(func(a uint64) uint64 {
		w := a & winMask
		switch sp {
		case spShared:
			return b2u(w == winShared)
		case spLocal:
			return b2u(w == winLocal)
		case spParam:
			return b2u(w == winParam)
		}
		return b2u(w == 0)
	})
}

// fns is the position of the offset-th set bit of mask counted from base
// (upward for a positive offset, downward for a negative one, base itself
// for zero), or all ones when there is none.
func fns(mask, base uint32, offset int32) uint32 {
	if offset == 0 {
		if base < 32 && mask>>base&1 != 0 {
			return base
		}
		return ^uint32(0)
	}
	step, left := 1, int64(offset)
	if offset < 0 {
		step, left = -1, -left
	}
	for p := int(base); p >= 0 && p < 32; p += step {
		if mask>>p&1 != 0 {
			if left--; left == 0 {
				return uint32(p)
			}
		}
	}
	return ^uint32(0)
}

// narrower reports whether converting from st to dt can round: dt has
// fewer significand bits or a smaller exponent range.
func narrower(dt, st dtype) bool {
	dp, dmin, _ := dt.format()
	sp, smin, _ := st.format()
	return dp < sp || dmin > smin
}

// buildSIMD compiles the video instructions on pairs of halfwords and
// quads of bytes (vadd4, vabsdiff4 and the like) in their merge form,
// every lane written, and their accumulate form (.add: d = c + the sum of
// the lanes' results). Lane masks and selectors are not supported.
func (c *compiler) buildSIMD(in *instr, o *op, ms modset) {
	c.nargs(in, 4, 4)
	if len(ms.types) != 3 {
		c.bad(in, "three types expected")
	}
	dt, at, bt := ms.types[0], ms.types[1], ms.types[2]
	u32 := dtype{'u', 4, false}
	o.d, o.a, o.b, o.c = c.dst(in, in.args[0]), c.src(in, in.args[1], u32), c.src(in, in.args[2], u32), c.src(in, in.args[3], u32)
	name := in.op[:len(in.op)-1]
	w := 8
	if in.op[len(in.op)-1] == '2' {
		w = 16
	}
	sat, acc := ms.has[".sat"], ms.has[".add"]
	lanes := 32 / w
	lmask := int64(1)<<w - 1
	lane := func(v uint64, k int, signed bool) int64 {
		x := int64(v>>(w*k)) & lmask
		if signed && x>>(w-1) != 0 {
			x -= 1 << w
		}
		return x
	}
	lo, hi := int64(0), lmask
	if dt.signed() {
		lo, hi = -(int64(1) << (w - 1)), int64(1)<<(w-1)-1
	}
	o.exec = tri(func(a, b, cc uint64) uint64 {
		var d uint64
		var sum int64
		for k := range lanes {
			x, y := lane(a, k, at.signed()), lane(b, k, bt.signed())
			var r int64
			switch name {
			case "vadd":
				r = x + y
			case "vsub":
				r = x - y
			case "vavrg":
				r = (x + y + 1) >> 1
			case "vabsdiff":
				r = x - y
				if r < 0 {
					r = -r
				}
			case "vmin":
				r = min(x, y)
			case "vmax":
				r = max(x, y)
			}
			if sat {
				r = min(max(r, lo), hi)
			}
			if acc {
				sum += r
			} else {
				d |= uint64(r&lmask) << (w * k)
			}
		}
		if acc {
			return uint64(sum+int64(int32(uint32(cc)))) & 0xffffffff
		}
		return d
	})
}

// buildIntPair compiles add, sub, min and max on pairs of 16-bit
// integers (.u16x2, .s16x2; .sat saturates signed sums and differences,
// .relu clamps signed minima and maxima at zero).
func (c *compiler) buildIntPair(in *instr, o *op, ms modset, t dtype) {
	name := in.op
	if name != "min" && name != "max" && name != "add" && name != "sub" {
		c.bad(in, "%s on %s pairs is not supported", name, map[byte]string{'u': "u16", 's': "s16"}[t.kind])
	}
	c.nargs(in, 3, 3)
	o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], t), c.src(in, in.args[2], t)
	sgn, relu, sat := t.signed(), ms.has[".relu"], ms.has[".sat"]
	o.exec = bin(func(a, b uint64) uint64 {
		var d uint64
		for k := range 2 {
			x, y := int64(a>>(16*k)&0xffff), int64(b>>(16*k)&0xffff)
			if sgn {
				x, y = int64(int16(x)), int64(int16(y))
			}
			var r int64
			switch name {
			case "min":
				r = min(x, y)
			case "max":
				r = max(x, y)
			case "add":
				r = x + y
			case "sub":
				r = x - y
			}
			if sat && sgn {
				r = min(max(r, -32768), 32767)
			}
			if relu && r < 0 {
				r = 0
			}
			d |= uint64(r&0xffff) << (16 * k)
		}
		return d
	})
}

// fp8Format is an 8-bit floating-point format of sm_89 and later.
type fp8Format struct {
	name         string
	ebits, mbits int
	bias         int
	max          float64 // the largest finite value
}

var fp8Formats = []fp8Format{{".e4m3x2", 4, 3, 7, 448}, {".e5m2x2", 5, 2, 15, 57344}}

// buildCvtFP8 compiles the conversions of pairs to and from FP8:
// cvt.rn.satfinite{.relu}.e4m3x2.f32 d, a, b (a in the high byte),
// cvt.rn.satfinite{.relu}.e4m3x2.f16x2 d, a, and cvt.rn{.relu}.f16x2.e4m3x2
// d, a (and the same for e5m2x2).
func (c *compiler) buildCvtFP8(in *instr, o *op, ms modset, f fp8Format) {
	if len(ms.types) != 1 {
		c.bad(in, "one type besides %s expected", f.name)
	}
	other := ms.types[0]
	toFP8 := false
	for _, m := range in.mods {
		if m == f.name {
			toFP8 = true
			break
		}
		if _, ok := dtypes[m]; ok {
			break
		}
	}
	relu := ms.has[".relu"]
	u16, u32 := dtype{'u', 2, false}, dtype{'u', 4, false}
	switch {
	case toFP8 && other.kind == 'f' && other.size == 4:
		c.nargs(in, 3, 3)
		o.d, o.a, o.b = c.dst(in, in.args[0]), c.src(in, in.args[1], other), c.src(in, in.args[2], other)
		o.exec = bin(func(a, b uint64) uint64 {
			hi := toFP8Bits(float64(math.Float32frombits(uint32(a))), f, relu)
			lo := toFP8Bits(float64(math.Float32frombits(uint32(b))), f, relu)
			return uint64(hi)<<8 | uint64(lo)
		})
	case toFP8 && other.kind == 'h' && other.x2:
		c.nargs(in, 2, 2)
		o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], u32)
		o.exec = un(func(a uint64) uint64 {
			hi := toFP8Bits(float64(f16ToF32(uint16(a>>16))), f, relu)
			lo := toFP8Bits(float64(f16ToF32(uint16(a))), f, relu)
			return uint64(hi)<<8 | uint64(lo)
		})
	case !toFP8 && other.kind == 'h' && other.x2:
		c.nargs(in, 2, 2)
		o.d, o.a = c.dst(in, in.args[0]), c.src(in, in.args[1], u16)
		h := dtype{'h', 2, false}
		o.exec = un(func(a uint64) uint64 {
			hi, lo := fromFP8(uint8(a>>8), f), fromFP8(uint8(a), f)
			if relu {
				hi, lo = max(hi, 0), max(lo, 0)
			}
			return h.fbits(hi)<<16 | h.fbits(lo)
		})
	default:
		c.bad(in, "a conversion between %s and this type is not supported", f.name)
	}
}

// toFP8Bits rounds x to nearest even in f, saturating to its largest
// finite value (satfinite); NaN stays NaN.
func toFP8Bits(x float64, f fp8Format, relu bool) uint8 {
	if math.IsNaN(x) {
		return 0x7f
	}
	var sign uint8
	if math.Signbit(x) {
		if relu {
			return 0
		}
		sign, x = 0x80, -x
	}
	if x == 0 {
		return sign
	}
	emin := 1 - f.bias
	_, exp := math.Frexp(x)
	e := max(exp-1, emin)
	q := math.Ldexp(1, e-f.mbits)
	v := math.RoundToEven(x/q) * q
	if v > f.max || math.IsInf(x, 0) {
		v = f.max
	}
	if v < math.Ldexp(1, emin) {
		return sign | uint8(v/math.Ldexp(1, emin-f.mbits))
	}
	fr, exp := math.Frexp(v)
	m := uint8((fr*2 - 1) * float64(int(1)<<f.mbits))
	return sign | uint8(exp-1+f.bias)<<f.mbits | m
}

// fromFP8 decodes c of format f.
func fromFP8(c uint8, f fp8Format) float64 {
	sign := 1.0
	if c&0x80 != 0 {
		sign = -1
	}
	e := int(c>>f.mbits) & (1<<f.ebits - 1)
	m := int(c) & (1<<f.mbits - 1)
	switch {
	case f.ebits == 4 && e == 15 && m == 7, f.ebits == 5 && e == 31 && m != 0:
		return math.NaN()
	case f.ebits == 5 && e == 31:
		return math.Inf(int(sign))
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-f.bias-f.mbits)
	}
	return sign * math.Ldexp(float64(int(1)<<f.mbits+m), e-f.bias-f.mbits)
}
