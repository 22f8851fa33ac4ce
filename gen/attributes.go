package main

import (
	"fmt"
	"reflect"
	"strings"

	"modernc.org/cc/v4"
)

// knownAttributes are the GNU attributes a header may use. cc lays out
// aligned and packed records as gcc does (Config.ABILayout; the layout test
// holds the real headers to gcc), and the rest change neither layout nor
// calling convention. Others do, in ways cc does not model or the bindings
// would not follow: mode and vector_size change a type's size,
// scalar_storage_order its byte order, ms_abi and regparm the calling
// convention, transparent_union how an argument is passed. cuda.h itself
// uses only deprecated, and _Alignas.
var knownAttributes = map[string]bool{
	"aligned": true, "packed": true,
	"deprecated": true, "unavailable": true, "unused": true, "used": true, "visibility": true,
	"nonnull": true, "nothrow": true, "warn_unused_result": true, "pure": true, "const": true,
}

// checkAttributes refuses a declaration that uses an attribute not known
// to be harmless, naming the declaration and the attribute.
func checkAttributes(d *cc.Declaration) error {
	var err error
	walkNodes(reflect.ValueOf(d), func(v any) {
		av, ok := v.(*cc.AttributeValue)
		if !ok || err != nil {
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(av.Token.SrcStr(), "__"), "__")
		if !knownAttributes[name] {
			err = fmt.Errorf("%v: %s: __attribute__((%s)) is not supported: it may change a layout or a calling convention in a way the bindings would not follow", av.Position(), declName(d), av.Token.SrcStr())
		}
	})
	return err
}

// walkNodes calls f with every pointer reached from v through exported
// fields, as cc's AST nodes link their children.
func walkNodes(v reflect.Value, f func(any)) {
	seen := map[uintptr]bool{}
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			f(v.Interface())
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(v)
}

// declName names a declaration in messages: its first declarator, else its
// struct, union or enum tag.
func declName(d *cc.Declaration) string {
	for il := d.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
		if il.InitDeclarator != nil && il.InitDeclarator.Declarator != nil {
			return il.InitDeclarator.Declarator.Name()
		}
	}
	if spec := typeSpecifier(d.DeclarationSpecifiers); spec != nil {
		if k := specKey(spec); !strings.Contains(k, "@") {
			return k
		}
	}
	return "declaration"
}
