package cuda

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// Dim3 is the size of a grid (in blocks) or of a block (in threads). A
// zero Y or Z counts as 1, so Dim3{X: n} is a one-dimensional size; X must
// not be zero (a launch refuses it: see Blocks).
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) norm() Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// LaunchConfig is the shape of a kernel launch: Grid blocks of Block
// threads each, and SharedMemBytes of dynamic shared memory per block.
type LaunchConfig struct {
	Grid, Block    Dim3
	SharedMemBytes uint32
}

// Blocks returns how many blocks of size threads cover n threads, for
// one-dimensional launches: LaunchConfig{Grid: Dim3{X: Blocks(n, 256)},
// Block: Dim3{X: 256}}. When no grid can do that (n or size not positive,
// or more blocks than a uint32 counts) it returns 0, which every launch
// refuses with an error: never a grid of the wrong size.
func Blocks(n, size int) uint32 {
	if n <= 0 || size <= 0 {
		return 0
	}
	b := (n-1)/size + 1 // n+size-1 could overflow
	if uint64(b) > math.MaxUint32 {
		return 0
	}
	return uint32(b)
}

// Linear returns the shape of a one-dimensional launch over n elements:
// blocks of blockSize threads in X, Blocks(n, blockSize) of them, so that
// the grid covers n (the last block's threads past n must do nothing). When
// n or blockSize is not positive, or no grid of uint32 blocks covers n, the
// grid (or block) is 0, which every launch refuses with an error.
func Linear(n, blockSize int) LaunchConfig {
	var b uint32
	if blockSize > 0 && uint64(blockSize) <= math.MaxUint32 {
		b = uint32(blockSize)
	}
	return LaunchConfig{Grid: Dim3{X: Blocks(n, blockSize)}, Block: Dim3{X: b}}
}

// checkConfig refuses a launch shape the driver would take for another:
// a zero X (what Blocks returns when no grid fits) would otherwise count
// as one block.
func checkConfig(op string, cfg LaunchConfig) error {
	if cfg.Grid.X == 0 || cfg.Block.X == 0 {
		return configError(op, cfg)
	}
	return nil
}

// configError is checkConfig's error, out of line so that checkConfig
// inlines.
func configError(op string, cfg LaunchConfig) error {
	if cfg.Grid.X == 0 {
		return invalidArg(op, "grid of 0 blocks (Grid.X is 0: Blocks of an empty or too large size?)")
	}
	return invalidArg(op, "block of 0 threads (Block.X is 0)")
}

// Kernel is a function of a loaded Module, launched on a stream with Launch
// or, without allocating, with prepared Args and LaunchArgs. It is valid
// while the Module handle it came from is open; after that its methods
// return an error matching ErrClosed. Launches are safe for concurrent use.
type Kernel struct {
	mod         *Module // checked at each launch; keeps the handle reachable
	raw         cu.CUfunction
	name        string
	params      []uint32 // parameter sizes in bytes, where paramsKnown
	offsets     []uint32 // their offsets in the parameter buffer
	paramsKnown bool
	sig         uint64                       // params packed for Launch's check (sizeSig)
	limits      atomic.Pointer[launchLimits] // the shape limits, asked of the driver at the first launch
	ex          launchExState                // what LaunchEx's checks keep (launchex.go)
}

// setParams records the kernel's parameter layout, as the driver reported
// it, before the kernel is shared.
func (k *Kernel) setParams(p paramLayout) {
	k.params, k.offsets, k.paramsKnown, k.sig = p.sizes, p.offsets, true, sizeSig(p.sizes)
}

