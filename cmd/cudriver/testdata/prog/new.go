//go:build !cuda11080

package main

import (
	"github.com/gocuda/gocuda/cmd/cudriver/testdata/lib"
	"github.com/gocuda/gocuda/generated/cu"
)

func newer() {
	_ = cu.LibraryUnload(0) // USE cu.LibraryUnload
	_, _ = lib.StreamID(0)  // USE lib.StreamID
	_, _ = lib.ContextID(0) // USE lib.ContextID
}
