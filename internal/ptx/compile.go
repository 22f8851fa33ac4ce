package ptx

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

func addrOf(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// Kinds of compiled instructions, as the warp loop treats them.
const (
	kNormal = iota
	kBranch
	kRet
	kExit
	kBarrier
	kCall
)

type execFn func(wp *warp, fr *frame, o *op, m uint32)

// op is a compiled instruction. Every operand is a register: immediates,
// variable addresses and special registers are registers the frame fills
// when it starts.
type op struct {
	kind      uint8
	exec      execFn
	builtin   execFn
	guard     int32
	guardNeg  bool
	d, a, b   int32
	c, e      int32
	dp        int32 // a second destination (setp's |q, shfl's predicate)
	vd        []int32
	target    int32
	space     space
	funcParam bool
	atomic    bool
	size      uint64 // bytes of a memory access
	off       int64
	line      int
	text      string
	callee    *fn
	ind       *indirect // set for a call through a function pointer
	args      []paramRef
	rets      []paramRef
	neg       [4]bool
}

type paramRef struct{ off, size int32 }

// indirect is a call through the function address in register a: the
// functions it may reach by address, and why those that do not compile
// do not.
type indirect struct {
	targets map[uint64]*fn
	errs    map[uint64]string
}

// fn is a compiled function.
type fn struct {
	name       string
	entry      bool
	code       []op
	nregs      int
	consts     []constReg
	constVals  []uint64
	specials   []special
	paramSize  int // per lane: signature, return values, call arguments
	argOff     []int32
	retOff     []int32
	kparamSize int
	localSize  int
	syncs      bool
	pool       sync.Pool
}

type constReg struct{ reg int32 }

// special is a register the frame fills per lane when it starts.
type special struct {
	reg  int32
	kind string
	off  uint64 // of a local variable in the frame
}

type symbol struct {
	v         *variable
	space     space
	addr      uint64 // static: host address, shared offset, param offset
	local     bool   // a frame's local variable: addr is its frame offset
	funcParam bool   // in the frame's parameter area
}

// compiler compiles one function.
type compiler struct {
	p      *program
	fsrc   *function
	f      *fn
	regs   map[string]int32
	rsize  map[int32]int
	consts map[uint64]int32
	spec   map[string]int32
	scopes []map[string]*symbol
	labels map[string]int32
}

// compile compiles f and, first, every function it calls. Under p.mu.
func (p *program) compile(src *function) (_ *fn, err error) {
	if f := p.fns[src.name]; f != nil {
		return f, nil
	}
	defer func() {
		if err != nil {
			// a function that did not compile is not one to call
			delete(p.fns, src.name)
		}
	}()
	if src.decl {
		return nil, &Error{Line: src.line, Msg: fmt.Sprintf("function %s is declared and not defined", src.name)}
	}
	f := &fn{name: src.name, entry: src.entry}
	p.fns[src.name] = f
	c := &compiler{p: p, fsrc: src, f: f, regs: map[string]int32{}, rsize: map[int32]int{}, consts: map[uint64]int32{},
		spec: map[string]int32{}, labels: map[string]int32{}}
	names := make([]string, 0, len(src.regs))
	for n := range src.regs {
		names = append(names, n)
	}
	sortStrings(names)
	for _, n := range names {
		c.regs[n] = int32(len(c.regs))
		c.rsize[c.regs[n]] = src.regs[n].bytes
	}
	f.nregs = len(c.regs)
	top := map[string]*symbol{}
	c.scopes = []map[string]*symbol{top}
	if src.entry {
		off := 0
		for _, v := range src.params {
			off = alignUp(off, v.align)
			top[v.name] = &symbol{v: v, space: spParam, addr: uint64(off)}
			off += v.size()
		}
		f.kparamSize = off
	} else {
		for _, v := range src.rets {
			f.retOff = append(f.retOff, int32(c.paramSlot(v)))
			top[v.name] = &symbol{v: v, space: spParam, addr: uint64(f.retOff[len(f.retOff)-1]), funcParam: true}
		}
		for _, v := range src.params {
			f.argOff = append(f.argOff, int32(c.paramSlot(v)))
			top[v.name] = &symbol{v: v, space: spParam, addr: uint64(f.argOff[len(f.argOff)-1]), funcParam: true}
		}
	}
	// labels first: branches go forward too
	n := 0
	for _, s := range src.body {
		if s.label != "" {
			c.labels[s.label] = int32(n)
		}
		if s.in != nil {
			n++
		}
	}
	for _, s := range src.body {
		switch {
		case s.open:
			c.scopes = append(c.scopes, map[string]*symbol{})
		case s.close:
			if len(c.scopes) > 1 {
				c.scopes = c.scopes[:len(c.scopes)-1]
			}
		case s.decl != nil:
			if e := c.declare(s.decl); e != nil {
				return nil, e
			}
		case s.in != nil:
			o, e := c.instr(s.in)
			if e != nil {
				return nil, e
			}
			f.code = append(f.code, o)
		}
	}
	for i := range f.code {
		if f.code[i].callee != nil && f.code[i].callee.syncs {
			f.syncs = true
		}
		if f.code[i].ind == nil {
			continue
		}
		for _, t := range f.code[i].ind.targets {
			if t.syncs {
				f.syncs = true
			}
		}
	}
	f.nregs = len(c.regs) + len(c.consts) + len(c.spec)
	if f.nregs > maxRegs+maxRegs/2 || f.localSize > maxLocal || f.paramSize > maxLocal {
		return nil, &Error{Line: src.line, Msg: fmt.Sprintf("function %s needs %d registers, %d bytes of local memory and %d of parameters: too many", src.name, f.nregs, f.localSize, f.paramSize)}
	}
	f.pool.New = func() any {
		return &frame{f: f, r: make([]uint64, f.nregs*32), params: make([]byte, 32*f.paramSize)}
	}
	return f, nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (c *compiler) paramSlot(v *variable) int {
	off := alignUp(c.f.paramSize, max(v.align, 1))
	c.f.paramSize = off + v.size()
	return off
}

func (c *compiler) declare(v *variable) *Error {
	s := &symbol{v: v, space: v.space}
	switch v.space {
	case spParam:
		s.addr = uint64(c.paramSlot(v))
		s.funcParam = true
	case spLocal:
		off := alignUp(c.f.localSize, max(v.align, 1))
		c.f.localSize = off + v.size()
		s.addr, s.local = uint64(off), true
	case spShared:
		if v.count < 0 {
			s.addr = c.p.dynamicBase()
		} else {
			// function-scope static shared memory: placed after the module's
			c.p.sharedStatic = alignUp(c.p.sharedStatic, v.align)
			s.addr = uint64(c.p.sharedStatic)
			c.p.sharedStatic += v.size()
		}
	default:
		return &Error{Line: v.line, Msg: fmt.Sprintf("a %s variable inside a function", spaceName(v.space))}
	}
	c.scopes[len(c.scopes)-1][v.name] = s
	return nil
}

func spaceName(s space) string {
	for k, v := range spaceNames {
		if v == s {
			return k
		}
	}
	return "generic"
}

func (c *compiler) lookup(name string) *symbol {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if s := c.scopes[i][name]; s != nil {
			return s
		}
	}
	if v := c.p.mod.varIndex[name]; v != nil {
		s := &symbol{v: v, space: v.space, addr: c.p.addr[v]}
		if v.space == spShared && v.count < 0 {
			s.addr = c.p.dynamicBase()
		}
		return s
	}
	return nil
}

type cerr struct{ e *Error }

// bad stops the compilation of in.
func (c *compiler) bad(in *instr, format string, args ...any) {
	panic(cerr{&Error{Line: in.line, Inst: in.text, Msg: fmt.Sprintf("%s: %s", in.text, fmt.Sprintf(format, args...))}})
}

func (c *compiler) constant(v uint64) int32 {
	if r, ok := c.consts[v]; ok {
		return r
	}
	r := int32(len(c.regs) + len(c.consts) + len(c.spec))
	// registers are numbered in declaration order, then constants and
	// specials as they come: renumber lazily by growing nregs
	c.consts[v] = r
	c.f.consts = append(c.f.consts, constReg{r})
	c.f.constVals = append(c.f.constVals, v)
	return r
}

func (c *compiler) specialReg(kind string, off uint64) int32 {
	key := fmt.Sprintf("%s+%d", kind, off)
	if r, ok := c.spec[key]; ok {
		return r
	}
	r := int32(len(c.regs) + len(c.consts) + len(c.spec))
	c.spec[key] = r
	c.f.specials = append(c.f.specials, special{reg: r, kind: kind, off: off})
	return r
}

var specialNames = map[string]bool{
	"%tid.x": true, "%tid.y": true, "%tid.z": true, "%ntid.x": true, "%ntid.y": true, "%ntid.z": true,
	"%ctaid.x": true, "%ctaid.y": true, "%ctaid.z": true, "%nctaid.x": true, "%nctaid.y": true, "%nctaid.z": true,
	"%laneid": true, "%warpid": true, "%nwarpid": true, "%smid": true, "%nsmid": true, "%gridid": true,
	"%lanemask_eq": true, "%lanemask_le": true, "%lanemask_lt": true, "%lanemask_ge": true, "%lanemask_gt": true,
	"%dynamic_smem_size": true, "%total_smem_size": true, "%clusterid.x": true, "%clusterid.y": true, "%clusterid.z": true,
	"%nclusterid.x": true, "%nclusterid.y": true, "%nclusterid.z": true, "%cluster_ctaid.x": true, "%cluster_ctaid.y": true,
	"%cluster_ctaid.z": true, "%cluster_nctaid.x": true, "%cluster_nctaid.y": true, "%cluster_nctaid.z": true,
	"%cluster_ctarank": true, "%cluster_nctarank": true, "%is_explicit_cluster": true,
}

// src returns the register that holds operand o read as t.
func (c *compiler) src(in *instr, o operand, t dtype) int32 {
	switch o.kind {
	case 'r':
		if r, ok := c.regs[o.name]; ok {
			if o.off != 0 {
				c.bad(in, "an offset on a register")
			}
			return r
		}
		if specialNames[o.name] {
			return c.specialReg(o.name, 0)
		}
		if s := c.lookup(o.name); s != nil {
			return c.symAddr(in, s, o.off)
		}
		if o.name == "%envreg1" || o.name == "%envreg2" {
			return c.specialReg(o.name, 0)
		}
		if strings.HasPrefix(o.name, "%envreg") {
			return c.constant(0)
		}
		if a, ok := c.p.fnAddr[o.name]; ok {
			return c.constant(a)
		}
		c.bad(in, "unknown register or symbol %s", o.name)
	case 'n':
		bits, err := literalBits(o.num, t.size, o.neg, t.isFloat())
		if err != nil {
			c.bad(in, "%v", err)
		}
		if t.kind == 'h' || t.kind == 'B' {
			// a float literal of a half type is written as its bits (0x3C00)
			if f, isF, _ := parseFloatLit(o.num); isF {
				if o.neg {
					f = -f
				}
				if t.kind == 'h' {
					bits = uint64(f32ToF16(float32(f)))
				} else {
					bits = uint64(f32ToBF16(float32(f)))
				}
			}
		}
		return c.constant(bits & t.mask())
	}
	c.bad(in, "operand kind %q where a value is expected", o.kind)
	return 0
}

// symAddr returns a register holding the address of s (+off) in its space.
func (c *compiler) symAddr(in *instr, s *symbol, off int64) int32 {
	if s.local {
		return c.specialReg("local", s.addr+uint64(off))
	}
	if s.funcParam {
		c.bad(in, "the address of a function's parameter %s", s.v.name)
	}
	return c.constant(s.addr + uint64(off))
}

// dst returns the register o names, to be written.
func (c *compiler) dst(in *instr, o operand) int32 {
	if o.kind == '_' {
		return c.scratch()
	}
	if o.kind != 'r' {
		c.bad(in, "a destination that is not a register")
	}
	r, ok := c.regs[o.name]
	if !ok {
		c.bad(in, "unknown register %s", o.name)
	}
	return r
}

// scratch is a register no instruction reads: the sink _.
func (c *compiler) scratch() int32 { return c.specialReg("sink", 0) }

// addr compiles an address operand [x+off]: the register holding the
// base (or -1) and the offset, and whether it is in the frame's
// parameter area.
func (c *compiler) addr(in *instr, o operand, sp space) (reg int32, off int64, funcParam bool) {
	if o.kind != 'a' || len(o.elems) > 0 {
		c.bad(in, "expected an address [...]")
	}
	if o.name == "" {
		return -1, o.off, false
	}
	if r, ok := c.regs[o.name]; ok {
		return r, o.off, false
	}
	s := c.lookup(o.name)
	if s == nil {
		c.bad(in, "unknown symbol %s", o.name)
	}
	if s.local {
		return c.specialReg("local", s.addr), o.off, false
	}
	if sp != spGeneric && sp != s.space && !(sp == spGlobal && s.space == spConst) {
		c.bad(in, "%s is a %s variable, accessed as %s", s.v.name, spaceName(s.space), spaceName(sp))
	}
	a := s.addr
	if sp == spGeneric {
		switch s.space {
		case spShared:
			a += winShared
		case spParam:
			if s.funcParam {
				c.bad(in, "a generic access to a function's parameter")
			}
			a += winParam
		}
	}
	return -1, int64(a) + o.off, s.funcParam
}

func (c *compiler) instr(in *instr) (o op, err *Error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(cerr)
			if !ok {
				panic(r)
			}
			err = ce.e
		}
	}()
	o = op{guard: -1, line: in.line, text: in.text, d: -1, a: -1, b: -1, c: -1, e: -1, dp: -1}
	if in.guard != "" {
		r, ok := c.regs[in.guard]
		if !ok {
			c.bad(in, "unknown predicate %s", in.guard)
		}
		o.guard, o.guardNeg = r, in.guardNeg
	}
	c.build(in, &o)
	return o, nil
}

