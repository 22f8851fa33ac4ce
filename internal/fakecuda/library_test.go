//go:build !cuda11080

package fakecuda_test

import (
	"errors"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// errNoLibraries: the bindings have no cuLibraryLoadData.
var errNoLibraries = errors.New("no cuLibraryLoadData in these bindings")

func loadLibraryData(image unsafe.Pointer) (unload func() error, err error) {
	var l cu.CUlibrary
	if err := cu.LibraryLoadData(&l, image, nil, nil, 0, nil, nil, 0); err != nil {
		return nil, err
	}
	return func() error { return cu.LibraryUnload(l) }, nil
}
