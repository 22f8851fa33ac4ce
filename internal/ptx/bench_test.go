package ptx

import (
	"math"
	"testing"
)

// benchLaunch runs k over n elements of x into y, and reports the
// thread-instructions per second.
func benchLaunch(b *testing.B, k *Kernel, workers int, p params, n int, mem *hostMem) {
	b.Helper()
	var total uint64
	b.ResetTimer()
	for range b.N {
		l := &Launch{Grid: [3]uint32{uint32((n + 255) / 256), 1, 1}, Block: [3]uint32{256, 1, 1}, Params: p, Memory: mem, Workers: workers}
		if err := k.Run(l); err != nil {
			b.Fatal(err)
		}
		total += l.ThreadInstructions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds()/1e6, "Minstr/s")
}

func benchSetup(b *testing.B, file, name string, n int) (*Kernel, *hostMem, []byte, []byte) {
	k := mustKernel(b, readPTX(b, file), name)
	mem := &hostMem{}
	b.Cleanup(mem.free)
	xb, yb := mem.alloc(4*n), mem.alloc(4*n)
	x := f32s(xb)
	for i := range x {
		x[i] = float32(i%100) / 100
	}
	return k, mem, xb, yb
}

// BenchmarkSaxpy1Mi is a 1 Mi-element saxpy: one launch, on one core
// and on all.
func BenchmarkSaxpy1Mi(b *testing.B) {
	n := 1 << 20
	k, mem, xb, yb := benchSetup(b, "saxpy.ptx", "saxpy", n)
	var p params
	p.u32(math.Float32bits(2)).u64(addrOf(xb)).u64(addrOf(yb)).u32(uint32(n))
	b.Run("1core", func(b *testing.B) { benchLaunch(b, k, 1, p, n, mem) })
	b.Run("allcores", func(b *testing.B) { benchLaunch(b, k, 0, p, n, mem) })
}

// BenchmarkPolyLoop is arithmetic in a loop: the interpreter's dispatch
// with little memory traffic.
func BenchmarkPolyLoop(b *testing.B) {
	n := 1 << 16
	k, mem, xb, yb := benchSetup(b, "loop.ptx", "poly", n)
	var p params
	p.u64(addrOf(xb)).u64(addrOf(yb)).u32(uint32(n)).u32(64)
	b.Run("1core", func(b *testing.B) { benchLaunch(b, k, 1, p, n, mem) })
}

// BenchmarkBlockSum is a shared-memory reduction with a barrier per step:
// warps on goroutines.
func BenchmarkBlockSum(b *testing.B) {
	n := 1 << 18
	k, mem, xb, yb := benchSetup(b, "loop.ptx", "blocksum", n)
	var p params
	p.u64(addrOf(xb)).u64(addrOf(yb)).u32(uint32(n))
	b.Run("1core", func(b *testing.B) { benchLaunch(b, k, 1, p, n, mem) })
}
