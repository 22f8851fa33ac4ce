package cuda

// Structs and arrays of fixed-size numbers as kernel arguments, passed by
// their bytes: which Go types qualify, and their layout.

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// byValue is how a type that passes by its bytes is laid out: its size
// and alignment, or why it cannot pass.
type byValue struct {
	size, align uint32
	why         string // "" when the type passes
}

// byValueLayouts caches byValueLayout's answer per reflect.Type: the walk
// over the fields is done once per type, and a launch looks the type up.
var byValueLayouts sync.Map // reflect.Type → *byValue

// byValueLayout returns the layout of t, a struct, array or number type
// whose value passes as its bytes: Go lays out fixed-size numbers, and
// structs and arrays of them, as C does on the 64-bit ABIs this package
// builds for, so the bytes are those of the C struct with the same fields.
func byValueLayout(t reflect.Type) *byValue {
	if l, ok := byValueLayouts.Load(t); ok {
		return l.(*byValue)
	}
	l := &byValue{size: uint32(t.Size()), align: uint32(t.Align())}
	switch {
	case t.Size() == 0:
		l.why = "has no bytes: a kernel parameter has at least one"
	case t.Size() > maxParams:
		l.why = fmt.Sprintf("has %d bytes, more than a kernel's parameters may have in all (%d)", t.Size(), maxParams)
	default:
		l.why = byValueProblem(t, "")
	}
	v, _ := byValueLayouts.LoadOrStore(t, l)
	return v.(*byValue)
}

// byValueProblem says why a value of t, reached through the fields and
// elements named by path, cannot pass by its bytes, or returns "".
func byValueProblem(t reflect.Type, path string) string {
	where := func() string {
		switch {
		case path == "":
			return "it"
		case strings.HasPrefix(path, "[]"):
			return "an element"
		}
		return "field " + path
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Bool:
		return ""
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		return fmt.Sprintf("%s is a %v, whose size is Go's, not the kernel's: use int32, int64, uint32 or uint64", where(), t)
	case reflect.Array:
		return byValueProblem(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if why := byValueProblem(f.Type, p); why != "" {
				return why
			}
		}
		return ""
	}
	return fmt.Sprintf("%s is a %v, which holds Go pointers the kernel cannot use: pass device addresses as cu.CUdeviceptr (Slice.Ptr, DeviceMemory.Ptr)", where(), t)
}

// argBytes returns the address of the bytes of *v, a value of a type that
// passes by value. Such a type holds no pointers, so it is never stored in
// the interface's data word itself: that word points to the value.
func argBytes(v *any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(v))[1] }

// byValueArg returns the layout of argument v, of a type encodeArg found
// to pass by value, or its error.
func byValueArg(op string, i int, v any) (*byValue, error) {
	l := byValueLayout(reflect.TypeOf(v))
	if l.why != "" {
		return nil, argError(op, i, v, argByValue)
	}
	return l, nil
}