// frame setup: constants and specials, per lane
func (wp *warp) fillSpecials(fr *frame) {
	f := fr.f
	l := wp.b.g.l
	for _, s := range f.specials {
		base := int(s.reg) * 32
		for lane := range 32 {
			var v uint64
			t := wp.tid[lane]
			switch s.kind {
			case "%tid.x":
				v = uint64(t[0])
			case "%tid.y":
				v = uint64(t[1])
			case "%tid.z":
				v = uint64(t[2])
			case "%ntid.x":
				v = uint64(l.Block[0])
			case "%ntid.y":
				v = uint64(l.Block[1])
			case "%ntid.z":
				v = uint64(l.Block[2])
			case "%ctaid.x":
				v = uint64(wp.b.idx[0])
			case "%ctaid.y":
				v = uint64(wp.b.idx[1])
			case "%ctaid.z":
				v = uint64(wp.b.idx[2])
			case "%nctaid.x":
				v = uint64(l.Grid[0])
			case "%nctaid.y":
				v = uint64(l.Grid[1])
			case "%nctaid.z":
				v = uint64(l.Grid[2])
			case "%laneid":
				v = uint64(lane)
			case "%warpid":
				v = uint64(wp.id)
			case "%nwarpid":
				v = 64
			case "%smid":
				v = wp.b.linear % uint64(wp.b.g.sms())
			case "%nsmid":
				v = uint64(wp.b.g.sms())
			case "%gridid":
				v = 1
			case "%lanemask_eq":
				v = 1 << lane
			case "%lanemask_le":
				v = 1<<(lane+1) - 1
			case "%lanemask_lt":
				v = 1<<lane - 1
			case "%lanemask_ge":
				v = uint64(^uint32(0) << lane)
			case "%lanemask_gt":
				v = uint64(^uint32(0) << lane << 1 & 0xffffffff)
			case "%dynamic_smem_size":
				v = uint64(l.DynamicShared)
			case "%total_smem_size":
				v = uint64(len(wp.b.shared))
			case "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_nctarank":
				v = 1
			case "%nclusterid.x":
				v = uint64(l.Grid[0])
			case "%nclusterid.y":
				v = uint64(l.Grid[1])
			case "%nclusterid.z":
				v = uint64(l.Grid[2])
			case "%clusterid.x":
				v = uint64(wp.b.idx[0])
			case "%clusterid.y":
				v = uint64(wp.b.idx[1])
			case "%clusterid.z":
				v = uint64(wp.b.idx[2])
			case "local":
				v = fr.lbase[lane] + s.off
			case "%envreg1":
				v = addrOf(wp.b.g.workspace) >> 32
			case "%envreg2":
				v = addrOf(wp.b.g.workspace) & 0xffffffff
			}
			fr.r[base+lane] = v
		}
	}
}

func (g *grid) sms() int {
	if g.l.SMs > 0 {
		return g.l.SMs
	}
	return 132
}
