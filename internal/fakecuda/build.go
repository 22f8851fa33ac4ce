// Package fakecuda builds and controls a fake CUDA driver: a shared library
// with the driver's entry points (contexts, streams, events, memory) that
// runs on the host, for tests on machines without a GPU. Package cu loads
// it like the real libcuda.so.1 when GOCUDA_LIBCUDA names it.
//
// The library is C, compiled at test time with the machine's C compiler
// (the one cgo uses), so the repository carries no binary. Its behaviour:
//
//   - FAKECUDA_DEVICES devices (default 1; 0 makes cuInit fail with
//     CUDA_ERROR_NO_DEVICE) that report an H100's
//     attributes; cuDriverGetVersion reports FAKECUDA_DRIVER_VERSION (default
//     13000), and cuGetProcAddress hands out no ABI newer than that (the
//     library BuildForDriver makes does not export them either, as a real
//     driver of that version);
//   - primary and created contexts, with a per-thread context stack;
//   - streams whose operations run in order on a host thread per stream,
//     asynchronously to the caller; events; the legacy default stream's
//     implicit synchronization with blocking streams;
//   - device memory that is host memory (a CUdeviceptr is its address), in a
//     table that rejects pointers outside any allocation; memsets (2D ones
//     of 32-bit values too) and copies that take modeled time: bytes at
//     FAKECUDA_BANDWIDTH bytes per second (default 500e9) plus
//     FAKECUDA_DELAY_NS per operation, so a stream with gigabytes queued
//     stays busy long enough to observe;
//   - stream capture into graphs of memsets, copies and host functions,
//     with the capture rules the cuda package meets (joining streams through
//     events, unjoined streams, unsafe calls per capture mode), and graphs
//     that instantiate, launch and update; page-locking of the caller's
//     memory (cuMemHostRegister); peer access between devices; peer
//     copies (cuMemcpyPeer, which waits for the work of the contexts it
//     involves, and cuMemcpyPeerAsync, in stream order);
//   - managed memory (cuMemAllocManaged): attach flags checked, prefetches
//     (cuMemPrefetchAsync, either ABI) queued in stream order, advice
//     (cuMemAdvise, either ABI) and the last prefetch's destination kept
//     for cuMemRangeGetAttribute; it does not count against cuMemGetInfo's
//     free memory, as with the driver until it is resident;
//   - memory pools of device memory (cuDeviceGetDefaultMemPool,
//     cuDeviceGetMemPool, cuDeviceSetMemPool, cuMemPoolCreate,
//     cuMemPoolDestroy, cuMemPoolGetAttribute, cuMemPoolSetAttribute,
//     cuMemPoolTrimTo, cuMemAllocFromPoolAsync), which cuMemAllocAsync takes
//     from: their reserve counts against cuMemGetInfo's free memory, and
//     their attributes report what is reserved and used, the high
//     watermarks and the release threshold (csrc/mempool.c says how it is
//     simpler than the driver);
//   - virtual memory (cuMemAddressReserve, cuMemCreate, cuMemMap,
//     cuMemSetAccess, cuMemUnmap, cuMemRelease, cuMemAddressFree,
//     cuMemGetAllocationGranularity): physical memory is a memory file
//     mapped at the reserved host addresses, exported and imported as a
//     POSIX file descriptor (cuMemExportToShareableHandle,
//     cuMemImportFromShareableHandle), so it works between processes too
//     (csrc/vmm.c);
//   - modules and libraries (cuModuleLoadData, cuModuleLoadDataEx,
//     cuModuleLoad, cuLibraryLoadData, cuLibraryLoadFromFile) of the
//     images a driver takes, compiled by nobody: PTX whose header does not
//     parse is refused (CUDA_ERROR_INVALID_PTX), and so is a cubin or
//     fatbin whose headers are not sane or point outside the image they
//     describe (CUDA_ERROR_INVALID_IMAGE); MinimalCubin is the smallest
//     cubin loaded. The .entry directives of PTX say which kernels a
//     module has and their .param lists the parameter layout
//     (cuFuncGetParamInfo); of a cubin or fatbin only the headers are
//     read. An entry of PTX resolves (cuModuleGetFunction,
//     cuLibraryGetKernel) to the kernel written in Go and registered
//     under its name (Lib.RegisterKernel; package cudatest's
//     RegisterKernel for users) if there is one, else to the entry's PTX,
//     which the Go side runs (KernelCall.PTX: package cudatest
//     interprets it with internal/ptx); a name of a cubin or fatbin
//     resolves only to a registered Go kernel, else CUDA_ERROR_NOT_FOUND;
//   - kernel launches (cuLaunchKernel, cuLaunchKernelEx,
//     cuLaunchCooperativeKernel) of those functions, checked (shape,
//     stream, dynamic shared memory, cluster dimensions, the size of a
//     cooperative grid), their parameters copied, queued in stream order
//     or captured into a graph; the stream's thread runs each through the
//     Go callback of Lib.SetKernelRunner, and a failed run leaves its
//     context with a sticky error that synchronizing calls report, as a
//     faulting kernel does on a GPU;
//   - kernel functions without code, made by Lib.NewFunction with the
//     registers, shared memory and parameters a test gives them, whose
//     launches are checked and recorded for Lib.LastLaunch without running
//     anything; cuFuncGetAttribute, cuFuncSetAttribute and the occupancy
//     calls answer for both kinds of function;
//   - a race detector (FAKECUDA_RACE=1, see RaceEnv): for every byte range
//     of device, managed and page-locked host memory, which operation read
//     or wrote it (memsets, copies, kernels through fakecuda_note_access,
//     host accesses reported with Lib.HostAccess, the host functions of
//     the fake libraries through fakecuda_hostfn_access, which, with
//     fakecuda_range_valid, is theirs to call), and whether two
//     accesses to the same bytes, one a write, are ordered by
//     happens-before, kept with vector clocks: stream order, events
//     recorded and waited on, synchronizing calls and successful queries,
//     the legacy stream's implicit ordering, graph edges; not host
//     functions that ran, which the host may never learn of, but code
//     that runs because one completed, through Lib.ObserveHostFunc. Races
//     are read with Lib.Race, each with where its two operations were
//     queued (csrc/race.c says how);
//   - a seeded scheduler (FAKECUDA_SEED=N, see SeedEnv) that runs one
//     operation at a time, drawn among the streams' ready ones by a PRNG,
//     while the host waits (csrc/sched.c says what is then deterministic);
//   - accounting of live objects and calls, and injected faults
//     (FAKECUDA_FAIL="cuStreamCreate:3:2" fails the third cuStreamCreate with
//     result 2), read and set through Lib.
//
// Every other driver function is absent, as in a driver too old for it
// (the explicit graph-building API, module globals, pool access and
// export, the cuIpc* calls), so
// code that calls one gets an error matching cu.ErrMissingFunction. The
// sources, in
// csrc/, say what each part models and where it is simpler than the driver.
package fakecuda

import (
	"embed"

	"github.com/gocuda/gocuda/internal/cbuild"
)

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// library is the fake driver's build. Hidden visibility keeps the exported
// symbols to the driver's entry points and the fakecuda_* controls. Frame
// pointers let the race detector walk from the fake's frames into those of
// the Go code that called it (csrc/race.c).
var library = cbuild.Library{
	Name:    "fakecuda",
	What:    "the fake driver",
	Sources: sources,
	Dir:     "csrc",
	Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
}

// Build compiles the fake driver into dir and returns the library's path.
// An empty dir means a directory of the user's under os.TempDir(). The file name carries a
// hash of the sources, compiler and flags, so a build is reused by every
// later call and process until the sources change; concurrent builds (the
// test binaries of several packages at once) each write a temporary file
// and rename it into place. The compiler is $CC, default gcc.
func Build(dir string) (string, error) {
	return library.Build(dir)
}
