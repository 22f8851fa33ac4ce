package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// buildLib turns a parsed header into the model of the functions named
// prefix*. Only declarations made in the header itself are taken; system
// headers contribute types by their C kind.
func buildLib(h *Header, prefix string) (*Module, error) {
	b := &builder{
		h:         h,
		prefix:    prefix,
		canonical: map[string]string{},
		records:   map[string]*Record{},
		enums:     map[string]*Enum{},
		typedefs:  map[string]bool{},
		spelled:   map[string]spelling{},
	}
	if err := b.run(); err != nil {
		return nil, err
	}
	return b.module(), nil
}

type builder struct {
	h      *Header
	prefix string // of the functions bound: "cu"
	// canonical maps a tag key ("struct CUuuid_st") or an anonymous
	// specifier's key to the Go name of the type it defines.
	canonical map[string]string
	records   map[string]*Record
	enums     map[string]*Enum
	typedefs  map[string]bool
	// wrapped maps a function that an inline wrapper of the header calls
	// to the wrapper's name: __nvJitLinkCreate_12_4 → nvJitLinkCreate.
	wrapped map[string]string
	// spelled holds each function's result and parameter list as the
	// header spells them, by symbol, until nameFunctions names it.
	spelled map[string]spelling
	m       Module
	err     error
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

func (b *builder) run() error {
	var decls []*cc.Declaration
	b.wrapped = map[string]string{}
	for l := b.h.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed != nil && ed.Case == cc.ExternalDeclarationFuncDef && ed.FunctionDefinition != nil && b.h.Own[ed.FunctionDefinition.Position().Filename] {
			b.wrapper(ed.FunctionDefinition)
		}
		if ed == nil || ed.Case != cc.ExternalDeclarationDecl || ed.Declaration == nil {
			continue
		}
		if b.h.Own[ed.Declaration.Position().Filename] {
			decls = append(decls, ed.Declaration)
		}
	}
	for _, d := range decls {
		if err := checkAttributes(d); err != nil {
			return err
		}
	}
	// Names first, so that a type used before its typedef still gets the
	// typedef's name.
	for _, d := range decls {
		b.nameTypes(d)
	}
	seenFn := map[string]bool{}
	for _, d := range decls {
		for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			if il.InitDeclarator == nil {
				continue
			}
			decl := il.InitDeclarator.Declarator
			switch {
			case decl.IsTypename():
				b.typedef(d, decl)
			case b.prefix != "" && (strings.HasPrefix(decl.Name(), b.prefix) || b.wrapped[decl.Name()] != ""):
				if ft, ok := decl.Type().(*cc.FunctionType); ok && !seenFn[decl.Name()] {
					seenFn[decl.Name()] = true
					b.function(decl.Name(), ft)
					b.spelled[decl.Name()] = spell(d, decl)
				}
			}
		}
		// Tagged definitions without a typedef (struct X { … };).
		if spec := typeSpecifier(d.DeclarationSpecifiers); spec != nil && d.InitDeclaratorList == nil {
			b.standalone(spec)
		}
		if b.err != nil {
			return b.err
		}
	}
	b.constants()
	b.nameFunctions()
	return b.err
}

// typeSpecifier returns the struct, union, enum or typedef-name specifier of
// a declaration, if it has one.
func typeSpecifier(ds *cc.DeclarationSpecifiers) *cc.TypeSpecifier {
	for ; ds != nil; ds = ds.DeclarationSpecifiers {
		if ds.Case == cc.DeclarationSpecifiersTypeSpec && ds.TypeSpecifier != nil {
			switch ds.TypeSpecifier.Case {
			case cc.TypeSpecifierStructOrUnion, cc.TypeSpecifierEnum, cc.TypeSpecifierTypeName:
				return ds.TypeSpecifier
			}
		}
	}
	return nil
}

func tokenText(t cc.Token) string { return t.SrcStr() }

func plainIdent(d *cc.Declarator) bool {
	return d.Pointer == nil && d.DirectDeclarator != nil && d.DirectDeclarator.Case == cc.DirectDeclaratorIdent
}

