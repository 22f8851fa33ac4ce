//go:build linux && (amd64 || arm64)

package solver

import (
	"errors"
	"strings"
	"testing"
)

// TestInfoBecomesTheErrorOfItsCall checks the mapping of every kind of
// info: 0 is no error, a negative one the illegal argument at its
// position whatever the call, a positive one the call's own condition at
// its index, or an unexpected info where the call documents none.
func TestInfoBecomesTheErrorOfItsCall(t *testing.T) {
	cases := []struct {
		info     int
		positive error
		want     error
		index    int
		says     string
	}{
		{3, ErrSingular, ErrSingular, 3, "pivot U(3,3) is exactly zero"},
		{5, ErrNotPositiveDefinite, ErrNotPositiveDefinite, 5, "leading minor of order 5 is not positive definite"},
		{2, ErrNoConvergence, ErrNoConvergence, 2, "info 2: the iteration did not converge"},
		{-4, ErrSingular, ErrIllegalArgument, 4, "argument 4 is illegal"},
		{-7, nil, ErrIllegalArgument, 7, "argument 7 is illegal"},
		{1, nil, errUnexpectedInfo, 1, "info 1"},
	}
	for _, c := range cases {
		err := infoError("Op", "cusolverDnXop", c.info, c.positive)
		var ie *InfoError
		if !errors.As(err, &ie) || !errors.Is(err, c.want) || ie.Index != c.index || ie.Info != c.info {
			t.Errorf("info %d: %#v; want an *InfoError matching %v at index %d", c.info, err, c.want, c.index)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.says) || !strings.HasPrefix(msg, "solver: Op: cusolverDnXop: ") {
			t.Errorf("info %d: %q does not say %q after the operation and function", c.info, msg, c.says)
		}
		for _, other := range []error{ErrSingular, ErrNotPositiveDefinite, ErrNoConvergence, ErrIllegalArgument} {
			if other != c.want && errors.Is(err, other) {
				t.Errorf("info %d matches %v too", c.info, other)
			}
		}
	}
	if err := infoError("Op", "f", 0, ErrSingular); err != nil {
		t.Errorf("info 0: %v", err)
	}
}
