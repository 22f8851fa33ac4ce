package main

import (
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// Counted with -test only.
func TestFree(t *testing.T) {
	_ = cu.MemFree(0) // USE cu.MemFree
}
