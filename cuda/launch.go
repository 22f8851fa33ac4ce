package cuda

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
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