// Name returns the name the kernel was looked up by ("" for a nil Kernel).
func (k *Kernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// module returns the handle of the module k came from, nil for a nil or
// zero Kernel.
func (k *Kernel) module() *handle[moduleState] {
	if k == nil {
		return nil
	}
	return k.mod.handle()
}

// Raw returns the driver's function handle, or 0 once the module handle is
// closed.
func (k *Kernel) Raw() cu.CUfunction {
	if _, ok := k.module().peek(); !ok {
		return 0
	}
	return k.raw
}

// ParamSizes returns the sizes in bytes of the kernel's parameters, and
// whether the driver told them (cuFuncGetParamInfo: drivers for CUDA 12.4
// or later, with bindings of 12.4 or later). Without them, launches pass
// the arguments unchecked, as C does.
func (k *Kernel) ParamSizes() (sizes []int, known bool) {
	if k == nil || !k.paramsKnown {
		return nil, false
	}
	sizes = make([]int, len(k.params))
	for i, s := range k.params {
		sizes[i] = int(s)
	}
	return sizes, true
}

// maxParams is the most bytes a kernel's parameters take in all; it bounds
// the parameter query, and a value passed by its bytes.
const maxParams = 32764

// paramLayout is a kernel's parameters as the driver lays them out in the
// parameter buffer: the size and offset of each, in bytes.
type paramLayout struct{ sizes, offsets []uint32 }

// ErrKernelArgs is matched by the error of a launch or of Args whose
// arguments do not fit the kernel's parameters: their number, their sizes,
// or a type that is not a kernel argument. Such errors match
// cu.CUDA_ERROR_INVALID_VALUE too, and never reach the driver.
var ErrKernelArgs = errors.New("kernel arguments do not match the kernel's parameters")

type argsError struct{ msg string }

func (e *argsError) Error() string { return e.msg + " (" + ErrKernelArgs.Error() + ")" }

func (e *argsError) Is(target error) bool {
	return target == ErrKernelArgs || target == error(cu.CUDA_ERROR_INVALID_VALUE)
}

func argsErr(op, format string, args ...any) error {
	return &Error{Op: op, Result: cu.CUDA_ERROR_INVALID_VALUE, Err: &argsError{fmt.Sprintf(format, args...)}}
}

// The encodings of one argument: its bits, its size, or why it is none.
const (
	argOK = iota
	argUnsupported
	argPlatformInt
	argClosedMemory
	// argByValue is a value whose bytes pass as they are (a struct, an
	// array, a number of a defined type): see byValueLayout.
	argByValue
)

// encodeArg gives the C bits of a kernel argument: a fixed-size number
// (Float16, BFloat16, the Float8 types and complex64 included), bool (1
// byte), cu.CUdeviceptr, *DeviceMemory, *ManagedMemory (its address) or
// *Slice[T] (the address of its first element); a value that passes by
// its bytes is argByValue. It is written not to let v escape, so boxing an
// argument need not allocate.
func encodeArg(v any) (bits uint64, size uint8, why int) {
	switch x := v.(type) {
	case *DeviceMemory:
		st, ok := x.handle().peek()
		if !ok {
			return 0, 8, argClosedMemory
		}
		return uint64(st.ptr), 8, argOK
	case *ManagedMemory:
		st, ok := x.handle().peek()
		if !ok {
			return 0, 8, argClosedMemory
		}
		return uint64(st.ptr), 8, argOK
	case cu.CUdeviceptr:
		return uint64(x), 8, argOK
	case Float16:
		return uint64(x.Bits()), 2, argOK
	case BFloat16:
		return uint64(x.Bits()), 2, argOK
	case float32:
		return uint64(math.Float32bits(x)), 4, argOK
	case float64:
		return math.Float64bits(x), 8, argOK
	case int32:
		return uint64(uint32(x)), 4, argOK
	case uint32:
		return uint64(x), 4, argOK
	case int64:
		return uint64(x), 8, argOK
	case uint64:
		return x, 8, argOK
	case int8:
		return uint64(uint8(x)), 1, argOK
	case uint8:
		return uint64(x), 1, argOK
	case int16:
		return uint64(uint16(x)), 2, argOK
	case uint16:
		return uint64(x), 2, argOK
	case uintptr:
		return uint64(x), 8, argOK
	case bool:
		if x {
			return 1, 1, argOK
		}
		return 0, 1, argOK
	case Float8E4M3:
		return uint64(x.Bits()), 1, argOK
	case Float8E5M2:
		return uint64(x.Bits()), 1, argOK
	case complex64:
		return uint64(math.Float32bits(real(x))) | uint64(math.Float32bits(imag(x)))<<32, 8, argOK
	case int, uint:
		return 0, 0, argPlatformInt
	}
	// The generic *Slice[T], which no case can name: after the concrete
	// types, so that they pay nothing for it.
	if a, ok := v.(deviceArg); ok {
		p, ok := hideArg(a).kernelArg()
		if !ok {
			return 0, 8, argClosedMemory
		}
		return p, 8, argOK
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Struct, reflect.Array, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Bool:
		return 0, 0, argByValue
	}
	return 0, 0, argUnsupported
}

// deviceArg is a kernel argument that passes a device address: *Slice[T].
type deviceArg interface{ kernelArg() (uint64, bool) }

// hideArg returns a, copied word by word as integers, so that escape
// analysis loses track of it. A call through an interface is taken to leak
// its receiver, and through encodeArg that would make every argument of
// Launch escape: each number a caller passes would then be boxed on the
// heap (runtime.convT64 and its siblings: a call per value, and an
// allocation for values past 255). The implementations of deviceArg are
// this package's (*Slice[T]), and kernelArg keeps nothing of its receiver,
// so nothing outlives the caller's frame.
func hideArg(a deviceArg) deviceArg {
	var r deviceArg
	*(*[2]uintptr)(unsafe.Pointer(&r)) = *(*[2]uintptr)(unsafe.Pointer(&a))
	return r
}

// byValue is how a type that passes by its bytes is laid out: its size
// and alignment, or why it cannot pass.
type byValue struct {
	size, align uint32
	why         string // "" when the type passes
}

// byValueLayouts caches byValueLayout's answer per reflect.Type: the walk
// over the fields is done once per type, and a launch looks the type up.
var byValueLayouts sync.Map // reflect.Type → *byValue

// byValueLayout returns the layout of t, a struct, array or number type
// whose value passes as its bytes: Go lays out fixed-size numbers, and
// structs and arrays of them, as C does on the 64-bit ABIs this package
// builds for, so the bytes are those of the C struct with the same fields.
func byValueLayout(t reflect.Type) *byValue {
	if l, ok := byValueLayouts.Load(t); ok {
		return l.(*byValue)
	}
	l := &byValue{size: uint32(t.Size()), align: uint32(t.Align())}
	switch {
	case t.Size() == 0:
		l.why = "has no bytes: a kernel parameter has at least one"
	case t.Size() > maxParams:
		l.why = fmt.Sprintf("has %d bytes, more than a kernel's parameters may have in all (%d)", t.Size(), maxParams)
	default:
		l.why = byValueProblem(t, "")
	}
	v, _ := byValueLayouts.LoadOrStore(t, l)
	return v.(*byValue)
}

// byValueProblem says why a value of t, reached through the fields and
// elements named by path, cannot pass by its bytes, or returns "".
func byValueProblem(t reflect.Type, path string) string {
	where := func() string {
		switch {
		case path == "":
			return "it"
		case strings.HasPrefix(path, "[]"):
			return "an element"
		}
		return "field " + path
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Bool:
		return ""
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		return fmt.Sprintf("%s is a %v, whose size is Go's, not the kernel's: use int32, int64, uint32 or uint64", where(), t)
	case reflect.Array:
		return byValueProblem(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if why := byValueProblem(f.Type, p); why != "" {
				return why
			}
		}
		return ""
	}
	return fmt.Sprintf("%s is a %v, which holds Go pointers the kernel cannot use: pass device addresses as cu.CUdeviceptr (Slice.Ptr, DeviceMemory.Ptr)", where(), t)
}

// argBytes returns the address of the bytes of *v, a value of a type that
// passes by value. Such a type holds no pointers, so it is never stored in
// the interface's data word itself: that word points to the value.
func argBytes(v *any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(v))[1] }

