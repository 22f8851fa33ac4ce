package cuda

import "testing"

// useEntries installs a copy of the driver's entry points changed by edit
// (stand-ins of internal/standin, say) for the rest of tb.
func useEntries(tb testing.TB, edit func(e *entries)) {
	tb.Helper()
	real, err := procs("test", "")
	must(tb, err)
	e := *real
	edit(&e)
	setEntries(&e)
	tb.Cleanup(func() { setEntries(real) })
}
