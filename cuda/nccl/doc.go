// Package nccl runs NCCL's collectives (all-reduce, all-gather,
// reduce-scatter, broadcast, reduce, send and receive) on typed device
// memory, across the GPUs of one process or of several processes, with the
// handle rules of package cuda. It is built on the raw binding
// generated/nccl, loaded at run time from libnccl.so.2 (or GOCUDA_LIBNCCL).
//
// # Communicators
//
// A Comm is one rank of a communicator, bound to a clone of a *cuda.Stream
// on which its collectives are queued, as a cuBLAS handle is: it is a
// shared handle on cuda.LibraryObject, so Clone, Close (the last one
// destroys it), ErrClosed after Close or on nil, and LiveObjects work as for
// every handle. The stream's context must be the primary context of its
// device (cuda.PrimaryContext): NCCL works in the primary contexts through
// the CUDA runtime.
//
// There are two ways to make communicators:
//
//   - InitAll makes one per GPU of this process, one stream each
//     (ncclCommInitAll); drive each from its own goroutine, or queue the
//     calls of all of them in one Group.
//   - InitRank makes one rank of a communicator that spans processes (or
//     machines): one process calls NewUniqueID and hands the 128 bytes of the
//     UniqueID (MarshalBinary) to the others over any channel it likes;
//     every rank then calls InitRank with it. InitRank is non-blocking in
//     NCCL (ncclCommInitRankConfig with blocking = 0) and honours its
//     context.Context: if the peers do not all join before the deadline,
//     the half-made communicator is aborted (ncclCommAbort) and InitRank
//     returns the context's error, within the deadline.
//
// # Collectives
//
// The collectives are functions of the element type (AllReduce[float32]),
// on *cuda.Slice[T] of the communicator's context: float32, float64,
// cuda.Float16, cuda.BFloat16, cuda.Float8E4M3, cuda.Float8E5M2, int8,
// uint8, int32, uint32, int64 and uint64. Lengths, counts per rank
// (AllGather, ReduceScatter), roots and peers, contexts and the operation
// are checked before NCCL sees them; the send and receive slices may be
// the same (in place). Sub views are sent and received from their first
// element. A collective of 0 elements (empty views) passes the same
// checks and returns nil without calling NCCL, on every rank alike. A
// collective returns once it is queued on the communicator's stream:
// order other streams after it with events, and read the result after
// the stream (Synchronize). Group queues several
// collectives, of one or of several communicators, as one
// (ncclGroupStart, ncclGroupEnd): InitAll's communicators driven from one
// goroutine must be, or NCCL waits for the other ranks forever.
//
// # FP8
//
// The FP8 types (ncclFloat8e4m3, ncclFloat8e5m2) need NCCL 2.24 or later:
// with an older library loaded (Version), every collective on them is
// refused before NCCL with an error matching generated/nccl's
// NcclInvalidArgument that names the type and both versions, where the
// library would refuse the type itself and, on a communicator of InitRank,
// keep that error for good. NCCL reduces FP8 (AllReduce, Reduce,
// ReduceScatter; Sum, Prod, Max, Min and Avg) on devices of compute
// capability 9.0 or later only, every rank's: a reduction on a rank whose
// own device is older is refused before NCCL, and NCCL refuses it where
// another rank's device is (ncclInvalidArgument, "FP8 reduction support
// begins with sm90 capable devices"). Send and Recv move FP8 on any
// device; AllGather and Broadcast do in NCCL's newest sources, but
// releases before them refuse these too below 9.0 (as reported of 2.26
// and 2.27): move the bytes as uint8 there.
//
// NCCL rounds an FP8 result to nearest, ties to even, saturating at the
// largest finite number as cuda.ToFloat8E4M3 and cuda.ToFloat8E5M2 do
// (±448, ±57344: an E5M2 infinity becomes 57344 too). Its ring and tree
// kernels combine two operands at a time in half precision and round each
// partial result to FP8, so that a sum of more than two ranks may round
// more than once; Avg multiplies each rank's value by 1/ranks, itself
// rounded to FP8, before the sum.
//
// # Errors
//
// An error of NCCL is a *Error (cuda.LibraryError) naming the operation
// and the C function; errors.Is matches its status (nccl.NcclInvalidUsage of
// generated/nccl), and its message carries NCCL's own last error text
// (ncclGetLastError). Without the library, errors match
// generated/nccl's ErrNoLibrary.
//
// # Ending
//
// Close destroys the communicator once its last handle is closed
// (ncclCommDestroy, which waits for the work queued on it). Shutdown first
// flushes it with a deadline (ncclCommFinalize), aborting it if a peer does
// not answer in time; Abort ends it at once (ncclCommAbort), for every
// handle: their calls then return an error matching cuda.ErrClosed. On a
// communicator of InitRank, a collective, Group or Shutdown that waits for
// a peer that never answers returns when another goroutine aborts it, so
// a program bounds such a wait with its own deadline:
//
//	stop := context.AfterFunc(ctx, func() { comm.Abort() })
//	defer stop()
//
// A communicator that an open Group used is not freed before the group
// has ended: an Abort or a last Close meanwhile, from any goroutine (fn's
// included), ends its calls and waits at once and returns without waiting
// for the group, but ncclCommAbort or ncclCommDestroy runs once
// ncclGroupEnd has returned, and Group then returns an error matching
// cuda.ErrClosed for an aborted communicator.
//
// Every function is safe from any goroutine; none needs
// runtime.LockOSThread.
package nccl
