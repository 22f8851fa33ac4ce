package cuda

import (
	"fmt"
	"github.com/gocuda/gocuda/internal/standin"
	"slices"
	"sync/atomic"
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

// BenchmarkLaunchGoSide measures what this package adds to a launch, on
// any driver (the fake one included): the entry points of cuLaunchKernel
// and cuLaunchKernelEx are replaced by C functions that return at once, so
// raw is one cgo call with a prepared kernelParams array (exraw the same
// for cuLaunchKernelEx, with one cluster attribute), and the others are
// raw plus this package's work: args (LaunchArgs), launch1 and launch16
// (Launch with 1 and 16 uint64 values), launch16mix (16 values of the
// fast path's types and others: *DeviceMemory, *Slice, bool, int16),
// ex0 and excluster (LaunchEx with 1 value and no attribute or one
// cluster), ex16 (LaunchEx with 16 values and one cluster). The values are
// variables that change between calls, so that the compiler can box none
// of them statically.
//
// The calls run interleaved, in rounds of one chunk of 64 calls each; each
// reports the median over the rounds of its ns per call, and of its
// difference from its raw call in the same round (-raw-ns), which a busy
// machine disturbs less than a mean.
//
//	GOCUDA_TEST_DRIVER=fake go test -run '^$' -bench LaunchGoSide ./cuda
func BenchmarkLaunchGoSide(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	nop, exNop := standin.LaunchNop(), standin.LaunchExNop()
	useEntries(b, func(e *entries) { e.launch, e.launchEx = nop, exNop })

	var live atomic.Int64
	mod := newModuleHandle(nopCore(&live, func(st *moduleState) { st.raw = 0x1 }))
	b.Cleanup(func() { mod.Close() })
	k1 := &Kernel{mod: mod, raw: 0x2, name: "empty1"}
	k1.setParams(naturalLayout([]uint32{8}))
	k16 := &Kernel{mod: mod, raw: 0x3, name: "empty16"}
	k16.setParams(naturalLayout(slices.Repeat([]uint32{8}, 16)))
	mem, err := Alloc(ctx, 256)
	must(b, err)
	b.Cleanup(func() { mem.Close() })
	sl, err := SliceOf[float32](mem)
	must(b, err)
	b.Cleanup(func() { sl.Close() })
	kmix := &Kernel{mod: mod, raw: 0x4, name: "mix16"}
	kmix.setParams(naturalLayout([]uint32{8, 8, 8, 4, 4, 4, 4, 8, 8, 4, 4, 1, 2, 8, 4, 4}))
	args, err := k1.NewArgs(uint64(0))
	must(b, err)
	b.Cleanup(func() { args.Close() })
	cfg := LaunchConfig{Grid: Dim3{X: 2}, Block: Dim3{X: 1}}
	cluster := LaunchAttributes{Cluster: Dim3{X: 2}}
	la := launchAttrs{a: make([]cu.CUlaunchAttribute, fewLaunchAttrs)}
	must(b, la.encode("bench", &cluster, &cfg))
	rs, rk := s.Raw(), k1.Raw()
	g, bl := cfg.Grid.norm(), cfg.Block.norm()
	dims := standin.Dims{GX: g.X, GY: g.Y, GZ: g.Z, BX: bl.X, BY: bl.Y, BZ: bl.Z, Shmem: cfg.SharedMemBytes}
	var z uint64
	var f float32
	var n int32

	// exraw (index 5) is the baseline of the LaunchEx calls, raw of the
	// others.
	const raw, exraw = 0, 5
	runChunks(b, []chunkCall{
		{"raw", raw, func() error {
			if r := standin.RawLaunch(nop, uintptr(rk), dims, uintptr(rs), args.mem); r != 0 {
				return cu.CUresult(r)
			}
			return nil
		}},
		{"args", raw, func() error { return k1.LaunchArgs(s, cfg, args) }},
		{"launch1", raw, func() error { return k1.Launch(s, cfg, z) }},
		{"launch16", raw, func() error {
			return k16.Launch(s, cfg, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
		}},
		{"launch16mix", raw, func() error {
			return kmix.Launch(s, cfg, mem, sl, z, f, n, f, n, z, z, f, n, n > 0, int16(n), z, f, uint32(n))
		}},
		{"exraw", exraw, func() error {
			if r := standin.RawLaunchEx(exNop, uintptr(rk), dims, uintptr(rs), unsafe.Pointer(&la.a[0]), la.n, args.mem); r != 0 {
				return cu.CUresult(r)
			}
			return nil
		}},
		{"ex0", exraw, func() error { return k1.LaunchEx(s, cfg, LaunchAttributes{}, z) }},
		{"excluster", exraw, func() error { return k1.LaunchEx(s, cfg, cluster, z) }},
		{"ex16", exraw, func() error {
			return k16.LaunchEx(s, cfg, cluster, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
		}},
	}, func() {
		// The values change between chunks, as a program's would.
		z++
		f += 0.5
		n += 300
	})
}