// specKey identifies the type a struct, union or enum specifier denotes:
// its tag, or the specifier itself when anonymous.
func specKey(spec *cc.TypeSpecifier) string {
	switch spec.Case {
	case cc.TypeSpecifierStructOrUnion:
		s := spec.StructOrUnionSpecifier
		kw := "struct"
		if s.StructOrUnion != nil && s.StructOrUnion.Case == cc.StructOrUnionUnion {
			kw = "union"
		}
		if tag := s.Token.SrcStr(); tag != "" {
			return kw + " " + tag
		}
		return fmt.Sprintf("%s@%p", kw, s)
	case cc.TypeSpecifierEnum:
		e := spec.EnumSpecifier
		if tag := e.Token2.SrcStr(); tag != "" {
			return "enum " + tag
		}
		return fmt.Sprintf("enum@%p", e)
	}
	return ""
}

// typeKey identifies a struct, union or enum type by its tag.
func typeKey(t cc.Type) string {
	switch x := t.(type) {
	case *cc.StructType:
		if tag := tokenText(x.Tag()); tag != "" {
			return "struct " + tag
		}
	case *cc.UnionType:
		if tag := tokenText(x.Tag()); tag != "" {
			return "union " + tag
		}
	case *cc.EnumType:
		if tag := tokenText(x.Tag()); tag != "" {
			return "enum " + tag
		}
	}
	return ""
}

// nameTypes gives a struct, union or enum the name of the first typedef
// that names it directly: typedef struct CUuuid_st {…} CUuuid → CUuuid.
func (b *builder) nameTypes(d *cc.Declaration) {
	spec := typeSpecifier(d.DeclarationSpecifiers)
	if spec == nil || spec.Case == cc.TypeSpecifierTypeName {
		return
	}
	key := specKey(spec)
	for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
		if il.InitDeclarator == nil {
			continue
		}
		decl := il.InitDeclarator.Declarator
		if decl.IsTypename() && plainIdent(decl) {
			if _, ok := b.canonical[key]; !ok {
				b.canonical[key] = decl.Name()
			}
		}
	}
}

// standalone handles `struct X {…};` and `enum E {…};` with no declarator.
func (b *builder) standalone(spec *cc.TypeSpecifier) {
	if spec.Case == cc.TypeSpecifierTypeName {
		return
	}
	key := specKey(spec)
	if strings.Contains(key, "@") {
		return
	}
	var t cc.Type
	switch spec.Case {
	case cc.TypeSpecifierStructOrUnion:
		t = spec.StructOrUnionSpecifier.Type()
	case cc.TypeSpecifierEnum:
		t = spec.EnumSpecifier.Type()
	}
	if t != nil && !t.IsIncomplete() {
		b.convert(t, "")
	}
}

func (b *builder) typedef(d *cc.Declaration, decl *cc.Declarator) {
	name := decl.Name()
	if b.typedefs[name] {
		return
	}
	b.typedefs[name] = true
	t := decl.Type()
	spec := typeSpecifier(d.DeclarationSpecifiers)
	if plainIdent(decl) && spec != nil {
		switch spec.Case {
		case cc.TypeSpecifierTypeName:
			// typedef CUdevice_v1 CUdevice: an alias, when the header
			// itself declared CUdevice_v1; uint32_t and kin become Go's
			// own integer types under a defined name.
			if from := spec.Token.SrcStr(); b.typedefs[from] {
				b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: Alias, Target: Type{Kind: Named, Name: from}})
				return
			} else if rt, ok := b.runtimeType(from, t); ok {
				// typedef cuComplex cufftComplex: the runtime's type under
				// another name is the same Go type.
				b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: Alias, Target: rt})
				return
			}
			b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: Defined, Target: b.convertUnnamed(t, name)})
			return
		case cc.TypeSpecifierStructOrUnion, cc.TypeSpecifierEnum:
			key := specKey(spec)
			canon := b.canonical[key]
			if t.IsIncomplete() {
				// typedef struct X X_t; with X never defined: an opaque type
				// that is only ever used through pointers.
				b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: Defined, Target: Type{Kind: Array, Len: 0, Elem: &Type{Kind: Basic, Basic: "unsigned char"}}})
				return
			}
			b.define(t, key, canon)
			if canon != name {
				b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: Alias, Target: Type{Kind: Named, Name: canon}})
			}
			return
		}
	}
	target := b.convertUnnamed(t, name)
	kind := Defined
	if pt, ok := t.(*cc.PointerType); ok && target.Kind == Pointer {
		if e := pt.Elem(); (e.Kind() == cc.Struct || e.Kind() == cc.Union) && e.IsIncomplete() {
			kind = Handle
			target = Type{Kind: Pointer}
		}
	}
	b.m.Typedefs = append(b.m.Typedefs, Typedef{Name: name, Kind: kind, Target: target})
}

