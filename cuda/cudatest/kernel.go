package cudatest

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// Dim3 is a CUDA dim3: the size of a grid in blocks or of a block in
// threads, or a block's or thread's index.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Kernel is a CUDA kernel written in Go, for the fake driver: a launch of
// a module's entry of the name it is registered under (RegisterKernel)
// runs it on the stream, in stream order. Set exactly one of Thread and
// Launch.
type Kernel struct {
	// Thread is called once per thread of the grid, one thread after the
	// other (blocks in order, threads in order within a block, X fastest),
	// so threads cannot wait for each other: a kernel whose threads
	// synchronize (__syncthreads, shared memory) is written with Launch.
	Thread func(t *Thread)
	// Launch is called once per launch and does the whole grid's work.
	Launch func(l *Launch)
	// Params are the sizes of the kernel's parameters in bytes, for
	// modules loaded from a cubin or fatbin, which the fake does not read.
	// PTX's own .param list is used where there is one.
	Params []int
}

// registered is a kernel and the name it is registered under.
type registered struct {
	name string
	k    Kernel
}

var (
	kmu     sync.RWMutex
	kernels = map[string]*registered{}

	kerrMu  sync.Mutex
	lastErr *KernelError

	kernelLib atomic.Pointer[fakecuda.Lib] // the driver that runs the kernels
)

// RegisterKernel makes name, the name of a kernel's entry in a module
// (the extern "C" name, or the mangled name of a C++ kernel), resolve to
// k in every module and library the fake driver loads: cuModuleGetFunction
// of name then succeeds if the module's PTX has that entry, or always for
// a cubin or fatbin. Registering a name again replaces its kernel. An
// entry with no kernel registered is not found (CUDA_ERROR_NOT_FOUND).
// It panics if k sets neither or both of Thread and Launch.
//
// Register kernels before the code under test loads its module, from
// TestMain or the test itself. Kernels are process-wide: tests that run in
// parallel should not register different kernels under one name.
func RegisterKernel(name string, k Kernel) {
	if (k.Thread == nil) == (k.Launch == nil) {
		panic("cudatest: RegisterKernel(" + name + "): set exactly one of Kernel.Thread and Kernel.Launch")
	}
	if k.Params != nil {
		k.Params = append([]int(nil), k.Params...)
	}
	mu.Lock()
	defer mu.Unlock()
	kmu.Lock()
	kernels[name] = &registered{name, k}
	kmu.Unlock()
	if lib != nil {
		if err := lib.RegisterKernel(name, k.Params); err != nil {
			panic(err)
		}
	}
}

// UnregisterKernel forgets the kernel registered under name: later
// lookups of that entry fail, and so do launches of functions already
// resolved.
func UnregisterKernel(name string) {
	mu.Lock()
	defer mu.Unlock()
	kmu.Lock()
	delete(kernels, name)
	kmu.Unlock()
	if lib != nil {
		lib.UnregisterKernel(name)
	}
}

// attachKernels makes l run the registered kernels. Under mu.
func attachKernels(l *fakecuda.Lib) error {
	kernelLib.Store(l)
	if err := l.SetKernelRunner(runKernel); err != nil {
		return err
	}
	if err := l.SetPTXChecker(checkPTX); err != nil {
		return err
	}
	kmu.RLock()
	defer kmu.RUnlock()
	for name, r := range kernels {
		if err := l.RegisterKernel(name, r.k.Params); err != nil {
			return err
		}
	}
	return nil
}

// KernelError describes a kernel that failed: an access through a Ptr
// outside every allocation (CUDA_ERROR_ILLEGAL_ADDRESS) or not aligned to
// its size (CUDA_ERROR_MISALIGNED_ADDRESS), a parameter read as a type of
// another size, a panic (CUDA_ERROR_LAUNCH_FAILED), or the same faults of
// a kernel run from PTX, a trap or an assert. As on a GPU, the launch's
// context is then unusable: its synchronizing calls return Result until
// it is destroyed (a created context) or released by all its users (the
// primary context).
//
// It also describes an entry of PTX that the interpreter cannot run (an
// instruction outside its scope, named with its line): its launch itself
// fails with CUDA_ERROR_NOT_SUPPORTED, nothing runs, and the context
// stays usable.
type KernelError struct {
	Kernel string
	Result cu.CUresult
	// Block and Thread are the failing thread of a Kernel.Thread kernel.
	Block, Thread Dim3
	PerThread     bool
	Msg           string
	// Line and Instruction are where in its PTX a kernel run from PTX
	// failed (0 and "" for a Go kernel).
	Line        int
	Instruction string
}

