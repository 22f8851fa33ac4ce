package fakecuda_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// modulePTX has entries with every kind of parameter declaration, and
// entries in comments that do not count.
const modulePTX = `//
// .visible .entry commented(.param .u32 x)
.version 8.0
.target sm_90
.address_size 64
/* .visible .entry blocked()
*/
.visible .entry k1(
	.param .u8 k1_a,
	.param .u64 .ptr .global .align 16 k1_b,
	.param .align 8 .b8 k1_c[12],
	.param .f32 k1_d
)
{
	ret;
}
.entry k2()
{
	ret;
}
.weak .entry k3 ( .param .u16 x ) { ret; }
`

// runner records the Go kernel runs of the fake and does what the test
// sets.
type runner struct {
	mu    sync.Mutex
	calls []fakecuda.KernelCall
	do    func(*fakecuda.KernelCall) int
	// quiet runs are not recorded: recording copies, and a benchmark
	// counts the allocations of the whole process.
	quiet bool
}

var kernels = &runner{}

var installRunner = sync.OnceValue(func() error {
	return lib.SetKernelRunner(func(c *fakecuda.KernelCall) int {
		kernels.mu.Lock()
		defer kernels.mu.Unlock()
		if kernels.quiet {
			return kernels.do(c)
		}
		cp := *c
		// The slices are C memory valid during the call only.
		cp.Name = strings.Clone(c.Name)
		cp.Sizes, cp.Offsets, cp.Params = slices.Clone(c.Sizes), slices.Clone(c.Offsets), slices.Clone(c.Params)
		kernels.calls = append(kernels.calls, cp)
		if kernels.do != nil {
			return kernels.do(c)
		}
		return 0
	})
})

func (r *runner) set(do func(*fakecuda.KernelCall) int) {
	r.mu.Lock()
	r.calls, r.do, r.quiet = nil, do, false
	r.mu.Unlock()
}

// setQuiet makes do run each launch without recording it; do must not be nil.
func (r *runner) setQuiet(do func(*fakecuda.KernelCall) int) {
	r.mu.Lock()
	r.calls, r.do, r.quiet = nil, do, true
	r.mu.Unlock()
}

func (r *runner) take() []fakecuda.KernelCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func cstr(s string) *byte { return &append([]byte(s), 0)[0] }

func loadPTX(t testing.TB, text string) cu.CUmodule {
	t.Helper()
	var m cu.CUmodule
	must(t, cu.ModuleLoadData(&m, unsafe.Pointer(cstr(text))))
	return m
}

func function(m cu.CUmodule, name string) (cu.CUfunction, error) {
	var f cu.CUfunction
	err := cu.ModuleGetFunction(&f, m, cstr(name))
	return f, err
}