// convertUnnamed converts the type a typedef declares, ignoring the
// typedef's own name, which cc attaches to it.
func (b *builder) convertUnnamed(t cc.Type, self string) Type {
	if td := t.Typedef(); td != nil && td.Name() == self {
		return b.convertKind(t, self)
	}
	return b.convert(t, self)
}

// define records the definition of a struct, union or enum under name.
func (b *builder) define(t cc.Type, key, name string) {
	switch x := t.(type) {
	case *cc.EnumType:
		if _, ok := b.enums[key]; ok {
			return
		}
		under, ok := basicSpelling[x.UnderlyingType().Kind()]
		if !ok || x.UnderlyingType().Size() != x.Size() {
			b.fail("enum %s: its C type %s (%d bytes) has no Go equivalent", name, x.UnderlyingType(), x.Size())
			return
		}
		if x.Attributes().Packed() {
			// gcc gives a packed enum the smallest type that holds its
			// values; cc keeps the unpacked size.
			b.fail("enum %s: __attribute__((packed)) is not supported", name)
			return
		}
		e := &Enum{Name: name, Type: under}
		b.enums[key] = e
		for _, en := range x.Enumerators() {
			v, ok := intValue(en.Value())
			if !ok {
				b.fail("enum %s: enumerator %s has no integer value", name, en.Token.SrcStr())
				return
			}
			if !fitsBasic(v, under) {
				b.fail("enum %s: enumerator %s = %s does not fit its C type %s", name, en.Token.SrcStr(), en.Value(), under)
				return
			}
			e.Values = append(e.Values, EnumValue{Name: en.Token.SrcStr(), Value: v})
		}
	case *cc.StructType, *cc.UnionType:
		if _, ok := b.records[key]; ok {
			return
		}
		r := &Record{Name: name, CName: cName(key, name), Size: t.Size(), Align: t.Align()}
		b.records[key] = r
		r.Union = t.Kind() == cc.Union
		n := numFields(t)
		for i := 0; i < n; i++ {
			f := fieldByIndex(t, i)
			if f.IsBitfield() {
				b.fail("%s: bit-field %s is not supported", name, f.Name())
				return
			}
			if f.IsFlexibleArrayMember() {
				b.fail("%s: flexible array member %s is not supported", name, f.Name())
				return
			}
			fname, anon := f.Name(), false
			if fname == "" {
				fname, anon = fmt.Sprintf("anon%d", i), true
			}
			ft := b.convert(f.Type(), name+"_"+fname)
			r.Fields = append(r.Fields, Field{Name: fname, Type: ft, Offset: f.Offset(), Anonymous: anon})
		}
	default:
		b.fail("%s: unexpected definition of %s", name, t)
	}
}

// cName is how C code names a record: by its typedef when the Go name is
// one, else by its tag; an anonymous member's type has no C name.
func cName(key, name string) string {
	switch {
	case strings.HasPrefix(key, "anon "):
		return ""
	case strings.HasSuffix(key, " "+name):
		return key // named after its tag: struct X
	}
	return name
}

func numFields(t cc.Type) int {
	if s, ok := t.(*cc.StructType); ok {
		return s.NumFields()
	}
	return t.(*cc.UnionType).NumFields()
}

func fieldByIndex(t cc.Type, i int) *cc.Field {
	if s, ok := t.(*cc.StructType); ok {
		return s.FieldByIndex(i)
	}
	return t.(*cc.UnionType).FieldByIndex(i)
}

// convert maps a C type to the model. anon names a struct, union or enum
// that has no tag and no typedef (a nested member's type).
func (b *builder) convert(t cc.Type, anon string) Type {
	if td := t.Typedef(); td != nil {
		if b.h.Own[td.Position().Filename] {
			return Type{Kind: Named, Name: td.Name()}
		}
		if ft, ok := b.foreign(t, td); ok {
			return ft
		}
	}
	return b.convertKind(t, anon)
}

