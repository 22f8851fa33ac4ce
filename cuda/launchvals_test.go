package cuda

import (
	"github.com/gocuda/gocuda/internal/standin"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// TestLaunchValuesNoAlloc: Launch and LaunchEx with 1 and 16 Go values
// allocate nothing, with values that change between calls (which the
// compiler cannot box statically: boxed on the heap, they would allocate
// past 255), and hand the driver each value's bits. The driver's entry
// points are replaced by C functions that record the arguments, so this
// runs on any driver.
func TestLaunchValuesNoAlloc(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	mem, err := Alloc(ctx, 256)
	must(t, err)
	defer mem.Close()
	sl, err := SliceOf[float32](mem)
	must(t, err)
	defer sl.Close()
	sub, err := sl.Sub(3, 10)
	must(t, err)
	defer sub.Close()

	rec, recEx := standin.LaunchRecorders(16)
	useEntries(t, func(e *entries) { e.launch, e.launchEx = rec, recEx })

	k1, _ := fakeKernel(t, false)
	k1.setParams(naturalLayout([]uint32{8}))
	k16, _ := fakeKernel(t, false)
	k16.setParams(naturalLayout([]uint32{8, 8, 8, 8, 4, 4, 4, 2, 2, 1, 1, 8, 8, 2, 4, 8}))
	cfg := LaunchConfig{Grid: Dim3{X: 4}, Block: Dim3{X: 32}}
	cluster := LaunchAttributes{Cluster: Dim3{X: 2}}

	x := uint64(1000)
	f := float32(1.5)
	n := int32(-70000)
	launch16 := func(ex bool) error {
		args := []any{mem, sub, x, float64(f), f, n, uint32(x), int16(n), uint16(x), n < 0, int8(n),
			cu.CUdeviceptr(x), int64(n), Float16FromBits(uint16(x)), -f, uintptr(x)}
		// The argument list is written out at each call, as a caller
		// would, so that boxing is what the compiler does there.
		if ex {
			return k16.LaunchEx(s, cfg, cluster, mem, sub, x, float64(f), f, n, uint32(x), int16(n), uint16(x), n < 0, int8(n),
				cu.CUdeviceptr(x), int64(n), Float16FromBits(uint16(x)), -f, uintptr(x))
		}
		err := k16.Launch(s, cfg, mem, sub, x, float64(f), f, n, uint32(x), int16(n), uint16(x), n < 0, int8(n),
			cu.CUdeviceptr(x), int64(n), Float16FromBits(uint16(x)), -f, uintptr(x))
		for i, v := range args {
			want, size, _ := encodeArg(v)
			got := standin.Recorded(i)
			if size < 8 {
				got &= 1<<(8*size) - 1
			}
			if got != want {
				t.Errorf("argument %d (%T %v) reached the driver as %#x, want %#x", i, v, v, got, want)
			}
		}
		return err
	}
	must(t, launch16(false))
	must(t, launch16(true))

	for _, c := range []struct {
		name  string
		nargs int
		f     func() error
	}{
		{"Launch, 1 value", 1, func() error { return k1.Launch(s, cfg, x) }},
		{"Launch, 16 values", 16, func() error {
			return k16.Launch(s, cfg, mem, sub, x, float64(f), f, n, uint32(x), int16(n), uint16(x), n < 0, int8(n),
				cu.CUdeviceptr(x), int64(n), Float16FromBits(uint16(x)), -f, uintptr(x))
		}},
		{"LaunchEx, 1 value", 1, func() error { return k1.LaunchEx(s, cfg, LaunchAttributes{}, x) }},
		{"LaunchEx, cluster, 16 values", 16, func() error {
			return k16.LaunchEx(s, cfg, cluster, mem, sub, x, float64(f), f, n, uint32(x), int16(n), uint16(x), n < 0, int8(n),
				cu.CUdeviceptr(x), int64(n), Float16FromBits(uint16(x)), -f, uintptr(x))
		}},
	} {
		standin.LaunchRecorders(c.nargs)
		allocs := testing.AllocsPerRun(1000, func() {
			if err := c.f(); err != nil {
				t.Fatal(err)
			}
			x += 1 << 20
			f *= 1.25
			n -= 1 << 12
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per launch, want 0", c.name, allocs)
		}
	}
	if got, want := standin.Recorded(2), x-1<<20; got != want {
		t.Errorf("the last 16-value launch passed %#x as argument 2, want %#x", got, want)
	}
}
