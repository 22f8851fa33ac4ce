// Package cuda is the handwritten layer over the raw driver bindings of
// github.com/gocuda/gocuda/generated/cu: devices, contexts, streams,
// events, memory, modules and kernels, and graphs, as shared,
// goroutine-safe handles.
//
// A whole program: a Go slice to the GPU, a kernel compiled from CUDA C
// at run time (package cuda/nvrtc), the slice back (Example_pipeline):
//
//	s, err := cuda.OpenStream(0)              // device 0's primary context, a stream on it
//	defer s.Close()
//	res, err := nvrtc.Compile(src)            // CUDA C++ to PTX
//	mod, err := cuda.LoadModule(s.Context(), res.PTX)
//	defer mod.Close()
//	k, err := mod.Function("scale")
//	x, err := cuda.AllocSliceFrom(s, data)    // a *Slice[float32] on s; data may be reused at once
//	defer x.Close()                           // freed on s, after the work queued there
//	err = k.Launch(s, cuda.Linear(len(data), 256), x, float32(10), uint32(len(data)))
//	err = x.CopyTo(data)                      // waits for s: no Synchronize to remember
//
// Work on two streams is ordered with Stream.WaitFor (or an Event and
// Stream.WaitEvent); package cuda/cudatest runs such code without a GPU
// and reports the orders a program forgot (Example_twoStreams).
//
// # Shared handles
//
// Context, Stream, Event, Slice, DeviceMemory, HostBuffer, Module, Graph
// and GraphExec are handles to one driver object each. Clone returns another
// handle to the same object; every handle is closed once with Close, and
// the object is destroyed (or, for a primary context, released) when the
// last handle is closed. So two subsystems can enqueue on one stream and
// each close its own handle when done.
//
// Every method that reaches the driver holds its handles (the receiver and
// the handles it is given, kernel arguments aside: see Kernel.Launch) for
// the whole driver call, as the standard library's file descriptors do: Close waits
// for the calls in flight on the same handle (a Synchronize, say) before it
// gives its reference back, so an object is never destroyed under a call,
// and a call that starts after Close returns an error matching ErrClosed
// without reaching the driver. Methods on a nil handle, or on a zero value
// not made by this package, return ErrClosed too (those that return no
// error return zero values). Closing a handle twice does nothing.
//
// A handle that becomes unreachable without Close is released by a cleanup
// (runtime.AddCleanup). Cleanups are attached in batches after handles are
// made, so that a handle closed soon after never needs one, and a dropped
// handle is released a garbage collection or two after it is dropped.
// Close is the way to release driver resources on time.
//
// When the driver refuses a destroy while the object still exists (a free
// during a stream capture, say), the object is not forgotten: Close returns
// an error matching ErrDeferred and the driver's result, LiveObjects keeps
// counting it (and its Deferred field says how many wait), and the destroy
// is retried when a capture ends and by RetryDeferred.
//
// A Stream or Event (and every other object made in a context) holds a
// reference on its Context, released after the object is destroyed: a
// context outlives everything made in it, whatever order the handles are
// closed in. LiveObjects counts the driver objects held, for leak tests.
//
// # Devices
//
// Device is a plain value: Name, UUID, TotalMemory, ComputeCapability, any
// attribute by its cu.CU_DEVICE_ATTRIBUTE_* enum (Device.Attribute) and
// typed getters for the common ones. DriverVersion, CanAccessPeer and
// EnablePeerAccess complete the picture.
//
// # Memory
//
// Slice[T] is device memory of elements of T (the Element constraint:
// fixed-size numbers, complex64 and complex128, the narrow floats), with
// lengths and offsets in elements. AllocSlice and AllocSliceFrom make one
// on a stream or in a context (see Allocator): on a stream (the usual
// choice) it comes from the device's memory pool in stream order, its
// copies and fills wait for that stream's work, and its last Close frees
// it on the stream after that work. Sub makes views that keep the
// allocation alive; a *Slice is a kernel argument, and the library
// packages (cuda/blas, cuda/rand, cuda/fft, cuda/nccl) take it, views
// included (Memory). A length of 0 is an empty slice, made, copied and
// filled without a driver call.
//
// Go slices move to and from a Slice in two ways:
//
//   - CopyFrom, CopyTo and Fill return when they are done, after the
//     work queued before them that may use the memory: the slice's
//     stream's, or, for memory made in a context, the whole context's.
//     A kernel still running on a stream is never read stale, nor
//     overwritten.
//   - CopyFromHost and CopyToHost are in the order of a stream given to
//     them: CopyFromHost returns as soon as the Go slice has been read (it
//     may be changed or dropped at once), CopyToHost once the Go slice
//     holds the data. Go memory cannot take part in an asynchronous copy,
//     so they go through page-locked buffers of the context's own, in
//     chunks that overlap the CPU's copy with the DMA.
//
// CopySlice and CopySliceAsync copy between slices, Fill and FillAsync
// set every element (any element size; the driver's memsets are of 1, 2
// and 4 bytes), and CopySlicePeer copies between devices.
//
// Allocation failures say what was asked and what the device has free.
// DeviceMemory is the same memory untyped, in bytes, for raw interop (Raw
// gives the device address to package cu; SliceOf views it as a Slice);
// its free functions (CopyToDevice, CopyFromDevice, the Memset methods)
// follow the rules above.
//
// Asynchronous copies of one's own page-locked memory take a HostBuffer
// (Slice.CopyFromAsync, CopyToAsync): AllocHost makes one of Go memory,
// pinned (runtime.Pinner) and page-locked (cuMemHostRegister), with a
// typed view, Slice, that stays ordinary Go memory after the buffer is
// closed or dropped; RegisterHost page-locks memory from outside the Go
// heap (syscall.Mmap). Sizes that overflow are errors before the driver.
// AllocFromPool allocates in stream order from a MemPool of one's own
// (NewMemPool), with its release threshold, trimming and usage counters;
// DefaultMemPool is the device's.
//
// AllocManaged makes ManagedMemory (cuMemAllocManaged): one address for
// the host and every device, whose pages the driver migrates; Prefetch
// moves them to a DeviceLocation or the HostLocation in stream order, and
// Advise gives the driver read-mostly, preferred-location and accessed-by
// advice. ManagedSlice and AccessManaged give the host a typed view, valid
// only while the memory is open and to be used only once the device work
// that touches it is complete; ManagedMemory.DeviceMemory gives a
// DeviceMemory handle to it for the copies, memsets and kernel arguments.
// AllocManaged never asks for more than the device has free.
//
// # Modules and kernels
//
// LoadModule loads PTX, a cubin or a fatbin (cuModuleLoadDataEx); when the
// JIT compiler fails, the error carries its log (JITError). Module.Function
// returns a Kernel. Kernel.Launch takes the arguments as Go values
// (fixed-size numbers, cu.CUdeviceptr, *Slice, *DeviceMemory, and structs
// of fixed-size numbers by value) and copies them to C memory; Kernel.NewArgs prepares them once for Kernel.LaunchArgs, which
// allocates nothing, with SetArg to change one between launches. With CUDA
// 12.4 or later (cuFuncGetParamInfo) the arguments' number and sizes are
// checked against the kernel's parameters before the launch (ErrKernelArgs).
// A launch's shape is checked against the device's and the kernel's
// limits (threads per block, block and grid dimensions, dynamic shared
// memory) before the driver, with an error naming the limit. Linear is the
// configuration of a one-dimensional kernel over n elements, and Blocks
// sizes a one-dimensional grid; where no grid fits (an empty or
// too large size) it returns 0, which every launch refuses rather than run
// one block.
//
// # Completion
//
// Stream.Done returns a channel closed once the work enqueued so far has
// completed, for a select; Stream.Then runs a Go function then, in stream
// order; Stream.WaitIdle waits with a context.Context. None of them polls
// for completion: a host function of C (cuLaunchHostFunc) records it and
// wakes a goroutine of this package, which exists only while completions
// are pending, so no Go code ever runs on (or blocks) a driver thread.
// That goroutine runs no user code either: the functions of Then of each
// stream run on a goroutine of their own, which exists while the stream
// has functions to run, so a function that blocks holds back only its own
// stream's later functions and Done channels. A function of Then may wait
// for any stream, its own included (see Stream.Then).
// The driver calls no host function once a context has failed (a kernel's
// fault), so while completions are pending that goroutine also asks the
// driver about their streams on a coarse timer (10 ms doubling to 1 s):
// on a failure, Done's channels close, Then's functions are dropped
// unrun, and WaitIdle, Synchronize and Query return the driver's error.
//
// # Graphs
//
// Stream.BeginCapture and Stream.EndCapture (or Stream.Capture around a
// function) record the work enqueued on a stream, and on streams joined to
// it through events, into a Graph; Graph.Instantiate makes a GraphExec to
// launch many times, and GraphExec.Update gives it the parameters of
// another capture of the same shape. Graph.Nodes and Graph.Edges expose the
// dependencies. Prefer CaptureThreadLocal: a Go program runs on many
// threads, and in CaptureGlobal mode the driver refuses unsafe calls (a
// synchronous allocation or free, including a cleanup's) on all of them
// while the capture lasts.
//
// A graph can also be built node by node: NewGraph, then AddKernel (a
// Kernel and its arguments as Go values, as Launch takes them), AddCopy,
// AddFill, AddHost (a Go function), AddEventRecord, AddEventWait,
// AddChild, AddMemAlloc and AddMemFree, each after the nodes it is given
// as dependencies. The graph holds what its nodes use (modules, memory,
// events, host functions) for as long as it or an executable graph made
// from it lives. GraphExec.SetKernel and GraphExec.SetCopy change a node
// of an executable graph without instantiating it again.
//
// Conditional nodes (CUDA 12.3 and later; switch 12.8) run a body graph
// while, or if, a condition a kernel sets is non-zero: Graph.NewCondition
// makes the condition, whose Handle a kernel receives as a uint64 and sets
// with cudaGraphSetConditional; AddWhile, AddIf and AddSwitch return the
// node and the bodies to build. A loop that runs on the device until a
// kernel decides it has converged needs no round trip to the host
// (Example_graphWhile). Older drivers and the bindings of CUDA 11.8 return
// an error matching ErrMissingFunction.
//
// # Virtual memory
//
// ReserveAddressRange reserves device addresses; NewPhysicalMemory makes
// memory in multiples of AllocationGranularity; AddressRange.Map puts it
// at an offset of the range and SetAccess opens it to the devices named.
// RangeSlice views mapped memory as a Slice, for kernels and copies.
// GrowableSlice is the common use: a Slice whose base address never
// changes and whose Append and Grow map more memory behind it instead of
// copying, for buffers that grow, such as a key-value cache.
//
// # Memory and events shared between processes
//
// ExportIPC gives a 64-byte IPCMemHandle for memory allocated in a context
// (cuMemAlloc); ImportIPC or ImportIPCSlice opens it in another process,
// and closing the import never frees the exporter's memory. An event made
// WithInterprocess exports likewise (Event.ExportIPC, ImportIPCEvent), to
// order work across processes. Stream-ordered memory is shared through a
// pool made WithShareableHandles: MemPool.ExportFD and ImportMemPool pass
// the pool as a file descriptor, ExportPoolPointer and ImportPoolPointer
// an allocation in it; PhysicalMemory made VMShareable exports as a file
// descriptor too. SendHandle and ReceiveHandle pass such descriptors and
// their handle bytes over a Unix socket. The exporter must keep its memory
// until every importer has closed its import: ReleaseHandle and
// WaitReleased let the two sides say so. Handles also open in Python
// (cuda.bindings' cuIpcOpenMemHandle, and the reverse).
//
// # Green contexts
//
// DeviceSMs describes a device's streaming multiprocessors;
// SMResource.SplitByCount splits them into groups; NewGreenContext makes a
// Context whose work runs only on one group's SMs (CUDA 12.4 and later).
// Streams and everything else are made in it as in any context, so that
// tenants or pipeline stages can be kept on partitions of one GPU. The
// driver lets a green context be current on one thread at a time: calls
// that bind one must not run from several goroutines at once.
//
// # Threads and the current context
//
// CUDA's current context belongs to an OS thread, and goroutines move
// between threads. Every call here that needs a current context (creating
// a stream or an event, destroying one, Context.Synchronize,
// Context.StreamPriorityRange, NewContext, allocations, copies, memsets,
// module loads) locks the goroutine to its thread, pushes the context,
// calls, pops it and unlocks: the thread's
// context stack is left as it was, so code that uses the runtime API or
// manages its own current context is not disturbed. Users never need
// runtime.LockOSThread.
//
// The hot calls (Event.Record, Event.Query, Stream.WaitEvent, Stream.Query,
// Kernel.LaunchArgs, GraphExec.Launch) bind nothing: the driver finds the
// context from the stream, event or function. They make one driver call and
// do not allocate unless they fail. They, and Kernel.Launch and LaunchEx,
// check their handles inside the one C call that makes the driver call,
// after a single fence, instead of holding each handle with two atomic
// read-modify-writes (hot.go); the destroy of an object they have used
// waits until no such call that could have found it open is still in the
// driver. So a Close that races one of them never frees the object under
// it, as for every other call, and one that starts after Close still gets
// ErrClosed.
//
// # Errors
//
// Failures are *Error values naming the operation and the C function, and
// wrapping the cause: errors.Is matches the driver's results (for instance
// cu.CUDA_ERROR_INVALID_VALUE), ErrNoDriver when no driver library can be
// loaded, ErrMissingFunction when the installed driver is too old, and
// ErrClosed.
//
// # Raw handles
//
// Raw returns the driver handle for use with package cu. It remains owned by
// the handles: do not destroy it, and do not use it after the object's last
// Close. Closing one handle while a clone is in use is fine; using the raw
// handle concurrently with the last Close is a use after free, as in C: the
// handle discipline covers this package's calls, not raw ones. Context.Do
// holds its context (not the handle) while its function runs, so the
// function may even close the last handle.
package cuda
