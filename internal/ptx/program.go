package ptx

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// program is a module made ready to run: its variables have memory, its
// functions are compiled as kernels need them.
type program struct {
	mod          *Module
	mu           sync.Mutex
	fns          map[string]*fn
	kernels      map[string]*Kernel
	failed       map[string]error // entries that did not compile: asked again, the answer is the same
	globalMem    []byte
	addr         map[*variable]uint64 // host address (global, const) or shared offset
	sharedStatic int
	hostSpans    []span
	shFree       map[int][][]byte
	heap         atomic.Pointer[deviceHeap] // set once a kernel calls malloc or free
	fnAddr       map[string]uint64          // each function's address, for pointers to it
}

// Kernel is an entry of a module, compiled.
type Kernel struct {
	p *program
	f *fn
}

// Name returns the entry's name.
func (k *Kernel) Name() string { return k.f.name }

// ParamSize returns the bytes of the kernel's parameters.
func (k *Kernel) ParamSize() int { return k.f.kparamSize }

func (m *Module) program() *program {
	m.progOnce.Do(func() { m.prog = newProgram(m) })
	return m.prog
}

func newProgram(m *Module) *program {
	p := &program{mod: m, fns: map[string]*fn{}, kernels: map[string]*Kernel{}, addr: map[*variable]uint64{}, shFree: map[int][][]byte{},
		fnAddr: map[string]uint64{}}
	for i, f := range m.order {
		p.fnAddr[f.name] = winCode + uint64(i+1)*16
	}
	// global and constant variables share one mapping; shared ones get
	// offsets in every block's shared memory
	size := 0
	for _, v := range m.vars {
		if v.space == spGlobal || v.space == spConst {
			size = alignUp(size, v.align) + v.size()
		}
	}
	p.globalMem = offHeap(alignUp(size, 16) + 16)
	base := addrOf(p.globalMem)
	off := 0
	for _, v := range m.vars {
		switch v.space {
		case spGlobal, spConst:
			off = alignUp(off, v.align)
			p.addr[v] = base + uint64(off)
			copy(p.globalMem[off:], v.init)
			off += v.size()
		case spShared:
			if v.count >= 0 {
				p.sharedStatic = alignUp(p.sharedStatic, v.align)
				p.addr[v] = uint64(p.sharedStatic)
				p.sharedStatic += v.size()
			}
		}
	}
	if size > 0 {
		p.hostSpans = append(p.hostSpans, span{base, base + uint64(len(p.globalMem))})
	}
	for _, v := range m.vars {
		for _, r := range v.relocs {
			t := m.varIndex[r.sym]
			var a uint64
			if t != nil {
				a = p.addr[t]
				if t.space == spShared && r.generic {
					a += winShared
				}
			} else {
				a = p.fnAddr[r.sym]
			}
			at := p.addr[v] - base + uint64(r.at)
			old := uint64(0)
			for k := range 8 {
				old |= uint64(p.globalMem[at+uint64(k)]) << (8 * k)
			}
			putBytes(p.globalMem[at:], 8, a+old)
		}
	}
	return p
}

// finishShared places the unsized (dynamic) shared arrays after the static
// ones, aligned as the largest asks: they all start there.
func (p *program) dynamicBase() uint64 {
	a := 16
	for _, v := range p.mod.vars {
		if v.space == spShared && v.count < 0 && v.align > a {
			a = v.align
		}
	}
	return uint64(alignUp(p.sharedStatic, a))
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// Kernel compiles the entry name and what it calls, once. An instruction
// this package does not run is an error naming it and its line.
func (m *Module) Kernel(name string) (*Kernel, error) {
	p := m.program()
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := p.kernels[name]; k != nil {
		return k, nil
	}
	if err := p.failed[name]; err != nil {
		return nil, err
	}
	f := m.funcs[name]
	if f == nil || !f.entry {
		return nil, &Error{Msg: fmt.Sprintf("no entry %s in the module", name)}
	}
	c, err := p.compileEntry(f)
	if err == nil && p.sharedStatic > maxShared {
		err = &Error{Line: f.line, Msg: fmt.Sprintf("%s uses %d bytes of static shared memory, more than the %d a block may have", name, p.sharedStatic, maxShared)}
	}
	if err != nil {
		if p.failed == nil {
			p.failed = map[string]error{}
		}
		p.failed[name] = err
		return nil, err
	}
	k := &Kernel{p: p, f: c}
	p.kernels[name] = k
	return k, nil
}

func (p *program) sharedPool(n int) []byte {
	total := int(p.dynamicBase()) + n - p.sharedStatic
	if total < n {
		total = n
	}
	p.mu.Lock()
	if l := p.shFree[total]; len(l) > 0 {
		b := l[len(l)-1]
		p.shFree[total] = l[:len(l)-1]
		p.mu.Unlock()
		clear(b)
		return b
	}
	p.mu.Unlock()
	return offHeap(total)
}

func (p *program) sharedRelease(b []byte) {
	if b == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.shFree[len(b)]) < 256 {
		p.shFree[len(b)] = append(p.shFree[len(b)], b)
		return
	}
	freeOffHeap(b)
}

// compileEntry compiles f, turning a failure of the compiler itself into
// an error: a module the interpreter cannot run is refused, never a crash.
func (p *program) compileEntry(f *function) (c *fn, err error) {
	defer func() {
		if r := recover(); r != nil {
			if ce, ok := r.(cerr); ok {
				c, err = nil, ce.e
				return
			}
			c, err = nil, &Error{Line: f.line, Msg: fmt.Sprintf("internal error compiling %s: %v", f.name, r)}
			delete(p.fns, f.name)
		}
	}()
	return p.compile(f)
}
