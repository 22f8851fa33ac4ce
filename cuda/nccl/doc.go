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
// There are three ways to make communicators: FromEnvironment, for a job
// of a launcher (see Starting a job), and:
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
// # Starting a job
//
// FromEnvironment makes this process's rank of a job that a launcher
// started, one process per GPU: it reads the launcher's variables
// (Environment), picks the GPU, meets the other ranks at rank 0 and makes
// the communicator (InitRank) on a new stream of the GPU's primary
// context. A program may fill a Config itself and call its Init instead.
//
//	torchrun --nproc-per-node=2 --no-python ./prog
//	torchrun --nnodes=2 --node-rank=$N --nproc-per-node=8 --master-addr=host0 --master-port=29500 --no-python ./prog
//	mpirun -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 ./prog
//	MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1) MASTER_PORT=29500 srun --ntasks-per-node=2 --gpus-per-task=1 ./prog
//	MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=0 ./prog &
//	MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=1 ./prog
//
// The rank and the world size come from the first of these families that
// is set, the others being ignored: RANK, WORLD_SIZE, LOCAL_RANK and
// LOCAL_WORLD_SIZE (torchrun's, or set by hand); Open MPI's
// OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
// and OMPI_COMM_WORLD_LOCAL_SIZE; Slurm's SLURM_PROCID, SLURM_NTASKS and
// SLURM_LOCALID. So an mpirun inside a Slurm allocation, whose processes
// all see the allocation's SLURM_PROCID, is an Open MPI job. A family with
// its rank but not its world size (or the reverse), a value that is not a
// number, a rank out of range or no family at all is an error. Without a
// local rank, the rank stands for it (one machine). Rank 0's address is
// MASTER_ADDR:MASTER_PORT, which mpirun and srun do not set: give it to
// every rank (rank 0's host, a free port there). Under torchrun, whose
// agent serves its own store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE
// is True), rank 0 takes the next port; GOCUDA_NCCL_PORT sets the port in
// every case, for a port that is taken.
//
// The GPU is the local rank modulo the devices the process sees
// (CUDA_VISIBLE_DEVICES applied), or WithDevice's. More local ranks than
// devices is an error: NCCL needs a GPU per rank.
//
// The rendezvous is TCP: rank 0 listens at rank 0's address (on every
// interface where MASTER_ADDR is not its own) and each other rank
// connects, retrying while nothing listens yet, so the ranks may start in
// any order, and says its rank and world size. With a job token
// (GOCUDA_NCCL_TOKEN or WithToken, the same on every rank) each side
// proves it holds it by an HMAC-SHA256 of the other's fresh nonce; the
// token never crosses the network. Rank 0 drops a connection that does
// not prove it (another job's rank, which fails saying so, or anything
// that is not a rank) and goes on serving. Once every rank has come, it
// hands them the UniqueID; a job that cannot start fails on every rank,
// each saying why, within ctx: a rank that never comes (rank 0 names the
// missing ranks and tells the others, or a rank that gives up first says
// it reached rank 0 and was waiting), two processes of one rank, a world
// size that differs, rank 0 never answering. ctx bounds the rendezvous and
// InitRank both.
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