// argError explains why argument i could not be encoded.
func argError(op string, i int, v any, why int) error {
	t := reflect.TypeOf(v)
	switch why {
	case argPlatformInt:
		return argsErr(op, "argument %d is a %v, whose size is the platform's: use int32, int64, uint32 or uint64", i, t)
	case argClosedMemory:
		return &Error{Op: op, Err: fmt.Errorf("argument %d is closed or nil device memory: %w", i, ErrClosed)}
	case argByValue:
		return argsErr(op, "argument %d is a %v, which cannot pass by value: %s", i, t, byValueLayout(t).why)
	}
	return argsErr(op, "argument %d is a %v: a kernel argument is a fixed-size number (int8 to uint64, float32, float64), bool, cu.CUdeviceptr, *DeviceMemory, *Slice, or a struct or array of fixed-size numbers (passed by value)", i, t)
}

// byValueArg returns the layout of argument v, of a type encodeArg found
// to pass by value, or its error.
func byValueArg(op string, i int, v any) (*byValue, error) {
	l := byValueLayout(reflect.TypeOf(v))
	if l.why != "" {
		return nil, argError(op, i, v, argByValue)
	}
	return l, nil
}

func writeArg(slot unsafe.Pointer, bits uint64, size uint8) {
	switch size {
	case 1:
		*(*uint8)(slot) = uint8(bits)
	case 2:
		*(*uint16)(slot) = uint16(bits)
	case 4:
		*(*uint32)(slot) = uint32(bits)
	default:
		*(*uint64)(slot) = bits
	}
}

