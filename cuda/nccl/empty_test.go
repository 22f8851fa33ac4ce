//go:build linux && (amd64 || arm64)

package nccl

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

// TestZeroElementsCallNoNCCL: collectives of 0-element views return nil
// on a communicator whose handle NCCL never made (a call reaching NCCL
// would fail or worse), after the same checks as any: a closed slice or
// communicator is still an error, and so are mismatched lengths.
func TestZeroElementsCallNoNCCL(t *testing.T) {
	s := stream(t, 0)
	c := fakeComm(t, s, 1, 4)
	whole, err := cuda.AllocSlice[float32](s.Context(), 8)
	must(t, err)
	defer whole.Close()
	view := func(i int) *cuda.Slice[float32] {
		v, err := whole.Sub(i, i)
		must(t, err)
		t.Cleanup(func() { v.Close() })
		return v
	}
	e1, e2 := view(3), view(8)
	for name, err := range map[string]error{
		"AllReduce":           AllReduce(c, e1, e2, Sum),
		"AllReduce in place":  AllReduce(c, e1, e1, Max),
		"AllGather":           AllGather(c, e1, e2),
		"ReduceScatter":       ReduceScatter(c, e1, e2, Sum),
		"Broadcast, root":     Broadcast(c, e1, e2, 1),
		"Broadcast, not root": Broadcast(c, nil, e2, 0),
		"Reduce, root":        Reduce(c, e1, e2, Sum, 1),
		"Reduce, not root":    Reduce(c, e1, nil, Sum, 2),
		"Send":                Send(c, e1, 0),
		"Recv":                Recv(c, e2, 3),
	} {
		if err != nil {
			t.Errorf("%s of 0 elements = %v, want nil", name, err)
		}
	}
	// A Group calls NCCL itself (ncclGroupStart, ncclGroupEnd): only
	// where there is one, real or fake.
	if _, err := Version(); err == nil {
		if err := Group(func() error { return AllReduce(c, e1, e2, Sum) }); err != nil {
			t.Errorf("a Group of an AllReduce of 0 elements = %v, want nil", err)
		}
	}
	wantInvalid(t, "AllReduce of 0 into 8", AllReduce(c, e1, whole, Sum))
	wantInvalid(t, "AllReduce of 0 with an unknown op", AllReduce(c, e1, e2, Op(9)))
	wantInvalid(t, "Send of 0 to peer 4", Send(c, e1, 4))
	closed := view(0)
	must(t, closed.Close())
	wantClosed(t, "AllReduce of a closed empty view", AllReduce(c, closed, e2, Sum))
	must(t, c.Close())
	wantClosed(t, "AllReduce of 0 on a closed communicator", AllReduce(c, e1, e2, Sum))
}
