package cuda

import (
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
)

// bind runs fn with ctx current on the calling OS thread and then restores
// the thread's context stack exactly as it was.
//
// The thread stays locked for the whole sequence because CUDA's current
// context belongs to the OS thread while a goroutine may move between
// threads at any call: setting the context and then calling on another
// thread is the bug the H200 showed with cuStreamCreate. Push/pop instead
// of set costs the same two crossings and never loses a context the caller
// (or a library in the same process) had current.
func bind(op string, ctx cu.CUcontext, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.CtxPushCurrent(ctx); err != nil {
		return newError(op, "cuCtxPushCurrent", err)
	}
	ferr := fn()
	var popped cu.CUcontext
	if err := cu.CtxPopCurrent(&popped); err != nil && ferr == nil {
		ferr = newError(op, "cuCtxPopCurrent", err)
	}
	return ferr
}