// Args is a prepared, reusable set of kernel arguments in C memory, made
// by Kernel.NewArgs: launching with LaunchArgs makes no allocation and no
// copy, and Set or SetArg change one argument in place between launches
// (the driver copies the arguments at each launch, so changing them after
// LaunchArgs returns does not affect launches already enqueued).
//
// Args is not safe for concurrent use: Set and a launch with the same Args
// must not run at once. Close frees its memory; Args dropped without Close
// are freed by a cleanup.
type Args struct {
	k *Kernel
	// mem is one C block: n pointers (the kernelParams array of
	// cuLaunchKernel), then the slots they point to, one per argument at
	// offs[i] from mem: 8 bytes, or a value's size rounded up to 8.
	mem     unsafe.Pointer
	sizes   []uint32
	offs    []uint32
	aligns  []uint8  // the alignment of a value passed by its bytes, 0 for the others
	types   []string // for error messages: the Go type each slot was made from
	cleanup runtime.Cleanup
}

// newArgs encodes args into a fresh C block and checks them against k.
func (k *Kernel) newArgs(op string, args []any, keep bool) (*Args, error) {
	n := len(args)
	a := &Args{k: k, sizes: make([]uint32, n), offs: make([]uint32, n), aligns: make([]uint8, n)}
	bits := make([]uint64, n)
	end := uint64(8 * n)
	for i, v := range args {
		b, size, why := encodeArg(v)
		sz := uint64(size)
		switch why {
		case argOK:
		case argByValue:
			l, err := byValueArg(op, i, v)
			if err != nil {
				return nil, err
			}
			sz, a.aligns[i] = uint64(l.size), uint8(l.align)
		default:
			return nil, argError(op, i, v, why)
		}
		bits[i], a.sizes[i], a.offs[i] = b, uint32(sz), uint32(end)
		end += (max(sz, 8) + 7) &^ 7
	}
	if err := k.checkSizes(op, a.sizes, a.aligns, args); err != nil {
		return nil, err
	}
	a.mem = C.calloc(C.size_t(max(end, 1)), 1)
	ptrs := unsafe.Slice((*uintptr)(a.mem), n)
	for i := range n {
		slot := a.slot(i)
		ptrs[i] = uintptr(slot)
		if a.aligns[i] != 0 {
			copy(unsafe.Slice((*byte)(slot), a.sizes[i]), unsafe.Slice((*byte)(argBytes(&args[i])), a.sizes[i]))
		} else {
			writeArg(slot, bits[i], uint8(a.sizes[i]))
		}
	}
	if keep {
		a.types = make([]string, n)
		for i, v := range args {
			a.types[i] = reflect.TypeOf(v).String()
		}
		a.cleanup = runtime.AddCleanup(a, freeC, a.mem)
	}
	return a, nil
}

func freeC(p unsafe.Pointer) { C.free(p) }

func (a *Args) slot(i int) unsafe.Pointer {
	return unsafe.Add(a.mem, a.offs[i])
}

// checkSizes compares argument sizes with k's parameters where the driver
// told them, and the offsets of the parameters with the alignments
// aligns (nil: none) of the values passed by their bytes. args, if not
// nil, gives the arguments' types for the message.
func (k *Kernel) checkSizes(op string, sizes []uint32, aligns []uint8, args []any) error {
	if !k.paramsKnown {
		return nil
	}
	if len(sizes) != len(k.params) {
		return argsErr(op, "kernel %s takes %d arguments (of %s bytes), %d given",
			k.name, len(k.params), k.paramList(), len(sizes))
	}
	what := func(i int) string {
		if args == nil {
			return ""
		}
		return fmt.Sprintf(" (%v)", reflect.TypeOf(args[i]))
	}
	for i, s := range sizes {
		if s != k.params[i] {
			return argsErr(op, "argument %d of kernel %s is %d bytes%s, the parameter %d bytes (the kernel's parameters are %s bytes)",
				i, k.name, s, what(i), k.params[i], k.paramList())
		}
		if aligns != nil && aligns[i] > 1 && i < len(k.offsets) && k.offsets[i]%uint32(aligns[i]) != 0 {
			return argsErr(op, "argument %d of kernel %s%s is aligned to %d bytes, but the parameter is at offset %d of the parameter buffer, no multiple of %d: the kernel's type is laid out otherwise (other fields, or a smaller alignment)",
				i, k.name, what(i), aligns[i], k.offsets[i], aligns[i])
		}
	}
	return nil
}

