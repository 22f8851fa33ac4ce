package fakecuda_test

import (
	"encoding/binary"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

const benchPTX = `.version 8.0
.target sm_90
.address_size 64
.visible .entry bench_add(.param .u64 .ptr .global .align 4 out, .param .u64 .ptr .global .align 4 in, .param .u32 v)
{
	ret;
}
`

// cAllocs returns a reader of the process's count of C allocator calls
// where testdata/malloccount.c is preloaded (it says how), else nil.
func cAllocs(tb testing.TB) func() uint64 {
	path := os.Getenv("FAKECUDA_MALLOC_COUNT")
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	must(tb, err)
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	must(tb, err)
	tb.Cleanup(func() { syscall.Munmap(mem) })
	n := (*uint64)(unsafe.Pointer(&mem[0]))
	return func() uint64 { return atomic.LoadUint64(n) }
}

// BenchmarkKernelLaunch launches a small Go kernel, out[0] = in[0] + v,
// which pins its pointers and notes its load and store as cudatest's
// accessors do, and waits for it, once an iteration. b.ReportAllocs
// counts Go's heap only; the fake allocates with malloc, which
// C-allocs/op counts where testdata/malloccount.c is preloaded. The race
// detector is on unless FAKECUDA_RACE=0 (TestMain).
func BenchmarkKernelLaunch(b *testing.B) {
	primary(b)
	must(b, installRunner())
	must(b, lib.RegisterKernel("bench_add", nil))
	defer lib.UnregisterKernel("bench_add")
	s := stream(b, 1)
	m := loadPTX(b, benchPTX)
	defer func() { must(b, cu.ModuleUnload(m)) }()
	f, err := function(m, "bench_add")
	must(b, err)
	out, in := alloc(b, 64), alloc(b, 64)
	must(b, cu.MemsetD32(in, 5, 16))

	var runs, bad atomic.Int64
	kernels.setQuiet(func(k *fakecuda.KernelCall) int {
		runs.Add(1)
		out, in := binary.LittleEndian.Uint64(k.Params), binary.LittleEndian.Uint64(k.Params[8:])
		for _, p := range [2]uint64{out, in} {
			if _, _, ok := lib.Pin(k.Op, p, 4); !ok {
				bad.Add(1)
				return int(cu.CUDA_ERROR_ILLEGAL_ADDRESS)
			}
		}
		lib.NoteAccess(k.Op, in, 4, false)
		lib.NoteAccess(k.Op, out, 4, true)
		x := *(*uint32)(*(*unsafe.Pointer)(unsafe.Pointer(&in)))
		*(*uint32)(*(*unsafe.Pointer)(unsafe.Pointer(&out))) = x + binary.LittleEndian.Uint32(k.Params[16:])
		return 0
	})
	defer kernels.set(nil)

	// Everything the launches pass is made once, outside the loops: the
	// loops measure the launch, not the caller.
	po, pi, v := uint64(out), uint64(in), uint32(7)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&po)
	pin.Pin(&pi)
	pin.Pin(&v)
	params := []unsafe.Pointer{unsafe.Pointer(&po), unsafe.Pointer(&pi), unsafe.Pointer(&v)}
	cfg := &cu.CUlaunchConfig{GridDimX: 1, GridDimY: 1, GridDimZ: 1, BlockDimX: 32, BlockDimY: 1, BlockDimZ: 1, HStream: s}

	for _, c := range []struct {
		name   string
		launch func() error
	}{
		{"LaunchKernel", func() error { return cu.LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, &params[0], nil) }},
		{"LaunchKernelEx", func() error { return cu.LaunchKernelEx(cfg, f, &params[0], nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			runs.Store(0)
			b.ReportAllocs()
			count := cAllocs(b)
			var before uint64
			if count != nil {
				before = count()
			}
			for b.Loop() {
				if err := c.launch(); err != nil {
					b.Fatal(err)
				}
				if err := cu.StreamSynchronize(s); err != nil {
					b.Fatal(err)
				}
			}
			if count != nil {
				b.ReportMetric(float64(count()-before)/float64(b.N), "C-allocs/op")
			}
			if n := runs.Load(); n == 0 || bad.Load() != 0 {
				b.Fatalf("%d runs, %d of them failed", n, bad.Load())
			}
		})
	}
	if w := words(b, out, 1); w[0] != 12 {
		b.Errorf("the kernel's store reads back as %#x", w[0])
	}
}
