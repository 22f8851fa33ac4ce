// Package ptx interprets PTX, the virtual instruction set NVRTC and nvcc
// compile CUDA C++ to, on the host: the fake CUDA driver of
// internal/fakecuda runs a module's kernels with it (package
// cuda/cudatest hands it each launch of an entry that has no Go kernel
// registered), so that a test without a GPU runs the kernels that run on
// one.
//
// # What it runs
//
// Parse reads a module's text: the .version, .target and .address_size
// directives, module-scope .global, .const and .shared variables with
// their initializers (addresses of variables included), .entry and .func
// definitions with their .param lists, .reg declarations (ranges such as
// %r<10> too), labels, scoped blocks and the .param declarations of
// calls, and skips debug information (.file, .loc and the .section
// blocks of -G). Its *Error says whether the text is malformed or valid PTX that
// this package does not read (Error.Unsupported: texture references,
// 32-bit addresses, a directive it does not know, a size beyond its
// limits). Module.Kernel compiles an entry and the functions it calls,
// once (a failure is remembered as a success is): an instruction outside the
// set below, or a use of a feature the interpreter lacks, is an *Error
// naming the instruction (Error.Inst) and its line, returned before
// anything runs. The fake driver asks both ahead of running anything:
// cuda/cudatest parses a module's PTX as it loads, refusing malformed text
// with CUDA_ERROR_INVALID_PTX, and compiles an entry before its first
// launch, which fails with CUDA_ERROR_NOT_SUPPORTED, synchronously and
// leaving the context usable, when the entry cannot run; the module's
// other entries run. The instructions:
//
//   - integer arithmetic of every width, signed and unsigned: add, sub,
//     mul (.lo, .hi, .wide), mad, mul24, mad24, sad, div, rem, min and
//     max (.relu too), abs, neg, the carry chains (add.cc, addc, sub.cc,
//     subc, mad.cc, madc, whose carry after a subtraction is the
//     hardware's: set when nothing is borrowed), and, or, xor, not, cnot,
//     shl, shr, popc, clz, brev, bfind, fns, bfe, bfi, prmt, shf, lop3,
//     dp4a, dp2a, szext, bmsk; add, sub, min and max on u16x2 and s16x2; the SIMD video
//     instructions on halfwords and bytes (vadd2, vabsdiff4 and kin, in
//     their merge and .add forms, without lane masks or selectors);
//   - floating point on f16, f16x2, bf16, bf16x2, f32 and f64: add, sub,
//     mul, fma, mad, div, min, max (.NaN too), neg, abs, sqrt, rsqrt,
//     rcp, sin, cos, lg2, ex2, tanh, copysign, testp, with the rounding
//     modifiers .rn, .rz, .rm and .rp (the directed ones exact, through
//     math/big), .ftz, .sat and .relu; the approximate functions are
//     computed exactly and rounded, which is within their documented
//     error;
//   - setp and set with every comparison and .and, .or, .xor, selp, slct,
//     mov (vectors packed and unpacked), cvt between all of those types
//     with every rounding and saturation (directed roundings exact, from
//     integers too) and to and from the FP8 pairs e4m3x2 and e5m2x2,
//     cvta and isspacep;
//   - ld, ldu and st on .global, .const, .shared, .local, .param and
//     generic addresses, scalar and .v2, .v4; atom and red (add, min,
//     max, and, or, xor, exch, cas, inc, dec) of 16, 32 and 64 bits on
//     global and shared memory, floating-point adds included, and sm_90's vector
//     forms (.v2, .v4, .v8 of add, min and max on floating point), each
//     element its own atomic; cp.async
//     (done at once); membar, fence, prefetch and the like, which have
//     nothing to order;
//   - bra, ret, exit, call of .func (recursion included, up to 4096
//     calls deep and 64 MiB of a warp's registers), calls through
//     function pointers (a function's address comes from mov or an
//     initializer; lanes calling different functions call them in turn),
//     trap and brkpt; vprintf (printf), __assertfail (assert), and malloc
//     and free (from a heap of 8 MiB per module) as built-ins;
//   - bar.sync, barrier.sync, bar.red (__syncthreads_count, _and, _or),
//     bar.warp.sync; shfl.sync (up, down, bfly, idx), vote.sync, match,
//     activemask, redux.sync, elect.sync; a grid-wide barrier for
//     cooperative launches;
//   - the special registers: %tid, %ntid, %ctaid, %nctaid, %laneid,
//     %warpid, %smid, %nsmid, the lane masks, %clock, %clock64,
//     %globaltimer, %dynamic_smem_size, %total_smem_size and the cluster
//     registers (a cluster is one block).
//
// Tensor-core instructions (mma, wmma, wgmma, ldmatrix), the bulk and
// tensor copies (TMA), mbarrier, textures and surfaces and indirect
// branches are errors of Module.Kernel; named barriers with a thread
// count fail the launch when one is reached.
//
// # How it runs
//
// A launch's blocks are spread over Launch.Workers goroutines (GOMAXPROCS
// by default); a cooperative launch runs every block at once. A block's
// warps run one after the other on its goroutine, or each on its own
// goroutine when the kernel has a barrier (and a warp that goes round a
// loop 65536 times starts those of its block yet to run beside it: it
// may be waiting for them). A warp's 32 lanes run in step:
// each instruction is dispatched once for the lanes at it, and when a
// branch splits them the lanes furthest behind run first, until they
// reach the others, where they go on together (the rule that reconverges
// structured code without a stack of masks). Lanes that go round a
// loop 1024 times while others of their warp wait ahead let those run
// until they reach a barrier, finish or spin in turn, as the independent
// thread scheduling of sm_70 and later does: a lane spinning on a lock
// another lane of its warp holds gets it. Warp shuffles and votes see
// the lanes at the instruction together, as on a GPU.
//
// Device memory is the fake driver's host memory. Each access is checked
// against the allocations Launch.Memory knows (and the module's own
// variables), against the block's shared memory, and against the thread's
// local memory: an access outside them fails the launch with a *Fault of
// CUDA_ERROR_ILLEGAL_ADDRESS, a misaligned one with
// CUDA_ERROR_MISALIGNED_ADDRESS, naming the block, the thread, the
// instruction and its line. The global ranges read and written go to
// Launch.Accesses (the race detector's input), and with Launch.SharedRace
// set, two threads of a block touching the same shared bytes, one of them
// writing, with no barrier between them, are reported as compute-
// sanitizer's racecheck reports them. Every warp runs at most
// Launch.MaxSteps instructions.
//
// # Speed
//
// BenchmarkPolyLoop, BenchmarkSaxpy1Mi and BenchmarkBlockSum measure
// thread-instructions per second. On one core of a 2-core AMD EPYC
// development VM (medians of three runs of five launches): about 178
// million for arithmetic in a loop, 135 million for a 1 Mi-element saxpy
// (a launch of it takes 0.155 s on one core, 0.128 s on both), and 112
// million for a shared-memory reduction whose warps meet at barriers.
package ptx
