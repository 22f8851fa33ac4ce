// Package nvtx marks ranges of time and instants in a Go program for
// NVIDIA's profilers (Nsight Systems, Nsight Compute): NVTX, the NVIDIA
// Tools Extension. Under a profiler each range is a bar on the
// timeline, above the CUDA calls and kernels it caused; without one every
// call costs a few nanoseconds, an atomic load and a branch, and nothing
// else.
//
// The package needs no GPU, no CUDA driver and no NVIDIA file, to build
// or to run, and imports nothing of the rest of gocuda: a program can keep
// its ranges in production code. Built without cgo, or for another system
// than Linux, it compiles to the disabled path alone.
//
// # Marking code
//
// A range covers a stretch of work; name it after what the work is:
//
//	func decode(frame []byte) {
//		defer nvtx.Range("decode")()
//		...
//	}
//
// Range returns the function that ends the range. Start and End do the
// same with a value, for ranges that do not match a function's body:
//
//	r := nvtx.Start("upload")
//	...
//	r.End()
//
// A mark is an instant: nvtx.Mark("checkpoint").
//
// StartWith, RangeWith, MarkWith and PushWith take Attributes: a color
// (RGB, ARGB, or Red, Green, …), a category (a number, named once with
// NameCategory, by which the profiler can group and filter events) and a
// payload, a number shown with the event (Int64, Uint64, Float64, Int32,
// Uint32, Float32):
//
//	nvtx.NameCategory(1, "io")
//	defer nvtx.RangeWith(nvtx.Attributes{
//		Message:  "read batch",
//		Color:    nvtx.Blue,
//		Category: 1,
//		Payload:  nvtx.Int64(int64(len(batch))),
//	})()
//
// # Goroutines and threads
//
// NVTX knows OS threads, not goroutines. It has two kinds of range:
//
//   - start/end ranges (Start, StartWith, Range, RangeWith, and
//     RangeID.End) are identified by a process-wide id: any goroutine may
//     end one, whatever thread it runs on by then. These are the ranges
//     to use in Go.
//   - push/pop ranges (Push, PushWith, Pop) nest on a stack of the OS
//     thread that pushed them. The Go scheduler moves a goroutine between
//     threads whenever it likes, so a Pop may find another thread's stack:
//     use them only between runtime.LockOSThread and
//     runtime.UnlockOSThread. Push returns the range's depth on its
//     thread, and NotTracked where no tool tracks push/pop ranges.
//
// Every function of the package is safe for concurrent use.
//
// # Domains and registered strings
//
// A Domain is a named group of events, with its own categories: a
// library puts its ranges in a domain of its own so that they can be
// shown, filtered or hidden apart from the program's. The nil *Domain is
// NVTX's default domain, the one the package-level functions use.
//
//	var db = nvtx.NewDomain("mydb")
//
//	func query(q string) {
//		defer db.Range("query")()
//		...
//	}
//
// A string registered in a domain (Domain.RegisterString) is sent to the
// tool as a handle instead of its text, which saves the tool work on every
// event of a hot path; set it as Attributes.Registered. Domains and
// registered strings last as long as the process: NewDomain and
// RegisterString return the same one for the same name.
//
// # Seeing the ranges
//
// With Nsight Systems (the nsys command, from the CUDA toolkit or its own
// package), run the program under the profiler, then open the report in
// the Nsight Systems GUI, or summarize it on the command line:
//
//	nsys profile --trace=nvtx,cuda -o prog ./prog
//	nsys stats --report nvtx_sum prog.nsys-rep
//
// Nsight Compute (ncu --nvtx) shows the ranges around each kernel it
// profiles, and can limit profiling to kernels inside chosen ranges.
//
// # How a tool attaches
//
// NVTX version 3 has no library of its own: each program carries the
// application side of NVTX, and this package is that side for Go,
// written from NVTX's documented interface (no NVIDIA header or library
// is used). A profiler sets NVTX_INJECTION64_PATH (InjectionEnv) to its
// injection library before starting the program. On the package's first
// call that needs to know (or Enabled), the package dlopens that library,
// once per process, and calls its InitializeInjectionNvtx2 with the
// program's export table; the tool fills in the functions it implements
// (the CORE module for the default domain, CORE2 for domains and
// registered strings), and every later event is a cgo call into them.
// From then on, whether a tool is attached is one atomic load.
//
// A tool that cannot be attached never stops the program: where the
// library does not load, has no InitializeInjectionNvtx2, or its
// initialization returns 0, the package stays disabled for the life of
// the process, as it is without a tool, and AttachFailure says why.
// Only 64-bit programs exist here; NVTX_INJECTION32_PATH is not read.
//
// Messages are C strings to the tool: a NUL byte in one ends it. The tool
// gets a copy, valid for the call, made on the stack (on the heap beyond
// 255 bytes).
//
// What is not bound: wide-character messages (Go strings are UTF-8, sent
// as they are), naming OS threads and CUDA or OpenCL objects, resource
// naming, the synchronization module, extended payloads, and
// destroying a domain.
package nvtx