func TestModuleEntriesAndLaunch(t *testing.T) {
	primary(t)
	must(t, installRunner())
	s := stream(t, 1)
	modules := lib.Live("modules")
	m := loadPTX(t, modulePTX)
	if n := lib.Live("modules"); n != modules+1 {
		t.Errorf("live modules %d after a load, want %d", n, modules+1)
	}
	// an entry with no kernel registered resolves: its PTX is what runs
	unregistered, err := function(m, "k1")
	must(t, err)
	for _, name := range []string{"k1", "k2", "k3", "commented", "blocked"} {
		must(t, lib.RegisterKernel(name, nil))
		defer lib.UnregisterKernel(name)
	}
	for _, name := range []string{"commented", "blocked", "k4"} {
		_, err := function(m, name)
		is(t, "function "+name+", no entry of the module", err, cu.CUDA_ERROR_NOT_FOUND)
	}
	k1, err := function(m, "k1")
	must(t, err)
	again, err := function(m, "k1")
	must(t, err)
	if again != k1 || unregistered != k1 {
		t.Errorf("k1 resolved twice: %#x and %#x", k1, again)
	}
	k2, err := function(m, "k2")
	must(t, err)
	_, err = function(m, "k3")
	must(t, err)

	// k1's parameters at their alignment: u8 at 0, a pointer at 8, 12
	// bytes aligned to 8 at 16, a float at 28.
	out := alloc(t, 64)
	a := uint8(7)
	b := uint64(out)
	c := [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	d := float32(2.5)
	params := []unsafe.Pointer{unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&c), unsafe.Pointer(&d)}
	// The kernel writes through the pointer it got: a store the test then
	// reads back in stream order.
	kernels.set(func(k *fakecuda.KernelCall) int {
		if k.Name != "k1" || k.Params[0] != 7 {
			return 0
		}
		p := binary.LittleEndian.Uint64(k.Params[8:])
		base, size, ok := lib.Pin(k.Op, p+4, 8)
		if !ok || base != p || size != 64 {
			return 1
		}
		if _, _, ok := lib.Pin(k.Op, p+60, 8); ok {
			return 2
		}
		lib.NoteAccess(k.Op, p, 4, true)
		mem := unsafe.Slice((*uint32)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), 16)
		mem[0] = 0xfeedface
		return 0
	})
	must(t, cu.MemsetD32Async(out, 0, 16, s))
	must(t, cu.LaunchKernel(k1, 2, 3, 1, 32, 2, 1, 128, s, &params[0], nil))
	must(t, cu.StreamSynchronize(s))
	calls := kernels.take()
	if len(calls) != 1 {
		t.Fatalf("%d kernel runs, want 1", len(calls))
	}
	got := calls[0]
	if got.Name != "k1" || got.Grid != [3]uint32{2, 3, 1} || got.Block != [3]uint32{32, 2, 1} || got.SharedMemBytes != 128 ||
		got.Stream != uint64(s) || !got.ParamsKnown {
		t.Errorf("run %+v", got)
	}
	if !slices.Equal(got.Sizes, []uint32{1, 8, 12, 4}) || !slices.Equal(got.Offsets, []uint32{0, 8, 16, 28}) || len(got.Params) != 32 {
		t.Fatalf("layout: sizes %v offsets %v, %d bytes; want [1 8 12 4], [0 8 16 28], 32", got.Sizes, got.Offsets, len(got.Params))
	}
	if got.Params[0] != 7 || binary.LittleEndian.Uint64(got.Params[8:]) != b || got.Params[16] != 1 || got.Params[27] != 12 ||
		math.Float32frombits(binary.LittleEndian.Uint32(got.Params[28:])) != 2.5 {
		t.Errorf("parameter buffer %v", got.Params)
	}
	if w := words(t, out, 2); w[0] != 0xfeedface || w[1] != 0 {
		t.Errorf("the kernel's store reads back as %#x", w)
	}

	// The parameters in one buffer (extra), and a kernel of none. The
	// list holds integers where pointers go: C memory, which the garbage
	// collector does not scan.
	mem := pinned(t, 128)
	extra := unsafe.Slice((*uintptr)(mem), 5)
	buf := unsafe.Slice((*byte)(unsafe.Add(mem, 64)), 32)
	buf[0] = 9
	binary.LittleEndian.PutUint64(buf[8:], b)
	*(*uint64)(unsafe.Add(mem, 48)) = 32
	extra[0], extra[1], extra[2], extra[3], extra[4] = 1, uintptr(mem)+64, 2, uintptr(mem)+48, 0
	must(t, cu.LaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, nil, (*unsafe.Pointer)(mem)))
	must(t, cu.LaunchKernel(k2, 1, 1, 1, 1, 1, 1, 0, s, nil, nil))
	must(t, cu.StreamSynchronize(s))
	calls = kernels.take()
	if len(calls) != 2 || calls[0].Params[0] != 9 || calls[1].Name != "k2" || len(calls[1].Params) != 0 {
		t.Errorf("runs %+v", calls)
	}
	is(t, "k1 without its parameters", cu.LaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, nil, nil), cu.CUDA_ERROR_INVALID_VALUE)
	is(t, "a block of 2048 threads", cu.LaunchKernel(k2, 1, 1, 1, 2048, 1, 1, 0, s, nil, nil), cu.CUDA_ERROR_INVALID_VALUE)

	must(t, cu.ModuleUnload(m))
	if n := lib.Live("modules"); n != modules {
		t.Errorf("live modules %d after the unload, want %d", n, modules)
	}
	is(t, "a launch of an unloaded module's function", cu.LaunchKernel(k2, 1, 1, 1, 1, 1, 1, 0, s, nil, nil), cu.CUDA_ERROR_INVALID_HANDLE)
	is(t, "unload again", cu.ModuleUnload(m), cu.CUDA_ERROR_INVALID_HANDLE)
	if n := len(kernels.take()); n != 0 {
		t.Errorf("%d runs after the unload", n)
	}
}

