//go:build cuda11080

package cuda

import (
	"errors"
	"testing"
)

// Under cuda11080 the conditional nodes are refused before the driver.
func TestGraphConditionMissingCUDA11(t *testing.T) {
	_, ctx := needGPU(t)
	g, err := NewGraph(ctx)
	must(t, err)
	defer g.Close()
	if _, err := g.NewCondition(1, true); !errors.Is(err, ErrMissingFunction) {
		t.Errorf("NewCondition: %v, want ErrMissingFunction", err)
	}
	if _, _, err := g.AddWhile(nil, GraphCondition{}); !errors.Is(err, ErrMissingFunction) {
		t.Errorf("AddWhile: %v, want ErrMissingFunction", err)
	}
	must(t, g.Close())
	if _, err := g.NewCondition(1, true); !errors.Is(err, ErrClosed) {
		t.Errorf("NewCondition on a closed graph: %v, want ErrClosed", err)
	}
}