func (b *builder) convertKind(t cc.Type, anon string) Type {
	switch t.Kind() {
	case cc.Void:
		return Type{Kind: Void}
	case cc.Ptr:
		elem := t.(*cc.PointerType).Elem()
		switch {
		case elem.Kind() == cc.Function:
			return Type{Kind: FuncPtr}
		case elem.Kind() == cc.Void:
			return Type{Kind: Pointer}
		case (elem.Kind() == cc.Struct || elem.Kind() == cc.Union) && elem.IsIncomplete() && b.convertible(elem) == "":
			return Type{Kind: Pointer}
		}
		e := b.convert(elem, anon)
		return Type{Kind: Pointer, Elem: &e}
	case cc.Array:
		at := t.(*cc.ArrayType)
		if at.IsVLA() || at.Len() < 0 {
			b.fail("%s: array without a constant length", anon)
			return Type{Kind: Void}
		}
		e := b.convert(at.Elem(), anon)
		return Type{Kind: Array, Len: at.Len(), Elem: &e}
	case cc.Struct, cc.Union, cc.Enum:
		key := typeKey(t)
		name := b.canonical[key]
		if key == "" {
			key, name = "anon "+anon, anon
		} else if name == "" {
			name = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(key, "struct "), "union "), "enum ")
			b.canonical[key] = name
		}
		if !t.IsIncomplete() {
			b.define(t, key, name)
		}
		return Type{Kind: Named, Name: name}
	case cc.Function:
		b.fail("%s: function type outside a pointer", anon)
		return Type{Kind: Void}
	}
	if s, ok := basicSpelling[t.Kind()]; ok {
		return Type{Kind: Basic, Basic: s}
	}
	b.fail("%s: unsupported C type %s", anon, t)
	return Type{Kind: Void}
}

// convertible reports the typedef name under which the header knows an
// incomplete struct, if any.
func (b *builder) convertible(t cc.Type) string {
	if td := t.Typedef(); td != nil && b.h.Own[td.Position().Filename] {
		return td.Name()
	}
	return ""
}

var basicSpelling = map[cc.Kind]string{
	cc.Bool:      "_Bool",
	cc.Char:      "char",
	cc.SChar:     "signed char",
	cc.UChar:     "unsigned char",
	cc.Short:     "short",
	cc.UShort:    "unsigned short",
	cc.Int:       "int",
	cc.UInt:      "unsigned int",
	cc.Long:      "long",
	cc.ULong:     "unsigned long",
	cc.LongLong:  "long long",
	cc.ULongLong: "unsigned long long",
	cc.Float:     "float",
	cc.Double:    "double",
}

// fitsBasic reports whether v, an enumerator's bits as intValue gives them,
// is a value of the integer type spelled c.
func fitsBasic(v int64, c string) bool {
	b, ok := basics[c]
	if !ok || !b.integer {
		return false
	}
	bits := uint(8 * b.size)
	if b.unsigned {
		return bits == 64 || uint64(v) < 1<<bits
	}
	return bits == 64 || v >= -1<<(bits-1) && v < 1<<(bits-1)
}

func intValue(v cc.Value) (int64, bool) {
	switch x := v.(type) {
	case cc.Int64Value:
		return int64(x), true
	case cc.UInt64Value:
		return int64(x), true
	}
	return 0, false
}

func (b *builder) function(symbol string, ft *cc.FunctionType) {
	if ft.IsVariadic() {
		b.m.Excluded = append(b.m.Excluded, Exclusion{Symbol: symbol, Reason: "variadic: cgo cannot call a C variadic function"})
		return
	}
	f := Function{Symbol: symbol, Result: b.convert(ft.Result(), symbol)}
	for i, p := range ft.Parameters() {
		if p.Type().Kind() == cc.Void {
			continue // f(void)
		}
		name := p.Name()
		if name == "" {
			name = "p" + strconv.Itoa(i)
		}
		f.Params = append(f.Params, Param{Name: name, Type: b.convert(p.Type(), symbol+"_"+name)})
	}
	b.m.Functions = append(b.m.Functions, f)
}

var versionSuffix = regexp.MustCompile(`_v[0-9]+$`)

// wrapperBody is the body of an inline function that only passes its
// parameters on to another function.
// cc gives every body the __func__ that C declares implicitly.
var wrapperBody = regexp.MustCompile(`^\{\s*(?:static const char __func__ \[ \] = "[A-Za-z0-9_]*" ;\s*)?return\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)\s*;\s*\}$`)

