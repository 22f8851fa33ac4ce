package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Bounds on what one module may ask of the parser, so that hostile text
// (a fuzzer's) costs bounded time and memory.
const (
	maxText     = 64 << 20
	maxTokens   = 8 << 20
	maxVarSize  = 1 << 30  // bytes of one variable
	maxInitSize = 64 << 20 // bytes of one initialized variable
	maxRegs     = 1 << 15  // registers declared in one function
	maxShared   = 48 << 10 // static shared memory, as the driver allows a block
)

// space is a PTX state space.
type space byte

const (
	spGeneric space = iota
	spGlobal
	spShared
	spLocal
	spConst
	spParam
)

var spaceNames = map[string]space{".global": spGlobal, ".shared": spShared, ".local": spLocal, ".const": spConst, ".param": spParam}

// variable is a declared variable of a state space: a module's .global,
// .const or .shared, or a function's .local, .shared or .param.
type variable struct {
	name   string
	space  space
	align  int
	elem   int // bytes of one element
	count  int // elements; -1 for an unsized array (extern .shared)
	init   []byte
	relocs []reloc // initializers that are addresses of other variables
	line   int
	extern bool
}

func (v *variable) size() int {
	if v.count < 0 {
		return 0
	}
	return v.elem * v.count
}

// reloc is an initializer element that holds the address of a variable
// (generic(x) or x), patched once the module's variables have addresses.
type reloc struct {
	at      int
	sym     string
	generic bool
}

// operand is an instruction's operand as written.
type operand struct {
	kind  byte // 'r' register or symbol, 'n' number, 'a' address, 'v' vector, '_' sink, 'l' list
	name  string
	neg   bool // !%p
	pair  string
	num   string // the literal of 'n'
	off   int64  // an address's offset
	elems []operand
}

// instr is one instruction as written.
type instr struct {
	line     int
	text     string // for errors: the instruction as written, roughly
	guard    string
	guardNeg bool
	op       string
	mods     []string
	args     []operand
}

// stmt is a function body's statement: a label, an instruction, the
// opening or closing of a block scope, or a declaration inside one.
type stmt struct {
	label string
	in    *instr
	open  bool
	close bool
	decl  *variable
	line  int
}

// regDecl is a declared register: its type's size in bytes, or 0 for a
// predicate.
type regDecl struct {
	bytes int
	pred  bool
}

// function is an .entry or .func.
type function struct {
	name    string
	entry   bool
	params  []*variable
	rets    []*variable
	regs    map[string]regDecl
	body    []stmt
	line    int
	decl    bool // declared without a body (.extern)
	maxntid [3]int
}

// Module is a parsed PTX module.
type Module struct {
	version  int // .version as major*10+minor
	target   string
	sm       int
	funcs    map[string]*function
	order    []*function
	vars     []*variable
	varIndex map[string]*variable
	progOnce sync.Once
	prog     *program
}

// Target returns the module's .target (sm_90, say).
func (m *Module) Target() string { return m.target }

// Entries returns the names of the module's kernels, in order.
func (m *Module) Entries() []string {
	var n []string
	for _, f := range m.order {
		if f.entry {
			n = append(n, f.name)
		}
	}
	return n
}

type parser struct {
	toks []token
	pos  int
}

// Error is a PTX text this package cannot read or run: where and why.
type Error struct {
	Line int
	Msg  string
	// Inst is the instruction at fault, as written, where there is one.
	Inst string
	// Unsupported marks an error of Parse about text that a driver may
	// well load: what this package does not read (texture references,
	// 32-bit addresses, a directive it does not know) or more than its
	// limits. Parse's other errors are about malformed text.
	Unsupported bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("ptx: line %d: %s", e.Line, e.Msg)
	}
	return "ptx: " + e.Msg
}

type bail struct{ err *Error }

func (p *parser) fail(format string, args ...any) {
	panic(bail{p.errorf(format, args...)})
}