func (e *KernelError) Error() string {
	where := ""
	if e.PerThread {
		where = fmt.Sprintf(", block %v thread %v", e.Block, e.Thread)
	}
	if e.Line > 0 {
		where += fmt.Sprintf(", PTX line %d (%s)", e.Line, e.Instruction)
	}
	return fmt.Sprintf("cudatest: kernel %s%s: %s (%v)", e.Kernel, where, e.Msg, e.Result)
}

// Unwrap returns Result, so that errors.Is matches the CUresult.
func (e *KernelError) Unwrap() error { return e.Result }

// LastKernelError returns the error of the kernel that failed last in
// this process, or of the last launch refused because the interpreter
// cannot run its PTX, or nil if none did. The driver reports only the
// CUresult (of a fault, at the next synchronizing call); this says what
// and where.
func LastKernelError() error {
	kerrMu.Lock()
	defer kerrMu.Unlock()
	if lastErr == nil {
		return nil
	}
	return lastErr
}

// fault is the panic of an accessor, unwound to runKernel.
type fault struct {
	res cu.CUresult
	msg string
}

// launches recycles the state of runs: a run of a kernel that allocates
// nothing allocates nothing, so that kernels running in the background do
// not count in the allocation measurements of tests (testing.AllocsPerRun
// counts the whole process).
var launches = sync.Pool{New: func() any { return new(launchState) }}

// launchState is a run's Launch and the Thread of a per-thread kernel.
type launchState struct {
	l Launch
	t Thread
}

// runKernel runs one launch; it is the fake driver's kernel runner.
func runKernel(c *fakecuda.KernelCall) (result int) {
	kmu.RLock()
	reg := kernels[c.Name]
	kmu.RUnlock()
	lib := kernelLib.Load()
	if reg == nil && c.PTXID != 0 && lib != nil {
		return runPTX(c, lib, lib.RaceDetector())
	}
	st := launches.Get().(*launchState)
	l := &st.l
	*l = Launch{
		GridDim:        Dim3{c.Grid[0], c.Grid[1], c.Grid[2]},
		BlockDim:       Dim3{c.Block[0], c.Block[1], c.Block[2]},
		SharedMemBytes: c.SharedMemBytes,
		Stream:         c.Stream,
		call:           c,
		lib:            lib,
		race:           lib != nil && lib.RaceDetector(),
	}
	if reg != nil {
		l.Name = reg.name
	}
	defer func() {
		l.flush()
		p := recover()
		cur := l.cur
		// A Launch kept past its run fails its next use, until the pool
		// hands it to another run.
		l.done, l.cur, l.call = true, nil, nil
		if p == nil {
			launches.Put(st)
			return
		}
		e := &KernelError{Kernel: strings.Clone(c.Name), Result: cu.CUDA_ERROR_LAUNCH_FAILED}
		if f, ok := p.(*fault); ok {
			e.Result, e.Msg = f.res, f.msg
		} else {
			e.Msg = fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
		}
		if cur != nil {
			e.PerThread, e.Block, e.Thread = true, cur.BlockIdx, cur.ThreadIdx
		}
		kerrMu.Lock()
		lastErr = e
		kerrMu.Unlock()
		fmt.Fprintln(os.Stderr, e)
		result = int(e.Result)
	}()
	if reg == nil {
		panic(&fault{cu.CUDA_ERROR_LAUNCH_FAILED, "no Go kernel is registered under this name (cudatest.RegisterKernel), or no longer"})
	}
	k := reg.k
	if k.Launch != nil {
		k.Launch(l)
		return 0
	}
	t := &st.t
	*t = Thread{Launch: l}
	l.cur = t
	g, b := l.GridDim, l.BlockDim
	for t.BlockIdx.Z = 0; t.BlockIdx.Z < g.Z; t.BlockIdx.Z++ {
		for t.BlockIdx.Y = 0; t.BlockIdx.Y < g.Y; t.BlockIdx.Y++ {
			for t.BlockIdx.X = 0; t.BlockIdx.X < g.X; t.BlockIdx.X++ {
				for t.ThreadIdx.Z = 0; t.ThreadIdx.Z < b.Z; t.ThreadIdx.Z++ {
					for t.ThreadIdx.Y = 0; t.ThreadIdx.Y < b.Y; t.ThreadIdx.Y++ {
						for t.ThreadIdx.X = 0; t.ThreadIdx.X < b.X; t.ThreadIdx.X++ {
							k.Thread(t)
						}
					}
				}
			}
		}
	}
	l.cur = nil
	return 0
}

