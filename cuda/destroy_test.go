package cuda

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// Events and streams are destroyed without their context bound; a driver
// that refuses that for want of a current context gets the bound form.
func TestDestroyUnboundFallsBackToBound(t *testing.T) {
	_, ctx := needGPU(t)
	if !cudatest.Active() {
		t.Skip("injects a fault into the fake driver")
	}
	kinds := []struct {
		fn   string
		make func() (interface{ Close() error }, error)
	}{
		{"cuEventDestroy", func() (interface{ Close() error }, error) { return NewEvent(ctx) }},
		{"cuStreamDestroy", func() (interface{ Close() error }, error) { return NewStream(ctx) }},
	}
	for _, k := range kinds {
		for _, refuse := range []bool{false, true} {
			obj, err := k.make()
			must(t, err)
			_, s0, e0 := LiveHandles()
			if refuse {
				cudatest.FailCall(k.fn, 1, cu.CUDA_ERROR_INVALID_CONTEXT)
			}
			calls := cudatest.Calls(k.fn)
			if err := obj.Close(); err != nil {
				t.Fatalf("%s refused with INVALID_CONTEXT: %t: Close = %v", k.fn, refuse, err)
			}
			// At least: a dropped handle's cleanup may destroy another
			// object meanwhile.
			want := 1
			if refuse {
				want = 2 // the refused call, then the bound one
			}
			if n := cudatest.Calls(k.fn) - calls; n < want {
				t.Errorf("%s refused: %t: %d calls of it, want %d", k.fn, refuse, n, want)
			}
			if _, s1, e1 := LiveHandles(); s0+e0-(s1+e1) != 1 {
				t.Errorf("%s refused: %t: live streams and events %d, %d before Close, %d, %d after", k.fn, refuse, s0, e0, s1, e1)
			}
		}
	}
}
