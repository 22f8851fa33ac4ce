// Package cuda is the handwritten layer over the raw driver bindings of
// github.com/gocuda/gocuda/generated/cu: devices, contexts, streams and
// events as shared, goroutine-safe handles.
//
// # Shared handles
//
// Context, Stream and Event are handles to one driver object each. Clone
// returns another handle to the same object; every handle is closed once
// with Close, and the object is destroyed (or, for a primary context,
// released) when the last handle is closed. So two subsystems can enqueue on
// one stream and each close its own handle when done. A handle that becomes
// unreachable without Close is released by a cleanup (runtime.AddCleanup),
// but Close is the way to release driver resources on time. Closing a handle
// twice does nothing; any other use of a closed handle returns an error
// matching ErrClosed and never reaches the driver.
//
// A Stream or Event holds a reference on its Context, released after the
// stream or event is destroyed: a context outlives everything made in it,
// whatever order the handles are closed in.
//
// # Threads and the current context
//
// CUDA's current context belongs to an OS thread, and goroutines move
// between threads. Every call here that needs a current context (creating
// a stream or an event, destroying one, Context.Synchronize,
// Context.StreamPriorityRange, NewContext) locks the goroutine to its
// thread, pushes the context, calls, pops it and unlocks: the thread's
// context stack is left as it was, so code that uses the runtime API or
// manages its own current context is not disturbed. Users never need
// runtime.LockOSThread.
//
// The hot calls (Event.Record, Event.Query, Stream.WaitEvent, Stream.Query)
// bind nothing: the driver finds the context from the stream or event. They
// check the handle with one atomic load, make one driver call and do not
// allocate unless they fail.
//
// # Errors
//
// Failures are *Error values naming the operation and the C function, and
// wrapping the cause: errors.Is matches the driver's results (for instance
// cu.CUDA_ERROR_INVALID_VALUE), ErrNoDriver when no driver library can be
// loaded, ErrMissingFunction when the installed driver is too old, and
// ErrClosed.
//
// # Raw handles
//
// Raw returns the driver handle for use with package cu. It remains owned by
// the handles: do not destroy it, and do not use it after the object's last
// Close. Closing one handle while a clone is in use is fine; using the raw
// handle concurrently with the last Close is a use after free, as in C.
package cuda