// Launch is one launch of a Go kernel as it runs: its shape, its
// parameters, and access to device memory through the Ptr values its
// parameters hold. It and its Ptr values are valid only while the kernel
// runs, and are not safe for concurrent use: a kernel that spreads its
// work over goroutines gives each its own copy of the values it read.
type Launch struct {
	Name              string
	GridDim, BlockDim Dim3
	SharedMemBytes    uint32
	Stream            uint64 // the stream handle the launch named (0 for the NULL stream)

	call *fakecuda.KernelCall
	lib  *fakecuda.Lib
	cur  *Thread // the running thread of a per-thread kernel
	done bool
	race bool // the race detector is on: accesses are noted and reported

	allocs [8]span // allocations reached so far, for the bounds checks
	nalloc int
	hit    int
	reads  spans // accesses not yet reported to the race detector
	writes spans
}

// Thread is one thread of a per-thread kernel (Kernel.Thread): its block's
// and its own index, and its launch. The kernel gets the same *Thread for
// every thread, changed in between: it must not keep it.
type Thread struct {
	*Launch
	BlockIdx, ThreadIdx Dim3
}

// GlobalX returns blockIdx.x*blockDim.x + threadIdx.x: a thread's index
// in a one-dimensional grid.
func (t *Thread) GlobalX() int { return int(t.BlockIdx.X)*int(t.BlockDim.X) + int(t.ThreadIdx.X) }

// GlobalY returns blockIdx.y*blockDim.y + threadIdx.y.
func (t *Thread) GlobalY() int { return int(t.BlockIdx.Y)*int(t.BlockDim.Y) + int(t.ThreadIdx.Y) }

// GlobalZ returns blockIdx.z*blockDim.z + threadIdx.z.
func (t *Thread) GlobalZ() int { return int(t.BlockIdx.Z)*int(t.BlockDim.Z) + int(t.ThreadIdx.Z) }

// Threads returns the number of threads of the launch.
func (l *Launch) Threads() int {
	g, b := l.GridDim, l.BlockDim
	return int(g.X) * int(g.Y) * int(g.Z) * int(b.X) * int(b.Y) * int(b.Z)
}

// NumParams returns the number of the kernel's parameters, or -1 where
// the fake does not know its layout (a cubin's kernel registered without
// Kernel.Params, launched with its parameters in one buffer).
func (l *Launch) NumParams() int {
	if !l.call.ParamsKnown {
		return -1
	}
	return len(l.call.Sizes)
}

// ParamBuffer returns the parameter buffer as the launch passed it, each
// parameter at its offset: C memory, valid while the kernel runs.
func (l *Launch) ParamBuffer() []byte { return l.call.Params }

// Param returns the kernel's parameter i, to be read as its type. A bad
// index, or a kernel whose layout is unknown (NumParams -1), fails the
// launch.
func (l *Launch) Param(i int) Param {
	l.check()
	if !l.call.ParamsKnown {
		l.fail(cu.CUDA_ERROR_LAUNCH_FAILED, "parameter %d: the kernel's parameter layout is unknown (a cubin or fatbin: give Kernel.Params)", i)
	}
	if i < 0 || i >= len(l.call.Sizes) {
		l.fail(cu.CUDA_ERROR_LAUNCH_FAILED, "parameter %d of a kernel of %d parameters", i, len(l.call.Sizes))
	}
	off, size := l.call.Offsets[i], l.call.Sizes[i]
	return Param{b: l.call.Params[off : off+size : off+size], l: l, i: i}
}

// Param is a kernel parameter's bytes, read by its type: a method for a
// type of another size than the parameter's fails the launch.
type Param struct {
	b []byte
	l *Launch
	i int
}

// Size returns the parameter's size in bytes.
func (p Param) Size() int { return len(p.b) }

