// Package hostorder lets a driver that checks for data races, the fake
// driver of package cudatest, see what package cuda's completions order
// on the host. A completion orders nothing by itself, since the host may
// never learn of it; a function of Stream.Then runs because its completion
// was delivered, so what it does is ordered after that completion.
package hostorder

import "sync/atomic"

// A Runner runs body, a function of Stream.Then, ordered after the
// completion of the host function fn(arg) that delivered it.
type Runner func(fn, arg uintptr, body func())

var then atomic.Pointer[Runner]

// SetThen makes Then use r; nil stops that.
func SetThen(r Runner) {
	if r == nil {
		then.Store(nil)
		return
	}
	then.Store(&r)
}

// Then runs body, ordered after the completion of fn(arg) where a Runner
// is set, else as it is.
func Then(fn, arg uintptr, body func()) {
	if r := then.Load(); r != nil {
		(*r)(fn, arg, body)
		return
	}
	body()
}