// A binary image lists no entries: every registered name resolves, with
// the sizes of its registration.
func TestModuleBinaryImage(t *testing.T) {
	primary(t)
	must(t, installRunner())
	s := stream(t, 1)
	path := filepath.Join(t.TempDir(), "k.cubin")
	must(t, os.WriteFile(path, fakecuda.MinimalCubin(), 0o644))
	var m cu.CUmodule
	must(t, cu.ModuleLoad(&m, cstr(path)))
	defer func() { must(t, cu.ModuleUnload(m)) }()
	var missing cu.CUmodule
	is(t, "a file that is not there", cu.ModuleLoad(&missing, cstr(path+".no")), cu.CUDA_ERROR_FILE_NOT_FOUND)
	_, err := function(m, "bin")
	is(t, "an unregistered name", err, cu.CUDA_ERROR_NOT_FOUND)
	must(t, lib.RegisterKernel("bin", []int{8, 4}))
	defer lib.UnregisterKernel("bin")
	must(t, lib.RegisterKernel("bin_unsized", nil))
	defer lib.UnregisterKernel("bin_unsized")
	f, err := function(m, "bin")
	must(t, err)
	kernels.set(nil)
	x, y := uint64(1<<40), uint32(3)
	params := []unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y)}
	must(t, cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, &params[0], nil))
	must(t, cu.StreamSynchronize(s))
	calls := kernels.take()
	if len(calls) != 1 || !slices.Equal(calls[0].Offsets, []uint32{0, 8}) || binary.LittleEndian.Uint64(calls[0].Params) != x ||
		binary.LittleEndian.Uint32(calls[0].Params[8:]) != y {
		t.Errorf("runs %+v", calls)
	}
	u, err := function(m, "bin_unsized")
	must(t, err)
	is(t, "arguments to a kernel of unknown layout", cu.LaunchKernel(u, 1, 1, 1, 1, 1, 1, 0, s, &params[0], nil), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.LaunchKernel(u, 1, 1, 1, 1, 1, 1, 0, s, nil, nil))
	must(t, cu.StreamSynchronize(s))
	if calls := kernels.take(); len(calls) != 1 || calls[0].ParamsKnown {
		t.Errorf("runs of a kernel of unknown layout %+v", calls)
	}
}

// A kernel's failure is sticky in its context: later launches run
// nothing, host functions queued behind it are not called (cuda.h), and
// synchronizing calls report it until the context ends.
func TestKernelFailureIsSticky(t *testing.T) {
	must(t, installRunner())
	must(t, lib.RegisterKernel("k2", nil))
	defer lib.UnregisterKernel("k2")
	t.Run("fault", func(t *testing.T) {
		primary(t)
		s := stream(t, 1)
		m := loadPTX(t, modulePTX)
		defer func() { must(t, cu.ModuleUnload(m)) }()
		f, err := function(m, "k2")
		must(t, err)
		kernels.set(func(*fakecuda.KernelCall) int { return int(cu.CUDA_ERROR_ILLEGAL_ADDRESS) })
		var e cu.CUevent
		must(t, cu.EventCreate(&e, uint32(cu.CU_EVENT_DISABLE_TIMING)))
		defer func() { must(t, cu.EventDestroy(e)) }()
		flags := (*[2]uint32)(pinned(t, 8))
		store := cu.CUhostFn(lib.Symbol("fakecuda_hostfn_store"))
		must(t, cu.LaunchHostFunc(s, store, unsafe.Pointer(&flags[0])))
		must(t, cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nil, nil))
		must(t, cu.LaunchHostFunc(s, store, unsafe.Pointer(&flags[1])))
		must(t, cu.EventRecord(e, s))
		is(t, "stream synchronize after a fault", cu.StreamSynchronize(s), cu.CUDA_ERROR_ILLEGAL_ADDRESS)
		if before, after := atomic.LoadUint32(&flags[0]), atomic.LoadUint32(&flags[1]); before != 1 || after != 0 {
			t.Errorf("host functions called: before the fault %d, after it %d; want 1, 0", before, after)
		}
		is(t, "event query after a fault", cu.EventQuery(e), cu.CUDA_ERROR_ILLEGAL_ADDRESS)
		is(t, "context synchronize after a fault", cu.CtxSynchronize(), cu.CUDA_ERROR_ILLEGAL_ADDRESS)
		is(t, "a launch after a fault", cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nil, nil), cu.CUDA_ERROR_ILLEGAL_ADDRESS)
		if n := len(kernels.take()); n != 1 {
			t.Errorf("%d runs, want 1 (nothing after the fault)", n)
		}
	})
	// The primary context's release ended it: a new one is clean.
	primary(t)
	s := stream(t, 1)
	must(t, cu.StreamSynchronize(s))
	must(t, cu.CtxSynchronize())
}

