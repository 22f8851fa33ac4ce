//go:build linux && (amd64 || arm64)

// Package fakenccl builds a fake NCCL: a shared library with the NCCL
// entry points package generated/nccl loads, for tests of package
// cuda/nccl on machines without a GPU, on top of the fake CUDA driver of
// internal/fakecuda (which it needs: its device memory is host memory).
// Setup points generated/nccl's GOCUDA_LIBNCCL at it.
//
// The library is C (csrc/), written from the ABI of nccl.h as the
// generated bindings describe it, and compiled at test time with the
// machine's C compiler, like the fake driver. Its behaviour:
//
//   - ncclGetVersion reports FAKENCCL_VERSION (Setup sets it to the
//     version the bindings were generated for; default 22803);
//     ncclGetUniqueId makes an id that names a communicator, of this
//     process or of several processes of this machine;
//   - ncclCommInitAll makes a communicator of one rank per device of the
//     list; ncclCommInitRank and ncclCommInitRankConfig join the ranks of
//     one id in a process-global table, on the current context's device,
//     blocking until every rank has joined or, with config.blocking = 0,
//     answering ncclInProgress, which ncclCommGetAsyncError reports until
//     then (a rank whose peers never join stays in progress until
//     ncclCommAbort). Two ranks of one communicator on one device are
//     refused, as NCCL does;
//   - ncclCommFinalize (waits for the rank's queued work, or reports
//     ncclInProgress until it is done when non-blocking), ncclCommDestroy,
//     ncclCommAbort, ncclCommCount, ncclCommCuDevice, ncclCommUserRank,
//     ncclGetErrorString, ncclGetLastError; a handle that is not a live
//     communicator is refused with ncclInvalidArgument rather than
//     followed;
//   - ncclAllReduce, ncclBroadcast, ncclBcast, ncclReduce, ncclAllGather,
//     ncclReduceScatter, ncclSend and ncclRecv of every type with sum,
//     prod, max, min and avg, run in stream order on the caller's stream
//     as host functions of the fake driver (cuLaunchHostFunc), each rank's
//     waiting for the same collective of every rank; ncclGroupStart and
//     ncclGroupEnd, per thread and nestable (csrc/coll.c says how). The
//     fp8 types (ncclFloat8e4m3 10, ncclFloat8e5m2 11) are refused with
//     ncclInvalidArgument where the version reported is before 2.24, as
//     NCCL before 2.24 refuses them; their reductions round to nearest,
//     ties to even, saturating at the largest finite number, as NCCL's
//     (csrc/coll.c).
//
// The ranks of an id may be in several processes of one machine (a job
// of a launcher, each process with the fake driver of its own): every
// rank also enters a segment of /dev/shm named from the id, and when not
// all the ranks are in one process, the collectives go through it, each
// rank's send data in a memfd of its own that the others read
// (csrc/xproc.c says how). Across processes the collectives have the
// checks of one process, send and receive are refused
// (ncclInvalidUsage), and a wait for a peer ends with ncclRemoteError when
// the peer aborts, is destroyed with collectives still to come or its
// process dies, or after FAKENCCL_TIMEOUT seconds (default 300), so that
// no rank waits forever for one that is gone; ranks of one device in
// different processes are not refused (their fake devices differ).
//
// ncclCommAbort releases the rank's host functions that wait for peers,
// and the peers' that wait for it (they fail with ncclRemoteError), so
// nothing stays blocked at exit. Every other function of nccl.h is
// absent, so a call of it gets an error matching
// nccl.ErrMissingFunction.
package fakenccl

import (
	"embed"
	"os"
	"strconv"

	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// VersionEnv names the variable whose value ncclGetVersion reports.
const VersionEnv = "FAKENCCL_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

var library = cbuild.Library{
	Name:    "fakenccl",
	What:    "the fake NCCL",
	Sources: sources,
	Dir:     "csrc",
	Flags:   []string{"-shared", "-fPIC", "-O2", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
	Libs:    []string{"-ldl"},
}

// Build compiles the fake NCCL into dir (empty: a directory of the user's
// under os.TempDir()) and returns the library's path; a build is reused
// until the sources, compiler or flags change, as fakecuda.Build's.
func Build(dir string) (string, error) {
	return library.Build(dir)
}

// Setup builds the fake NCCL and points nccl.LibraryEnv (GOCUDA_LIBNCCL)
// at it, with VersionEnv set to nccl.HeaderVersion() unless it is set
// already. Call it before anything in the process calls generated/nccl,
// which opens its library once, and only where the process uses the fake
// CUDA driver.
func Setup() (string, error) {
	path, err := Build("")
	if err != nil {
		return "", err
	}
	if os.Getenv(VersionEnv) == "" {
		if err := os.Setenv(VersionEnv, strconv.Itoa(nccl.HeaderVersion())); err != nil {
			return "", err
		}
	}
	return path, os.Setenv(nccl.LibraryEnv, path)
}

// Is reports whether the library at path is the fake NCCL.
func Is(path string) bool { return dynlib.Exports(path, "fakenccl_marker") }

// Active reports whether generated/nccl loaded the fake NCCL (loading
// the library if it has not).
func Active() bool {
	return nccl.Load() == nil && Is(nccl.LibraryPath())
}
