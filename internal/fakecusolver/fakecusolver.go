//go:build linux && (amd64 || arm64)

// Package fakecusolver builds a fake cuSOLVER: a shared library with the
// dense entry points package cuda/solver calls, for its tests on machines
// without a GPU, on top of the fake CUDA driver of internal/fakecuda
// (which it needs: its device memory is host memory). Setup points
// generated/cusolver's GOCUDA_LIBCUSOLVER at it.
//
// The library is C (csrc/), written from the ABI of cusolverDn.h as the
// generated bindings describe it, and compiled at test time with the
// machine's C compiler, like the fake driver. What it models:
//
//   - cusolverDnCreate, cusolverDnDestroy (which waits for the handle's
//     stream), cusolverDnSetStream, cusolverDnGetStream, cusolverGetVersion
//     and cusolverGetProperty (FAKECUSOLVER_VERSION, which Setup sets to
//     the CUSOLVER_VERSION of the bindings); a handle that is not live
//     gets CUSOLVER_STATUS_NOT_INITIALIZED rather than being followed;
//   - for float (S) and double (D), with their _bufferSize calls: getrf
//     and getrs (LU with partial pivoting, 1-based pivots, info the first
//     exactly zero pivot U(i,i)), potrf and potrs (Cholesky of either
//     triangle, info the order of the first leading minor that is not
//     positive), geqrf and ormqr (Householder QR, LAPACK's storage of the
//     reflectors), syevd (eigenvalues ascending, vectors in A) and gesvd
//     (m ≥ n; jobs 'A', 'S' and 'N'; singular values descending), all in
//     LAPACK's column-major conventions (csrc/lapack.c); gesvdj (any
//     shape, full or economy vectors, V rather than Vᵀ; info min(m,n)+1
//     where the rotations do not converge) with cusolverDnCreateGesvdjInfo,
//     cusolverDnDestroyGesvdjInfo and the tolerance and sweep settings,
//     which it keeps but does not use (its Jacobi runs to its own)
//     (csrc/gesvdj.c);
//   - potrfBatched and potrsBatched (nrhs 1, as cuSOLVER takes), S and D,
//     the matrices found through the device array of pointers when the
//     work runs (csrc/batched.c); an illegal argument there fails the
//     call with CUSOLVER_STATUS_INVALID_VALUE and writes no info;
//   - an illegal argument, as LAPACK reports it: the call returns
//     CUSOLVER_STATUS_INVALID_VALUE and info becomes -i, i the argument's
//     position after the handle; a workspace smaller than the _bufferSize
//     call's is an illegal argument (csrc/dense.c checks the arguments,
//     csrc/call.c reports them). The info of a call that runs is
//     LAPACK's.
//
// The work runs in stream order as host functions of the fake driver on
// the handle's stream, reading and writing the user's memory, and tells
// the driver's race detector what it read and wrote (csrc/queue.c).
// Memory outside the driver's allocations fails the call with
// CUSOLVER_STATUS_INVALID_VALUE, before anything is queued.
//
// Where it is simpler than cuSOLVER: the results are those of textbook
// algorithms in double precision (Jacobi rotations for syevd and gesvd),
// rounded once to the caller's type, so they agree with cuSOLVER's to
// rounding, not bit for bit (eigenvectors and singular vectors up to
// sign); getrf without pivots (a NULL devIpiv) and gesvd's job 'O' get
// CUSOLVER_STATUS_NOT_SUPPORTED; a stream being captured is refused
// (CUSOLVER_STATUS_NOT_SUPPORTED); every other entry point of the library
// is absent, so a call of one gets an error matching
// cusolver.ErrMissingFunction. FAKECUSOLVER_VERBOSE=1 makes the fake say
// on standard error why it refused a call.
package fakecusolver

import (
	"embed"

	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/fakelib"
)

// VersionEnv names the variable whose value cusolverGetVersion reports.
const VersionEnv = "FAKECUSOLVER_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// fake is the fake's build and what loads it. Frame pointers let the
// fake driver's race detector walk from the driver's frames through the
// fake's into those of the Go code that called it.
var fake = fakelib.Fake{
	Library: cbuild.Library{
		Name:    "fakecusolver",
		What:    "the fake cuSOLVER",
		Sources: sources,
		Dir:     "csrc",
		Shared:  []cbuild.Sources{fakelib.CSources},
		Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
		Libs:    []string{"-ldl", "-lm"},
	},
	Env:        cusolver.LibraryEnv,
	VersionEnv: VersionEnv,
	Version:    cusolver.CUSOLVER_VERSION,
	Load:       cusolver.Load,
	Path:       cusolver.LibraryPath,
}

// Build compiles the fake cuSOLVER into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change.
func Build(dir string) (string, error) { return fake.Build(dir) }

// Setup builds the fake cuSOLVER and points cusolver.LibraryEnv
// (GOCUDA_LIBCUSOLVER) at it, with VersionEnv set to the bindings'
// cusolver.CUSOLVER_VERSION unless it is set already. Call it before
// anything in the process calls generated/cusolver, which opens its
// library once, and only where the process uses the fake CUDA driver.
func Setup() (string, error) { return fake.Setup() }

// Is reports whether the library at path is the fake cuSOLVER.
func Is(path string) bool { return fake.Is(path) }

// Active reports whether generated/cusolver loaded the fake cuSOLVER
// (loading the library if it has not).
func Active() bool { return fake.Active() }