// A kernel that reaches more allocations than an operation has room for
// inline keeps every one mapped until it completes, though the host frees
// them meanwhile: a pin lost as the room grows would unmap its memory
// under the kernel's stores.
func TestKernelPinsManyAllocations(t *testing.T) {
	primary(t)
	must(t, installRunner())
	must(t, lib.RegisterKernel("k2", nil))
	defer lib.UnregisterKernel("k2")
	s, frees := stream(t, 1), stream(t, 1)
	m := loadPTX(t, modulePTX)
	defer func() { must(t, cu.ModuleUnload(m)) }()
	f, err := function(m, "k2")
	must(t, err)
	ptrs := make([]cu.CUdeviceptr, 20)
	for i := range ptrs {
		must(t, cu.MemAlloc(&ptrs[i], 4096))
	}
	pinned, freed := make(chan bool, 1), make(chan struct{})
	kernels.set(func(k *fakecuda.KernelCall) int {
		ok := true
		for _, p := range ptrs {
			_, _, in := lib.Pin(k.Op, uint64(p), 4096)
			ok = ok && in
		}
		for i := len(ptrs) - 1; i >= 0; i-- { // pinned already: found among the pins
			base, _, in := lib.Pin(k.Op, uint64(ptrs[i])+8, 4)
			ok = ok && in && base == uint64(ptrs[i])
		}
		pinned <- ok
		if !ok {
			return 1
		}
		<-freed
		for i, p := range ptrs {
			mem := unsafe.Slice((*uint32)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), 1024)
			mem[1023] = uint32(i)
		}
		return 0
	})
	defer kernels.set(nil)
	must(t, cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nil, nil))
	if !<-pinned {
		close(freed)
		t.Fatal("a pin of the kernel failed")
	}
	for _, p := range ptrs {
		must(t, cu.MemFreeAsync(p, frees))
	}
	must(t, cu.StreamSynchronize(frees))
	close(freed)
	must(t, cu.StreamSynchronize(s))
}

// fatbin wraps payloads in a fatbin: its 16-byte header, then for each an
// entry's 64-byte header (an ELF's) and the payload padded to 8 bytes.
func fatbin(payloads ...[]byte) []byte {
	le := binary.LittleEndian
	var entries []byte
	for _, p := range payloads {
		padded := (len(p) + 7) &^ 7
		e := make([]byte, 64+padded)
		le.PutUint16(e[0:], 2) // an ELF
		le.PutUint16(e[2:], 0x0101)
		le.PutUint32(e[4:], 64)
		le.PutUint64(e[8:], uint64(padded))
		copy(e[64:], p)
		entries = append(entries, e...)
	}
	h := make([]byte, 16)
	le.PutUint32(h[0:], 0xba55ed50)
	le.PutUint16(h[4:], 1)
	le.PutUint16(h[6:], 16)
	le.PutUint64(h[8:], uint64(len(entries)))
	return append(h, entries...)
}

// cubinWith returns MinimalCubin changed by edit.
func cubinWith(edit func(b []byte, le binary.ByteOrder)) []byte {
	b := fakecuda.MinimalCubin()
	edit(b, binary.LittleEndian)
	return b
}

// fatbinWith returns a fatbin of MinimalCubin changed by edit.
func fatbinWith(edit func(b []byte, le binary.ByteOrder)) []byte {
	b := fatbin(fakecuda.MinimalCubin())
	edit(b, binary.LittleEndian)
	return b
}

// section1 is the offset of MinimalCubin's second section header.
const section1 = 80 + 64

