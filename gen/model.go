package main

// The model is plain data: what the header declares, with everything the
// emitters need and nothing of cc's AST. Tests compare it with go-cmp.

// Module is one header's bindable content.
type Module struct {
	CUDAVersion int // the header's CUDA_VERSION, 0 when it defines none
	Functions   []Function
	Enums       []Enum
	Records     []Record
	Typedefs    []Typedef
	Constants   []Constant
	Excluded    []Exclusion
}

// Exclusion is a declared function that is not bound, and why.
type Exclusion struct {
	Symbol string
	Reason string
}

// Function is a declared cu* function.
type Function struct {
	Name   string // API name as users write it in C: cuMemAlloc
	Symbol string // versioned symbol the header's macros select: cuMemAlloc_v2
	Result Type
	Params []Param
	// Proto is the declaration as the header spells it, under the API
	// name and without attributes or calling-convention macros:
	// "CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)".
	Proto string
}

// Param is one function parameter.
type Param struct {
	Name string
	Type Type
}

// TypeKind classifies a Type.
type TypeKind int

const (
	Basic   TypeKind = iota // a C arithmetic type, Type.Basic names it
	Named                   // a type the header names (typedef, or struct/union/enum tag)
	Pointer                 // Elem is what it points to; nil Elem means void
	FuncPtr                 // pointer to function
	Array                   // Len elements of Elem
	Void                    // only as a function result
)

// Type is a C type in the model.
type Type struct {
	Kind  TypeKind
	Basic string // for Basic: the C spelling, "unsigned long long"
	Name  string // for Named
	// Pkg is the package under generated/ that declares a Named type of
	// another package ("cu" for CUstream), and Under what it is in C: an
	// integer for an enum, a pointer for a handle.
	Pkg   string
	Under *Type
	Elem  *Type // for Pointer and Array
	Len   int64 // for Array
}

// Enum is an enumeration type; Name is its Go type name.
type Enum struct {
	Name string
	// Type is the C spelling of its underlying integer type, which sets its
	// size: "int", "unsigned int", and "long" or "unsigned long" for values
	// beyond 32 bits.
	Type   string
	Values []EnumValue
	// CNames maps the Go name of an enumerator to its C name where they
	// differ: a library's enumerator that starts lower-case (ncclSum) is
	// exported (NcclSum).
	CNames map[string]string
}

// EnumValue is one enumerator.
type EnumValue struct {
	Name string
	// Value holds the enumerator's bits: read it as a uint64 when the
	// enum's Type is unsigned.
	Value int64
}

// Record is a struct or union with its C layout.
type Record struct {
	Name   string // Go type name: typedef name, tag, or Parent_field for anonymous ones
	CName  string // how C names it in sizeof: CUuuid, struct CUfoo_st; "" for anonymous members
	Union  bool
	Size   int64
	Align  int
	Fields []Field
}

// Field is a record member with its byte offset.
type Field struct {
	Name   string
	Type   Type
	Offset int64
	// Anonymous marks an unnamed struct or union member, whose own members
	// C reaches as if they were the parent's; Name is then made up (anonN).
	Anonymous bool
}

// TypedefKind says what a Typedef names.
type TypedefKind int

const (
	Alias   TypedefKind = iota // another name for the Named type Target
	Handle                     // pointer to an incomplete struct: an opaque driver handle
	Defined                    // a distinct type over Target (CUdevice_v1, CUhostFn)
)

// Typedef is a named type that is not itself an enum or record definition.
type Typedef struct {
	Name   string
	Kind   TypedefKind
	Target Type
}

// Constant is an integer object-like macro.
type Constant struct {
	Name    string
	Value   string // Go literal of the value: "12040", "-1", "18446744073709551615"
	Pointer bool   // C gives it a pointer type, as in ((void*)0x01)
}

// cName is the C name of the enumerator whose Go name is name.
func (e Enum) cName(name string) string {
	if c, ok := e.CNames[name]; ok {
		return c
	}
	return name
}
