//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
)

// TestRaceDetectorSeesTheProducts: a GEMM writes C on one stream and a
// copy on another reads it with nothing between them, a race the
// detector reports naming the fake's host function; with an event
// between them, none.
func TestRaceDetectorSeesTheProducts(t *testing.T) {
	e := setup(t)
	s2 := newStream(t)
	const n = 8
	a, b := upload(t, make([]float32, n*n)), upload(t, make([]float32, n*n))
	c, dst := upload(t, make([]float32, n*n)), upload(t, make([]float32, n*n))
	one, zero := float32(1), float32(0)
	gemm := func() {
		if err := cublas.Sgemm(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, n, n, &one, dev[float32](a), n, dev[float32](b), n, &zero, dev[float32](c), n); err != nil {
			t.Fatal(err)
		}
	}
	sync := func() {
		if err := cu.StreamSynchronize(e.s); err != nil {
			t.Fatal(err)
		}
		if err := cu.StreamSynchronize(s2); err != nil {
			t.Fatal(err)
		}
	}
	if r := cudatest.TakeRaces(); len(r) != 0 {
		t.Fatalf("races before the test: %v", r)
	}
	gemm()
	if err := cu.MemcpyDtoDAsync(dst, c, n*n*4, s2); err != nil {
		t.Fatal(err)
	}
	sync()
	races := cudatest.TakeRaces()
	found := false
	for _, r := range races {
		ops := map[string]bool{r.Access.Op: true, r.Previous.Op: true}
		if ops["host function"] && ops["copy"] && uint64(r.Access.Addr) >= uint64(c) && uint64(r.Access.Addr) < uint64(c)+n*n*4 {
			found = true
		}
	}
	if !found {
		t.Fatalf("races %v: none between the GEMM's host function and the copy of C", races)
	}

	var ev cu.CUevent
	if err := cu.EventCreate(&ev, 2); err != nil { // CU_EVENT_DISABLE_TIMING
		t.Fatal(err)
	}
	defer cu.EventDestroy(ev)
	gemm()
	if err := cu.EventRecord(ev, e.s); err != nil {
		t.Fatal(err)
	}
	if err := cu.StreamWaitEvent(s2, ev, 0); err != nil {
		t.Fatal(err)
	}
	if err := cu.MemcpyDtoDAsync(dst, c, n*n*4, s2); err != nil {
		t.Fatal(err)
	}
	sync()
	if r := cudatest.TakeRaces(); len(r) != 0 {
		t.Fatalf("ordered by an event, races %v", r)
	}
}
