package cuda

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/generated/cu"
)

// ErrDeferred is matched by the error of a Close (or of a dropped handle's
// cleanup, which has nobody to tell) whose destroy the driver refused while
// the object still exists: cuMemFree during a stream capture, say. The
// object is not forgotten: it stays counted by LiveObjects, Close on the
// same handle returns the error again, and its destroy is retried when a
// capture ends (Stream.EndCapture) and by RetryDeferred. (Not by other
// destroys: one made on a thread that is capturing in thread-local mode
// would break that capture.) The error matches the driver's result too.
var ErrDeferred = errors.New("destroy refused by the driver: the object is kept and its destroy retried later")

type deferredError struct{ err error }

func (e *deferredError) Error() string        { return e.err.Error() + " (" + ErrDeferred.Error() + ")" }
func (e *deferredError) Unwrap() error        { return e.err }
func (e *deferredError) Is(target error) bool { return target == ErrDeferred }

// A deferred object is a core whose destroy the driver refused.
type deferredObject interface{ retry() bool }

var (
	deferredMu    sync.Mutex
	deferredList  []deferredObject
	deferredCount atomic.Int64
	// refusedErrs holds the error of each object in the list, by its core,
	// for a second Close to return: kept here rather than in every core,
	// which would grow each create's allocation for the rare refusal.
	refusedErrs = map[any]*Error{}
)

// refusedError returns the error of c's refused destroy while c waits in
// the deferred list, or nil.
func refusedError(c any) *Error {
	deferredMu.Lock()
	defer deferredMu.Unlock()
	return refusedErrs[c]
}

// forgetRefused drops c's error once the driver no longer holds it.
func forgetRefused(c any) {
	deferredMu.Lock()
	delete(refusedErrs, c)
	deferredMu.Unlock()
}

// stillHeld reports whether a failed destroy left the object alive in the
// driver. Results that say the handle or its context is gone, and errors
// that never reached the driver, mean there is nothing left to destroy.
func stillHeld(err error) bool {
	var e *Error
	if errors.As(err, &e) && e.Func == "cuCtxPopCurrent" {
		return false // the destroy went through; restoring the thread failed
	}
	var r cu.CUresult
	if !errors.As(err, &r) {
		return false
	}
	switch r {
	case cu.CUDA_ERROR_INVALID_HANDLE, cu.CUDA_ERROR_INVALID_CONTEXT, cu.CUDA_ERROR_CONTEXT_IS_DESTROYED,
		cu.CUDA_ERROR_INVALID_VALUE, cu.CUDA_ERROR_DEINITIALIZED, cu.CUDA_ERROR_NOT_INITIALIZED:
		return false
	}
	return true
}

// deferDestroy puts c in the deferred list and returns the error that says so.
func deferDestroy[T any](c *shared[T], err error) error {
	e := &Error{Op: "Close", Err: &deferredError{err}}
	var ce *Error
	if errors.As(err, &ce) {
		e.Op, e.Func, e.Result = ce.Op, ce.Func, ce.Result
		e.Err = &deferredError{ce.Err}
	}
	// Counted first: a second Close looks for the error only while the
	// count is not zero.
	deferredCount.Add(1)
	deferredMu.Lock()
	refusedErrs[c] = e
	deferredList = append(deferredList, c)
	deferredMu.Unlock()
	return e
}

// retryDeferred is RetryDeferred for EndCapture: one atomic load when
// nothing waits.
func retryDeferred() {
	if deferredCount.Load() != 0 {
		RetryDeferred()
	}
}

// RetryDeferred retries now the destroys the driver refused (see
// ErrDeferred) and returns how many objects still wait.
func RetryDeferred() int {
	deferredMu.Lock()
	list := deferredList
	deferredList = nil
	deferredMu.Unlock()
	var keep []deferredObject
	for _, o := range list {
		if o.retry() {
			deferredCount.Add(-1)
		} else {
			keep = append(keep, o)
		}
	}
	if len(keep) > 0 {
		deferredMu.Lock()
		deferredList = append(deferredList, keep...)
		deferredMu.Unlock()
	}
	return int(deferredCount.Load())
}