// Bytes returns the parameter's bytes (a struct passed by value, say).
func (p Param) Bytes() []byte { return p.b }

func (p Param) sized(n int, what string) []byte {
	if len(p.b) != n {
		p.l.fail(cu.CUDA_ERROR_LAUNCH_FAILED, "parameter %d has %d bytes, read as %s (%d)", p.i, len(p.b), what, n)
	}
	return p.b
}

func (p Param) Int8() int8     { return int8(p.sized(1, "int8")[0]) }
func (p Param) Uint8() uint8   { return p.sized(1, "uint8")[0] }
func (p Param) Int16() int16   { return int16(binary.LittleEndian.Uint16(p.sized(2, "int16"))) }
func (p Param) Uint16() uint16 { return binary.LittleEndian.Uint16(p.sized(2, "uint16")) }
func (p Param) Int32() int32   { return int32(binary.LittleEndian.Uint32(p.sized(4, "int32"))) }
func (p Param) Uint32() uint32 { return binary.LittleEndian.Uint32(p.sized(4, "uint32")) }
func (p Param) Int64() int64   { return int64(binary.LittleEndian.Uint64(p.sized(8, "int64"))) }
func (p Param) Uint64() uint64 { return binary.LittleEndian.Uint64(p.sized(8, "uint64")) }
func (p Param) Float32() float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(p.sized(4, "float32")))
}
func (p Param) Float64() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(p.sized(8, "float64")))
}

// ParamValue returns the bytes of p as a T: a struct or array passed by
// value (cuda's Kernel.Launch passes a Go struct of fixed-size numbers as
// its bytes), read as the Go type the launch passed. A T of another size
// than the parameter, or one that holds pointers, strings, slices, maps,
// interfaces, channels or functions (the bytes of device memory are none
// of these), fails the launch.
func ParamValue[T any](p Param) T {
	var v T
	t := reflect.TypeFor[T]()
	if !pointerFree(t) {
		p.l.fail(cu.CUDA_ERROR_LAUNCH_FAILED, "parameter %d read as a %v, which holds pointers", p.i, t)
	}
	n := int(unsafe.Sizeof(v))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), n), p.sized(n, t.String()))
	return v
}

// pointerFrees caches pointerFree per type, so that a kernel reading its
// parameters in a loop does not walk the type (or allocate) each time.
var pointerFrees sync.Map // reflect.Type → bool

// pointerFree reports whether a value of t is only bytes: numbers, bools,
// and arrays and structs of them.
func pointerFree(t reflect.Type) bool {
	if ok, found := pointerFrees.Load(t); found {
		return ok.(bool)
	}
	ok := true
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
	case reflect.Array:
		ok = pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			ok = ok && pointerFree(t.Field(i).Type)
		}
	default:
		ok = false
	}
	pointerFrees.Store(t, ok)
	return ok
}

// Ptr returns the parameter as a device pointer of the launch.
func (p Param) Ptr() Ptr { return Ptr{addr: p.Uint64(), l: p.l} }

// Ptr is a device address as a running kernel sees it, for Load, Store,
// Slice and ReadSlice, which check each access against the fake driver's
// allocations and report it to its race detector.
type Ptr struct {
	addr uint64
	l    *Launch
}

// Ptr returns addr as a device pointer of the launch (an address a kernel
// computed, or one of a struct parameter).
func (l *Launch) Ptr(addr uint64) Ptr { return Ptr{addr: addr, l: l} }

// Addr returns the device address.
func (p Ptr) Addr() uint64 { return p.addr }

// Add returns the pointer bytes further on (or back, when negative).
func (p Ptr) Add(bytes int) Ptr { return Ptr{addr: p.addr + uint64(bytes), l: p.l} }

// IsNil reports whether the address is 0.
func (p Ptr) IsNil() bool { return p.addr == 0 }

// Elem is the element types of device memory accessors.
type Elem interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Load returns element i of the T array at p.
func Load[T Elem](p Ptr, i int) T {
	var z T
	n := uint64(unsafe.Sizeof(z))
	a := p.addr + uint64(i)*n
	p.l.access(a, n, n, false, "load")
	return *(*T)(at(a))
}

