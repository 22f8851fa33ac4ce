// Package lib is a dependency of cudriver's test program, outside the
// patterns the tests give: one way of reaching bindings per function.
package lib

import "github.com/gocuda/gocuda/generated/cu"

func init() { _ = cu.Init(0) }

// Direct reaches a binding through an unexported function.
func Direct() error { return synchronize() }

func synchronize() error { return cu.CtxSynchronize() }

// A Syncer is implemented by stream; CallSync reaches its binding only
// through the interface.
type Syncer interface{ Sync() error }

type stream struct{ s cu.CUstream }

func (s stream) Sync() error { return cu.StreamSynchronize(s.s) }

// NewSyncer reaches no binding.
func NewSyncer() Syncer { return stream{} }

func CallSync(s Syncer) error { return s.Sync() }

// destroyers holds a binding as a function value.
var destroyers = map[string]func(cu.CUcontext) error{"context": cu.CtxDestroy}

func Destroy(c cu.CUcontext) error { return destroyers["context"](c) }

// Resolve asks for entry points by C name, as package cuda does.
func Resolve() error {
	for _, name := range []string{"cuMemHostRegister", "cuMemHostUnregister"} {
		if _, err := cu.Proc(name); err != nil {
			return err
		}
	}
	return nil
}

// Label spells a C name without resolving it: no use.
func Label() string { return "cuMemAllocHost" }
