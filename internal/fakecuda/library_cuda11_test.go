//go:build cuda11080

package fakecuda_test

import (
	"errors"
	"unsafe"
)

// errNoLibraries: the bindings have no cuLibraryLoadData.
var errNoLibraries = errors.New("no cuLibraryLoadData in these bindings")

func loadLibraryData(unsafe.Pointer) (unload func() error, err error) { return nil, errNoLibraries }
