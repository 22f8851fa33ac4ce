package ptx

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// hostMem is device memory for tests: allocations outside the Go heap.
type hostMem struct{ allocs [][]byte }

func (h *hostMem) alloc(n int) []byte {
	b := offHeap(n)
	h.allocs = append(h.allocs, b)
	return b
}

func (h *hostMem) Find(addr, n uint64) (uint64, uint64, bool) {
	for _, b := range h.allocs {
		base := addrOf(b)
		if addr >= base && addr+n <= base+uint64(len(b)) {
			return base, uint64(len(b)), true
		}
	}
	return 0, 0, false
}

func (h *hostMem) free() {
	for _, b := range h.allocs {
		freeOffHeap(b)
	}
}

func mustKernel(t testing.TB, text, name string) *Kernel {
	t.Helper()
	m, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func readPTX(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type params []byte

func (p *params) u64(v uint64) *params {
	*p = append(*p, make([]byte, (8-len(*p)%8)%8)...)
	*p = binary.LittleEndian.AppendUint64(*p, v)
	return p
}

func (p *params) u32(v uint32) *params {
	*p = append(*p, make([]byte, (4-len(*p)%4)%4)...)
	*p = binary.LittleEndian.AppendUint32(*p, v)
	return p
}

func f32s(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }

func TestSaxpyFromNVRTC(t *testing.T) {
	k := mustKernel(t, readPTX(t, "saxpy.ptx"), "saxpy")
	var mem hostMem
	defer mem.free()
	n := 1000
	xb, yb := mem.alloc(4*n), mem.alloc(4*n)
	x, y := f32s(xb), f32s(yb)
	for i := range n {
		x[i], y[i] = float32(i), 1
	}
	var p params
	p.u32(math.Float32bits(2)).u64(addrOf(xb)).u64(addrOf(yb)).u32(uint32(n))
	if err := k.Run(&Launch{Grid: [3]uint32{4, 1, 1}, Block: [3]uint32{256, 1, 1}, Params: p, Memory: &mem}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if y[i] != 2*float32(i)+1 {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], 2*float32(i)+1)
		}
	}
}

func TestOutOfBoundsFaults(t *testing.T) {
	k := mustKernel(t, readPTX(t, "saxpy.ptx"), "saxpy")
	var mem hostMem
	defer mem.free()
	n := 100
	xb, yb := mem.alloc(4*n), mem.alloc(4*(n-1))
	var p params
	p.u32(math.Float32bits(2)).u64(addrOf(xb)).u64(addrOf(yb)).u32(uint32(n))
	err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{128, 1, 1}, Params: p, Memory: &mem})
	var f *Fault
	if !errors.As(err, &f) || f.Result != ResultIllegalAddress {
		t.Fatalf("err = %v, want an illegal address fault", err)
	}
	if f.Thread[0] != 99 || f.Line == 0 || !strings.Contains(f.Inst, "ld.global.f32") {
		t.Errorf("fault %+v: want thread 99 and the load of y", f)
	}
}