func (k *Kernel) paramList() string {
	var b strings.Builder
	for i, s := range k.params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, s)
	}
	if len(k.params) == 0 {
		return "no"
	}
	return b.String()
}

// NewArgs prepares args for launches of k with LaunchArgs: numbers of a
// fixed size (int8 to uint64, float32, float64, complex64, complex128,
// Float16, BFloat16, the Float8 types), bool (1 byte), cu.CUdeviceptr,
// *DeviceMemory or *Slice[T] (its address, taken now: the memory must stay
// allocated while launches use it), or a value passed by its bytes: a
// struct or array whose fields and elements are fixed-size numbers, bool,
// or structs and arrays of them (never int, uint, uintptr, pointers,
// strings, slices, maps or interfaces), laid out as C lays out the struct
// of the same fields. Where the kernel knows its parameters (see
// ParamSizes), their number and sizes are checked here, and that each
// struct's parameter is at an offset its alignment divides.
func (k *Kernel) NewArgs(args ...any) (*Args, error) {
	if _, ok := k.module().peek(); !ok {
		return nil, k.module().closedError("Kernel.NewArgs")
	}
	return k.newArgs("Kernel.NewArgs", args, true)
}

// Len returns the number of arguments (0 for nil or closed Args).
func (a *Args) Len() int {
	if a == nil || a.mem == nil {
		return 0
	}
	return len(a.sizes)
}

// Set replaces argument i with v, of the same size as the argument it
// replaces (a type NewArgs accepts). It does not allocate when v is a
// *DeviceMemory or any value the compiler can box without allocating; the
// generic SetArg never allocates.
func (a *Args) Set(i int, v any) error {
	const op = "Args.Set"
	if err := a.settable(op, i); err != nil {
		return err
	}
	b, size, why := encodeArg(v)
	switch why {
	case argOK:
	case argByValue:
		l, err := byValueArg(op, i, v)
		if err != nil {
			return err
		}
		if l.size != a.sizes[i] {
			return a.sizeErr(op, i, l.size)
		}
		copy(unsafe.Slice((*byte)(a.slot(i)), l.size), unsafe.Slice((*byte)(argBytes(&v)), l.size))
		return nil
	default:
		return argError(op, i, v, why)
	}
	if uint32(size) != a.sizes[i] {
		return a.sizeErr(op, i, uint32(size))
	}
	writeArg(a.slot(i), b, size)
	return nil
}

func (a *Args) settable(op string, i int) error {
	if a == nil {
		return nilError(op)
	}
	if a.mem == nil {
		return closedError(op)
	}
	if i < 0 || i >= len(a.sizes) {
		return argsErr(op, "argument %d of %d", i, len(a.sizes))
	}
	return nil
}

func (a *Args) sizeErr(op string, i int, size uint32) error {
	return argsErr(op, "argument %d was made from a %s of %d bytes; a new value must have that size, not %d bytes",
		i, a.types[i], a.sizes[i], size)
}

// SetArg replaces argument i of a with v, which must have the size of the
// argument it replaces. It never allocates: use it in loops that change an
// argument between launches. (A method cannot have type parameters, hence a
// function.)
func SetArg[T Element](a *Args, i int, v T) error {
	const op = "SetArg"
	if err := a.settable(op, i); err != nil {
		return err
	}
	if size := uint32(unsafe.Sizeof(v)); size != a.sizes[i] {
		return a.sizeErr(op, i, size)
	}
	*(*T)(a.slot(i)) = v
	return nil
}

// Close frees the arguments' C memory. Closing again returns nil; Close on
// nil or zero Args (not made by NewArgs) returns ErrClosed.
func (a *Args) Close() error {
	if a == nil {
		return nilError("Args.Close")
	}
	if a.k == nil {
		return closedError("Args.Close")
	}
	if a.mem == nil {
		return nil
	}
	a.cleanup.Stop()
	C.free(a.mem)
	a.mem = nil
	return nil
}

