//go:build linux && (amd64 || arm64)

package blas_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestLtTuneSearch tunes a decode shape with the algorithm search: the plan
// must compute the same product, and, re-timed against the heuristic's
// first choice in a run of its own, be no slower than TuneMargin allows.
func TestLtTuneSearch(t *testing.T) {
	ctx, _, lt := needLt(t)
	const m = 4
	k, n := decodeShape()
	fill := func(elems int, bits uint16) *cuda.DeviceMemory {
		mem := libtest.Alloc(t, ctx, elems*2)
		if err := mem.MemsetD16(bits); err != nil {
			t.Fatal(err)
		}
		return mem
	}
	// bfloat16 1 times 2⁻⁷, summed over K: K/128 exactly, however split
	// (32 for 4096).
	mm := blas.Matmul{
		A:     blas.Matrix{Mem: fill(m*k, 0x3f80), Rows: m, Cols: k},
		B:     blas.Matrix{Mem: fill(n*k, 0x3c00), Rows: n, Cols: k}.T(),
		C:     blas.Matrix{Mem: fill(m*n, 0), Rows: m, Cols: n},
		AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16,
	}
	opt := blas.TuneOptions{Runs: 20, Batch: 20, Search: 96}
	plan, err := lt.Tune(mm, 1, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Searched < 1 || plan.Candidates <= plan.Searched || plan.Median <= 0 || plan.Median > plan.Default {
		t.Fatalf("plan %+v", plan)
	}
	if err := mm.C.Mem.(*cuda.DeviceMemory).MemsetD16(0); err != nil {
		t.Fatal(err)
	}
	if err := lt.Run(mm, 1, 0, &plan.Algo); err != nil {
		t.Fatal(err)
	}
	got := make([]uint16, m*n)
	if err := cuda.CopyFromDevice(got, mm.C.Mem.(*cuda.DeviceMemory)); err != nil {
		t.Fatal(err)
	}
	want := uint16(math.Float32bits(float32(k)/128) >> 16) // a power of 2: exact in bfloat16
	for i, v := range got {
		if v != want {
			t.Fatalf("C[%d] = %#04x, want %#04x (%d)", i, v, want, k/128)
		}
	}
	def, err := lt.Algorithms(mm, 1)
	if err != nil {
		t.Fatal(err)
	}
	same := def[0].Data == plan.Algo.Data
	t.Logf("%d candidates (%d searched); tuned %v, default %v; same algorithm %v", plan.Candidates, plan.Searched, plan.Median, plan.Default, same)
	if same {
		return
	}
	opt.Runs = 40
	med, err := lt.Time(mm, 1, 0, []blas.Algo{def[0], plan.Algo}, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("re-timed: tuned %v, default %v", med[1], med[0])
	if fakecublas.Active() {
		return // every algorithm of the fake runs the same code: the times differ by noise only
	}
	if float64(med[1]) > (1+blas.TuneMargin)*float64(med[0]) {
		t.Errorf("re-timed, the tuned algorithm (%v) is slower than the default (%v) by more than TuneMargin", med[1], med[0])
	}
}
