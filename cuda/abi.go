package cuda

import (
	"fmt"
	"reflect"
)

// callABI calls fn, a binding of package cu whose parameters changed
// across CUDA versions, with args: each argument goes to the next
// parameter of its type, in order, and the parameters none goes to (those
// a newer version added) get their zero value, nil for a pointer. That is
// what the calls that use it want from the newer forms (no parameters
// struct, no edge data), and it lets the code build against every version
// of the bindings, later ones included, without a file per version. It is
// for calls off the hot paths: reflection costs a microsecond.
func callABI(fn any, args ...any) error {
	f := reflect.ValueOf(fn)
	t := f.Type()
	in := make([]reflect.Value, t.NumIn())
	next := 0
	for i := range in {
		if next < len(args) && reflect.TypeOf(args[next]) == t.In(i) {
			in[i] = reflect.ValueOf(args[next])
			next++
			continue
		}
		in[i] = reflect.Zero(t.In(i))
	}
	if next != len(args) || t.NumOut() != 1 {
		return fmt.Errorf("cuda: the bindings declare %v, which these arguments do not fit", t)
	}
	err, _ := f.Call(in)[0].Interface().(error)
	return err
}