// Store sets element i of the T array at p to v.
func Store[T Elem](p Ptr, i int, v T) {
	n := uint64(unsafe.Sizeof(v))
	a := p.addr + uint64(i)*n
	p.l.access(a, n, n, true, "store")
	*(*T)(at(a)) = v
}

// Slice returns the n elements of the T array at p as a slice of device
// memory, to read and write while the kernel runs; the race detector
// counts the whole range as read and written.
func Slice[T Elem](p Ptr, n int) []T { return slice[T](p, n, true) }

// ReadSlice is Slice for a kernel that only reads the range: the race
// detector counts it as read. Writing through it is a race it cannot see.
func ReadSlice[T Elem](p Ptr, n int) []T { return slice[T](p, n, false) }

func slice[T Elem](p Ptr, n int, write bool) []T {
	var z T
	size := uint64(unsafe.Sizeof(z))
	if n < 0 {
		p.l.fail(cu.CUDA_ERROR_LAUNCH_FAILED, "slice of %d elements", n)
	}
	if n == 0 {
		return nil
	}
	bytes := uint64(n) * size
	p.l.access(p.addr, bytes, size, false, "slice")
	if write {
		p.l.note(p.addr, p.addr+bytes, true)
	}
	return unsafe.Slice((*T)(at(p.addr)), n)
}

// at converts a device address, which is a host address in the fake
// driver, to a pointer: memory outside Go's heap, which it never moves.
func at(addr uint64) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

type span struct{ lo, hi uint64 }

// spans coalesces the ranges of a launch's accesses before they are
// reported: every access of one launch is of the same operation, so the
// detector needs the bytes, not each access.
type spans struct {
	r    [4]span
	n    int
	next int
}

func (l *Launch) check() {
	if l.done {
		panic("cudatest: a kernel's Launch, Thread or Ptr used after its launch ended")
	}
}

func (l *Launch) fail(res cu.CUresult, format string, args ...any) {
	panic(&fault{res: res, msg: fmt.Sprintf(format, args...)})
}

// access checks that [a, a+n) is in one allocation and aligned to align,
// and notes it for the race detector.
func (l *Launch) access(a, n, align uint64, write bool, what string) {
	l.check()
	if a%align != 0 {
		l.fail(cu.CUDA_ERROR_MISALIGNED_ADDRESS, "%s of %d bytes at %#x: not aligned to %d bytes", what, n, a, align)
	}
	if !l.inAlloc(a, n) {
		base, size, ok := l.lib.Pin(l.call.Op, a, n)
		if !ok {
			l.fail(cu.CUDA_ERROR_ILLEGAL_ADDRESS, "%s of %d bytes at %#x: outside every allocation", what, n, a)
		}
		l.hit = l.nalloc % len(l.allocs)
		l.allocs[l.hit] = span{base, base + size}
		if l.nalloc < len(l.allocs) {
			l.nalloc++
		}
	}
	l.note(a, a+n, write)
}

func (l *Launch) inAlloc(a, n uint64) bool {
	if s := l.allocs[l.hit]; a >= s.lo && a < s.hi && n <= s.hi-a {
		return true
	}
	for i := range l.nalloc {
		if s := l.allocs[i]; a >= s.lo && a < s.hi && n <= s.hi-a {
			l.hit = i
			return true
		}
	}
	return false
}

func (l *Launch) note(lo, hi uint64, write bool) {
	if !l.race {
		return
	}
	set := &l.reads
	if write {
		set = &l.writes
	}
	for i := range set.n {
		if r := &set.r[i]; lo <= r.hi && hi >= r.lo {
			r.lo, r.hi = min(r.lo, lo), max(r.hi, hi)
			return
		}
	}
	if set.n < len(set.r) {
		set.r[set.n] = span{lo, hi}
		set.n++
		return
	}
	r := &set.r[set.next]
	l.lib.NoteAccess(l.call.Op, r.lo, r.hi-r.lo, write)
	*r = span{lo, hi}
	set.next = (set.next + 1) % len(set.r)
}

// flush reports the accesses not yet reported.
func (l *Launch) flush() {
	if !l.race {
		return
	}
	for _, w := range []bool{false, true} {
		set := &l.reads
		if w {
			set = &l.writes
		}
		for _, r := range set.r[:set.n] {
			l.lib.NoteAccess(l.call.Op, r.lo, r.hi-r.lo, w)
		}
		set.n = 0
	}
}
