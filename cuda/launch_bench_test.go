package cuda

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// BenchmarkLaunch compares, for empty kernels of 1 and 16 arguments, the
// raw cu.LaunchKernel with a prepared C argument array against this
// package's prepared launch (Kernel.LaunchArgs) and its one-shot Launch.
// The raw/cuda difference is the layer's cost (target: at most 15 ns and no
// allocation); launch shows what the convenience form costs.
func BenchmarkLaunch(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	mod, err := LoadModule(ctx, []byte(testkernels.Empty))
	must(b, skipIfMissing(b, err))
	b.Cleanup(func() { mod.Close() })
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}

	for _, c := range []struct {
		name  string
		nargs int
	}{{testkernels.EmptyName1, 1}, {testkernels.EmptyName16, 16}} {
		k, err := mod.Function(c.name)
		must(b, err)
		vals := make([]any, c.nargs)
		for i := range vals {
			vals[i] = uint64(i)
		}
		args, err := k.NewArgs(vals...)
		must(b, err)
		b.Cleanup(func() { args.Close() })
		// The raw column uses the same C argument block, so both columns
		// hand the driver the same memory.
		params := (*unsafe.Pointer)(args.mem)

		b.Run(fmt.Sprintf("raw/%dargs", c.nargs), func(b *testing.B) {
			rs, rk := s.Raw(), k.Raw()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := cu.LaunchKernel(rk, 1, 1, 1, 1, 1, 1, 0, rs, params, nil); err != nil {
					b.Fatal(err)
				}
				if i%drainEvery == drainEvery-1 {
					_ = cu.StreamSynchronize(rs)
				}
			}
			_ = cu.StreamSynchronize(rs)
		})
		b.Run(fmt.Sprintf("cuda/%dargs", c.nargs), func(b *testing.B) {
			rs := s.Raw()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := k.LaunchArgs(s, cfg, args); err != nil {
					b.Fatal(err)
				}
				if i%drainEvery == drainEvery-1 {
					_ = cu.StreamSynchronize(rs)
				}
			}
			_ = cu.StreamSynchronize(rs)
		})
		b.Run(fmt.Sprintf("cuda-setarg/%dargs", c.nargs), func(b *testing.B) {
			rs := s.Raw()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := SetArg(args, 0, uint64(i)); err != nil {
					b.Fatal(err)
				}
				if err := k.LaunchArgs(s, cfg, args); err != nil {
					b.Fatal(err)
				}
				if i%drainEvery == drainEvery-1 {
					_ = cu.StreamSynchronize(rs)
				}
			}
			_ = cu.StreamSynchronize(rs)
		})
		b.Run(fmt.Sprintf("launch/%dargs", c.nargs), func(b *testing.B) {
			rs := s.Raw()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := k.Launch(s, cfg, vals...); err != nil {
					b.Fatal(err)
				}
				if i%drainEvery == drainEvery-1 {
					_ = cu.StreamSynchronize(rs)
				}
			}
			_ = cu.StreamSynchronize(rs)
		})
	}
}

// BenchmarkLaunchGoSide measures what this package adds to a launch, on
// any driver (the fake one included): cuLaunchKernel's entry point is
// replaced by a C function that returns at once, so raw is one cgo call
// with a prepared kernelParams array, and args (LaunchArgs), launch1 and
// launch16 (Launch with 1 and 16 uint64 values) are raw plus this
// package's work. The four run interleaved, in chunks of 64 calls, and
// report ns per call each, and the differences from raw.
//
//	GOCUDA_TEST_DRIVER=fake go test -run '^$' -bench LaunchGoSide ./cuda
func BenchmarkLaunchGoSide(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	saved := launchProc
	nop := launchNop()
	launchProc = func() (uintptr, error) { return nop, nil }
	b.Cleanup(func() { launchProc = saved })

	var live atomic.Int64
	mod := newModuleHandle(nopCore(&live, func(st *moduleState) { st.raw = 0x1 }))
	b.Cleanup(func() { mod.Close() })
	k1 := &Kernel{mod: mod, raw: 0x2, name: "empty1", params: []uint32{8}, paramsKnown: true}
	k16 := &Kernel{mod: mod, raw: 0x3, name: "empty16", params: make([]uint32, 16), paramsKnown: true}
	for i := range k16.params {
		k16.params[i] = 8
	}
	args, err := k1.NewArgs(uint64(0))
	must(b, err)
	b.Cleanup(func() { args.Close() })
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}
	rs, rk := s.Raw(), k1.Raw()
	var z uint64

	const chunk = 64
	calls := []struct {
		name string
		f    func() error
	}{
		{"raw", func() error {
			if r := launchRaw(nop, rk, cfg, rs, args.mem); r != 0 {
				return r
			}
			return nil
		}},
		{"args", func() error { return k1.LaunchArgs(s, cfg, args) }},
		{"launch1", func() error { return k1.Launch(s, cfg, z) }},
		{"launch16", func() error {
			return k16.Launch(s, cfg, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
		}},
	}
	total := make([]time.Duration, len(calls))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for j, c := range calls {
			t0 := time.Now()
			for range chunk {
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
			total[j] += time.Since(t0)
		}
		n += chunk
	}
	per := func(j int) float64 { return float64(total[j].Nanoseconds()) / float64(n) }
	for j, c := range calls {
		b.ReportMetric(per(j), c.name+"-ns")
		if j > 0 {
			b.ReportMetric(per(j)-per(0), c.name+"-raw-ns")
		}
	}
	b.ReportMetric(0, "ns/op")
}