// unsupported stops the parse at valid PTX this package does not read.
func (p *parser) unsupported(format string, args ...any) {
	e := p.errorf(format, args...)
	e.Unsupported = true
	panic(bail{e})
}

func (p *parser) errorf(format string, args ...any) *Error {
	line := 0
	if p.pos < len(p.toks) {
		line = p.toks[p.pos].line
	} else if len(p.toks) > 0 {
		line = p.toks[len(p.toks)-1].line
	}
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *parser) next() token {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

func (p *parser) is(text string) bool { t := p.peek(); return t.kind != 0 && t.text == text }

func (p *parser) accept(text string) bool {
	if p.is(text) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(text string) token {
	t := p.next()
	if t.text != text || t.kind == 0 {
		p.pos--
		p.fail("expected %q, found %v", text, t)
	}
	return t
}

func (p *parser) ident() token {
	t := p.next()
	if t.kind != 'i' {
		p.pos--
		p.fail("expected a name, found %v", t)
	}
	return t
}

func (p *parser) number() int64 {
	neg := p.accept("-")
	t := p.next()
	if t.kind != 'n' {
		p.pos--
		p.fail("expected a number, found %v", t)
	}
	v, err := parseInt(t.text)
	if err != nil {
		p.pos--
		p.fail("%v", err)
	}
	if neg {
		v = -v
	}
	return int64(v)
}

// parseInt reads a PTX integer literal: decimal, 0x hex, 0 octal, 0b
// binary, with an optional U suffix; the result is its 64 bits.
func parseInt(s string) (uint64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "U"), "u")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0b") || strings.HasPrefix(t, "0B"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	v, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer %q", s)
	}
	return v, nil
}

// parseFloatLit reads a float literal: 0f (32-bit hex), 0d (64-bit hex),
// or decimal. It returns the value as a float64 and whether it was one.
func parseFloatLit(s string) (float64, bool, error) {
	switch {
	case len(s) == 10 && (s[:2] == "0f" || s[:2] == "0F"):
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return float64(math.Float32frombits(uint32(v))), true, err
	case len(s) == 18 && (s[:2] == "0d" || s[:2] == "0D"):
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return math.Float64frombits(v), true, err
	case strings.ContainsAny(s, ".eE") && !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X"):
		v, err := strconv.ParseFloat(s, 64)
		return v, true, err
	}
	return 0, false, nil
}

// Parse reads a PTX module. It checks the syntax of everything and the
// meaning of declarations; instructions are checked when a kernel is
// prepared (Module.Kernel).
func Parse(src string) (m *Module, err error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				b = bail{&Error{Msg: fmt.Sprintf("internal error reading the module: %v", r)}}
			}
			m, err = nil, b.err
		}
	}()
	m = &Module{funcs: map[string]*function{}, varIndex: map[string]*variable{}}
	p.module(m)
	return m, nil
}

