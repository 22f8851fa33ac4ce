package cuda

import (
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
)

// bind runs fn with ctx current on the calling OS thread and then restores
// the thread's context stack exactly as it was, for the calls that need a
// current context and are not one of the bound C calls (bound.go).
//
// The thread stays locked for the whole sequence because CUDA's current
// context belongs to the OS thread while a goroutine may move between
// threads at any call. Push/pop instead of set never loses a context the
// caller (or a library in the same process) had current.
//
// The stack is restored on every way out of fn: a return, a panic (which
// then goes on) and runtime.Goexit. When the driver refuses to pop, the
// stack cannot be restored: the thread then stays locked to the calling
// goroutine, so that no other goroutine ever runs on it, and the Go runtime
// ends the thread when that goroutine exits.
func bind(op string, ctx cu.CUcontext, fn func() error) error {
	runtime.LockOSThread()
	if err := cu.CtxPushCurrent(ctx); err != nil {
		runtime.UnlockOSThread()
		return newError(op, "cuCtxPushCurrent", err)
	}
	returned := false
	defer func() {
		if !returned && unbind() == nil {
			runtime.UnlockOSThread()
		}
	}()
	ferr := fn()
	returned = true
	if err := unbind(); err != nil {
		if ferr == nil {
			ferr = newError(op, "cuCtxPopCurrent", err)
		}
		return ferr
	}
	runtime.UnlockOSThread()
	return ferr
}

// unbind pops the context bind pushed.
func unbind() error {
	var popped cu.CUcontext
	return cu.CtxPopCurrent(&popped)
}
