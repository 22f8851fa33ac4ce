package cuda

import (
	"fmt"
	"testing"
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