func (p *parser) module(m *Module) {
	p.expect(".version")
	t := p.next()
	maj, min, ok := strings.Cut(t.text, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if t.kind != 'n' || !ok || err1 != nil || err2 != nil || b > 9 {
		p.pos--
		p.fail("bad .version %v", t)
	}
	m.version = a*10 + b
	p.expect(".target")
	m.target = p.ident().text
	if !strings.HasPrefix(m.target, "sm_") {
		p.fail(".target %s: not an sm_ target", m.target)
	}
	digits := strings.TrimRight(m.target[3:], "abf")
	sm, err := strconv.Atoi(digits)
	if err != nil {
		p.fail(".target %s: not an sm_ target", m.target)
	}
	m.sm = sm
	for p.accept(",") {
		p.ident()
	}
	for p.peek().kind != 0 {
		p.topLevel(m)
	}
}

func (p *parser) topLevel(m *Module) {
	var extern, visible bool
	for {
		switch {
		case p.accept(".address_size"):
			if v := p.number(); v != 64 {
				p.unsupported(".address_size %d: only 64-bit addresses are supported", v)
			}
			return
		case p.accept(".file"):
			p.number()
			p.next()
			for p.accept(",") {
				p.number()
			}
			return
		case p.accept(".pragma"):
			p.next()
			p.expect(";")
			return
		case p.is(".section"):
			// debug information (-G): DWARF data the interpreter has no
			// use for, in braces
			p.next()
			p.next()
			p.expect("{")
			for depth := 1; depth > 0; {
				switch u := p.next(); {
				case u.kind == 0:
					p.fail(".section with no closing brace")
				case u.text == "{":
					depth++
				case u.text == "}":
					depth--
				}
			}
			return
		case p.accept(".extern"):
			extern = true
		case p.accept(".visible"), p.accept(".weak"), p.accept(".common"):
			visible = true
		default:
			_ = visible
			t := p.peek()
			switch t.text {
			case ".entry", ".func":
				p.next()
				p.function(m, t.text == ".entry", extern)
				return
			case ".global", ".const", ".shared", ".tex", ".surfref", ".texref", ".samplerref":
				v := p.varDecl()
				v.extern = extern
				if v.space == spLocal || v.space == spParam {
					p.fail("a module-scope %s variable", t.text)
				}
				if old := m.varIndex[v.name]; old != nil {
					if !old.extern && !v.extern {
						p.fail("variable %s declared twice", v.name)
					}
					if old.extern {
						*old = *v
					}
					return
				}
				m.vars = append(m.vars, v)
				m.varIndex[v.name] = v
				return
			}
			if strings.HasPrefix(t.text, ".") {
				p.unsupported("%s at module scope is not supported", t.text)
			}
			p.fail("unexpected %v at module scope", t)
		}
	}
}

// varDecl reads a variable's declaration, after its linkage, through its
// semicolon.
func (p *parser) varDecl() *variable {
	t := p.next()
	v := &variable{line: t.line, align: 0, count: 1}
	switch t.text {
	case ".tex", ".texref", ".surfref", ".samplerref":
		p.unsupported("texture and surface references are not supported (%s)", t.text)
	}
	sp, ok := spaceNames[t.text]
	if !ok {
		p.pos--
		p.fail("expected a state space, found %v", t)
	}
	v.space = sp
	for {
		switch {
		case p.accept(".align"):
			a := p.number()
			if a <= 0 || a > 1024 || a&(a-1) != 0 {
				p.fail(".align %d", a)
			}
			v.align = int(a)
			continue
		case p.accept(".ptr"):
			continue
		case p.is(".v2") || p.is(".v4") || p.is(".v8"):
			n, _ := strconv.Atoi(p.next().text[2:])
			v.count *= n
			continue
		}
		break
	}
	ty := p.ident()
	size, ok := typeSizes[ty.text]
	switch {
	case ty.text == ".texref" || ty.text == ".samplerref" || ty.text == ".surfref":
		p.pos--
		p.unsupported("texture and surface references are not supported (%s)", ty.text)
	case !ok:
		p.pos--
		p.fail("unknown type %v", ty)
	}
	v.elem = size
	v.name = p.ident().text
	vecs := v.count
	v.count = vecs
	for p.accept("[") {
		if p.accept("]") {
			v.count = -1
			continue
		}
		n := p.number()
		p.expect("]")
		if n < 0 || n > maxVarSize || v.count < 0 || int64(v.count)*n*int64(v.elem) > maxVarSize {
			p.unsupported("variable %s too large", v.name)
		}
		v.count *= int(n)
	}
	if v.align == 0 {
		v.align = v.elem
	}
	if p.accept("=") {
		p.initializer(v)
	}
	p.expect(";")
	return v
}

// initializer reads = value or = {values}: numbers in the variable's type,
// or addresses of variables.
func (p *parser) initializer(v *variable) {
	if v.count < 0 {
		p.fail("an initializer for the unsized %s", v.name)
	}
	if v.size() > maxInitSize {
		p.unsupported("an initializer for %s of %d bytes", v.name, v.size())
	}
	v.init = make([]byte, v.size())
	i := 0
	var elem func()
	elem = func() {
		if p.accept("{") {
			if !p.is("}") {
				elem()
				for p.accept(",") {
					elem()
				}
			}
			p.expect("}")
			return
		}
		if i >= v.count {
			p.fail("too many initializers for %s", v.name)
		}
		at := i * v.elem
		i++
		t := p.peek()
		if t.kind == 'i' {
			p.next()
			generic := false
			if t.text == "generic" {
				p.expect("(")
				t = p.ident()
				p.expect(")")
				generic = true
			}
			if v.elem != 8 {
				p.fail("the address of %s in a %d-byte element", t.text, v.elem)
			}
			v.relocs = append(v.relocs, reloc{at, t.text, generic})
			if p.accept("+") {
				off := p.number()
				putBytes(v.init[at:], 8, uint64(off))
			}
			return
		}
		neg := p.accept("-")
		t = p.next()
		if t.kind != 'n' {
			p.pos--
			p.fail("expected a number, found %v", t)
		}
		bits, err := literalBits(t.text, v.elem, neg, false)
		if err != nil {
			p.fail("%v", err)
		}
		putBytes(v.init[at:], v.elem, bits)
	}
	elem()
}

// literalBits returns the bits of a literal as a value of size bytes;
// float says the element is a floating-point type (decimal and hex
// integers are then converted, 0f/0d literals taken as bits).
func literalBits(s string, size int, neg, float bool) (uint64, error) {
	f, isFloat, err := parseFloatLit(s)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	if isFloat {
		if neg {
			f = -f
		}
		switch size {
		case 8:
			return math.Float64bits(f), nil
		case 4:
			return uint64(math.Float32bits(float32(f))), nil
		case 2:
			return uint64(f32ToF16(float32(f))), nil
		}
		return 0, fmt.Errorf("a float literal %s in %d bytes", s, size)
	}
	v, err := parseInt(s)
	if err != nil {
		return 0, err
	}
	if neg {
		v = -v
	}
	if float {
		switch size {
		case 8:
			return math.Float64bits(float64(int64(v))), nil
		case 4:
			return uint64(math.Float32bits(float32(int64(v)))), nil
		}
	}
	return v, nil
}

func putBytes(b []byte, n int, v uint64) {
	for k := 0; k < n && k < len(b); k++ {
		b[k] = byte(v >> (8 * k))
	}
}

// params reads a parenthesised list of .param declarations.
func (p *parser) params() []*variable {
	p.expect("(")
	var vs []*variable
	if p.accept(")") {
		return vs
	}
	for {
		if p.is(".reg") {
			p.unsupported(".reg parameters are not supported")
		}
		t := p.peek()
		if t.text != ".param" {
			p.fail("expected .param, found %v", t)
		}
		v := &variable{line: t.line, count: 1}
		p.next()
		v.space = spParam
		for {
			if p.accept(".align") {
				v.align = int(p.number())
				continue
			}
			if p.accept(".ptr") || p.accept(".global") || p.accept(".shared") || p.accept(".const") || p.accept(".local") {
				continue
			}
			break
		}
		ty := p.ident()
		size, ok := typeSizes[ty.text]
		if !ok {
			p.pos--
			p.fail("unknown type %v", ty)
		}
		v.elem = size
		v.name = p.ident().text
		for p.accept("[") {
			n := p.number()
			p.expect("]")
			if n <= 0 || n > 1<<16 {
				p.unsupported("parameter %s of %d elements", v.name, n)
			}
			v.count *= int(n)
		}
		if v.align == 0 {
			v.align = v.elem
		}
		vs = append(vs, v)
		if p.accept(")") {
			return vs
		}
		p.expect(",")
	}
}

func (p *parser) function(m *Module, entry, extern bool) {
	f := &function{entry: entry, regs: map[string]regDecl{}, line: p.peek().line}
	if !entry && p.is("(") {
		f.rets = p.params()
	}
	f.name = p.ident().text
	if p.is("(") {
		f.params = p.params()
	}
	for {
		switch {
		case p.accept(".maxntid"), p.accept(".reqntid"):
			dims := []int{int(p.number())}
			for p.accept(",") {
				dims = append(dims, int(p.number()))
			}
			for i := range dims {
				if i < 3 {
					f.maxntid[i] = dims[i]
				}
			}
			continue
		case p.accept(".minnctapersm"), p.accept(".maxnreg"), p.accept(".maxnctapersm"), p.accept(".explicitcluster"), p.accept(".maxclusterrank"):
			if p.peek().kind == 'n' {
				p.number()
			}
			continue
		case p.accept(".reqnctapercluster"):
			p.number()
			for p.accept(",") {
				p.number()
			}
			continue
		case p.accept(".noreturn"):
			continue
		case p.accept(".pragma"):
			p.next()
			p.expect(";")
			continue
		}
		break
	}
	if p.accept(";") {
		f.decl = true
	} else {
		p.body(f)
	}
	if old := m.funcs[f.name]; old != nil {
		if !old.decl && !f.decl {
			p.fail("function %s defined twice", f.name)
		}
		if !f.decl {
			*old = *f
		}
		return
	}
	_ = extern
	m.funcs[f.name] = f
	m.order = append(m.order, f)
}

func (p *parser) body(f *function) {
	p.expect("{")
	depth := 1
	for depth > 0 {
		t := p.peek()
		switch {
		case t.kind == 0:
			p.fail("function %s has no closing brace", f.name)
		case t.text == "{":
			p.next()
			depth++
			f.body = append(f.body, stmt{open: true, line: t.line})
		case t.text == "}":
			p.next()
			depth--
			if depth > 0 {
				f.body = append(f.body, stmt{close: true, line: t.line})
			}
		case t.text == ".reg":
			p.next()
			p.regDecl(f)
		case t.text == ".local" || t.text == ".shared" || t.text == ".param" || t.text == ".const" || t.text == ".global":
			v := p.varDecl()
			f.body = append(f.body, stmt{decl: v, line: t.line})
		case t.text == ".pragma":
			p.next()
			p.next()
			p.expect(";")
		case t.text == ".callprototype" || t.text == ".calltargets":
			// the signature (or the targets) of an indirect call, named
			// by the label before it: the callee's own signature is
			// checked when the call runs
			for p.next().text != ";" {
				if p.peek().kind == 0 {
					p.fail("%s with no closing semicolon", t.text)
				}
			}
		case t.text == ".loc":
			// file, line and column, and with inlining ", function_name
			// label, inlined_at file line column": ptxas reads the
			// directive to the end of its line, and so does this
			p.next()
			for u := p.peek(); u.kind != 0 && u.line == t.line; u = p.peek() {
				p.next()
			}
		case t.kind == 'i' && len(p.toks) > p.pos+1 && p.toks[p.pos+1].text == ":" && !strings.HasPrefix(t.text, "@"):
			p.next()
			p.next()
			f.body = append(f.body, stmt{label: t.text, line: t.line})
		default:
			in := p.instruction()
			f.body = append(f.body, stmt{in: in, line: in.line})
		}
	}
}

var typeSizes = map[string]int{
	".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8, ".b128": 16,
	".u8": 1, ".u16": 2, ".u32": 4, ".u64": 8,
	".s8": 1, ".s16": 2, ".s32": 4, ".s64": 8,
	".f16": 2, ".f16x2": 4, ".bf16": 2, ".bf16x2": 4, ".f32": 4, ".f64": 8,
	".pred": 1, ".e4m3x2": 2, ".e5m2x2": 2, ".tf32": 4,
}

func (p *parser) regDecl(f *function) {
	for p.accept(".v2") || p.accept(".v4") || p.accept(".align") {
	}
	ty := p.ident()
	size, ok := typeSizes[ty.text]
	if !ok {
		p.pos--
		p.fail("unknown register type %v", ty)
	}
	d := regDecl{bytes: size, pred: ty.text == ".pred"}
	for {
		name := p.ident().text
		if p.accept("<") {
			n := p.number()
			p.expect(">")
			if n < 0 || n > maxRegs || len(f.regs)+int(n) > maxRegs {
				p.unsupported("too many registers")
			}
			for i := range int(n) {
				f.regs[name+strconv.Itoa(i)] = d
			}
		} else {
			f.regs[name] = d
		}
		if !p.accept(",") {
			break
		}
	}
	p.expect(";")
}

func (p *parser) instruction() *instr {
	start := p.pos
	in := &instr{line: p.peek().line}
	t := p.ident()
	if strings.HasPrefix(t.text, "@") {
		g := t.text[1:]
		if g == "" {
			if p.accept("!") {
				in.guardNeg = true
			}
			g = p.ident().text
		}
		in.guard = g
		t = p.ident()
	}
	parts := strings.Split(t.text, ".")
	in.op = parts[0]
	for _, m := range parts[1:] {
		in.mods = append(in.mods, "."+m)
	}
	if in.op == "" {
		p.pos--
		p.fail("expected an instruction, found %v", t)
	}
	if !p.is(";") {
		for {
			in.args = append(in.args, p.operand())
			if !p.accept(",") {
				break
			}
		}
	}
	p.expect(";")
	var b strings.Builder
	for i := start; i < p.pos-1 && i-start < 40; i++ {
		if i > start && p.toks[i].kind != ',' && p.toks[i-1].kind != '[' && p.toks[i].kind != ']' {
			b.WriteByte(' ')
		}
		b.WriteString(p.toks[i].text)
	}
	in.text = b.String()
	return in
}

func (p *parser) operand() operand {
	switch t := p.peek(); {
	case t.text == "[":
		p.next()
		o := operand{kind: 'a'}
		if p.peek().kind == 'i' {
			o.name = p.ident().text
			if p.accept("+") {
				o.off = p.number()
			} else if p.is("-") {
				o.off = p.number()
			}
		} else {
			o.off = p.number()
		}
		// a texture's or surface's coordinates: [tex, {x, y}], or
		// [tex, sampler, {x}]
		for p.accept(",") {
			o.elems = append(o.elems, p.operand())
			if len(o.elems) > 4 {
				p.unsupported("an address of more than 4 parts")
			}
		}
		p.expect("]")
		return o
	case t.text == "{":
		p.next()
		o := operand{kind: 'v'}
		for !p.accept("}") {
			o.elems = append(o.elems, p.operand())
			// wgmma's accumulators are vectors of up to 128
			if len(o.elems) > 256 {
				p.unsupported("a vector of more than 256 elements")
			}
			p.accept(",")
		}
		return o
	case t.text == "(":
		p.next()
		o := operand{kind: 'l'}
		for !p.accept(")") {
			o.elems = append(o.elems, p.operand())
			if len(o.elems) > 256 {
				p.unsupported("an argument list of more than 256 elements")
			}
			if !p.accept(",") {
				p.expect(")")
				break
			}
		}
		return o
	case t.text == "!":
		p.next()
		o := operand{kind: 'r', neg: true, name: p.ident().text}
		return o
	case t.text == "-" || t.kind == 'n':
		neg := p.accept("-")
		n := p.next()
		if n.kind != 'n' {
			p.pos--
			p.fail("expected a number, found %v", n)
		}
		o := operand{kind: 'n', num: n.text, neg: neg}
		return o
	case t.kind == 'i':
		p.next()
		if t.text == "_" {
			return operand{kind: '_'}
		}
		o := operand{kind: 'r', name: t.text}
		if p.accept("|") {
			o.pair = p.ident().text
		}
		if p.is("+") && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == 'n' {
			// symbol+offset outside brackets (mov.u64 %rd, sym+4)
			p.next()
			o.off = p.number()
		}
		return o
	default:
		p.fail("expected an operand, found %v", t)
	}
	return operand{}
}
