// Package devptr turns device addresses into the pointer type the raw
// library bindings take for device memory.
package devptr

import (
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Of is the device address p as an unsafe.Pointer. It points at no Go
// memory, so cgo's checks let it pass, and it is never dereferenced on
// the host. The conversion goes through memory because converting an
// integer to a pointer directly is what go vet rightly refuses elsewhere.
func Of(p cu.CUdeviceptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