// The module loads refuse what a driver refuses, with its results: PTX
// whose header (.version, then .target) does not parse is
// CUDA_ERROR_INVALID_PTX; an ELF or fatbin whose headers are not sane, or
// whose tables or entries lie outside the image its headers describe, is
// CUDA_ERROR_INVALID_IMAGE. The smallest sane images load.
func TestModuleLoadRefusesMalformedImages(t *testing.T) {
	primary(t)
	const ptxErr, imageErr = cu.CUDA_ERROR_INVALID_PTX, cu.CUDA_ERROR_INVALID_IMAGE
	magic := func(m string, n int) []byte { return append([]byte(m), make([]byte, n-len(m))...) }
	for _, c := range []struct {
		name  string
		image []byte
		want  cu.CUresult
	}{
		{"text", []byte("not a module\x00"), ptxErr},
		{"empty text", []byte("\x00"), ptxErr},
		{"PTX without .version", []byte(".target sm_90\n.address_size 64\n\x00"), ptxErr},
		{"PTX without .target", []byte(".version 8.0\n.address_size 64\n.visible .entry k() { ret; }\n\x00"), ptxErr},
		{"PTX with .target first", []byte(".target sm_90\n.version 8.0\n\x00"), ptxErr},
		{"PTX whose .version is no number", []byte(".version eight\n.target sm_90\n\x00"), ptxErr},
		{"PTX whose .version lacks its minor number", []byte(".version 8\n.target sm_90\n\x00"), ptxErr},
		{"PTX whose .target names nothing", []byte(".version 8.0\n.target\n.address_size 64\n\x00"), ptxErr},
		{"an ELF magic alone", magic("\x7fELF", 64), imageErr},
		{"a 32-bit ELF", cubinWith(func(b []byte, _ binary.ByteOrder) { b[4] = 1 }), imageErr},
		{"a big-endian ELF", cubinWith(func(b []byte, _ binary.ByteOrder) { b[5] = 2 }), imageErr},
		{"an ELF for x86-64", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[18:], 62) }), imageErr},
		{"a shared object", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[16:], 3) }), imageErr},
		{"an ELF header of 52 bytes", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[52:], 52) }), imageErr},
		{"no sections", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[60:], 0) }), imageErr},
		{"section headers of 40 bytes", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[58:], 40) }), imageErr},
		{"the names' section out of range", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[62:], 2) }), imageErr},
		{"the names' section no string table", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint32(b[section1+4:], 1) }), imageErr},
		{"a section name past the names", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint32(b[section1:], 11) }), imageErr},
		{"section 0 not null", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint32(b[80+4:], 1) }), imageErr},
		{"the section table over the ELF header", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[40:], 8) }), imageErr},
		{"the section table past any image", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[40:], 1<<40) }), imageErr},
		{"a section past any image", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[section1+24:], 1<<40) }), imageErr},
		{"a section whose end overflows", cubinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[section1+32:], math.MaxUint64) }), imageErr},
		{"program headers of 32 bytes", cubinWith(func(b []byte, le binary.ByteOrder) {
			le.PutUint16(b[56:], 1)
			le.PutUint16(b[54:], 32)
			le.PutUint64(b[32:], 80)
		}), imageErr},
		{"program headers past any image", cubinWith(func(b []byte, le binary.ByteOrder) {
			le.PutUint16(b[56:], 1)
			le.PutUint64(b[32:], 1<<40)
		}), imageErr},
		{"a fatbin magic alone", magic("\x50\xed\x55\xba", 16), imageErr},
		{"a fatbin of version 2", fatbinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[4:], 2) }), imageErr},
		{"a fatbin header of 8 bytes", fatbinWith(func(b []byte, le binary.ByteOrder) { le.PutUint16(b[6:], 8) }), imageErr},
		{"a fatbin past any image", fatbinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[8:], 1<<40) }), imageErr},
		{"a fatbin entry past the fatbin", fatbinWith(func(b []byte, le binary.ByteOrder) { le.PutUint64(b[8:], le.Uint64(b[8:])-8) }), imageErr},
		{"a fatbin entry header of 8 bytes", fatbinWith(func(b []byte, le binary.ByteOrder) { le.PutUint32(b[16+4:], 8) }), imageErr},
		{"a fatbin of no entries", fatbin(), cu.CUDA_ERROR_NO_BINARY_FOR_GPU},
	} {
		t.Run(c.name, func(t *testing.T) {
			image := unsafe.Pointer(&c.image[0])
			var m cu.CUmodule
			is(t, "cuModuleLoadData", cu.ModuleLoadData(&m, image), c.want)
			is(t, "cuModuleLoadDataEx", cu.ModuleLoadDataEx(&m, image, 0, nil, nil), c.want)
			if unload, err := loadLibraryData(image); err != errNoLibraries {
				is(t, "cuLibraryLoadData", err, c.want)
				if err == nil {
					must(t, unload())
				}
			}
		})
	}
	t.Run("NULL", func(t *testing.T) {
		var m cu.CUmodule
		is(t, "cuModuleLoadData", cu.ModuleLoadData(&m, nil), cu.CUDA_ERROR_INVALID_VALUE)
		is(t, "cuModuleLoadDataEx", cu.ModuleLoadDataEx(&m, nil, 0, nil, nil), cu.CUDA_ERROR_INVALID_VALUE)
		if _, err := loadLibraryData(nil); err != errNoLibraries {
			is(t, "cuLibraryLoadData", err, cu.CUDA_ERROR_INVALID_VALUE)
		}
	})
	modules := lib.Live("modules")
	for _, c := range []struct {
		name  string
		image []byte
	}{
		{"PTX after comments", []byte("// generated\n/* a\nblock */ .version 8.4\n\t.target sm_90a, debug // and more\n.address_size 64\n\x00")},
		{"the smallest cubin", fakecuda.MinimalCubin()},
		{"a fatbin of it", fatbin(fakecuda.MinimalCubin())},
		{"a fatbin of two", fatbin(fakecuda.MinimalCubin(), []byte(".version 8.0\n.target sm_90\n\x00"))},
	} {
		var m cu.CUmodule
		if err := cu.ModuleLoadData(&m, unsafe.Pointer(&c.image[0])); err != nil {
			t.Errorf("%s: cuModuleLoadData = %v", c.name, err)
			continue
		}
		must(t, cu.ModuleUnload(m))
	}
	if n := lib.Live("modules"); n != modules {
		t.Errorf("%d modules live after the loads, %d before", n, modules)
	}
}

