//go:build linux && cgo

package nvtx

/*
#cgo LDFLAGS: -ldl
// The C side copies every Go string it is given into C memory before the
// tool sees it and keeps no Go pointer after it returns (noescape), and
// neither it nor a tool (C code of another library, which can reach no Go
// function of the program) calls back into Go (nocallback). With both,
// the strings need not escape: a name built on the caller's stack stays
// there, and costs no allocation.
#cgo noescape gonvtx_mark
#cgo nocallback gonvtx_mark
#cgo noescape gonvtx_range_start
#cgo nocallback gonvtx_range_start
#cgo noescape gonvtx_push
#cgo nocallback gonvtx_push
#cgo noescape gonvtx_name_category
#cgo nocallback gonvtx_name_category
#cgo noescape gonvtx_domain_create
#cgo nocallback gonvtx_domain_create
#cgo noescape gonvtx_register_string
#cgo nocallback gonvtx_register_string
#include <stdlib.h>
#include "inject.h"
*/
import "C"

import (
	"unsafe"
)

// load opens the tool at path and lets it fill the slots (inject.c).
func load(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	rc := C.gonvtx_load(cpath, &buf[0], C.size_t(len(buf)))
	if rc == C.GONVTX_ATTACHED {
		return nil
	}
	e := &AttachError{Path: path, Detail: C.GoString(&buf[0])}
	switch rc {
	case C.GONVTX_NO_LIBRARY:
		e.Stage = "loading the library"
	case C.GONVTX_NO_ENTRY:
		e.Stage = "finding InitializeInjectionNvtx2"
	default:
		e.Stage = "initializing the tool"
	}
	return e
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// cstr gives Go string data to C, which copies it before the call returns.
func cstr(s string) (*C.char, C.size_t) {
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

func callMark(d unsafe.Pointer, named bool, e *event) {
	p, n := cstr(e.msg)
	C.gonvtx_mark(d, cbool(named), p, n, e.reg, C.uint32_t(e.category), C.uint32_t(e.color), C.int32_t(e.ptype), C.uint64_t(e.payload))
}

func callRangeStart(d unsafe.Pointer, named bool, e *event) uint64 {
	p, n := cstr(e.msg)
	return uint64(C.gonvtx_range_start(d, cbool(named), p, n, e.reg, C.uint32_t(e.category), C.uint32_t(e.color), C.int32_t(e.ptype), C.uint64_t(e.payload)))
}

func callRangeEnd(d unsafe.Pointer, named bool, id uint64) {
	C.gonvtx_range_end(d, cbool(named), C.uint64_t(id))
}

func callPush(d unsafe.Pointer, named bool, e *event) int {
	p, n := cstr(e.msg)
	return int(C.gonvtx_push(d, cbool(named), p, n, e.reg, C.uint32_t(e.category), C.uint32_t(e.color), C.int32_t(e.ptype), C.uint64_t(e.payload)))
}

func callPop(d unsafe.Pointer, named bool) int {
	return int(C.gonvtx_pop(d, cbool(named)))
}

func callNameCategory(d unsafe.Pointer, named bool, id uint32, name string) {
	p, n := cstr(name)
	C.gonvtx_name_category(d, cbool(named), C.uint32_t(id), p, n)
}

func callDomainCreate(name string) unsafe.Pointer {
	p, n := cstr(name)
	return C.gonvtx_domain_create(p, n)
}

func callRegisterString(d unsafe.Pointer, s string) unsafe.Pointer {
	p, n := cstr(s)
	return C.gonvtx_register_string(d, p, n)
}