// wrapper records an inline definition named like the library's functions
// whose body calls another function with its own parameters, unchanged and
// in order: nvJitLink.h selects the symbol of its version so
// (nvJitLinkCreate calls __nvJitLinkCreate_12_4), as cuda.h does with
// macros. The called function is then bound under the wrapper's name.
func (b *builder) wrapper(fd *cc.FunctionDefinition) {
	name := fd.Declarator.Name()
	if b.prefix == "" || !strings.HasPrefix(name, b.prefix) || fd.CompoundStatement == nil {
		return
	}
	m := wrapperBody.FindStringSubmatch(strings.TrimSpace(cc.NodeSource(fd.CompoundStatement)))
	ft, ok := fd.Declarator.Type().(*cc.FunctionType)
	if m == nil || !ok {
		return
	}
	var params []string
	for _, p := range ft.Parameters() {
		if p.Type().Kind() != cc.Void {
			params = append(params, p.Name())
		}
	}
	var args []string
	for _, a := range strings.Split(m[2], ",") {
		if a = strings.TrimSpace(a); a != "" {
			args = append(args, a)
		}
	}
	if strings.Join(args, ",") == strings.Join(params, ",") {
		b.wrapped[m[1]] = name
	}
}

// nameFunctions gives each function the API name whose macro expands to its
// symbol (cuMemAlloc → cuMemAlloc_v2). When several do (cuStreamGetCaptureInfo
// and cuStreamGetCaptureInfo_v2), the shortest wins; a name that is itself a
// declared symbol never names another.
func (b *builder) nameFunctions() {
	declared := map[string]bool{}
	for _, f := range b.m.Functions {
		declared[f.Symbol] = true
	}
	byTarget := map[string][]string{}
	for to, from := range b.wrapped {
		byTarget[to] = append(byTarget[to], from)
	}
	for from, to := range b.h.Expansion {
		if from != to && declared[to] && !declared[from] {
			byTarget[to] = append(byTarget[to], from)
		}
	}
	for i := range b.m.Functions {
		f := &b.m.Functions[i]
		f.Name = f.Symbol
		if names := byTarget[f.Symbol]; len(names) > 0 {
			sort.Slice(names, func(i, j int) bool {
				if len(names[i]) != len(names[j]) {
					return len(names[i]) < len(names[j])
				}
				return names[i] < names[j]
			})
			f.Name = names[0]
		}
		if sp, ok := b.spelled[f.Symbol]; ok {
			sep := " "
			if strings.HasSuffix(sp.result, "*") {
				sep = "" // const char *name(…)
			}
			f.Proto = sp.result + sep + f.Name + "(" + sp.params + ")"
		}
	}
}

func (b *builder) constants() {
	for name, m := range b.h.AST.Macros {
		if m.IsFnLike || strings.HasPrefix(name, "_") || !b.h.Own[m.Position().Filename] {
			continue
		}
		c := Constant{Name: name}
		switch v := m.Value().(type) {
		case cc.Int64Value:
			c.Value = strconv.FormatInt(int64(v), 10)
		case cc.UInt64Value:
			c.Value = strconv.FormatUint(uint64(v), 10)
		default:
			continue
		}
		if typ := m.Type(); typ != nil && typ.Kind() == cc.Ptr {
			c.Pointer = true
		}
		b.m.Constants = append(b.m.Constants, c)
	}
	if v, ok := b.h.AST.Macros["CUDA_VERSION"]; ok {
		if n, ok := intValue(v.Value()); ok {
			b.m.CUDAVersion = int(n)
		}
	}
}

// module returns the model in a stable order.
func (b *builder) module() *Module {
	m := b.m
	for _, e := range b.enums {
		m.Enums = append(m.Enums, *e)
	}
	for _, r := range b.records {
		m.Records = append(m.Records, *r)
	}
	sort.Slice(m.Functions, func(i, j int) bool { return m.Functions[i].Symbol < m.Functions[j].Symbol })
	sort.Slice(m.Enums, func(i, j int) bool { return m.Enums[i].Name < m.Enums[j].Name })
	sort.Slice(m.Records, func(i, j int) bool { return m.Records[i].Name < m.Records[j].Name })
	sort.Slice(m.Typedefs, func(i, j int) bool { return m.Typedefs[i].Name < m.Typedefs[j].Name })
	sort.Slice(m.Constants, func(i, j int) bool { return m.Constants[i].Name < m.Constants[j].Name })
	sort.Slice(m.Excluded, func(i, j int) bool { return m.Excluded[i].Symbol < m.Excluded[j].Symbol })
	return &m
}