// launchMany is Launch for more than maxLaunchValues arguments: they are
// copied to C memory for the call.
func (k *Kernel) launchMany(op string, s *Stream, cfg LaunchConfig, args []any) error {
	h, err := k.checkLaunch(op, s, cfg)
	if err != nil {
		return err
	}
	a, err := k.newArgs(op, args, false)
	if err != nil {
		return err
	}
	err = k.hotParams(op, h, cfg, a)
	C.free(a.mem)
	return err
}

// LaunchArgs enqueues the kernel on s with cfg and the prepared arguments a
// (cuLaunchKernel). It does not allocate and binds no context: one driver
// call after a few checks. Args made for another kernel are checked
// against this one's parameters where the driver told them.
func (k *Kernel) LaunchArgs(s *Stream, cfg LaunchConfig, a *Args) error {
	const op = "Kernel.LaunchArgs"
	h, err := k.checkLaunch(op, s, cfg)
	if err != nil {
		return err
	}
	if a == nil {
		return nilError(op + " (args)")
	}
	if a.mem == nil {
		return closedError(op + " (args)")
	}
	if a.k != k {
		if err := k.checkSizes(op, a.sizes, a.aligns, nil); err != nil {
			return err
		}
	}
	err = k.hotParams(op, h, cfg, a)
	runtime.KeepAlive(a)
	return err
}

// launchLimits are the shapes the driver takes for a kernel: its device's
// block and grid dimensions and threads per block, the kernel's own
// threads per block (its registers, or its launch bounds, can lower it
// below the device's) and its dynamic shared memory. A limit the driver
// did not tell is the largest value, so that nothing is refused for it.
type launchLimits struct {
	threads                      uint64 // per block: the kernel's, which is at most the device's
	block, grid                  Dim3
	dynShared                    uint32
	kernelThreads, deviceThreads uint32 // for the messages
}

// fits reports whether cfg is within l. A zero Y or Z is within any
// dimension's limit, and counts as 1 in the threads.
func (l *launchLimits) fits(cfg *LaunchConfig) bool {
	b, g := &cfg.Block, &cfg.Grid
	return b.X <= l.block.X && b.Y <= l.block.Y && b.Z <= l.block.Z &&
		g.X <= l.grid.X && g.Y <= l.grid.Y && g.Z <= l.grid.Z &&
		cfg.SharedMemBytes <= l.dynShared &&
		uint64(b.X)*uint64(max(b.Y, 1))*uint64(max(b.Z, 1)) <= l.threads
}

var noLimits = launchLimits{threads: math.MaxUint64, block: Dim3{math.MaxUint32, math.MaxUint32, math.MaxUint32},
	grid: Dim3{math.MaxUint32, math.MaxUint32, math.MaxUint32}, dynShared: math.MaxUint32,
	kernelThreads: math.MaxUint32, deviceThreads: math.MaxUint32}

// queryLimits asks the driver for k's launch limits: the device's
// attributes of the module's context, the kernel's function attributes.
// What it cannot ask (a module without a context, an attribute the driver
// does not answer) stays unlimited: the driver then checks it alone.
func (k *Kernel) queryLimits(op string) *launchLimits {
	l := noLimits
	h := k.module()
	st, ok := h.enter()
	if !ok {
		return &l
	}
	defer h.exit()
	if st.ctx.core == nil {
		return &l
	}
	dev := st.ctx.core.val.dev
	attr := func(a cu.CUdevice_attribute, v *uint32) {
		if n, err := dev.Attribute(a); err == nil && n > 0 {
			*v = uint32(n)
		}
	}
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &l.deviceThreads)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &l.block.X)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &l.block.Y)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &l.block.Z)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &l.grid.X)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &l.grid.Y)
	attr(cu.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &l.grid.Z)
	_ = bind(op, st.ctx.raw(), func() error {
		var v int32
		if cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.raw) == nil && v > 0 {
			l.kernelThreads = uint32(v)
		}
		if cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.raw) == nil && v >= 0 {
			l.dynShared = uint32(v)
		}
		return nil
	})
	l.threads = uint64(min(l.kernelThreads, l.deviceThreads))
	return &l
}