// A fatbin wrapper (what nvcc's __fatbinwrap holds) loads the fatbin it
// points to, and is refused where that is not one.
func TestModuleLoadFatbinWrapper(t *testing.T) {
	primary(t)
	fb := fatbin(fakecuda.MinimalCubin())
	// The wrapper holds a pointer: both live in C memory.
	data := pinned(t, uint64(len(fb)))
	copy(unsafe.Slice((*byte)(data), len(fb)), fb)
	w := (*[3]uint64)(pinned(t, 24))
	w[0] = 1<<32 | 0x466243b1 // magic, version 1
	w[1] = uint64(uintptr(data))
	var m cu.CUmodule
	must(t, cu.ModuleLoadData(&m, unsafe.Pointer(w)))
	must(t, cu.ModuleUnload(m))
	w[1] = 0
	is(t, "a wrapper of no fatbin", cu.ModuleLoadData(&m, unsafe.Pointer(w)), cu.CUDA_ERROR_INVALID_IMAGE)
	w[1] = uint64(uintptr(data))
	w[0] = 9<<32 | 0x466243b1
	is(t, "a wrapper of version 9", cu.ModuleLoadData(&m, unsafe.Pointer(w)), cu.CUDA_ERROR_INVALID_IMAGE)
}

// A module file's length bounds its image: a cubin cut short is refused.
func TestModuleLoadFileBoundsTheImage(t *testing.T) {
	primary(t)
	dir := t.TempDir()
	cubin := fakecuda.MinimalCubin()
	for _, c := range []struct {
		name  string
		image []byte
		want  cu.CUresult
	}{
		{"whole.cubin", cubin, cu.CUDA_SUCCESS},
		{"cut.cubin", cubin[:len(cubin)-1], cu.CUDA_ERROR_INVALID_IMAGE},
		{"cut.fatbin", fatbin(cubin)[:100], cu.CUDA_ERROR_INVALID_IMAGE},
		{"empty.ptx", []byte(".address_size 64\n"), cu.CUDA_ERROR_INVALID_PTX},
	} {
		path := filepath.Join(dir, c.name)
		must(t, os.WriteFile(path, c.image, 0o644))
		var m cu.CUmodule
		err := cu.ModuleLoad(&m, cstr(path))
		if c.want == cu.CUDA_SUCCESS {
			must(t, err)
			must(t, cu.ModuleUnload(m))
			continue
		}
		is(t, c.name, err, c.want)
	}
}