// checkShape is checkLaunch's check of cfg against k's limits where the
// limits are not known yet or cfg exceeds them: it names the limit
// exceeded. The dynamic shared memory a kernel may have can be raised
// behind this Kernel's back (another Kernel of the function, the raw
// cuFuncSetAttribute), so it is asked again before a launch is refused.
func (k *Kernel) checkShape(op string, cfg *LaunchConfig) error {
	l := k.limits.Load()
	if l == nil {
		l = k.queryLimits(op)
		k.limits.Store(l)
		if l.fits(cfg) {
			return nil
		}
	}
	b, g := cfg.Block.norm(), cfg.Grid.norm()
	hi, threads := bits.Mul64(uint64(b.X)*uint64(b.Y), uint64(b.Z))
	if hi != 0 {
		threads = math.MaxUint64
	}
	shape := ""
	if b.Y != 1 || b.Z != 1 {
		shape = fmt.Sprintf(" (%d×%d×%d)", b.X, b.Y, b.Z)
	}
	switch {
	case threads > l.threads && l.kernelThreads < l.deviceThreads:
		return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
			"block of %d threads%s exceeds kernel %s's limit of %d threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers per thread or its launch bounds keep it below the device's %d)",
			threads, shape, k.name, l.kernelThreads, l.deviceThreads)
	case threads > l.threads:
		return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
			"block of %d threads%s exceeds kernel %s's limit of %d threads per block, the device's",
			threads, shape, k.name, l.threads)
	}
	for _, d := range [...]struct {
		what       string
		n, limit   uint32
		axis, unit string
	}{
		{"block", b.X, l.block.X, "X", "threads"}, {"block", b.Y, l.block.Y, "Y", "threads"}, {"block", b.Z, l.block.Z, "Z", "threads"},
		{"grid", g.X, l.grid.X, "X", "blocks"}, {"grid", g.Y, l.grid.Y, "Y", "blocks"}, {"grid", g.Z, l.grid.Z, "Z", "blocks"},
	} {
		if d.n > d.limit {
			v, lim := b, l.block
			if d.what == "grid" {
				v, lim = g, l.grid
			}
			return attrError(op, cu.CUDA_ERROR_INVALID_VALUE,
				"%s of %d×%d×%d %s: %d in %s exceeds the device's limit of %d (the largest %s is %d×%d×%d %s)",
				d.what, v.X, v.Y, v.Z, d.unit, d.n, d.axis, d.limit, d.what, lim.X, lim.Y, lim.Z, d.unit)
		}
	}
	if cfg.SharedMemBytes > l.dynShared {
		return k.sharedMemError(op, cfg.SharedMemBytes, l)
	}
	return nil
}

// sharedMemError is the error of a launch asking for more dynamic shared
// memory than l allows, unless the kernel's limit was raised since: then
// the limits are kept with the new value and the launch goes on.
func (k *Kernel) sharedMemError(op string, bytes uint32, l *launchLimits) error {
	var limit, static int32 = -1, -1
	optin := -1
	_ = k.withKernel(op, func(st *moduleState) error {
		if cu.FuncGetAttribute(&limit, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.raw) != nil {
			limit = -1
		}
		if cu.FuncGetAttribute(&static, cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.raw) != nil {
			static = -1
		}
		if st.ctx.core != nil {
			if n, err := st.ctx.core.val.dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); err == nil {
				optin = n
			}
		}
		return nil
	})
	if limit < 0 {
		return nil // the driver checks it
	}
	if uint32(limit) != l.dynShared {
		n := *l
		n.dynShared = uint32(limit)
		k.limits.Store(&n)
		if bytes <= n.dynShared {
			return nil
		}
	}
	msg := fmt.Sprintf("%d bytes of dynamic shared memory per block exceed kernel %s's limit of %d bytes (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
		bytes, k.name, limit)
	if optin >= 0 && static >= 0 {
		if most := optin - int(static); int64(bytes) <= int64(most) {
			msg += fmt.Sprintf(": Kernel.SetMaxDynamicSharedMemory(%d) raises it, up to %d bytes on this device (its opt-in maximum of %d bytes per block, less the kernel's %d bytes of static shared memory)",
				bytes, most, optin, static)
		} else {
			msg += fmt.Sprintf(", and more than this device allows it: at most %d bytes (its opt-in maximum of %d bytes per block, less the kernel's %d bytes of static shared memory), which Kernel.SetMaxDynamicSharedMemory sets",
				max(most, 0), optin, static)
		}
	}
	return attrError(op, cu.CUDA_ERROR_INVALID_VALUE, "%s", msg)
}
